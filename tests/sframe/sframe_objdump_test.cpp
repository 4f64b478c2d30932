// `framewalk sframe FILE` against this machine's `objdump --sframe` on
// programs, shared objects and relocatable objects built here with
// `cc -Wa,--gsframe`: the whole output must be identical, banner included.
// The local binutils emits the SFrame version its own objdump dumps, which is
// the release framewalk picks for that version. Skipped when the compiler or
// assembler cannot emit SFrame, or objdump cannot dump it.
#include <gtest/gtest.h>

#include "support/run_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string run(const std::string& cmd, int* status) { return framewalk::test::run_command(cmd, status); }

const char* const kSource = framewalk::test::kSframeSampleProgram;

class SframeObjdumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(FRAMEWALK_BINARY_DIR) / ("sframe_objdump_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "t.c") << kSource;
    std::ofstream(dir_ / "probe.c") << "int probe(int x) { return x + 1; }\n";
    int status = 0;
    run("cc -c -Wa,--gsframe " + (dir_ / "probe.c").string() + " -o " + (dir_ / "probe.o").string() + " 2>&1",
        &status);
    if (status != 0) GTEST_SKIP() << "cc -Wa,--gsframe is not supported here";
    const std::string probe = run("objdump --sframe " + (dir_ / "probe.o").string() + " 2>&1", &status);
    if (status != 0 || probe.find("Contents of the SFrame section") == std::string::npos)
      GTEST_SKIP() << "objdump cannot dump SFrame here";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void compare(const std::string& name, const std::string& cc_flags) {
    SCOPED_TRACE(name);
    const fs::path out = dir_ / name;
    int status = 0;
    const std::string log = run("cc -Wa,--gsframe " + cc_flags + " " + (dir_ / "t.c").string() + " -o " +
                                    out.string() + " 2>&1",
                                &status);
    ASSERT_EQ(status, 0) << log;
    const std::string want = run("objdump --sframe " + out.string() + " 2>&1", &status);
    ASSERT_EQ(status, 0) << want;
    const std::string got = run(std::string(FRAMEWALK_CLI) + " sframe " + out.string() + " 2>&1", &status);
    EXPECT_EQ(status, 0) << got;
    EXPECT_EQ(got, want);
  }

  fs::path dir_;
};

TEST_F(SframeObjdumpTest, Program) { compare("prog", "-O2"); }
TEST_F(SframeObjdumpTest, ProgramWithFramePointers) { compare("prog-fp", "-O1 -fno-omit-frame-pointer"); }
TEST_F(SframeObjdumpTest, SharedObject) { compare("lib.so", "-O2 -fPIC -shared"); }
TEST_F(SframeObjdumpTest, RelocatableObject) { compare("obj.o", "-O0 -c"); }

}  // namespace
