// fuzz_unwind: the step loop fed random registers, memory and unwind info.
//   bytes 0..135   the 17 x86-64 registers (DWARF order) of frame 0
//   byte  136      options: bit 0 first PC is a return address, bit 1 the
//                  CFI is .debug_frame, bits 2-3 where the memory starts,
//                  bits 4-7 the PC offset (x4) for prologue analysis
//   the rest       split in two halves: the "stack and code" memory, and a
//                  CFI section whose every row is applied to the registers
// Every walk must end (frame cap, or a reason) and never read outside its
// inputs; every row application must succeed or fail cleanly; prologue
// analysis and the instruction decoder, fed the memory bytes as code, must
// answer without reading past them.
#include <algorithm>
#include <cstring>
#include <vector>

#include "arch/registers.hpp"
#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/instruction.hpp"
#include "dwarf/cfa_program.hpp"
#include "dwarf/cfi_section.hpp"
#include "fuzz_bodies.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::fuzz {

int fuzz_unwind(const uint8_t* data, size_t size) {
  constexpr size_t kRegs = 17 * 8;
  if (size < kRegs + 1) return 0;
  arch::RegisterFile regs;
  for (unsigned i = 0; i < 17; ++i) {
    uint64_t v;
    std::memcpy(&v, data + 8 * i, 8);
    regs.set(i, v);
  }
  const uint8_t flags = data[kRegs];
  static constexpr uint64_t kBases[4] = {0x1000, 0x7ffc0000, 0x400000, 0};
  const uint64_t base = kBases[(flags >> 2) & 3];
  const size_t rest = size - kRegs - 1;
  const Bytes memory_bytes(data + kRegs + 1, rest / 2);
  const Bytes cfi_bytes(data + kRegs + 1 + rest / 2, rest - rest / 2);
  BufferMemory memory(memory_bytes, base);

  // A module over the memory, without a file: frame-pointer and signal
  // fallbacks only, checked to land after calls.
  ModuleMap modules;
  Module m;
  m.start = base;
  m.end = base + memory_bytes.size() + 1;
  m.name = "fuzz";
  modules.add(m);
  const Unwinder unwinder(modules, memory, usual_machine_key(62));
  UnwindOptions o;
  o.max_frames = 128;
  o.first_is_return_address = flags & 1;
  size_t frames = 0;
  const WalkResult r = unwinder.walk(regs, [&](const Frame&) {
    ++frames;
    return true;
  }, o);
  FUZZ_CHECK(frames >= 1 && frames <= o.max_frames);
  (void)to_string(r.reason);

  // The memory's bytes as a function's code.
  const Bytes code = memory_bytes.first(std::min<size_t>(memory_bytes.size(), 64));
  UnwindRow prologue;
  (void)arch::x86_64::prologue_row(code, (flags >> 4) * 4u, &prologue);
  (void)arch::x86_64::prologue_row(code, arch::x86_64::kReturnAddressFrame, &prologue);
  for (size_t at = 0; at < memory_bytes.size();) {
    const auto insn = arch::x86_64::decode_instruction(memory_bytes.subspan(at));
    FUZZ_CHECK(!insn || (insn->length >= 1 && insn->length <= 15 && insn->length <= memory_bytes.size() - at));
    at += insn ? insn->length : 1;
  }

  // Rows from fuzzed CFI, applied to the fuzzed registers and memory.
  dwarf::CfiSectionInfo info;
  info.kind = (flags & 2) ? dwarf::CfiKind::kDebugFrame : dwarf::CfiKind::kEhFrame;
  info.bases.section_address = base;
  const dwarf::CfiSection section(cfi_bytes, info);
  int applied = 0;
  section.for_each(
      [&](const dwarf::CfiSection::Entry& e) {
        if (e.type != dwarf::CfiSection::Entry::Type::kFde) return true;
        auto initial = dwarf::run_cie(section, *e.cie);
        if (!initial) return true;
        (void)dwarf::run_fde(section, *e.cie, e.fde, *initial, [&](const UnwindRow& row, bool) {
          auto caller = unwinder.apply_row(row, regs);
          (void)caller;
          return ++applied < 64;
        });
        return applied < 64;
      },
      nullptr);
  return 0;
}

}  // namespace framewalk::fuzz
