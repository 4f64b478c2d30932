// The step loop on synthetic 32-bit ARM stacks with .ARM.exidx as the
// unwind information: every entry kind between frames, the end of the stack
// at EXIDX_CANTUNWIND, glibc's sigreturn restorer (whose entry pops r13) as
// a signal frame, an activation at its function's first instruction, broken
// entries, and the source order.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "arch/arm/registers.hpp"
#include "elf/elf_writer.hpp"
#include "support/section_builder.hpp"
#include "support/tiny_elf.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {
namespace {

namespace a = arch::arm;
constexpr uint16_t kEmArm = 40;

// Sparse memory with 4-byte words.
class FakeMemory final : public test::SparseMemory {
 public:
  void word(uint64_t address, uint32_t value) { put(address, value, 4); }
};

std::vector<uint8_t> words_le(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words)
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  return out;
}

uint32_t prel31(uint64_t from, uint64_t to) { return static_cast<uint32_t>(to - from) & 0x7fffffffu; }

// One index entry: the function's start and its data word, given where the
// index and the table section will be (a table entry is an offset into it).
struct Entry {
  uint64_t function;
  enum Kind { kCantUnwind, kInline, kTable } kind;
  uint32_t value;  // kInline: the data word; kTable: the offset of the table entry in .ARM.extab
};

// The tiny 32-bit ELF (at 0x10000), made an ARM file, with .ARM.extab and
// an .ARM.exidx of `entries` added where elf_writer puts them.
// A function symbol of the test file (ARM: bit 0 of the value marks Thumb code).
struct FunctionSymbol {
  const char* name;
  uint32_t value;
  uint32_t size;
};

