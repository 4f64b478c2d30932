// `framewalk addr2line` on a program compiled here: text, -a -f -p -s, JSON,
// standard input (answered as it comes), unknown addresses, inline chains (-i, -p, JSON) of a
// program whose inlining is known by construction, and a missing file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/run_command.hpp"

namespace framewalk {
namespace {

const std::string kCli = FRAMEWALK_CLI;

class Addr2lineCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One directory a process: ctest runs each test of the suite as a process
    // of its own, at the same time, each making these files.
    dir_ = std::string(FRAMEWALK_BINARY_DIR) + "/tests/addr2line_cli/" + std::to_string(::getpid());
    int status = 0;
    (void)test::run_command("mkdir -p " + dir_, &status);
    std::ofstream(dir_ + "/one.c") << "int one(int x) {\n  return x + 1;\n}\nint main(void) {\n  return one(0) - 1;\n}\n";
    (void)test::run_command("cd " + dir_ + " && cc -O0 -g -fno-inline one.c -o one", &status);
    ASSERT_EQ(status, 0);
    const std::string nm = test::run_command("nm " + dir_ + "/one | awk '$3 == \"one\" { print $1 }'", &status);
    one_ = nm.substr(0, nm.find('\n'));
    // top() is leaf() inlined into mid() inlined into top(), nothing else.
    std::ofstream(dir_ + "/chain.c") << "static inline __attribute__((always_inline)) int leaf(int x) { return x * x * 3; }\n"
                                        "static inline __attribute__((always_inline)) int mid(int x) { return leaf(x) + 1; }\n"
                                        "int top(int x) {\n"
                                        "  return mid(x);\n"
                                        "}\n"
                                        "int main(int argc, char** argv) { (void)argv; return top(argc); }\n";
    (void)test::run_command("cd " + dir_ + " && cc -O2 -g chain.c -o chain", &status);
    ASSERT_EQ(status, 0);
    const std::string top = test::run_command("nm -S " + dir_ + "/chain | awk '$4 == \"top\" { print $1, $2 }'", &status);
    top_ = std::strtoull(top.c_str(), nullptr, 16);
    top_size_ = std::strtoull(top.c_str() + top.find(' '), nullptr, 16);
  }
  static void TearDownTestSuite() {
    int status = 0;
    (void)test::run_command("rm -rf " + dir_, &status);
  }
  static std::string dir_, one_;
  static uint64_t top_, top_size_;
};
std::string Addr2lineCli::dir_, Addr2lineCli::one_;
uint64_t Addr2lineCli::top_, Addr2lineCli::top_size_;

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

// The DWARF of a function --gc-sections discarded stays, at address 0, over
// the ELF headers and .interp: binutils and llvm-symbolizer name it there
// (checked, when binutils is here, so that the case is real). Those
// addresses hold no code, and framewalk knows no function or line there.
TEST_F(Addr2lineCli, NoFunctionOrLineOutsideCode) {
  std::string source = "int unused(int x) {\n  volatile int v = x;\n";
  for (int i = 0; i < 150; ++i) source += "  v = v * 3 + " + std::to_string(i) + ";\n";  // over 0x400 bytes of code
  source += "  return v;\n}\nint main(void) { return 0; }\n";
  std::ofstream(dir_ + "/gc.c") << source;
  int status = 0;
  (void)test::run_command("cd " + dir_ + " && cc -O0 -g -ffunction-sections -Wl,--gc-sections gc.c -o gc", &status);
  ASSERT_EQ(status, 0);
  std::string interp =
      test::run_command("readelf -SW " + dir_ + "/gc | sed -n 's/.*\\] \\.interp *[A-Z]* *\\([0-9a-f]*\\) .*/\\1/p'", &status);
  interp = interp.substr(0, interp.find('\n'));
  ASSERT_FALSE(interp.empty());
  ASSERT_LT(std::strtoull(interp.c_str(), nullptr, 16), 0x400u);
  const std::string binutils = test::run_command("addr2line -f -e " + dir_ + "/gc 0x" + interp + " 2>/dev/null", &status, false);
  if (status == 0) {
    EXPECT_EQ(binutils.substr(0, 7), "unused\n") << "the discarded function's DWARF is not at 0: " << binutils;
  }
  std::string out = test::run_command(kCli + " addr2line -f -i -e " + dir_ + "/gc 0x" + interp, &status, false);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "??\n??:0\n");
  out = test::run_command(kCli + " addr2line --format=json -e " + dir_ + "/gc 0x" + interp, &status, false);
  EXPECT_NE(out.find("\"function\":null,\"file\":null,\"line\":0"), std::string::npos) << out;
  // The code of main is still named.
  const std::string main_at = test::run_command("nm " + dir_ + "/gc | awk '$3 == \"main\" { print $1 }'", &status);
  out = test::run_command(kCli + " addr2line -f -e " + dir_ + "/gc " + main_at.substr(0, main_at.find('\n')), &status, false);
  EXPECT_EQ(out, "main\n" + dir_ + "/gc.c:155\n");  // after 150 lines of v = ...
}

