// `framewalk check` on SFrame the assembler made: programs built here with
// `cc -Wa,--gsframe` carry gas's own .sframe (v1 with this machine's binutils
// 2.40), an oracle independent of framewalk's generator. The checker must find
// it in agreement with the CFI of the same file (a corrupted section failing
// the check is tested in generate_cli_test). Skipped when the toolchain cannot
// emit SFrame.
#include <gtest/gtest.h>

#include "support/run_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string run(const std::string& cmd, int* status) { return framewalk::test::run_command(cmd, status); }

const char* const kSource = framewalk::test::kSframeSampleProgram;

TEST(CheckGas, AssemblerSframeAgreesWithTheCfi) {
  const fs::path dir = fs::path(FRAMEWALK_BINARY_DIR) / ("check_gas_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "p.c") << kSource;
  int status;
  bool built = false;
  for (const char* flags : {"-O2", "-O0 -fno-omit-frame-pointer", "-O2 -fPIC -shared"}) {
    SCOPED_TRACE(flags);
    const std::string out = (dir / "p").string();
    const std::string cc = run(std::string("cc ") + flags + " -Wa,--gsframe " + (dir / "p.c").string() + " -o " + out, &status);
    if (status != 0) continue;
    built = true;
    const std::string text = run(std::string(FRAMEWALK_CLI) + " check " + out, &status);
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find(" 0 disagreements"), std::string::npos) << text;
    EXPECT_NE(text.find("sframe-only 0 ranges"), std::string::npos) << text;
    EXPECT_EQ(text.find(" 0 rows compared"), std::string::npos) << text;
  }
  fs::remove_all(dir);
  if (!built) GTEST_SKIP() << "cc -Wa,--gsframe does not work here";
}

}  // namespace