// .strtab and .symtab (Elf32_Sym) for `symbols`, appended; the symbol
// table's sh_link and sh_entsize patched in, which elf_writer does not write.
std::vector<uint8_t> with_symbols(std::vector<uint8_t> image, const std::vector<FunctionSymbol>& symbols,
                                  uint32_t entry) {
  std::vector<uint8_t> strtab{0}, symtab(16, 0);
  auto put32 = [](std::vector<uint8_t>& v, uint32_t x) {
    for (int i = 0; i < 4; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
  };
  for (const FunctionSymbol& f : symbols) {
    put32(symtab, static_cast<uint32_t>(strtab.size()));
    for (const char* c = f.name; *c; ++c) strtab.push_back(static_cast<uint8_t>(*c));
    strtab.push_back(0);
    put32(symtab, f.value);
    put32(symtab, f.size);
    symtab.push_back(0x12);  // STB_GLOBAL, STT_FUNC
    symtab.push_back(0);
    symtab.push_back(1);     // shndx: .text
    symtab.push_back(0);
  }
  for (auto [name, type, data] : {std::tuple{".strtab", 3u, &strtab}, std::tuple{".symtab", 2u, &symtab}}) {
    auto file = elf::ElfFile::parse(FileImage::from_buffer(std::move(image)), "arm");
    EXPECT_TRUE(file.ok());
    auto placement = elf::plan_added_section(**file, elf::SegmentPolicy::kNever, 4);
    EXPECT_TRUE(placement.ok());
    elf::NewSection sec;
    sec.name = name;
    sec.type = type;
    sec.data = *data;
    auto out = elf::add_section(**file, *placement, sec);
    EXPECT_TRUE(out.ok());
    image = std::move(*out);
  }
  auto file = elf::ElfFile::parse(FileImage::from_buffer(std::vector<uint8_t>(image)), "arm");
  EXPECT_TRUE(file.ok());
  uint32_t symtab_index = 0, strtab_index = 0;
  for (const elf::Section& sec : (*file)->sections()) {
    if (sec.name == ".symtab") symtab_index = sec.index;
    if (sec.name == ".strtab") strtab_index = sec.index;
  }
  const uint32_t shoff = image[32] | image[33] << 8 | image[34] << 16 | static_cast<uint32_t>(image[35]) << 24;
  const size_t header = shoff + 40 * symtab_index;
  image[header + 24] = static_cast<uint8_t>(strtab_index);  // sh_link
  image[header + 36] = 16;                                  // sh_entsize
  for (int i = 0; i < 4; ++i) image[24 + i] = static_cast<uint8_t>(entry >> (8 * i));  // e_entry
  return image;
}

std::shared_ptr<const elf::ElfFile> arm_file(const std::vector<Entry>& entries, const std::vector<uint32_t>& extab,
                                             const std::vector<uint8_t>& debug_frame = {},
                                             const std::vector<FunctionSymbol>& symbols = {}, uint32_t entry = 0) {
  std::vector<uint8_t> image = test::tiny_elf(false, Endian::kLittle);
  image[18] = kEmArm;
  image[19] = 0;
  auto add = [](std::vector<uint8_t> bytes, const char* name, uint32_t type,
                auto contents_at) -> std::pair<std::vector<uint8_t>, uint64_t> {
    auto file = elf::ElfFile::parse(FileImage::from_buffer(std::move(bytes)), "arm");
    EXPECT_TRUE(file.ok());
    auto placement = elf::plan_added_section(**file, elf::SegmentPolicy::kAuto, 4);
    EXPECT_TRUE(placement.ok());
    const std::vector<uint8_t> data = contents_at(placement->address);
    elf::NewSection s;
    s.name = name;
    s.type = type;
    s.data = data;
    auto out = elf::add_section(**file, *placement, s);
    EXPECT_TRUE(out.ok());
    return {std::move(*out), placement->address};
  };
  auto [with_extab, extab_address] =
      add(std::move(image), ".ARM.extab", elf::kShtProgbits, [&](uint64_t) { return words_le(extab); });
  auto [with_index, index_address] = add(std::move(with_extab), ".ARM.exidx", 0x70000001, [&](uint64_t at) {
    std::vector<uint32_t> words;
    for (size_t i = 0; i < entries.size(); ++i) {
      const uint64_t entry_at = at + 8 * i;
      words.push_back(prel31(entry_at, entries[i].function));
      switch (entries[i].kind) {
        case Entry::kCantUnwind: words.push_back(1); break;
        case Entry::kInline: words.push_back(entries[i].value); break;
        case Entry::kTable: words.push_back(prel31(entry_at + 4, extab_address + entries[i].value)); break;
      }
    }
    return words_le(words);
  });
  (void)index_address;
  if (!debug_frame.empty())
    with_index = add(std::move(with_index), ".debug_frame", elf::kShtProgbits, [&](uint64_t) { return debug_frame; }).first;
  if (!symbols.empty()) with_index = with_symbols(std::move(with_index), symbols, entry);
  auto file = elf::ElfFile::parse(FileImage::from_buffer(std::move(with_index)), "arm");
  EXPECT_TRUE(file.ok());
  return *file;
}

ModuleMap modules_of(std::shared_ptr<const elf::ElfFile> file) {
  ModuleMap map;
  Module m;
  m.start = 0x10000;
  m.end = 0x20000;
  m.name = "arm";
  m.data = std::make_shared<ModuleData>("arm", std::move(file));
  map.add(m);
  return map;
}

// Functions: leaf 0x10400 (no pops), mid 0x10500 (push {r4, lr}), main
// 0x10600 (Thumb r7 frame: vsp = r7; pop {r7, lr}), the restorer's entry
// 0x107fe (glibc's: vsp += 160; pop {r0-r3}; pop {r4-r15}) with the
// restorer's code at 0x10800, broken 0x10900 (a spare opcode), nolr 0x10a00
// (a frame that keeps lr nowhere: vsp += 8), _start 0x10b00 (CANTUNWIND,
// the entry point) and, covered by the same merged CANTUNWIND entry as GNU
// ld makes for code without tables, nounwind 0x10c00. Thumb symbols have
// bit 0 set.
std::shared_ptr<const elf::ElfFile> program(const std::vector<uint8_t>& debug_frame = {}) {
  return arm_file(
      {
          {0x10400, Entry::kInline, 0x80b0b0b0},
          {0x10500, Entry::kInline, 0x80a8b0b0},
          {0x10600, Entry::kTable, 0},
          {0x107fe, Entry::kTable, 8},
          {0x10900, Entry::kInline, 0x80b100b0},
          {0x10a00, Entry::kInline, 0x8001b0b0},
          {0x10b00, Entry::kCantUnwind, 0},
      },
      {0x81019784, 0x08b0b0b0 /* pr1, N = 1: vsp = r7; pop {r7, r14}; finish */,
       0x810127b1, 0x0f8fffb0 /* pr1, N = 1: vsp += 160; pop {r0-r3}; pop {r4-r15}; finish */},
      debug_frame,
      {{"leaf", 0x10401, 0x80}, {"mid", 0x10501, 0x80}, {"main", 0x10601, 0x100}, {"_start", 0x10b01, 0x40},
       {"nounwind", 0x10c01, 0x40}},
      0x10b01);
}

arch::RegisterFile regs_at(uint64_t pc, uint64_t sp, uint64_t lr, uint64_t r7, bool thumb = true) {
  arch::RegisterFile r;
  r.set(a::kPc, pc);
  r.set(a::kSp, sp);
  r.set(a::kLr, lr);
  r.set(a::kR7, r7);
  r.set(a::kCpsr, thumb ? 0x30 : 0x10);
  return r;
}

struct Walk {
  std::vector<Frame> frames;
  WalkResult result;
};

Walk walk(const ModuleMap& modules, Memory& memory, const arch::RegisterFile& regs, UnwindOptions options = {}) {
  Unwinder unwinder(modules, memory, usual_machine_key(kEmArm));
  Walk w;
  w.result = unwinder.walk(regs, [&](const Frame& f) {
    w.frames.push_back(f);
    return true;
  }, options);
  return w;
}

TEST(ArmUnwinder, ExidxFromALeafToTheCantunwindEnd) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  // mid's frame at 0x7000: r4, then lr (Thumb) into main.
  mem.word(0x7000, 0x4444);
  mem.word(0x7004, 0x10611);
  // main's r7 frame at 0x7100: saved r7, then lr into _start.
  mem.word(0x7100, 0x7200);
  mem.word(0x7104, 0x10b05);
  const Walk w = walk(modules, mem, regs_at(0x10410, 0x7000, 0x10521, 0x7100));
  ASSERT_EQ(w.frames.size(), 4u);
  EXPECT_EQ(w.result.reason, StopReason::kOutermost);
  EXPECT_EQ(w.frames[0].pc, 0x10410u);
  EXPECT_EQ(w.frames[0].source, FrameSource::kContext);
  // The leaf's return address is lr, without its Thumb bit; looked up 2 bytes back.
  EXPECT_EQ(w.frames[1].pc, 0x10520u);
  EXPECT_EQ(w.frames[1].lookup_pc, 0x1051eu);
  EXPECT_EQ(w.frames[1].sp, 0x7000u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kExidx);
  EXPECT_STREQ(to_string(w.frames[1].source), "exidx");
  // The Thumb bit of mid's symbol is not part of its address.
  auto mid = modules.find(0x10520)->data->symbols().lookup(0x1051e);
  ASSERT_TRUE(mid.has_value());
  EXPECT_EQ(mid->symbol->name, "mid");
  EXPECT_EQ(mid->offset, 0x1eu);
  EXPECT_EQ(w.frames[2].pc, 0x10610u);
  EXPECT_EQ(w.frames[2].sp, 0x7008u);
  EXPECT_EQ(w.frames[3].pc, 0x10b04u);
  EXPECT_EQ(w.frames[3].sp, 0x7108u);
  EXPECT_EQ(w.frames[3].source, FrameSource::kExidx);
}

