// CoreFile on cores of machines framewalk does not unwind yet: a valid core is
// named by its machine (kUnsupportedMachine with e_machine), not called
// "not a core file"; `framewalk stack --core` says which machine, exit 2.
#include "target/core_file.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "elf/elf_file.hpp"

namespace framewalk {
namespace {

struct ForeignCore {
  const char* name;
  uint16_t machine;
  bool is_64;
  bool big_endian;
};

constexpr ForeignCore kForeignCores[] = {
    {"i386", elf::kEm386, false, false},
    {"s390x", elf::kEmS390, true, true},       {"ppc64le", elf::kEmPpc64, true, false},
    {"ppc64", elf::kEmPpc64, true, true},      {"mipsel", elf::kEmMips, false, false},
    {"riscv64", elf::kEmRiscv, true, false},   {"x32", elf::kEmX86_64, false, false},
};

// An ELF header of type ET_CORE and nothing else (no segments, no notes).
std::vector<uint8_t> core_header(const ForeignCore& c) {
  std::vector<uint8_t> b(c.is_64 ? 64 : 52, 0);
  std::memcpy(b.data(), "\x7f" "ELF", 4);
  b[4] = c.is_64 ? 2 : 1;
  b[5] = c.big_endian ? 2 : 1;
  b[6] = 1;
  auto put16 = [&](size_t at, uint16_t v) {
    b[at] = static_cast<uint8_t>(c.big_endian ? v >> 8 : v);
    b[at + 1] = static_cast<uint8_t>(c.big_endian ? v : v >> 8);
  };
  put16(16, elf::kEtCore);
  put16(18, c.machine);
  b[c.big_endian ? 23 : 20] = 1;  // e_version
  put16(c.is_64 ? 52 : 40, static_cast<uint16_t>(b.size()));  // e_ehsize
  return b;
}

TEST(CoreFile, CoresOfOtherMachinesAreNamedByTheirMachine) {
  for (const ForeignCore& c : kForeignCores) {
    SCOPED_TRACE(c.name);
    auto core = CoreFile::parse(FileImage::from_buffer(core_header(c)), c.name, CoreOptions{});
    ASSERT_FALSE(core.ok());
    EXPECT_EQ(core.error().code, ErrorCode::kUnsupportedMachine);
    EXPECT_EQ(core.error().offset, c.machine);
    EXPECT_EQ(elf::machine_name(c.machine, c.is_64, c.big_endian ? Endian::kBig : Endian::kLittle), c.name);
  }
}

TEST(CoreFile, StackCommandSaysWhichMachineACoreIsFor) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fw_foreign_core_" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (const ForeignCore& c : kForeignCores) {
    SCOPED_TRACE(c.name);
    const fs::path path = dir / "core";
    {
      const std::vector<uint8_t> bytes = core_header(c);
      std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    const std::string command = std::string(FRAMEWALK_CLI) + " stack --core " + path.string() + " 2>&1";
    FILE* p = popen(command.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = pclose(p);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    EXPECT_EQ(out, "framewalk: " + path.string() + ": a core file of " + c.name + ": framewalk cannot unwind " +
                       c.name + " yet (it unwinds " + arch::supported_machine_names() + ")\n");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace framewalk