// A stripped copy with a .gnu_debuglink to its debug file beside it: the
// DWARF (names, lines, inline chains) comes from the debug file.
TEST_F(Addr2lineCli, SeparateDebugFileByDebuglink) {
  int status = 0;
  (void)test::run_command("cd " + dir_ + " && objcopy --only-keep-debug chain chain.debug && objcopy --strip-all chain "
                          "chain.stripped && objcopy --add-gnu-debuglink=chain.debug chain.stripped", &status);
  ASSERT_EQ(status, 0);
  std::string addresses;
  char buf[32];
  for (uint64_t a = top_; a < top_ + top_size_; ++a) {
    std::snprintf(buf, sizeof buf, " %llx", static_cast<unsigned long long>(a));
    addresses += buf;
  }
  const std::string full = test::run_command(kCli + " addr2line -f -i -e " + dir_ + "/chain" + addresses, &status, false);
  const std::string stripped =
      test::run_command(kCli + " addr2line -f -i -e " + dir_ + "/chain.stripped" + addresses, &status, false);
  EXPECT_EQ(status, 0);
  EXPECT_NE(full.find("leaf\n"), std::string::npos) << full;
  EXPECT_EQ(stripped, full);
}

TEST_F(Addr2lineCli, StandardInputAndJson) {
  int status = 0;
  std::string out =
      test::run_command("printf '" + one_ + "\\nzz\\n' | " + kCli + " addr2line -e " + dir_ + "/one", &status, false);
  EXPECT_EQ(out, dir_ + "/one.c:1\n??:0\n");
  out = test::run_command(kCli + " addr2line --format=json -e " + dir_ + "/one " + one_, &status, false);
  EXPECT_NE(out.find("\"function\":\"one\",\"file\":\"" + dir_ + "/one.c\",\"line\":1,"), std::string::npos) << out;
}