TEST(ArmUnwinder, ApplyRowRestoresThePoppedRegisters) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  mem.word(0x7000, 0x4444);
  mem.word(0x7004, 0x10611);
  Unwinder unwinder(modules, mem, usual_machine_key(kEmArm));
  // mid's row: pop {r4, lr} gives r4, lr and the PC.
  UnwindRow row;
  row.cfa = CfaRule{CfaKind::kRegisterOffset, a::kSp, 8, {}, 0};
  row.return_address_register = a::kLr;
  (void)row.set(RegisterRule{4, RuleKind::kOffset, -8, {}, 0});
  (void)row.set(RegisterRule{a::kLr, RuleKind::kOffset, -4, {}, 0});
  auto caller = unwinder.apply_row(row, regs_at(0x10510, 0x7000, 0x1, 0x7100));
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(4), 0x4444u);
  EXPECT_EQ(caller->get(a::kLr), 0x10611u);  // the register keeps its Thumb bit
  EXPECT_EQ(caller->get(a::kPc), 0x10610u);  // the PC does not
  EXPECT_EQ(caller->get(a::kSp), 0x7008u);
}

TEST(ArmUnwinder, GlibcRestorerIsASignalFrame) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  // __default_rt_sa_restorer (Thumb-2): mov.w r7, #173; svc 0.
  mem.halfwords(0x10800, {0xf04f, 0x07ad, 0xdf00, 0xbf00});
  // The handler (mid) saved r4 and lr = the restorer (Thumb) at 0x7000.
  mem.word(0x7000, 0x4444);
  mem.word(0x7004, 0x10801);
  // rt_sigframe at 0x7008: siginfo, then the ucontext; its sigcontext
  // registers at +32: interrupted in the leaf at 0x10416 with sp 0x7800,
  // lr into mid (which returns into main, whose r7 frame is at 0x7900).
  const uint64_t uc = 0x7008 + 128, regs = uc + 32;
  mem.word(regs + 4 * 7, 0x7900);
  mem.word(regs + 4 * 13, 0x7800);
  mem.word(regs + 4 * 14, 0x10523);
  mem.word(regs + 4 * 15, 0x10416);
  mem.word(uc + 96, 0x60000030);  // cpsr: Thumb
  mem.word(0x7800, 0x5555);       // mid's frame below the signal
  mem.word(0x7804, 0x10611);
  mem.word(0x7900, 0);            // main's r7 frame
  mem.word(0x7904, 0x10b05);
  for (uint16_t r : {0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12}) mem.word(regs + 4 * r, r);
  const Walk w = walk(modules, mem, regs_at(0x10510, 0x7000, 0x1, 0x7100));
  ASSERT_EQ(w.frames.size(), 6u) << to_string(w.result.reason) << " " << to_string(w.result.error);
  EXPECT_EQ(w.frames[1].pc, 0x10800u);
  EXPECT_TRUE(w.frames[1].signal_trampoline);
  // The interrupted frame: an activation at its exact PC, from the signal row.
  EXPECT_EQ(w.frames[2].pc, 0x10416u);
  EXPECT_TRUE(w.frames[2].activation);
  EXPECT_EQ(w.frames[2].lookup_pc, 0x10416u);
  EXPECT_EQ(w.frames[2].source, FrameSource::kSignal);
  EXPECT_EQ(w.frames[2].sp, 0x7800u);
  // The leaf returns through the lr it was interrupted with.
  EXPECT_EQ(w.frames[3].pc, 0x10522u);
  EXPECT_EQ(w.frames[4].pc, 0x10610u);
  EXPECT_EQ(w.frames[5].pc, 0x10b04u);
  EXPECT_EQ(w.result.reason, StopReason::kOutermost);
}

