#include "arch/arm/frames.hpp"

#include <algorithm>
#include <bit>

#include "arch/arm/instruction.hpp"

namespace framewalk::arch::arm {

namespace {

// The little-endian word at `offset` in `bytes`, when it is all there.
std::optional<uint32_t> slot(Bytes bytes, size_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < 4) return std::nullopt;
  return word_at(bytes, offset);
}

UnwindRow row_at(uint16_t cfa_reg, int64_t cfa_offset) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = cfa_reg;
  row.cfa.offset = cfa_offset;
  row.return_address_register = kLr;
  return row;
}

}  // namespace

RegisterFile from_capture(const uint64_t* captured) {
  RegisterFile r;
  for (uint16_t reg : kCapturedKnown) r.set(reg, captured[reg]);
  return r;
}

RegisterFile from_gregset_bytes(Bytes bytes) {
  RegisterFile r;
  for (uint16_t reg = 0; reg < 16; ++reg)
    if (auto v = slot(bytes, 4 * reg)) r.set(reg, *v);
  if (auto cpsr = slot(bytes, 4 * 16)) r.set(kCpsr, *cpsr);
  return r;
}

RegisterFile from_ucontext_bytes(Bytes bytes) {
  RegisterFile r;
  for (uint16_t reg = 0; reg < 16; ++reg)
    if (auto v = slot(bytes, kUcontextRegsOffset + 4 * reg)) r.set(reg, *v);
  if (auto cpsr = slot(bytes, kUcontextCpsrOffset)) r.set(kCpsr, *cpsr);
  return r;
}

Trampoline trampoline_at(Bytes code) {
  // The syscall numbers: sigreturn 119 (0x77), rt_sigreturn 173 (0xad).
  auto kind_of = [](uint32_t number) {
    return number == 0x77 ? Trampoline::kSigreturn : number == 0xad ? Trampoline::kRtSigreturn : Trampoline::kNone;
  };
  if (code.size() >= 4) {
    const uint32_t w0 = word_at(code, 0);
    // svc #0x900077 alone (OABI: the number is the svc's immediate).
    if ((w0 & 0xffffff00u) == 0xef900000u) return kind_of(w0 & 0xff);
    // mov r7, #nr; then svc 0 (EABI, glibc) or svc #0x900000+nr (the kernel's sigpage, qemu's page).
    if ((w0 & 0xffffff00u) == 0xe3a07000u && code.size() >= 8) {
      const uint32_t w1 = word_at(code, 4);
      if (w1 == 0xef000000u || w1 == (0xef900000u | (w0 & 0xff))) return kind_of(w0 & 0xff);
    }
  }
  if (code.size() >= 4) {
    const uint16_t h0 = halfword_at(code, 0), h1 = halfword_at(code, 2);
    // movs r7, #nr; svc 0 (the kernel's and qemu's Thumb forms).
    if ((h0 & 0xff00) == 0x2700 && h1 == 0xdf00) return kind_of(h0 & 0xff);
    // mov.w r7, #nr; svc 0 (glibc's Thumb-2 restorers: Debian armhf).
    if (h0 == 0xf04f && (h1 & 0xff00) == 0x0700 && code.size() >= 6 && halfword_at(code, 4) == 0xdf00)
      return kind_of(h1 & 0xff);
  }
  return Trampoline::kNone;
}

UnwindRow signal_frame_row(Trampoline kind) {
  const int64_t ucontext = kind == Trampoline::kRtSigreturn ? kSiginfoSize : 0;
  UnwindRow row = row_at(kSp, 0);
  row.return_address_register = kPc;
  row.signal_frame = true;
  // r13 too: the interrupted SP is the saved one, not the CFA.
  for (uint16_t reg = 0; reg < 16; ++reg)
    (void)row.set(RegisterRule{reg, RuleKind::kOffset, ucontext + kUcontextRegsOffset + 4 * reg, {}, 0});
  (void)row.set(RegisterRule{kCpsr, RuleKind::kOffset, ucontext + kUcontextCpsrOffset, {}, 0});
  return row;
}

UnwindRow leaf_row() { return row_at(kSp, 0); }

UnwindRow arm_frame_pointer_row() {
  UnwindRow row = row_at(kR11, 4);
  (void)row.set(RegisterRule{kR11, RuleKind::kOffset, -8, {}, 0});
  (void)row.set(RegisterRule{kLr, RuleKind::kOffset, -4, {}, 0});
  return row;
}

std::optional<bool> starts_as_thumb(Bytes code) {
  // A Thumb push, maybe after instructions scheduled before it.
  for (size_t at = 0; at < code.size();) {
    auto thumb = decode_thumb_prologue(code.subspan(at));
    if (!thumb || (thumb->op != PrologueOp::kNeutral && thumb->op != PrologueOp::kPush)) break;
    if (thumb->op == PrologueOp::kPush) return true;
    at += thumb->size;
  }
  for (size_t at = 0; at < code.size(); at += 4) {
    auto arm = decode_arm_prologue(code.subspan(at));
    if (!arm || (arm->op != PrologueOp::kNeutral && arm->op != PrologueOp::kPush)) break;
    if (arm->op == PrologueOp::kPush) return false;
  }
  return std::nullopt;
}

namespace {
enum class PrologueEnd { kAtPc, kBody, kCodeEnd };
}  // namespace

