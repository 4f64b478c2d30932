#include "unwind/unwinder.hpp"

#include <cstring>

#include "arch/x86_64/frames.hpp"
#include "dwarf/expression.hpp"

namespace framewalk {

const char* to_string(FrameSource source) {
  switch (source) {
    case FrameSource::kContext: return "context";
    case FrameSource::kEhFrame: return "cfi";
    case FrameSource::kDebugFrame: return "debug_frame";
    case FrameSource::kSignal: return "signal";
    case FrameSource::kFramePointer: return "fp";
    case FrameSource::kPrologue: return "prologue";
  }
  return "?";
}

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kOutermost: return "outermost";
    case StopReason::kMaxFrames: return "max-frames";
    case StopReason::kNoUnwindInfo: return "no-unwind-info";
    case StopReason::kBadMemory: return "bad-memory";
    case StopReason::kCfaDidNotAdvance: return "cfa-did-not-advance";
    case StopReason::kBadUnwindInfo: return "bad-unwind-info";
    case StopReason::kNoRegisters: return "no-registers";
    case StopReason::kCallback: return "stopped";
  }
  return "?";
}

namespace {

class RegisterInputs final : public dwarf::ExpressionInputs {
 public:
  RegisterInputs(const arch::RegisterFile& regs, Memory& memory) : regs_(regs), memory_(memory) {}
  Result<uint64_t> register_value(uint16_t reg) override {
    auto v = regs_.get(reg);
    if (!v) return Error{ErrorCode::kExprNeedsRegister, reg};
    return *v;
  }
  Result<uint64_t> read_memory(uint64_t address, unsigned size) override {
    return memory_.read_value(address, size);
  }

 private:
  const arch::RegisterFile& regs_;
  Memory& memory_;
};

}  // namespace

Unwinder::Unwinder(const ModuleMap& modules, Memory& memory, uint16_t elf_machine)
    : modules_(modules), memory_(memory), machine_(elf_machine) {
  sp_reg_ = arch::x86_64::kRsp;
  pc_reg_ = arch::x86_64::kRip;
  fp_reg_ = arch::x86_64::kRbp;
}

Result<arch::RegisterFile> Unwinder::apply_row(const UnwindRow& row, const arch::RegisterFile& callee) const {
  RegisterInputs inputs(callee, memory_);
  uint64_t cfa = 0;
  switch (row.cfa.kind) {
    case CfaKind::kRegisterOffset: {
      auto base = callee.get(row.cfa.reg);
      if (!base) return Error{ErrorCode::kExprNeedsRegister, row.cfa.reg};
      cfa = *base + static_cast<uint64_t>(row.cfa.offset);
      break;
    }
    case CfaKind::kExpression: {
      dwarf::ExpressionOptions o;
      FW_TRY(cfa, dwarf::evaluate_expression(row.cfa.expression, row.cfa.expression_offset, o, &inputs));
      break;
    }
    case CfaKind::kUndefined:
      return Error{ErrorCode::kCfaNotRegisterRule, 0};
  }
  // Unspecified registers keep their values (callee-saved by convention); the
  // stack pointer becomes the CFA; the return address column must have a rule.
  arch::RegisterFile caller = callee;
  caller.set(sp_reg_, cfa);
  caller.forget(row.return_address_register);
  for (int i = 0; i < row.rule_count; ++i) {
    const RegisterRule& r = row.rules[i];
    switch (r.kind) {
      case RuleKind::kUndefined: caller.forget(r.reg); break;
      case RuleKind::kSameValue:
        if (auto v = callee.get(r.reg)) caller.set(r.reg, *v); else caller.forget(r.reg);
        break;
      case RuleKind::kOffset: {
        FW_TRY(uint64_t v, memory_.read_u64(cfa + static_cast<uint64_t>(r.value)));
        caller.set(r.reg, v);
        break;
      }
      case RuleKind::kValOffset: caller.set(r.reg, cfa + static_cast<uint64_t>(r.value)); break;
      case RuleKind::kRegister: {
        auto v = callee.get(static_cast<unsigned>(r.value));
        if (v) caller.set(r.reg, *v); else caller.forget(r.reg);
        break;
      }
      case RuleKind::kExpression:
      case RuleKind::kValExpression: {
        dwarf::ExpressionOptions o;
        o.push_initial = true;
        o.initial = cfa;
        FW_TRY(uint64_t v, dwarf::evaluate_expression(r.expression, r.expression_offset, o, &inputs));
        if (r.kind == RuleKind::kExpression) {
          FW_TRY(v, memory_.read_u64(v));
        }
        caller.set(r.reg, v);
        break;
      }
    }
  }
  // The caller resumes at the return address.
  if (auto ra = caller.get(row.return_address_register)) caller.set(pc_reg_, *ra);
  else caller.forget(pc_reg_);
  return caller;
}

bool Unwinder::find_row(const Frame& frame, const UnwindOptions& options, Step* step) const {
  const Module* m = frame.module;
  if (!m || !m->data) return false;
  const ElfCfi* cfi = m->data->cfi();
  if (!cfi) return false;
  const uint64_t link_pc = frame.lookup_pc() - m->bias;
  for (const auto& src : cfi->sources()) {
    if (!src->section) continue;
    if (src->kind == dwarf::CfiKind::kDebugFrame && !options.use_debug_frame) continue;
    auto match = src->get_index().find(link_pc);
    if (!match) continue;
    auto row = dwarf::row_for_pc(*src->section, *match->cie, match->fde, link_pc);
    if (!row) continue;
    step->row = *row;
    step->source = src->kind == dwarf::CfiKind::kEhFrame ? FrameSource::kEhFrame : FrameSource::kDebugFrame;
    return true;
  }
  return false;
}