TEST(ArmUnwinder, AnActivationAtItsFirstInstructionHasPushedNothing) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  // At mid's first instruction: lr still holds the return into main.
  mem.word(0x7100, 0x7200);
  mem.word(0x7104, 0x10b05);
  const Walk w = walk(modules, mem, regs_at(0x10500, 0x7000, 0x10611, 0x7100));
  ASSERT_EQ(w.frames.size(), 3u);
  EXPECT_EQ(w.frames[1].pc, 0x10610u);
  EXPECT_EQ(w.frames[1].sp, 0x7000u);
  EXPECT_EQ(w.frames[2].pc, 0x10b04u);
}

// main's code: push {r7, lr}; sub sp, #8; add r7, sp, #0; movs r0, #1;
// bl; movs r0, #2; add sp, #8; pop {r7, pc}; and a bl in _start before its
// return address.
void main_code(FakeMemory& mem) {
  mem.halfwords(0x10600, {0xb580, 0xb082, 0xaf00, 0x2001, 0xf000, 0xf800, 0x2002, 0xb002, 0xbd80});
  mem.halfwords(0x10b00, {0xf000, 0xf800});
}

TEST(ArmUnwinder, AnActivationInThePrologueGetsWhatRanNotTheEntry) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  main_code(mem);
  // Stopped after the push: r7 is still the caller's, the entry's vsp = r7 would use it.
  mem.word(0x7000, 0x7300);
  mem.word(0x7004, 0x10b05);
  const Walk w = walk(modules, mem, regs_at(0x10602, 0x7000, 0x1, 0x9990));
  ASSERT_EQ(w.frames.size(), 2u) << to_string(w.result.reason);
  EXPECT_EQ(w.frames[1].pc, 0x10b04u);
  EXPECT_EQ(w.frames[1].sp, 0x7008u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kPrologue);
  EXPECT_EQ(w.result.reason, StopReason::kOutermost);
}

