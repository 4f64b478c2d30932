// `framewalk report` on hostile and truncated gmon.out files (a clear message
// with the file and offset, exit 1, never a crash), its usage errors, and its
// formats on a hand-written profile of the framewalk binary itself.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "profile/gmon_builder.hpp"
#include "support/run_command.hpp"

namespace framewalk {
namespace {

const std::string kCli = FRAMEWALK_CLI;

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    int status = 0;
    dir_ = test::run_command("mktemp -d", &status, false);
    while (!dir_.empty() && dir_.back() == '\n') dir_.pop_back();
    ASSERT_EQ(status, 0);
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf " + dir_).c_str());
  }
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  std::string report(const std::string& args, int* status) {
    return test::run_command(kCli + " report " + args + " --exe " + kCli, status);
  }
  // Two function symbols of the framewalk binary: main and the one after it.
  void two_functions(uint64_t* a, uint64_t* b, std::string* a_name, std::string* b_name) {
    int status = 0;
    const std::string line = test::run_command(
        "nm --defined-only -n " + kCli + " | awk '$2 == \"T\" && $3 == \"main\" {getline n; print $1, $3, n; exit}'",
        &status, false);
    char name_a[256] = {}, name_b[256] = {};
    unsigned long long x = 0, y = 0;
    char type[8] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "%llx %255s %llx %7s %255s", &x, name_a, &y, type, name_b), 5) << line;
    *a = x;
    *b = y;
    *a_name = name_a;
    *b_name = name_b;
  }
  std::string dir_;
};

TEST_F(ReportCli, HelpAndUsage) {
  int status = 0;
  const std::string help = test::run_command(kCli + " report --help", &status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(help.find("gmon.out"), std::string::npos) << help;
  EXPECT_NE(help.find("--format"), std::string::npos) << help;
  (void)test::run_command(kCli + " report --format=xml gmon.out", &status);
  EXPECT_EQ(status, 2);
  (void)test::run_command(kCli + " report --load-bias=zz gmon.out", &status);
  EXPECT_EQ(status, 2);
}

TEST_F(ReportCli, MissingFiles) {
  int status = 0;
  std::string out = report(dir_ + "/none", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("framewalk: " + dir_ + "/none: No such file or directory"), std::string::npos) << out;
  out = test::run_command("cd " + dir_ + " && " + kCli + " report", &status);  // gprof's defaults: a.out, gmon.out
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("framewalk: a.out: No such file or directory"), std::string::npos) << out;
}

TEST_F(ReportCli, HostileFilesAreNamedWithTheirOffsets) {
  test::GmonBuilder huge;
  huge.histogram_header(0, ~uint64_t{0}, 0xffffffffu);
  test::GmonBuilder tag;
  tag.arc(1, 2, 3).raw({9});
  test::GmonBuilder arc;
  arc.arc(1, 2, 3).raw({1, 0, 0});
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"bsd.out", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "not a gmon.out file (no \"gmon\" magic) at offset 0x0"},
      {"v2.out", test::GmonBuilder(8, false, 2).bytes(), "unsupported gmon.out version 2 at offset 0x4"},
      {"huge.out", huge.bytes(), "histogram runs past the end of the file (4294967295 bins) at offset 0x25"},
      {"tag.out", tag.bytes(), "unknown record tag 9 at offset 0x29"},
      {"arc.out", arc.bytes(), "truncated record at offset 0x2a"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = write(c.name, c.bytes);
    int status = 0;
    const std::string out = report(path, &status);
    EXPECT_EQ(status, 1);
    EXPECT_EQ(out, "framewalk: " + path + ": " + c.message + "\n");
  }
}

TEST_F(ReportCli, EveryTruncationIsAnErrorOrAReport) {
  test::GmonBuilder b;
  b.histogram(0x1000, 0x1010, {1, 2, 3, 4}).arc(0x1000, 0x1004, 5);
  for (size_t n = 0; n <= b.size(); n += 3) {
    const std::vector<uint8_t> prefix(b.bytes().begin(), b.bytes().begin() + static_cast<long>(n));
    const std::string path = write("cut.out", prefix);
    int status = 0;
    const std::string out = report(path + " --format=json", &status);
    SCOPED_TRACE(n);
    EXPECT_TRUE(status == 0 || status == 1) << out;
    if (status == 1) {
      EXPECT_NE(out.find("framewalk: " + path + ": "), std::string::npos) << out;
    }
  }
}

TEST_F(ReportCli, Formats) {
  uint64_t a = 0, b = 0;
  std::string a_name, b_name;
  two_functions(&a, &b, &a_name, &b_name);
  test::GmonBuilder g;
  g.histogram(a, a + 8, {0, 3}).arc(a + 4, b, 7).arc(0x10, b, 1);
  const std::string path = write("gmon.out", g.bytes());
  int status = 0;
  std::string out = report(path + " --format=folded", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, a_name + ";" + b_name + " 7\n");
  out = report(path + " --format=folded --folded-value=time", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, a_name + " 30000\n");
  out = report(path + " --format=json", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("\"count\":7"), std::string::npos) << out;
  EXPECT_NE(out.find("\"dropped\":{\"arcs\":1,\"calls\":1}"), std::string::npos) << out;
  out = report(path, &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("Flat profile:"), std::string::npos) << out;
  EXPECT_NE(out.find("1 arcs (1 calls) left out"), std::string::npos) << out;
  out = report(path + " --format=pprof -o " + dir_ + "/p.pb.gz", &status);
  EXPECT_EQ(status, 0) << out;
  (void)test::run_command("gzip -t " + dir_ + "/p.pb.gz", &status);
  EXPECT_EQ(status, 0);
  // At another address: nothing of it falls in the program's functions.
  test::GmonBuilder elsewhere;
  elsewhere.arc(0x7f0000000000, 0x7f0000000010, 1);
  out = report(write("elsewhere.out", elsewhere.bytes()), &status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("no arc falls in"), std::string::npos) << out;
}

}  // namespace
}  // namespace framewalk
