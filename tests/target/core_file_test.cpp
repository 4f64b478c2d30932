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
    {"ppc64", elf::kEmPpc64, true, true},      {"mipsel", elf::kEmMips, false, false},
    {"riscv32", elf::kEmRiscv, false, false},
    // Machines framewalk unwinds, in the byte order it does not.
    {"AArch64 (big-endian)", elf::kEmAarch64, true, true}, {"ARM (big-endian)", elf::kEmArm, false, true},
    {"ppcle", elf::kEmPpc, false, false},  // ppc (big-endian) is unwound; its little-endian variant is not
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
    EXPECT_EQ(machine_name(MachineKey{c.machine, c.is_64, c.big_endian ? Endian::kBig : Endian::kLittle, 0}), c.name);
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

namespace framewalk {
namespace {

// Words and notes of a core in its byte order.
struct CoreBytes {
  bool big_endian = false;
  void put(std::vector<uint8_t>& v, uint64_t x, unsigned size) const {
    for (unsigned i = 0; i < size; ++i)
      v.push_back(static_cast<uint8_t>(x >> (8 * (big_endian ? size - 1 - i : i))));
  }
  void note(std::vector<uint8_t>& notes, uint32_t type, const std::vector<uint8_t>& desc) const {
    put(notes, 5, 4);
    put(notes, desc.size(), 4);
    put(notes, type, 4);
    for (char c : std::string("CORE\0\0\0\0", 8)) notes.push_back(static_cast<uint8_t>(c));
    notes.insert(notes.end(), desc.begin(), desc.end());
    while (notes.size() % 4) notes.push_back(0);
  }
  // An ELF64 ET_CORE of `machine` whose one segment, a PT_NOTE at offset 120, holds `notes`.
  std::vector<uint8_t> core(uint16_t machine, const std::vector<uint8_t>& notes) const {
    std::vector<uint8_t> b;
    b.insert(b.end(), {0x7f, 'E', 'L', 'F', 2, static_cast<uint8_t>(big_endian ? 2 : 1), 1});
    b.resize(16);
    put(b, 4, 2);         // ET_CORE
    put(b, machine, 2);
    put(b, 1, 4);         // e_version
    put(b, 0, 8);         // e_entry
    put(b, 64, 8);        // e_phoff
    put(b, 0, 8);         // e_shoff
    put(b, 0, 4);         // e_flags
    put(b, 64, 2);        // e_ehsize
    put(b, 56, 2);        // e_phentsize
    put(b, 1, 2);         // e_phnum
    b.resize(64);
    put(b, 4, 4);         // PT_NOTE
    put(b, 0, 4);
    put(b, 120, 8);       // p_offset
    put(b, 0, 16);
    put(b, notes.size(), 8);  // p_filesz
    b.resize(120);
    b.insert(b.end(), notes.begin(), notes.end());
    return b;
  }
  // The same as an ELF32 ET_CORE: its PT_NOTE at offset 84.
  std::vector<uint8_t> core32(uint16_t machine, const std::vector<uint8_t>& notes) const {
    std::vector<uint8_t> b;
    b.insert(b.end(), {0x7f, 'E', 'L', 'F', 1, static_cast<uint8_t>(big_endian ? 2 : 1), 1});
    b.resize(16);
    put(b, 4, 2);         // ET_CORE
    put(b, machine, 2);
    put(b, 1, 4);         // e_version
    put(b, 0, 4);         // e_entry
    put(b, 52, 4);        // e_phoff
    put(b, 0, 8);         // e_shoff, e_flags
    put(b, 52, 2);        // e_ehsize
    put(b, 32, 2);        // e_phentsize
    put(b, 1, 2);         // e_phnum
    b.resize(52);
    put(b, 4, 4);         // PT_NOTE
    put(b, 84, 4);        // p_offset
    put(b, 0, 8);
    put(b, notes.size(), 4);  // p_filesz
    b.resize(84);
    b.insert(b.end(), notes.begin(), notes.end());
    return b;
  }
};

// A minimal AArch64 core: one NT_PRSTATUS (x29, x30 signed with a PAC, sp,
// pc), optionally an NT_ARM_PAC_MASK, and no NT_FILE.
std::vector<uint8_t> aarch64_core(bool with_pac_mask) {
  const CoreBytes c;
  std::vector<uint8_t> notes;
  std::vector<uint8_t> prstatus(112, 0);
  prstatus[12] = 6;  // pr_cursig
  prstatus[32] = 0x92, prstatus[33] = 0x10;  // pr_pid 4242
  for (unsigned i = 0; i < 34; ++i) {
    uint64_t v = 0;
    if (i == 29) v = 0x7010;
    if (i == 30) v = 0x0012000000400200;
    if (i == 31) v = 0x7000;
    if (i == 32) v = 0x400100;
    c.put(prstatus, v, 8);
  }
  c.put(prstatus, 0, 8);
  c.note(notes, 1, prstatus);
  if (with_pac_mask) {
    std::vector<uint8_t> mask;
    c.put(mask, 0x007f000000000000, 8);  // data_mask
    c.put(mask, 0xff7f000000000000, 8);  // insn_mask
    c.note(notes, 0x406, mask);
  }
  return c.core(elf::kEmAarch64, notes);
}

TEST(CoreFile, Aarch64RegistersAndThePacMaskNote) {
  for (bool with_mask : {false, true}) {
    SCOPED_TRACE(with_mask);
    auto core = CoreFile::parse(FileImage::from_buffer(aarch64_core(with_mask)), "aarch64.core", CoreOptions{});
    ASSERT_TRUE(core.ok()) << to_string(core.error().code);
    EXPECT_EQ((*core)->machine().elf_machine, elf::kEmAarch64);
    ASSERT_EQ((*core)->threads().size(), 1u);
    const CoreThread& t = (*core)->threads()[0];
    EXPECT_EQ(t.tid, 4242);
    EXPECT_EQ(t.signal, 6);
    EXPECT_EQ(t.registers.get(32), 0x400100u);
    EXPECT_EQ(t.registers.get(31), 0x7000u);
    EXPECT_EQ(t.registers.get(30), 0x0012000000400200u);
    if (with_mask) EXPECT_EQ((*core)->pointer_auth_mask(), 0xff7f000000000000u);
    else EXPECT_EQ((*core)->pointer_auth_mask(), std::nullopt);
    // No NT_FILE and no auxv: the executable is unknown, and the core says how to go on.
    ModuleCache cache;
    std::vector<std::string> warnings;
    (void)(*core)->modules(cache, &warnings);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("pass --exe"), std::string::npos) << warnings[0];
  }
  // A PAC mask note cut short is an error with its offset, not a guess.
  std::vector<uint8_t> bytes = aarch64_core(true);
  bytes[64 + 32] -= 8;  // the PT_NOTE ends 8 bytes early: the mask's desc is cut
  auto cut = CoreFile::parse(FileImage::from_buffer(bytes), "cut.core", CoreOptions{});
  EXPECT_FALSE(cut.ok());
}

// A minimal s390x core (big-endian): one NT_PRSTATUS (psw, r14, r15), the
// NT_PRFPREG after it (f8 = 0x3008), no NT_FILE.
std::vector<uint8_t> s390x_core() {
  const CoreBytes c{true};
  std::vector<uint8_t> notes;
  std::vector<uint8_t> prstatus(112, 0);
  prstatus[13] = 6;                          // pr_cursig
  prstatus[34] = 0x10, prstatus[35] = 0x92;  // pr_pid 4242
  c.put(prstatus, 0x0705200180000000, 8);    // psw mask
  c.put(prstatus, 0x1000600, 8);             // psw address
  for (unsigned i = 0; i < 16; ++i) c.put(prstatus, i == 14 ? 0x1000abc : i == 15 ? 0x7fff0000 : 0, 8);
  prstatus.resize(112 + 216 + 8);
  c.note(notes, 1, prstatus);
  std::vector<uint8_t> fpregs(8);
  for (unsigned i = 0; i < 16; ++i) c.put(fpregs, 0x3000 + i, 8);
  c.note(notes, 2, fpregs);
  return c.core(elf::kEmS390, notes);
}

TEST(CoreFile, S390xRegistersAndFloatingPointNote) {
  auto core = CoreFile::parse(FileImage::from_buffer(s390x_core()), "s390x.core", CoreOptions{});
  ASSERT_TRUE(core.ok()) << to_string(core.error().code);
  EXPECT_EQ((*core)->machine().elf_machine, elf::kEmS390);
  ASSERT_EQ((*core)->threads().size(), 1u);
  const CoreThread& t = (*core)->threads()[0];
  EXPECT_EQ(t.tid, 4242);
  EXPECT_EQ(t.signal, 6);
  EXPECT_EQ(t.registers.get(65), 0x1000600u);  // the PSW address: the PC
  EXPECT_EQ(t.registers.get(14), 0x1000abcu);
  EXPECT_EQ(t.registers.get(15), 0x7fff0000u);
  EXPECT_EQ(t.registers.get(24), 0x3008u);  // f8, from NT_PRFPREG
  EXPECT_EQ(t.registers.get(20), 0x3001u);  // f1
}

// A minimal 31-bit s390 core: one NT_PRSTATUS of the compat layout
// (compat_elf_prstatus, 224 bytes: s390_compat_regs at 72; the PSW address
// with the addressing-mode bit), the NT_PRFPREG after it, no NT_FILE.
// `prstatus_size` cuts the prstatus short.
std::vector<uint8_t> s390_core(size_t prstatus_size = 224) {
  const CoreBytes c{true};
  std::vector<uint8_t> notes;
  std::vector<uint8_t> prstatus(72, 0);
  prstatus[13] = 4;                          // pr_cursig: SIGILL
  prstatus[26] = 0x10, prstatus[27] = 0x92;  // pr_pid 4242
  c.put(prstatus, 0x070d0000, 4);            // psw mask
  c.put(prstatus, 0x804000ba, 4);            // psw address, 31-bit mode
  for (unsigned i = 0; i < 16; ++i) c.put(prstatus, i == 14 ? 0x804000ee : i == 15 ? 0x7efffe28 : 0, 4);
  prstatus.resize(224);
  prstatus.resize(prstatus_size);
  c.note(notes, 1, prstatus);
  std::vector<uint8_t> fpregs(8);
  for (unsigned i = 0; i < 16; ++i) c.put(fpregs, 0x3000 + i, 8);
  c.note(notes, 2, fpregs);
  return c.core32(elf::kEmS390, notes);
}

TEST(CoreFile, S390RegistersOfTheCompatLayout) {
  auto core = CoreFile::parse(FileImage::from_buffer(s390_core()), "s390.core", CoreOptions{});
  ASSERT_TRUE(core.ok()) << to_string(core.error().code);
  EXPECT_EQ((*core)->machine(), (MachineKey{elf::kEmS390, false, Endian::kBig, 0}));
  ASSERT_EQ((*core)->threads().size(), 1u);
  const CoreThread& t = (*core)->threads()[0];
  EXPECT_EQ(t.tid, 4242);
  EXPECT_EQ(t.signal, 4);
  EXPECT_EQ(t.registers.get(65), 0x4000bau);     // the PC, without the addressing-mode bit
  EXPECT_EQ(t.registers.get(14), 0x804000eeu);   // a return address as stored
  EXPECT_EQ(t.registers.get(15), 0x7efffe28u);
  EXPECT_EQ(t.registers.get(24), 0x3008u);  // f8, from NT_PRFPREG: 8 bytes also here
  // A prstatus cut inside its registers is an error, not a guess.
  for (size_t size : {size_t{72 + 100}, size_t{40}, size_t{0}}) {
    SCOPED_TRACE(size);
    auto cut = CoreFile::parse(FileImage::from_buffer(s390_core(size)), "cut.core", CoreOptions{});
    ASSERT_FALSE(cut.ok());
    EXPECT_EQ(cut.error().code, ErrorCode::kTruncated);
  }
}


// A minimal 32-bit SPARC core of `machine` (EM_SPARC or EM_SPARC32PLUS):
// one NT_PRSTATUS of 228 bytes, the 38-word gregset at 72 (%g0-%i7, psr,
// pc, npc, y, wim, tbr), cut to `prstatus_size`.
std::vector<uint8_t> sparc32_core(uint16_t machine, size_t prstatus_size = 228) {
  const CoreBytes c{true};
  std::vector<uint8_t> notes;
  std::vector<uint8_t> prstatus(72, 0);
  prstatus[13] = 4;                          // pr_cursig: SIGILL
  prstatus[26] = 0x10, prstatus[27] = 0x92;  // pr_pid 4242
  for (unsigned i = 0; i < 38; ++i) c.put(prstatus, i == 33 ? 0x100bc : 0x1000 + i, 4);
  prstatus.resize(228);
  prstatus.resize(prstatus_size);
  c.note(notes, 1, prstatus);
  return c.core32(machine, notes);
}

TEST(CoreFile, Sparc32RegistersOfBothMachines) {
  for (uint16_t machine : {elf::kEmSparc, elf::kEmSparc32plus}) {
    SCOPED_TRACE(machine);
    auto core = CoreFile::parse(FileImage::from_buffer(sparc32_core(machine)), "sparc.core", CoreOptions{});
    ASSERT_TRUE(core.ok()) << to_string(core.error().code);
    EXPECT_EQ((*core)->machine(), (MachineKey{machine, false, Endian::kBig, 0}));
    ASSERT_EQ((*core)->threads().size(), 1u);
    const CoreThread& t = (*core)->threads()[0];
    EXPECT_EQ(t.tid, 4242);
    EXPECT_EQ(t.registers.get(14), 0x100eu);    // %sp
    EXPECT_EQ(t.registers.get(30), 0x101eu);    // %fp
    EXPECT_EQ(t.registers.get(103), 0x100bcu);  // the PC, after psr
  }
  // A prstatus cut inside its registers is an error, not a guess.
  for (size_t size : {size_t{72 + 100}, size_t{40}, size_t{0}}) {
    SCOPED_TRACE(size);
    auto cut = CoreFile::parse(FileImage::from_buffer(sparc32_core(elf::kEmSparc, size)), "cut.core", CoreOptions{});
    ASSERT_FALSE(cut.ok());
    EXPECT_EQ(cut.error().code, ErrorCode::kTruncated);
  }
}

// A sparc64 core (big-endian): the kernel's 36-word gregset (tpc the PC),
// and NT_FILE's files found under the sysroot, else, where the sysroot
// lacks one, at their own path (a program run from outside the sysroot, as
// qemu-user finds it), else nowhere.
TEST(CoreFile, Sparc64RegistersAndFilesOutsideTheSysroot) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fw_sparc64_core_" + std::to_string(getpid()));
  fs::create_directories(dir / "sysroot/lib");
  std::ofstream(dir / "sysroot/lib/libc.so.6") << "in the sysroot";
  std::ofstream(dir / "prog") << "outside it";
  const std::string lib = "/lib/libc.so.6", prog = (dir / "prog").string(), gone = (dir / "gone").string();
  CoreBytes c;
  c.big_endian = true;
  std::vector<uint8_t> notes;
  std::vector<uint8_t> prstatus(112, 0);
  prstatus[13] = 4;                          // pr_cursig: SIGILL
  prstatus[34] = 0x10, prstatus[35] = 0x92;  // pr_pid 4242
  for (unsigned i = 0; i < 36; ++i) c.put(prstatus, i == 33 ? 0x100638 : 0x1000 + i, 8);
  c.put(prstatus, 0, 8);
  c.note(notes, 1, prstatus);
  std::vector<uint8_t> files;
  c.put(files, 3, 8);
  c.put(files, 4096, 8);
  for (uint64_t start : {uint64_t{0x100000}, uint64_t{0x4000000000}, uint64_t{0x5000000000}}) {
    c.put(files, start, 8);
    c.put(files, start + 0x2000, 8);
    c.put(files, 0, 8);
  }
  for (const std::string& name : {prog, lib, gone}) files.insert(files.end(), name.begin(), name.end() + 1);
  c.note(notes, 0x46494c45, files);
  CoreOptions options;
  options.sysroot = (dir / "sysroot").string();
  auto core = CoreFile::parse(FileImage::from_buffer(c.core(43, notes)), "sparc64.core", options);
  ASSERT_TRUE(core.ok()) << to_string(core.error().code);
  ASSERT_EQ((*core)->threads().size(), 1u);
  const CoreThread& t = (*core)->threads()[0];
  EXPECT_EQ(t.tid, 4242);
  EXPECT_EQ(t.signal, 4);
  EXPECT_EQ(t.registers.get(14), 0x100eu);   // %sp
  EXPECT_EQ(t.registers.get(31), 0x101fu);   // %i7
  EXPECT_EQ(t.registers.get(103), 0x100638u);  // the PC, from tpc
  const std::vector<CoreMapping>& m = (*core)->mappings();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].path, prog);
  EXPECT_EQ(m[0].host_path, prog);     // the sysroot lacks it: its own path
  EXPECT_EQ(m[1].host_path, "");       // the sysroot's
  EXPECT_EQ(m[2].host_path, "");       // nowhere: the sysroot's path, which will say so
  fs::remove_all(dir);
}
}  // namespace
}  // namespace framewalk
