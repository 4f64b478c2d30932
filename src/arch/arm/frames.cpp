#include "arch/arm/frames.hpp"

#include <algorithm>
#include <bit>

#include "arch/arm/instruction.hpp"

namespace framewalk::arch::arm {

namespace {

// The little-endian word at `offset` in `bytes`, when it is all there.
std::optional<uint64_t> slot(Bytes bytes, size_t offset) {
  return ByteReader::unsigned_at(bytes, offset, 4, Endian::kLittle);
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
  // A Thumb push, maybe after instructions scheduled before it, or after
  // shrink-wrapping's test and forward branch to an early exit.
  for (size_t at = 0; at < code.size();) {
    auto thumb = decode_thumb_prologue(code.subspan(at));
    const bool forward = thumb && thumb->op == PrologueOp::kConditionalBranch && thumb->branch_offset > 0;
    if (!thumb || (thumb->op != PrologueOp::kNeutral && thumb->op != PrologueOp::kPush && !forward)) break;
    if (thumb->op == PrologueOp::kPush) return true;
    at += thumb->size;
  }
  // In ARM code, -mapcs-frame's `mov ip, sp` may come first.
  for (size_t at = 0; at < code.size(); at += 4) {
    auto arm = decode_arm_prologue(code.subspan(at));
    if (!arm || (arm->op != PrologueOp::kNeutral && arm->op != PrologueOp::kCopySpToIp && arm->op != PrologueOp::kPush))
      break;
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
  bool ip_set = false;   // ip = entry sp - ip_delta (`mov ip, sp` of -mapcs-frame)
  int64_t ip_delta = 0;
  int64_t saved_at[16];  // where each register was pushed, as bytes below the entry's sp
  uint16_t saved = 0;
  // The VFP registers vpush stored (DWARF numbers), where, and how many.
  uint16_t vfp_reg[32];
  int64_t vfp_at[32];
  unsigned vfp_saved = 0;
  size_t at = 0;
  PrologueEnd end = PrologueEnd::kCodeEnd;
  bool past_branch = false;  // a conditional branch was stepped over
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
    // Shrink-wrapping puts a test and a branch to an early exit before the
    // prologue (`cmp.w r0, #1000; beq.n 1f; push {r3, r4, r7, lr}`): a frame
    // at a return address has run the prologue, on the straight path past a
    // forward branch; an activation has where the branch goes past its PC.
    if (in->op == PrologueOp::kConditionalBranch) {
      const int64_t target = static_cast<int64_t>(at) + in->branch_offset;
      if (in->branch_offset <= 0 || (!return_address && target <= static_cast<int64_t>(pc_offset))) {
        end = PrologueEnd::kBody;
        break;
      }
      past_branch = true;
      at += in->size;
      continue;
    }
    switch (in->op) {
      case PrologueOp::kPush: {
        // A push of sp is no prologue of ours; one of pc (-mapcs-frame's
        // `push {fp, ip, lr, pc}`) stores a word no caller needs.
        if (in->registers & (1u << kSp)) {
          end = PrologueEnd::kBody;
          break;
        }
        const unsigned n = static_cast<unsigned>(std::popcount(in->registers));
        unsigned i = 0;
        for (unsigned r = 0; r < 16; ++r) {
          if (!(in->registers & (1u << r))) continue;
          // Lowest register at the lowest address: the new sp. A register
          // pushed twice holds the caller's value in its first slot.
          if (r != kPc && !(saved & (1u << r))) {
            saved_at[r] = static_cast<int64_t>(delta + 4 * n - 4 * i);
            saved |= static_cast<uint16_t>(1u << r);
          }
          ++i;
        }
        delta += 4 * n;
        break;
      }
      case PrologueOp::kVfpPush:
        for (unsigned i = 0; i < in->vfp_count && vfp_saved < 32; ++i) {
          const uint16_t reg = static_cast<uint16_t>(in->vfp_first + i);
          if (std::find(vfp_reg, vfp_reg + vfp_saved, reg) != vfp_reg + vfp_saved) continue;
          vfp_reg[vfp_saved] = reg;
          vfp_at[vfp_saved++] = static_cast<int64_t>(delta + in->amount - in->vfp_bytes * i);
        }
        delta += in->amount;
        break;
      case PrologueOp::kSubSp: delta += in->amount; break;
      case PrologueOp::kCopySpToIp:
        ip_set = true;
        ip_delta = static_cast<int64_t>(delta) - in->amount;
        break;
      case PrologueOp::kNeutral:  // scheduled among the pushes
        if (in->clobbers_ip) ip_set = false;
        at += in->size;
        continue;
      case PrologueOp::kSetFramePointer:
        if (in->from_ip && !ip_set) {
          end = PrologueEnd::kBody;
          break;
        }
        fp_set = true;
        fp_reg = in->frame_pointer;
        fp_delta = in->from_ip ? ip_delta + in->amount : static_cast<int64_t>(delta) - in->amount;
        break;
      case PrologueOp::kConditionalBranch:
      case PrologueOp::kOther: break;
    }
    if (end == PrologueEnd::kBody) break;
    recognised = true;
    at += in->size;
  }
  // Bytes that end past a branch stepped over: the branch ended the
  // prologue, as it would have without looking past it.
  if (end == PrologueEnd::kCodeEnd && past_branch) end = PrologueEnd::kBody;
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
  for (unsigned i = 0; i < vfp_saved; ++i)
    (void)row->set(RegisterRule{vfp_reg[i], RuleKind::kOffset, -vfp_at[i], {}, 0});
  return true;
}

namespace {

// One instruction of an epilogue, from the PC on.
struct EpilogueStep {
  enum Kind : uint8_t { kNone, kAddSp, kVfpPop, kPop, kReturn } kind = kNone;
  uint8_t size = 0;
  uint32_t amount = 0;        // kAddSp
  uint16_t registers = 0;     // kPop: the core registers loaded, the lowest from the lowest address
  PrologueInstruction vfp;    // kVfpPop: the registers as vfp_transfer gives them
};

EpilogueStep thumb_epilogue_step(Bytes code) {
  EpilogueStep step;
  if (code.size() < 2) return step;
  const uint16_t h = halfword_at(code, 0);
  step.size = 2;
  if ((h & 0xff80) == 0xb000) {  // add sp, #imm7 * 4
    step.kind = EpilogueStep::kAddSp;
    step.amount = (h & 0x7fu) * 4;
  } else if ((h & 0xfe00) == 0xbc00 && (h & 0x1ff)) {  // pop {r0-r7[, pc]}
    step.kind = EpilogueStep::kPop;
    step.registers = static_cast<uint16_t>((h & 0xff) | ((h & 0x100) ? 1u << kPc : 0));
  } else if (h == 0x4770) {  // bx lr
    step.kind = EpilogueStep::kReturn;
  } else if (code.size() >= 4) {
    const uint16_t h2 = halfword_at(code, 2);
    step.size = 4;
    if ((h & 0xfbff) == 0xf10d && (h2 & 0x8f00) == 0x0d00) {  // add.w sp, sp, #imm
      step.kind = EpilogueStep::kAddSp;
      step.amount = thumb_modified_immediate(h, h2);
    } else if ((h & 0xfbff) == 0xf20d && (h2 & 0x8f00) == 0x0d00) {  // addw sp, sp, #imm12
      step.kind = EpilogueStep::kAddSp;
      step.amount = thumb_imm12(h, h2);
    } else if (h == 0xe8bd && (h2 & 0x2000) == 0 && h2) {  // pop.w {...}
      step.kind = EpilogueStep::kPop;
      step.registers = h2;
    } else if (h == 0xf85d && (h2 & 0x0fff) == 0x0b04) {  // ldr.w rN, [sp], #4
      step.kind = EpilogueStep::kPop;
      step.registers = static_cast<uint16_t>(1u << (h2 >> 12));
    } else if ((h & 0xffbf) == 0xecbd && (h2 & 0x0e00) == 0x0a00 &&  // vpop {...}
               vfp_transfer((h >> 6) & 1, h2 >> 12, h2 & 0x100, h2 & 0xff, &step.vfp)) {
      step.kind = EpilogueStep::kVfpPop;
    }
  }
  return step;
}

EpilogueStep arm_epilogue_step(Bytes code) {
  EpilogueStep step;
  if (code.size() < 4) return step;
  const uint32_t w = word_at(code, 0);
  step.size = 4;
  if ((w & 0xfffff000u) == 0xe28dd000u) {  // add sp, sp, #imm
    step.kind = EpilogueStep::kAddSp;
    step.amount = arm_immediate(w);
  } else if ((w & 0xffff0000u) == 0xe8bd0000u && (w & 0xffff) && !(w & (1u << kSp))) {  // ldmia sp!, {...} (pop)
    step.kind = EpilogueStep::kPop;
    step.registers = static_cast<uint16_t>(w);
  } else if ((w & 0xffff0000u) == 0xe89d0000u && (w & (1u << kSp)) && (w & (1u << kPc))) {
    // ldmia sp, {..., sp, pc}: -mapcs-frame's return, sp loaded from the frame.
    step.kind = EpilogueStep::kPop;
    step.registers = static_cast<uint16_t>(w);
  } else if ((w & 0xffff0fffu) == 0xe49d0004u) {  // ldr rN, [sp], #4 (pop of one)
    step.kind = EpilogueStep::kPop;
    step.registers = static_cast<uint16_t>(1u << ((w >> 12) & 0xf));
  } else if (w == 0xe12fff1eu) {  // bx lr
    step.kind = EpilogueStep::kReturn;
  } else if ((w & 0xffbf0e00u) == 0xecbd0a00u &&  // vpop {...} (vldmia sp!)
             vfp_transfer((w >> 22) & 1, (w >> 12) & 0xf, w & 0x100, w & 0xff, &step.vfp)) {
    step.kind = EpilogueStep::kVfpPop;
  }
  return step;
}

}  // namespace

bool epilogue_row(Bytes code, bool thumb, UnwindRow* row) {
  // The instructions from the PC to the return, in the order compilers
  // emit them: `add sp` (one or more), vpop, then a pop that loads pc, or a
  // pop and `bx lr`, or `bx lr` alone. Each adds to what is still on the
  // stack above sp: the row at the PC finds every such register there.
  uint64_t above = 0;
  RegisterRule rules[UnwindRow::kMaxRules];
  int n_rules = 0;
  auto add_rule = [&](uint16_t reg, uint64_t offset) {
    if (n_rules < UnwindRow::kMaxRules)
      rules[n_rules++] = RegisterRule{reg, RuleKind::kOffset, static_cast<int64_t>(offset), {}, 0};
  };
  size_t at = 0;
  enum { kAdds, kVfp, kCore, kBxLr } stage = kAdds;
  bool pc_loaded = false;
  bool returns = false;
  for (int steps = 0; steps < 8 && !returns; ++steps) {
    const Bytes rest = code.subspan(std::min(at, code.size()));
    const EpilogueStep step = thumb ? thumb_epilogue_step(rest) : arm_epilogue_step(rest);
    switch (step.kind) {
      case EpilogueStep::kNone: return false;
      case EpilogueStep::kAddSp:
        if (stage != kAdds) return false;
        above += step.amount;
        break;
      case EpilogueStep::kVfpPop:
        if (stage > kVfp) return false;
        stage = kCore;
        for (unsigned i = 0; i < step.vfp.vfp_count; ++i)
          add_rule(static_cast<uint16_t>(step.vfp.vfp_first + i), above + step.vfp.vfp_bytes * i);
        above += step.vfp.amount;
        break;
      case EpilogueStep::kPop: {
        if (stage > kCore) return false;
        stage = kBxLr;
        unsigned i = 0;
        for (unsigned r = 0; r < 16; ++r) {
          if (!(step.registers & (1u << r))) continue;
          add_rule(static_cast<uint16_t>(r), above + 4 * i++);
        }
        above += 4 * i;
        pc_loaded = step.registers & (1u << kPc);
        returns = pc_loaded;
        break;
      }
      case EpilogueStep::kReturn: returns = true; break;
    }
    at += step.size;
  }
  if (!returns) return false;
  // A pop that loads sp (-mapcs-frame's `ldm sp, {fp, sp, pc}`) restores
  // the caller's SP from its slot; the CFA is the end of the popped words,
  // as for the others.
  *row = row_at(kSp, static_cast<int64_t>(above));
  if (pc_loaded) row->return_address_register = kPc;
  for (int i = 0; i < n_rules; ++i) {
    RegisterRule r = rules[i];
    r.value -= static_cast<int64_t>(above);
    (void)row->set(r);
  }
  return true;
}

}  // namespace framewalk::arch::arm
