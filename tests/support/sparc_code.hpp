// What the machine tests of sparc64 and 32-bit SPARC share: instructions
// (one encoding for both) as big-endian words, and a frame that ran `save`
// over its caller's spilled window.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "arch/registers.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::test::sparc {

inline std::vector<uint8_t> code(std::initializer_list<uint32_t> insns) {
  std::vector<uint8_t> bytes;
  for (uint32_t i : insns)
    for (int b = 3; b >= 0; --b) bytes.push_back(static_cast<uint8_t>(i >> (8 * b)));
  return bytes;
}

constexpr uint32_t kNop = 0x01000000;
constexpr uint32_t kSave = 0x9de3bf50;  // save %sp, -176, %sp
constexpr uint32_t kCall = 0x40000010;  // call .+0x40
constexpr uint32_t kRet = 0x81c7e008;   // ret (jmpl %i7+8, %g0)

// A frame at kPc that ran `save`: %fp is its caller's %sp, the caller's
// window (%l0-%i7: 0x3010 + i, words of the machine's size) saved at %fp +
// the stack bias; this frame's own %o, %l and %i hold 0x100 + their number,
// %i7 kReturn.
struct WindowFrame {
  static constexpr uint64_t kPc = 0x100010, kReturn = 0x100040;
  WindowFrame(const MachineKey& key, uint64_t sp, uint64_t fp, int64_t bias, unsigned word) : key_(key) {
    for (unsigned i = 0; i < 16; ++i) mem.put_big(fp + bias + word * i, 0x3010 + i, word);
    for (unsigned i = 8; i < 32; ++i) regs.set(i, 0x100 + i);
    regs.set(14, sp);  // %sp
    regs.set(30, fp);  // %fp
    regs.set(31, kReturn);
    regs.set(103, kPc);
  }
  Result<arch::RegisterFile> caller(const UnwindRow& row) {
    static const ModuleMap no_modules;
    Unwinder unwinder(no_modules, mem, key_);
    return unwinder.apply_row(row, regs);
  }
  test::SparseMemory mem;
  arch::RegisterFile regs;

 private:
  MachineKey key_;
};

}  // namespace framewalk::test::sparc
