// `framewalk addr2line` on a program compiled here: text, -a -f -p -s, JSON,
// standard input, unknown addresses, the refused -i and a missing file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "support/run_command.hpp"

namespace framewalk {
namespace {

const std::string kCli = FRAMEWALK_CLI;

class Addr2lineCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::string(FRAMEWALK_BINARY_DIR) + "/tests/addr2line_cli";
    int status = 0;
    (void)test::run_command("mkdir -p " + dir_, &status);
    std::ofstream(dir_ + "/one.c") << "int one(int x) {\n  return x + 1;\n}\nint main(void) {\n  return one(0) - 1;\n}\n";
    (void)test::run_command("cd " + dir_ + " && cc -O0 -g -fno-inline one.c -o one", &status);
    ASSERT_EQ(status, 0);
    const std::string nm = test::run_command("nm " + dir_ + "/one | awk '$3 == \"one\" { print $1 }'", &status);
    one_ = nm.substr(0, nm.find('\n'));
  }
  static std::string dir_, one_;
};
std::string Addr2lineCli::dir_, Addr2lineCli::one_;

TEST_F(Addr2lineCli, TextFlagsAndUnknownAddresses) {
  int status = 0;
  std::string out = test::run_command(kCli + " addr2line -e " + dir_ + "/one " + one_ + " 0", &status, false);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, dir_ + "/one.c:1\n??:0\n");
  out = test::run_command(kCli + " addr2line -a -f -p -s -e " + dir_ + "/one 0x" + one_, &status, false);
  char address[32];
  std::snprintf(address, sizeof address, "0x%016llx", std::strtoull(one_.c_str(), nullptr, 16));
  EXPECT_EQ(out, std::string(address) + ": one at one.c:1\n");
  out = test::run_command(kCli + " addr2line -f -e " + dir_ + "/one 0", &status, false);
  EXPECT_EQ(out, "??\n??:0\n");
}

TEST_F(Addr2lineCli, StandardInputAndJson) {
  int status = 0;
  std::string out =
      test::run_command("printf '" + one_ + "\\nzz\\n' | " + kCli + " addr2line -e " + dir_ + "/one", &status, false);
  EXPECT_EQ(out, dir_ + "/one.c:1\n??:0\n");
  out = test::run_command(kCli + " addr2line --format=json -e " + dir_ + "/one " + one_, &status, false);
  EXPECT_NE(out.find("\"function\":\"one\",\"file\":\"" + dir_ + "/one.c\",\"line\":1,"), std::string::npos) << out;
}

TEST_F(Addr2lineCli, InlinesRefusedAndMissingFile) {
  int status = 0;
  std::string out = test::run_command(kCli + " addr2line -i -e " + dir_ + "/one " + one_, &status);
  EXPECT_EQ(status, 2);
  EXPECT_NE(out.find("-i (inline frames) is not supported yet"), std::string::npos) << out;
  out = test::run_command(kCli + " addr2line -e /nonexistent/file 0", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("framewalk: /nonexistent/file: No such file or directory"), std::string::npos) << out;
}

}  // namespace
}  // namespace framewalk