TEST(ArmUnwinder, AnActivationAtItsEpilogueReturn) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  main_code(mem);
  // At `add sp, #8; pop {r7, pc}`: the saved pair is 8 above sp.
  mem.word(0x7008, 0x7300);
  mem.word(0x700c, 0x10b05);
  const Walk w = walk(modules, mem, regs_at(0x1060e, 0x7000, 0x1, 0x9990));
  ASSERT_EQ(w.frames.size(), 2u) << to_string(w.result.reason);
  EXPECT_EQ(w.frames[1].pc, 0x10b04u);
  EXPECT_EQ(w.frames[1].sp, 0x7010u);
  // In the body, after the call, the entry's row holds.
  mem.word(0x9990, 0x7300);
  mem.word(0x9994, 0x10b05);
  const Walk body = walk(modules, mem, regs_at(0x1060c, 0x7000, 0x1, 0x9990));
  ASSERT_EQ(body.frames.size(), 2u);
  EXPECT_EQ(body.frames[1].source, FrameSource::kExidx);
  EXPECT_EQ(body.frames[1].sp, 0x9998u);
}

TEST(ArmUnwinder, BrokenEntryStopsInsteadOfAGuess) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  const Walk w = walk(modules, mem, regs_at(0x10910, 0x7000, 0x10611, 0x7100));
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_EQ(w.result.reason, StopReason::kBadUnwindInfo);
  EXPECT_EQ(w.result.error, ErrorCode::kSpareUnwindOpcode);
  EXPECT_EQ(w.result.address, 0x10910u);
}

TEST(ArmUnwinder, AReturnAddressFrameThatKeepsLrNowhereIsBadUnwindInfo) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  // The leaf returns into nolr, whose entry saves no lr: only an activation may keep it in the register.
  const Walk w = walk(modules, mem, regs_at(0x10410, 0x7000, 0x10a11, 0x7100));
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.result.reason, StopReason::kBadUnwindInfo);
  EXPECT_EQ(w.result.error, ErrorCode::kReturnAddressNoRule);
}

TEST(ArmUnwinder, DebugFrameComesBeforeExidx) {
  // .debug_frame for mid that disagrees with its entry: CFA = sp + 16, lr at CFA - 4.
  test::CfiBuilder cfi(dwarf::CfiKind::kDebugFrame);
  test::CieSpec cie;
  cie.augmentation = "";
  cie.address_size = 4;
  cie.code_alignment = 2;
  cie.data_alignment = -4;
  cie.return_address_register = a::kLr;
  cie.instructions = {0x0c, a::kSp, 0x00};  // DW_CFA_def_cfa sp, 0
  const test::RecordLabels c = cfi.cie(cie);
  test::FdeSpec fde;
  fde.pc_begin = 0x10500;
  fde.pc_range = 0x100;
  fde.encoding = 0;
  fde.address_size = 4;
  fde.augmentation = false;
  fde.instructions = {0x0e, 0x10, 0x8e, 0x01};  // DW_CFA_def_cfa_offset 16; DW_CFA_offset lr, CFA-4
  cfi.fde(c.start, fde);
  const ModuleMap modules = modules_of(program(cfi.finish()));
  FakeMemory mem;
  mem.word(0x7004, 0x10b05);  // where the entry would find lr
  mem.word(0x700c, 0x10611);  // where .debug_frame does
  mem.word(0x7100, 0x7200);
  mem.word(0x7104, 0x10b05);
  const Walk w = walk(modules, mem, regs_at(0x10510, 0x7000, 0x1, 0x7100));
  ASSERT_GE(w.frames.size(), 3u);
  EXPECT_EQ(w.frames[1].pc, 0x10610u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kDebugFrame);
  EXPECT_EQ(w.frames[1].sp, 0x7010u);
  // main has no .debug_frame: its entry.
  EXPECT_EQ(w.frames[2].source, FrameSource::kExidx);
}

TEST(ArmUnwinder, CantunwindOutsideTheEntryFunctionFallsBackToThePrologue) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  // nounwind: push {r7, lr}; sub sp, #8; add r7, sp, #0; movs r0, #1 (its symbol has the Thumb bit).
  mem.halfwords(0x10c00, {0xb580, 0xb082, 0xaf00, 0x2001});
  // main calls it (a Thumb bl before the return address 0x10610).
  mem.halfwords(0x1060c, {0xf000, 0xf800});
  // nounwind's frame: r7 = 0x7100 is 8 below its saved pair at 0x7108.
  mem.word(0x7108, 0x7200);   // saved r7: main's frame
  mem.word(0x710c, 0x10611);  // lr into main
  mem.word(0x7200, 0);
  mem.word(0x7204, 0x10b05);  // main's lr into _start
  const Walk w = walk(modules, mem, regs_at(0x10410, 0x7000, 0x10c11, 0x7100));
  ASSERT_EQ(w.frames.size(), 4u) << to_string(w.result.reason);
  EXPECT_EQ(w.frames[1].pc, 0x10c10u);
  EXPECT_EQ(w.frames[2].pc, 0x10610u);
  EXPECT_EQ(w.frames[2].source, FrameSource::kFramePointer);
  EXPECT_EQ(w.frames[2].sp, 0x7110u);
  EXPECT_EQ(w.frames[3].pc, 0x10b04u);
  // _start's own CANTUNWIND: the end.
  EXPECT_EQ(w.result.reason, StopReason::kOutermost);
}

