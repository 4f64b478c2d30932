// KernelSymbols: function symbols of a kallsyms file, hand-written lines.
#include "symbol/kernel_symbols.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace framewalk::symbol {
namespace {

std::string write_file(const std::string& text) {
  char path[] = "/tmp/fw_kallsyms_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  return path;
}

TEST(KernelSymbols, FunctionsOfAKallsymsFile) {
  // Out of order (a module's text below the kernel's), data symbols, a
  // hidden address, a module name after a tab, a line without a name.
  const std::string path = write_file(
      "ffffffff81000000 T _text\n"
      "ffffffff81001000 t do_one\n"
      "ffffffff81002000 D some_data\n"
      "0000000000000000 T hidden\n"
      "ffffffffa0000000 t mod_func\t[mymod]\n"
      "ffffffff81003000 W weak_one\n"
      "ffffffff81004000 T\n"
      "ffffffff80000000 T early\n");
  KernelSymbols k(path);
  k.load_if("");
  unlink(path.c_str());
  EXPECT_TRUE(k.problem().empty());
  EXPECT_EQ(k.size(), 5u);
  EXPECT_EQ(k.name(0xffffffff81001010), "do_one+0x10");
  EXPECT_EQ(k.name(0xffffffff81002010), "do_one+0x1010");  // data symbols name nothing
  EXPECT_EQ(k.function(0xffffffff81003000), "weak_one");
  EXPECT_EQ(k.function(0xffffffffa0000004), "mod_func");
  EXPECT_EQ(k.function(0xffffffff80000001), "early");
  EXPECT_EQ(k.name(0x1000), "[unknown]");
  EXPECT_EQ(k.function(0x1000), "");
}

// Lines that are not kallsyms lines are left out, whatever they hold: no
// address digits, an address too long, a blank, a line cut at its end.
TEST(KernelSymbols, HostileLinesAreLeftOut) {
  const std::string path = write_file(
      "\n"
      "zzzz T not_hex\n"
      "ffffffffffffffffff T too_long\n"
      " T no_address\n"
      "ffffffff81000000 T\tfirst\n"
      "ffffffff81000000T glued\n"
      "ffffffff81001000 t good\n"
      "ffffffff81002000 t");
  KernelSymbols k(path);
  k.load_if("");
  unlink(path.c_str());
  EXPECT_EQ(k.function(0xffffffff81001004), "good");
  EXPECT_EQ(k.function(0xffffffff81002004), "good");  // the cut line names nothing
  EXPECT_EQ(k.name(0x1000), "[unknown]");  // not_hex took no address
  EXPECT_EQ(k.size(), 1u);
}

TEST(KernelSymbols, AMissingFileIsAProblemNamed) {
  KernelSymbols k(std::string("/nonexistent/kallsyms"));
  k.load_if("");
  EXPECT_NE(k.problem().find("/nonexistent/kallsyms"), std::string::npos);
  EXPECT_EQ(k.size(), 0u);
}

}  // namespace
}  // namespace framewalk::symbol
