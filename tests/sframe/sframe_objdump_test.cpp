// `framewalk sframe FILE` against this machine's `objdump --sframe` on
// programs, shared objects and relocatable objects built here with
// `cc -Wa,--gsframe`: the whole output must be identical, banner included.
// The local binutils emits the SFrame version its own objdump dumps, which is
// the release framewalk picks for that version. Skipped when the compiler or
// assembler cannot emit SFrame, or objdump cannot dump it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

constexpr const char* kSource = R"(
#include <alloca.h>
#include <stdio.h>
#include <string.h>
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int with_alloca(int n) {
  char* p = alloca(n + 16);
  memset(p, n, n + 16);
  return p[n] + leaf(n);
}
__attribute__((noinline)) long many(long a, long b, long c, long d, long e, long f, long g) {
  long v[32];
  for (int i = 0; i < 32; ++i) v[i] = a * i + b - c + d * e - f + g;
  return v[a & 31] + with_alloca((int)(b & 63));
}
int main(int argc, char** argv) {
  (void)argv;
  printf("%ld\n", many(argc, 2, 3, 4, 5, 6, 7));
  return 0;
}
)";

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