// The same CANTUNWIND region with nothing for the fallbacks (no code to read,
// no frame pointer): the walk ends there as the tables say, and says so.
TEST(ArmUnwinder, CantunwindWithoutAFallbackIsADeclaredEnd) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  const Walk w = walk(modules, mem, regs_at(0x10410, 0x7000, 0x10c11, 0));
  ASSERT_EQ(w.frames.size(), 2u) << to_string(w.result.reason);
  EXPECT_EQ(w.frames[1].pc, 0x10c10u);
  EXPECT_EQ(w.result.reason, StopReason::kCannotUnwind);
  EXPECT_EQ(w.result.address, 0x10c10u);
  EXPECT_STREQ(to_string(w.result.reason), "cannot-unwind");
}

TEST(ArmUnwinder, SframeOnlyDoesNotReadExidx) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  UnwindOptions o;
  o.sources = SourceOrder::kSframe;
  o.allow_frame_pointer = false;
  const Walk w = walk(modules, mem, regs_at(0x10410, 0x7000, 0x10521, 0x7100), o);
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_EQ(w.result.reason, StopReason::kNoUnwindInfo);
  EXPECT_EQ(w.result.sframe_miss, SframeMiss::kNoSection);
}

TEST(ArmUnwinder, ARowCacheGivesTheSameWalk) {
  const ModuleMap modules = modules_of(program());
  FakeMemory mem;
  mem.word(0x7000, 0x4444);
  mem.word(0x7004, 0x10611);
  mem.word(0x7100, 0x7200);
  mem.word(0x7104, 0x10b05);
  RowCache cache;
  UnwindOptions o;
  o.row_cache = &cache;
  const Walk first = walk(modules, mem, regs_at(0x10410, 0x7000, 0x10521, 0x7100), o);
  const Walk second = walk(modules, mem, regs_at(0x10410, 0x7000, 0x10521, 0x7100), o);
  ASSERT_EQ(first.frames.size(), 4u);
  ASSERT_EQ(second.frames.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(first.frames[i].pc, second.frames[i].pc);
    EXPECT_EQ(first.frames[i].source, second.frames[i].source);
  }
  EXPECT_EQ(cache.size(), 4u);
}

}  // namespace
}  // namespace framewalk

namespace framewalk {
namespace {

// A row that restores VFP d8 (DWARF 264, vpush'd: 8 bytes on a 32-bit
// stack) and lr: the caller's d8 is the whole 64-bit value, kept in the
// register file beyond its 64 slots.
TEST(ArmApplyRow, VfpRegistersAreRestoredWhole) {
  test::SparseMemory memory;
  memory.put(0x8000, 0x1122334455667788ull, 8);  // d8 at CFA - 16
  memory.put(0x800c, 0x10401, 4);                // lr at CFA - 4
  const ModuleMap modules;
  const Unwinder unwinder(modules, memory, usual_machine_key(40));
  UnwindRow row;
  row.return_address_register = 14;
  row.cfa = CfaRule{CfaKind::kRegisterOffset, 13, 16, {}, 0};
  ASSERT_TRUE(row.set(RegisterRule{14, RuleKind::kOffset, -4, {}, 0}).ok());
  ASSERT_TRUE(row.set(RegisterRule{264, RuleKind::kOffset, -16, {}, 0}).ok());
  arch::RegisterFile callee;
  callee.set(13, 0x8000);
  callee.set(15, 0x10100);
  callee.set(265, 0x99);  // d9: unchanged by the row, kept
  auto caller = unwinder.apply_row(row, callee);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->value_or(264, 0), 0x1122334455667788ull);
  EXPECT_EQ(caller->value_or(265, 0), 0x99u);
  EXPECT_EQ(caller->value_or(13, 0), 0x8010u);
  EXPECT_EQ(caller->value_or(15, 0), 0x10400u);  // the Thumb bit cleared
}

}  // namespace
}  // namespace framewalk