// As perf uses addr2line: one question, then wait for its answer before the
// next, standard input kept open. Answers are written in batches, but each
// before framewalk waits for more input. A last line without its newline is
// answered too.
TEST_F(Addr2lineCli, AnswersEachQuestionBeforeReadingTheNext) {
  int to_child[2], from_child[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(from_child), 0);
  const std::string program = dir_ + "/one";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) ::close(fd);
    ::execl(kCli.c_str(), kCli.c_str(), "addr2line", "-f", "-e", program.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  // Reads until `lines` newlines came, or 60 s passed.
  auto answer = [&](int lines) {
    std::string got;
    while (std::count(got.begin(), got.end(), '\n') < lines) {
      pollfd p{from_child[0], POLLIN, 0};
      if (::poll(&p, 1, 60000) <= 0) break;
      char buf[256];
      const ssize_t n = ::read(from_child[0], buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  };
  const std::string question = one_ + "\n";
  ASSERT_EQ(::write(to_child[1], question.data(), question.size()), static_cast<ssize_t>(question.size()));
  EXPECT_EQ(answer(2), "one\n" + dir_ + "/one.c:1\n");
  ASSERT_EQ(::write(to_child[1], "zz\n" , 3), 3);
  EXPECT_EQ(answer(2), "??\n??:0\n");
  ASSERT_EQ(::write(to_child[1], one_.data(), one_.size()), static_cast<ssize_t>(one_.size()));  // no newline
  ::close(to_child[1]);
  EXPECT_EQ(answer(2), "one\n" + dir_ + "/one.c:1\n");
  ::close(from_child[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// A line of megabytes is answered by its start, and the next line as usual.
TEST_F(Addr2lineCli, AVeryLongLineIsAnsweredByItsStart) {
  int status = 0;
  const std::string out = test::run_command(
      "(printf '" + one_ + "'; head -c 3000000 /dev/zero | tr '\\0' z; printf '\\n" + one_ + "\\n') | " + kCli +
          " addr2line -e " + dir_ + "/one",
      &status, false);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, dir_ + "/one.c:1\n" + dir_ + "/one.c:1\n");
}

TEST_F(Addr2lineCli, InlineChainsAndMissingFile) {
  int status = 0;
  ASSERT_GT(top_size_, 0u);
  std::string addresses;
  char buf[32];
  for (uint64_t a = top_; a < top_ + top_size_; ++a) {
    std::snprintf(buf, sizeof buf, " %llx", static_cast<unsigned long long>(a));
    addresses += buf;
  }
  // Some address of top() is in leaf(): leaf at line 1, called by mid at
  // line 2, called by top at line 4; and none names another function.
  const std::string c = dir_ + "/chain.c";
  std::string out = test::run_command(kCli + " addr2line -f -i -e " + dir_ + "/chain" + addresses, &status, false);
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("leaf\n" + c + ":1\nmid\n" + c + ":2\ntop\n" + c + ":4\n"), std::string::npos) << out;
  for (const char* name : {"main", "??"}) EXPECT_EQ(out.find(std::string(name) + "\n"), std::string::npos) << out;
  out = test::run_command(kCli + " addr2line -f -i -p -s -e " + dir_ + "/chain" + addresses, &status, false);
  EXPECT_NE(out.find("leaf at chain.c:1\n (inlined by) mid at chain.c:2\n (inlined by) top at chain.c:4\n"),
            std::string::npos) << out;
  // Without -i, the innermost function only: two lines an address.
  out = test::run_command(kCli + " addr2line -f -e " + dir_ + "/chain" + addresses, &status, false);
  EXPECT_EQ(static_cast<uint64_t>(std::count(out.begin(), out.end(), '\n')), 2 * top_size_) << out;
  EXPECT_NE(out.find("leaf\n" + c + ":1\n"), std::string::npos) << out;
  out = test::run_command(kCli + " addr2line --format=json -e " + dir_ + "/chain" + addresses, &status, false);
  EXPECT_NE(out.find("\"frames\":[{\"inlined\":true,\"function\":\"leaf\",\"file\":\"" + c +
                     "\",\"line\":1,"),
            std::string::npos) << out;
  EXPECT_NE(out.find("{\"inlined\":true,\"function\":\"mid\",\"file\":\"" + c + "\",\"line\":2,"),
            std::string::npos) << out;
  EXPECT_NE(out.find("{\"inlined\":false,\"function\":\"top\",\"file\":\"" + c + "\",\"line\":4,"),
            std::string::npos) << out;
  out = test::run_command(kCli + " addr2line -e /nonexistent/file 0", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("framewalk: /nonexistent/file: No such file or directory"), std::string::npos) << out;
}

}  // namespace
}  // namespace framewalk
