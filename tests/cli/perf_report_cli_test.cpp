// `framewalk report` on hostile perf.data files: a truncated file and a
// record of size 0 print the samples before the damage, then a message that
// names the file, the record and its offset, and exit 1; never a crash or a
// hang. A gmon.out is still reported as a gmon.out.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "perf/perf_data.hpp"
#include "perf/perf_data_builder.hpp"
#include "support/run_command.hpp"

namespace framewalk {
namespace {

using perf::test::Attr;
using perf::test::Rec;

const std::string kCli = FRAMEWALK_CLI;

class PerfReportCli : public ::testing::Test {
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
  // Two samples of a thread named "victim" (no registers: their IPs alone).
  std::vector<std::vector<uint8_t>> records() {
    Rec comm(perf::kComm);
    comm.u32(42).u32(42).name("victim").u32(42).u32(42).u64(1);
    Rec s1(perf::kSample, perf::misc::kUser);
    s1.u64(0x401000).u32(42).u32(42).u64(1500000000);
    Rec s2(perf::kSample, perf::misc::kUser);
    s2.u64(0x401010).u32(42).u32(42).u64(1500500000);
    return {comm.done(), s1.done(), s2.done()};
  }
  Attr attr() {
    Attr a;
    a.sample_type = perf::sample::kIp | perf::sample::kTid | perf::sample::kTime;
    a.ids = {1};
    return a;
  }
  std::string dir_;
};

TEST_F(PerfReportCli, SamplesInPerfScriptsShape) {
  const std::string path = write("perf.data", perf::test::perf_file({attr()}, records()));
  int status = 0;
  const std::string out = test::run_command(kCli + " report " + path + " --format=script", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("victim    42     1.500000: cpu-clock: \n\t          401000 [unknown] ([unknown])\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("victim    42     1.500500: cpu-clock:"), std::string::npos) << out;
}

// The .fwprof formats, from the samples unwound: the same profile model.
TEST_F(PerfReportCli, SampledProfileFormats) {
  const std::string path = write("perf.data", perf::test::perf_file({attr()}, records()));
  int status = 0;
  std::string out = test::run_command(kCli + " report " + path + " --format=text", &status, false);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("event: cpu-clock"), std::string::npos) << out;
  EXPECT_NE(out.find("2 samples, 1 threads"), std::string::npos) << out;
  out = test::run_command(kCli + " report " + path + " --format=folded", &status, false);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find(" 4000\n"), std::string::npos) << out;  // the event's fixed period (the samples carry none)
  for (const char* format : {"json", "speedscope", "firefox", "html"}) {
    out = test::run_command(kCli + " report " + path + " --format=" + format, &status, false);
    EXPECT_EQ(status, 0) << format << ": " << out;
    EXPECT_FALSE(out.empty()) << format;
  }
}

TEST_F(PerfReportCli, TruncatedFileNamesTheRecordAndOffset) {
  std::vector<uint8_t> file = perf::test::perf_file({attr()}, records());
  file.resize(file.size() - 5);  // the second sample is cut
  const std::string path = write("cut.data", file);
  int status = 0;
  const std::string out = test::run_command(kCli + " report " + path + " 2>&1", &status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("1.500000: cpu-clock:"), std::string::npos) << out;  // the sample before it
  EXPECT_NE(out.find("framewalk: " + path + ": record 2 at offset 0x"), std::string::npos) << out;
  EXPECT_NE(out.find("the file ends"), std::string::npos) << out;
}

TEST_F(PerfReportCli, ZeroSizeRecord) {
  auto recs = records();
  recs[2][6] = recs[2][7] = 0;  // size 0: a reader that trusted it would never move on
  const std::string path = write("zero.data", perf::test::perf_file({attr()}, recs));
  int status = 0;
  const std::string out = test::run_command("timeout 20 " + kCli + " report " + path + " 2>&1", &status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("record 2 at offset 0x"), std::string::npos) << out;
  EXPECT_NE(out.find("a record of size 0"), std::string::npos) << out;
}

TEST_F(PerfReportCli, NotPerfDataNorGmon) {
  const std::string path = write("junk", std::vector<uint8_t>(64, 'P'));
  int status = 0;
  const std::string out = test::run_command(kCli + " report " + path + " --format=script 2>&1", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("is not one"), std::string::npos) << out;
}

}  // namespace
}  // namespace framewalk