bool Unwinder::fallback_row(const Frame& frame, const arch::RegisterFile& regs, const UnwindOptions& options,
                            Step* step) const {
  namespace x = arch::x86_64;
  // The signal trampoline is recognised by its code, with or without CFI.
  uint8_t code[sizeof x::kSigreturnCode];
  if (memory_.read(frame.pc, code, sizeof code) == sizeof code &&
      std::memcmp(code, x::kSigreturnCode, sizeof code) == 0) {
    step->row = x::signal_frame_row();
    step->source = FrameSource::kSignal;
    return true;
  }
  if (!options.allow_frame_pointer) return false;
  // Without CFI, a frame-pointer step is safe only where the function is known
  // to have set up its frame: find its start and read its prologue.
  std::optional<uint64_t> start;
  if (frame.module && frame.module->data) {
    if (auto s = frame.module->data->symbols().lookup(frame.lookup_pc() - frame.module->bias))
      start = s->symbol->address + frame.module->bias;
  }
  if (start) {
    uint8_t prologue[4] = {};
    const size_t got = memory_.read(*start, prologue, sizeof prologue);
    const bool pushes_rbp = got >= 1 && prologue[0] == x::kPushRbp;
    const bool sets_rbp = got == 4 && pushes_rbp &&
                          (std::memcmp(prologue + 1, x::kMovRspRbp[0], 3) == 0 ||
                           std::memcmp(prologue + 1, x::kMovRspRbp[1], 3) == 0);
    const uint64_t at = frame.pc - *start;
    if (frame.activation) {
      if (at == 0 || !pushes_rbp) {
        // At the entry, or a function that never pushes rbp: a frameless leaf.
        step->row = x::entry_row();
        step->source = FrameSource::kPrologue;
        return true;
      }
      if (at < 4 || !sets_rbp) {
        step->row = x::after_push_rbp_row();
        step->source = FrameSource::kPrologue;
        return true;
      }
    }
    if (sets_rbp) {
      step->row = x::frame_pointer_row();
      step->source = FrameSource::kFramePointer;
      return true;
    }
    return false;
  }
  // No symbol: a frame-pointer guess, only for a return-address frame whose
  // rbp points into the stack above sp (a frameless caller would be skipped).
  if (frame.activation) return false;
  auto rbp = regs.get(fp_reg_);
  auto sp = regs.get(sp_reg_);
  if (!rbp || !sp || *rbp < *sp || *rbp - *sp > (uint64_t{1} << 26) || (*rbp & 7)) return false;
  step->row = x::frame_pointer_row();
  step->source = FrameSource::kFramePointer;
  return true;
}

WalkResult Unwinder::walk(const arch::RegisterFile& registers, const std::function<bool(const Frame&)>& on_frame,
                          const UnwindOptions& options) const {
  WalkResult result;
  arch::RegisterFile regs = registers;
  bool activation = !options.first_is_return_address;
  FrameSource source = FrameSource::kContext;
  for (;;) {
    auto pc = regs.get(pc_reg_);
    auto sp = regs.get(sp_reg_);
    if (!pc || !sp) {
      result.reason = StopReason::kNoRegisters;
      return result;
    }
    Frame frame;
    frame.pc = *pc;
    frame.sp = *sp;
    frame.activation = activation;
    frame.source = source;
    frame.module = modules_.find(frame.lookup_pc());
    ++result.frames;
    // The row is found before the frame is reported, so that the frame can
    // say whether it is a signal trampoline.
    Step step;
    const bool have_row = find_row(frame, options, &step) || fallback_row(frame, regs, options, &step);
    frame.signal_trampoline = have_row && step.row.signal_frame;
    if (!on_frame(frame)) {
      result.reason = StopReason::kCallback;
      return result;
    }
    if (result.frames >= options.max_frames) {
      result.reason = StopReason::kMaxFrames;
      return result;
    }
    if (!have_row) {
      result.reason = StopReason::kNoUnwindInfo;
      result.address = frame.pc;
      return result;
    }
    auto caller = apply_row(step.row, regs);
    if (!caller) {
      const Error e = caller.error();
      if (e.code == ErrorCode::kMemoryUnreadable) {
        result.reason = StopReason::kBadMemory;
        result.address = e.offset;
      } else {
        result.reason = StopReason::kBadUnwindInfo;
        result.error = e.code;
      }
      return result;
    }
    auto next_pc = caller->get(pc_reg_);
    if (!next_pc || *next_pc == 0) {
      result.reason = StopReason::kOutermost;
      return result;
    }
    const uint64_t next_sp = caller->value_or(sp_reg_, 0);
    // The stack grows down: a caller's SP is above its callee's, except across
    // a signal frame (the handler may run on an alternate stack).
    if (!step.row.signal_frame && (next_sp < *sp || (next_sp == *sp && *next_pc == *pc))) {
      result.reason = StopReason::kCfaDidNotAdvance;
      result.address = next_sp;
      return result;
    }
    activation = step.row.signal_frame;
    source = step.source;
    regs = *caller;
  }
}

}  // namespace framewalk