bool prologue_row(Bytes code, uint64_t pc_offset, bool thumb, UnwindRow* row, bool* reached_pc) {
  if (reached_pc) *reached_pc = false;
  const bool return_address = pc_offset == kReturnAddressFrame;
  uint64_t delta = 0;  // bytes below the entry's sp
  bool recognised = false;
  bool fp_set = false;
  uint8_t fp_reg = 0;
  int64_t fp_delta = 0;  // frame pointer = entry sp - fp_delta
  int64_t saved_at[16];  // where each register was pushed, as bytes below the entry's sp
  uint16_t saved = 0;
  size_t at = 0;
  PrologueEnd end = PrologueEnd::kCodeEnd;
  while (true) {
    if (at >= pc_offset) {
      end = PrologueEnd::kAtPc;
      break;
    }
    const Bytes rest = at < code.size() ? code.subspan(at) : Bytes{};
    const auto in = thumb ? decode_thumb_prologue(rest) : decode_arm_prologue(rest);
    if (!in) break;  // kCodeEnd
    if (in->op == PrologueOp::kOther) {
      end = PrologueEnd::kBody;
      break;
    }
    switch (in->op) {
      case PrologueOp::kPush: {
        // A push of sp or pc is no prologue of ours.
        if (in->registers & ((1u << kSp) | (1u << kPc))) {
          end = PrologueEnd::kBody;
          break;
        }
        const unsigned n = static_cast<unsigned>(std::popcount(in->registers));
        unsigned i = 0;
        for (unsigned r = 0; r < 16; ++r) {
          if (!(in->registers & (1u << r))) continue;
          // Lowest register at the lowest address: the new sp.
          saved_at[r] = static_cast<int64_t>(delta + 4 * n - 4 * i);
          saved |= static_cast<uint16_t>(1u << r);
          ++i;
        }
        delta += 4 * n;
        break;
      }
      case PrologueOp::kSubSp: delta += in->amount; break;
      case PrologueOp::kNeutral: at += in->size; continue;  // scheduled among the pushes
      case PrologueOp::kSetFramePointer:
        fp_set = true;
        fp_reg = in->frame_pointer;
        fp_delta = static_cast<int64_t>(delta) - in->amount;
        break;
      case PrologueOp::kOther: break;
    }
    if (end == PrologueEnd::kBody) break;
    recognised = true;
    at += in->size;
  }
  const bool lr_saved = saved & (1u << kLr);
  if (return_address) {
    // A function that called has saved lr; where the rest is unknown, say so.
    if (!lr_saved || !recognised) return false;
    if (!fp_set && end == PrologueEnd::kCodeEnd) return false;
  } else if (end == PrologueEnd::kCodeEnd) {
    return false;
  }
  if (reached_pc) *reached_pc = end == PrologueEnd::kAtPc;
  *row = fp_set ? row_at(fp_reg, fp_delta) : row_at(kSp, static_cast<int64_t>(delta));
  for (unsigned r = 0; r < 16; ++r)
    if (saved & (1u << r)) (void)row->set(RegisterRule{static_cast<uint16_t>(r), RuleKind::kOffset, -saved_at[r], {}, 0});
  return true;
}

bool epilogue_row(Bytes code, bool thumb, UnwindRow* row) {
  uint64_t above = 0;  // an `add sp, #n` first
  size_t at = 0;
  if (thumb && code.size() >= 2 && (halfword_at(code, 0) & 0xff80) == 0xb000) {
    above = (halfword_at(code, 0) & 0x7fu) * 4;
    at = 2;
  } else if (!thumb && code.size() >= 4 && (word_at(code, 0) & 0xfffff000u) == 0xe28dd000u) {
    const uint32_t w = word_at(code, 0);
    const unsigned rotate = 2 * ((w >> 8) & 0xf);
    const uint32_t imm8 = w & 0xff;
    above = rotate ? (imm8 >> rotate) | (imm8 << (32 - rotate)) : imm8;
    at = 4;
  }
  const Bytes rest = code.subspan(std::min(at, code.size()));
  uint16_t popped = 0;  // the registers a pop that returns loads
  if (thumb) {
    if (above == 0 && is_thumb_return(rest)) {
      *row = leaf_row();
      return true;
    }
    if (rest.size() >= 2 && (halfword_at(rest, 0) & 0xff00) == 0xbd00) {
      popped = static_cast<uint16_t>((halfword_at(rest, 0) & 0xff) | 1u << kPc);  // pop {r0-r7, pc}
    } else if (rest.size() >= 4 && halfword_at(rest, 0) == 0xe8bd && (halfword_at(rest, 2) & 0xa000) == 0x8000) {
      popped = halfword_at(rest, 2);  // pop.w {..., pc}
    } else if (rest.size() >= 4 && halfword_at(rest, 0) == 0xf85d && halfword_at(rest, 2) == 0xfb04) {
      popped = 1u << kPc;  // ldr.w pc, [sp], #4
    }
  } else {
    if (above == 0 && is_arm_return(rest)) {
      *row = leaf_row();
      return true;
    }
    if (rest.size() >= 4 && (word_at(rest, 0) & 0xffffa000u) == 0xe8bd8000u) {
      popped = static_cast<uint16_t>(word_at(rest, 0));  // ldmia sp!, {..., pc}
    } else if (rest.size() >= 4 && word_at(rest, 0) == 0xe49df004u) {
      popped = 1u << kPc;  // ldr pc, [sp], #4
    }
  }
  if (!popped) return false;
  const unsigned n = static_cast<unsigned>(std::popcount(popped));
  *row = row_at(kSp, static_cast<int64_t>(above + 4 * n));
  row->return_address_register = kPc;
  unsigned i = 0;
  for (unsigned r = 0; r < 16; ++r) {
    if (!(popped & (1u << r))) continue;
    (void)row->set(RegisterRule{static_cast<uint16_t>(r), RuleKind::kOffset, -static_cast<int64_t>(4 * (n - i)), {}, 0});
    ++i;
  }
  return true;
}

}  // namespace framewalk::arch::arm
