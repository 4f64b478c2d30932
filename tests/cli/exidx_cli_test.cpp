// `framewalk exidx` on files it must refuse or report on, and its text format.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "support/run_command.hpp"

namespace framewalk {
namespace {

const std::string kCli = FRAMEWALK_CLI;

TEST(ExidxCli, RefusesAFileOfAnotherMachine) {
  int status = 0;
  const std::string out = test::run_command(kCli + " exidx " + kCli, &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("a file of x86-64: framewalk exidx reads the EHABI tables of 32-bit ARM files only"),
            std::string::npos)
      << out;
}

TEST(ExidxCli, MissingFileAndUsage) {
  int status = 0;
  const std::string out = test::run_command(kCli + " exidx /nonexistent/file", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("framewalk: /nonexistent/file: No such file or directory"), std::string::npos) << out;
  (void)test::run_command(kCli + " exidx --format=json /nonexistent/file", &status);
  EXPECT_EQ(status, 2);
}

// An ARM object and a damaged copy of a shared library, from the cross compiler when it is there.
class ExidxCliArm : public ::testing::Test {
 protected:
  void SetUp() override {
    int status = 0;
    (void)test::run_command("command -v arm-linux-gnueabihf-gcc", &status, false);
    if (status != 0) GTEST_SKIP() << "no arm-linux-gnueabihf-gcc";
    dir_ = test::run_command("mktemp -d", &status, false);
    while (!dir_.empty() && dir_.back() == '\n') dir_.pop_back();
    const std::string source = std::string(FRAMEWALK_SOURCE_DIR) + "/tests/conformance/fixtures/arm_unwind.S";
    (void)test::run_command("arm-linux-gnueabihf-gcc -c " + source + " -o " + dir_ + "/f.o && " +
                                "arm-linux-gnueabihf-gcc -shared -nostdlib " + source + " -o " + dir_ + "/f.so",
                            &status);
    ASSERT_EQ(status, 0);
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf " + dir_).c_str());
  }
  std::string dir_;
};

TEST_F(ExidxCliArm, RefusesRelocatableObjects) {
  int status = 0;
  const std::string out = test::run_command(kCli + " exidx " + dir_ + "/f.o", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("a relocatable object"), std::string::npos) << out;
}

TEST_F(ExidxCliArm, TextFormatNamesEveryEntry) {
  int status = 0;
  const std::string out = test::run_command(kCli + " exidx " + dir_ + "/f.so", &status, false);
  EXPECT_EQ(status, 1);  // f_raw has unsupported opcodes
  EXPECT_NE(out.find("<f_cantunwind>: 0x1 [cantunwind]"), std::string::npos) << out;
  EXPECT_NE(out.find("<f_own_pers>: @0x"), std::string::npos) << out;
  EXPECT_NE(out.find(" personality 0x"), std::string::npos) << out;
  EXPECT_NE(out.find("pr2: pop {r4, r5, r6, r7, r8, r9, r10, r11, r12}; pop {r14}; pop {r0, r1, r2, r3}"),
            std::string::npos)
      << out;
}

TEST_F(ExidxCliArm, ExtabPointerOutsideEverySectionIsReported) {
  // Point the first index entry's table word far away: readelf warns, framewalk
  // reports the entry's offset and goes on with the next entries.
  int status = 0;
  const std::string so = dir_ + "/f.so";
  const std::string offset =
      test::run_command("readelf -SW " + so + " | sed -n 's/.*[.]ARM[.]exidx *ARM_EXIDX *[0-9a-f]* \\([0-9a-f]*\\).*/\\1/p'",
                        &status, false);
  ASSERT_FALSE(offset.empty());
  const long exidx = std::stol(offset, nullptr, 16);
  {
    std::fstream f(so, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(exidx + 4);
    const char word[4] = {0x00, 0x00, 0x00, 0x20};  // prel31 +0x20000000
    f.write(word, 4);
  }
  const std::string out = test::run_command(kCli + " exidx --format=readelf " + so, &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("index entry points outside every section at offset 0x4 of .ARM.exidx"), std::string::npos)
      << out;
  EXPECT_NE(out.find("<f_cantunwind>: 0x1 [cantunwind]"), std::string::npos) << out;
}

}  // namespace
}  // namespace framewalk
