#include "unwind/unwinder.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <type_traits>

#include "dwarf/expression.hpp"
#include "ehabi/exidx_rows.hpp"
#include "sframe/sframe_rows.hpp"

namespace framewalk {

const char* to_string(FrameSource source) {
  switch (source) {
    case FrameSource::kContext: return "context";
    case FrameSource::kEhFrame: return "cfi";
    case FrameSource::kDebugFrame: return "debug_frame";
    case FrameSource::kExidx: return "exidx";
    case FrameSource::kSframe: return "sframe";
    case FrameSource::kSignal: return "signal";
    case FrameSource::kFramePointer: return "fp";
    case FrameSource::kPrologue: return "prologue";
    case FrameSource::kJit: return "jit";
  }
  return "?";
}

const char* to_string(SframeMiss miss) {
  switch (miss) {
    case SframeMiss::kNone: return "none";
    case SframeMiss::kNoModule: return "not in a mapped file";
    case SframeMiss::kNoSection: return "no .sframe in the file";
    case SframeMiss::kUnsorted: return ".sframe not sorted";
    case SframeMiss::kNoFde: return "no SFrame FDE for the PC";
    case SframeMiss::kNoRow: return "no SFrame row at the PC";
    case SframeMiss::kSignalWithoutRows: return "SFrame signal FDE without rows";
    case SframeMiss::kTopmostOnly: return "SFrame row valid in the topmost frame only";
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
    case StopReason::kUnsupportedMachine: return "unsupported-machine";
    case StopReason::kCannotUnwind: return "cannot-unwind";
  }
  return "?";
}

namespace {

class RegisterInputs final : public dwarf::ExpressionInputs {
 public:
  RegisterInputs(const arch::RegisterFile& regs, Memory& memory, Endian endian)
      : regs_(regs), memory_(memory), endian_(endian) {}
  Result<uint64_t> register_value(uint16_t reg) override {
    auto v = regs_.get(reg);
    if (!v) return Error{ErrorCode::kExprNeedsRegister, reg};
    return *v;
  }
  Result<uint64_t> read_memory(uint64_t address, unsigned size) override {
    return memory_.read_word(address, size, endian_);
  }

 private:
  const arch::RegisterFile& regs_;
  Memory& memory_;
  Endian endian_;
};

}  // namespace

Unwinder::Unwinder(const ModuleMap& modules, Memory& memory, const MachineKey& machine)
    : modules_(modules), memory_(memory), module_code_(modules, memory),
      machine_(arch::machine_for(machine)), elf_machine_(machine.elf_machine),
      pointer_auth_mask_(machine_ ? machine_->default_pointer_auth_mask() : 0) {}

Unwinder::Unwinder(const ModuleMap& modules, Memory& memory, Memory& code, const MachineKey& machine)
    : modules_(modules), memory_(memory), module_code_(modules, memory), code_(&code),
      machine_(arch::machine_for(machine)), elf_machine_(machine.elf_machine),
      pointer_auth_mask_(machine_ ? machine_->default_pointer_auth_mask() : 0) {}

Result<arch::RegisterFile> Unwinder::apply_row(const UnwindRow& row, const arch::RegisterFile& callee) const {
  arch::RegisterFile caller = callee;
  FW_CHECK(apply_row_in_place(row, &caller));
  return caller;
}

Result<void> Unwinder::apply_row_in_place(const UnwindRow& row, arch::RegisterFile* registers) const {
  if (!machine_) return Error{ErrorCode::kUnsupportedMachine, elf_machine_};
  const arch::Machine& m = *machine_;
  // Every rule reads the callee's registers as they were: the caller's
  // values are gathered first, and written over them once all are known.
  const arch::RegisterFile& callee = *registers;
  RegisterInputs inputs(callee, memory_, m.endian());
  uint64_t cfa = 0;
  switch (row.cfa.kind) {
    case CfaKind::kRegisterOffset: {
      auto base = callee.get(row.cfa.reg);
      if (!base) return Error{ErrorCode::kExprNeedsRegister, row.cfa.reg};
      cfa = m.address(*base + static_cast<uint64_t>(row.cfa.offset));
      break;
    }
    case CfaKind::kExpression: {
      dwarf::ExpressionOptions o;
      o.address_size = m.address_size();  // DW_OP_deref reads a word of the machine
      o.endian = m.endian();               // and operands are in its byte order
      FW_TRY(cfa, dwarf::evaluate_expression(row.cfa.expression, row.cfa.expression_offset, o, &inputs));
      cfa = m.address(cfa);
      break;
    }
    case CfaKind::kUndefined:
      return Error{ErrorCode::kCfaNotRegisterRule, 0};
  }
  // Unspecified registers keep their values (callee-saved by convention); the
  // stack pointer becomes the CFA (less the machine's
  // cfa_above_stack_pointer). The return-address column must have a
  // rule (an undefined one ends the stack: the walk checks for it before
  // this), except on a link-register machine, where no rule means the
  // return address has not left the register (the walk allows that only for
  // an activation).
  const RegisterRule* ra_rule = row.find(row.return_address_register);
  if (!ra_rule && !m.link_register())
    return Error{ErrorCode::kReturnAddressNoRule, row.return_address_register};
  uint64_t values[UnwindRow::kMaxRules];  // rule i's value for the caller,
  bool known[UnwindRow::kMaxRules];       // if known
  for (int i = 0; i < row.rule_count; ++i) {
    const RegisterRule& r = row.rules[i];
    std::optional<uint64_t> value;
    switch (r.kind) {
      case RuleKind::kUndefined: break;
      case RuleKind::kSameValue: value = callee.get(r.reg); break;
      case RuleKind::kOffset: {
        auto word = memory_.read_word(m.address(cfa + static_cast<uint64_t>(r.value)), m.register_size(r.reg),
                                      m.endian());
        if (!word) {
          if (unreadable_saved_registers_unknown_ && r.reg != row.return_address_register) break;
          return word.error();
        }
        value = *word;
        break;
      }
      case RuleKind::kValOffset: value = m.address(cfa + static_cast<uint64_t>(r.value)); break;
      case RuleKind::kRegister: value = callee.get(static_cast<unsigned>(r.value)); break;
      case RuleKind::kExpression:
      case RuleKind::kValExpression: {
        dwarf::ExpressionOptions o;
        o.address_size = m.address_size();
        o.endian = m.endian();
        o.push_initial = true;
        o.initial = cfa;
        FW_TRY(uint64_t v, dwarf::evaluate_expression(r.expression(), r.expression_offset, o, &inputs));
        if (r.kind == RuleKind::kExpression) {
          FW_TRY(v, memory_.read_word(m.address(v), m.address_size(), m.endian()));
        }
        value = m.address(v);
        break;
      }
    }
    known[i] = value.has_value();
    values[i] = value.value_or(0);
  }
  WindowValues window;
  if (row.window_saved) {
    FW_TRY(window, window_values(row, callee, cfa));
  }
  // The caller's registers. One the file has no room for stops the walk,
  // named: dropped, the caller would seem to hold the callee's value in it.
  arch::RegisterFile& caller = *registers;
  if (!caller.set(m.stack_pointer(), m.caller_stack_pointer(cfa))) return Error{ErrorCode::kTooManyRegisters, m.stack_pointer()};
  for (unsigned i = 0; i < WindowValues::kCount; ++i) {
    if (!((window.ruled >> i) & 1)) continue;
    const unsigned reg = WindowValues::kFirst + i;
    if (!((window.known >> i) & 1)) caller.forget(reg);
    else if (!caller.set(reg, window.values[i])) return Error{ErrorCode::kTooManyRegisters, reg};
  }
  for (int i = 0; i < row.rule_count; ++i) {
    const uint16_t reg = row.rules[i].reg;
    if (!known[i]) caller.forget(reg);
    else if (!caller.set(reg, values[i])) return Error{ErrorCode::kTooManyRegisters, reg};
  }
  // The caller resumes at the return address. One that was not recovered (a
  // same-value or register rule on a register nobody knows) is an error, not
  // the end of the stack: only an undefined return address ends it.
  auto ra = caller.get(row.return_address_register);
  if (!ra) {
    if (ra_rule && ra_rule->kind == RuleKind::kUndefined) caller.forget(m.program_counter());
    else return Error{ErrorCode::kReturnAddressUnknown, row.return_address_register};
  } else if (!caller.set(m.program_counter(), m.clean_return_address(*ra, pointer_auth_mask_))) {
    return Error{ErrorCode::kTooManyRegisters, m.program_counter()};
  }
  return ok();
}

Result<Unwinder::WindowValues> Unwinder::window_values(const UnwindRow& row, const arch::RegisterFile& callee,
                                                       uint64_t cfa) const {
  // DW_CFA_GNU_window_save (SPARC's `save`) renamed the caller's %o0-%o7
  // (8-15) to this frame's %i0-%i7 (24-31), and the caller's own %l0-%i7
  // (16-31) are in its window's save area at the CFA, as libgcc reads them.
  // Registers with a rule of their own follow it instead; the stack pointer
  // is the CFA's, as on every machine.
  const arch::Machine& m = *machine_;
  WindowValues w;
  for (unsigned i = 0; i < WindowValues::kCount; ++i) {
    const unsigned reg = WindowValues::kFirst + i;
    if (reg == m.stack_pointer() || row.find(static_cast<uint16_t>(reg))) continue;
    w.ruled |= 1u << i;
    std::optional<uint64_t> value;
    if (reg < 16) {
      value = callee.get(reg + 16);
    } else {
      const uint8_t size = m.register_size(static_cast<uint16_t>(reg));
      auto word = memory_.read_word(m.address(cfa + (reg - 16) * uint64_t{size}), size, m.endian());
      if (!word && !unreadable_saved_registers_unknown_) return word.error();
      if (word) value = *word;
    }
    if (value) {
      w.known |= 1u << i;
      w.values[i] = *value;
    }
  }
  return w;
}

Result<void> Unwinder::apply_flat_in_place(const RowCache::FlatRow& row, arch::RegisterFile* registers) const {
  // apply_row_in_place's steps for the rules a flat row has.
  const arch::Machine& m = *machine_;
  arch::RegisterFile& regs = *registers;
  auto base = regs.get(row.cfa_reg);
  if (!base) return Error{ErrorCode::kExprNeedsRegister, row.cfa_reg};
  const uint64_t cfa = m.address(*base + static_cast<uint64_t>(row.cfa_offset));
  const Endian endian = m.endian();
  uint64_t values[RowCache::FlatRow::kMaxSaved];
  uint64_t unknown = 0;  // bit i: rule i's slot could not be read
  for (unsigned i = 0; i < row.saved; ++i) {
    auto word = memory_.read_word(m.address(cfa + static_cast<uint64_t>(row.offset[i])), row.size[i], endian);
    if (!word) {
      if (unreadable_saved_registers_unknown_ && row.reg[i] != row.return_address_register) {
        unknown |= uint64_t{1} << i;
        continue;
      }
      return word.error();
    }
    values[i] = *word;
  }
  regs.set(m.stack_pointer(), m.caller_stack_pointer(cfa));
  for (unsigned i = 0; i < row.saved; ++i) {
    if ((unknown >> i) & 1) regs.forget(row.reg[i]);
    else regs.set(row.reg[i], values[i]);
  }
  regs.set(m.program_counter(),
           m.clean_return_address(regs.value_or(row.return_address_register, 0), pointer_auth_mask_));
  return ok();
}

RowCache::FlatRow RowCache::flatten(const arch::Machine& m, const UnwindRow& row) {
  FlatRow f;
  const unsigned max_reg = arch::RegisterFile::kMaxRegisters;
  if (row.signal_frame || row.window_saved || row.cfa.kind != CfaKind::kRegisterOffset || row.cfa.reg >= max_reg ||
      row.return_address_register >= max_reg)
    return f;
  f.cfa_reg = row.cfa.reg;
  f.cfa_offset = row.cfa.offset;
  f.return_address_register = row.return_address_register;
  bool return_address = false;
  for (int i = 0; i < row.rule_count; ++i) {
    const RegisterRule& r = row.rules[i];
    // Rules for the stack pointer and the PC (other than as the return
    // address column) are ordered against the CFA and the return address:
    // not flat.
    if (r.reg == m.stack_pointer() || (r.reg == m.program_counter() && r.reg != row.return_address_register))
      return FlatRow{};
    if (r.kind == RuleKind::kSameValue && r.reg != row.return_address_register) continue;  // changes nothing
    const uint8_t size = m.register_size(r.reg);
    if (r.kind != RuleKind::kOffset || r.reg >= max_reg || size == 0 || size > 8 || f.saved == FlatRow::kMaxSaved)
      return FlatRow{};
    f.reg[f.saved] = r.reg;
    f.size[f.saved] = size;
    f.offset[f.saved] = r.value;
    ++f.saved;
    if (r.reg == row.return_address_register) return_address = true;
  }
  f.usable = return_address;
  return f;
}

static_assert(std::is_trivially_destructible_v<RowCache::Entry>, "RowCache writes entries over raw storage");

RowCache::RowCache(size_t sets) : sets_(std::bit_ceil(sets ? sets : size_t{1})) {}

RowCache::~RowCache() { ::operator delete(entries_); }

void RowCache::allocate() {
  keys_ = std::make_unique<Key[]>(sets_ * kWays);
  // Not constructed: a large allocation comes as untouched zero pages, and
  // only those rows are written (and faulted in) that entries fill.
  entries_ = static_cast<Entry*>(::operator new(sets_ * kWays * sizeof(Entry)));
}

size_t RowCache::set_of(uint64_t module_id, uint64_t link_pc, unsigned variant) const {
  uint64_t h = (link_pc ^ (module_id * 0x9e3779b97f4a7c15ull) ^ variant) * 0xff51afd7ed558ccdull;
  return static_cast<size_t>(h >> 32) & (sets_ - 1);
}

const RowCache::Entry* RowCache::find(uint64_t module_id, uint64_t link_pc, unsigned variant) {
  if (!keys_) return nullptr;
  const size_t base = set_of(module_id, link_pc, variant) * kWays;
  for (size_t w = 0; w < kWays; ++w) {
    Key& k = keys_[base + w];
    if (k.module_id == module_id && k.link_pc == link_pc && k.variant == variant) {
      k.last_use = ++clock_;
      return &entries_[base + w];
    }
  }
  return nullptr;
}

void RowCache::add(uint64_t module_id, uint64_t link_pc, unsigned variant, const Entry& entry) {
  if (module_id == 0) return;
  if (!keys_) allocate();
  const size_t base = set_of(module_id, link_pc, variant) * kWays;
  size_t victim = base;
  for (size_t w = 0; w < kWays; ++w) {
    const Key& k = keys_[base + w];
    if (k.module_id == module_id && k.link_pc == link_pc && k.variant == variant) {
      victim = base + w;
      break;
    }
    const Key& v = keys_[victim];
    if (k.module_id == 0) {
      if (v.module_id != 0) victim = base + w;
    } else if (v.module_id != 0 && k.last_use < v.last_use) {
      victim = base + w;
    }
  }
  Key& k = keys_[victim];
  if (k.module_id == 0) ++used_;
  k.module_id = module_id;
  k.link_pc = link_pc;
  k.variant = variant;
  k.last_use = ++clock_;
  new (&entries_[victim]) Entry(entry);
}

void RowCache::forget_module(uint64_t module_id) {
  if (!keys_) return;
  for (size_t i = 0; i < sets_ * kWays; ++i) {
    if (keys_[i].module_id == module_id) {
      keys_[i].module_id = 0;
      --used_;
    }
  }
}

void RowCache::clear() {
  keys_.reset();
  ::operator delete(entries_);
  entries_ = nullptr;
  used_ = 0;
}

bool Unwinder::find_row(const Frame& frame, const UnwindOptions& options, Step* step) const {
  if (options.row_finder) {
    if (!options.row_finder->find(frame, &step->row)) return false;
    step->source = options.row_finder->source();
    return true;
  }
  if (!options.row_cache || !frame.module) return find_row_uncached(frame, options, step);
  return find_row_through_cache(frame, options, step);
}

// A function of its own, so that the cache entry it copies takes no stack
// on the row finder's path (the in-process walks in signal handlers).
__attribute__((noinline)) bool Unwinder::find_row_through_cache(const Frame& frame, const UnwindOptions& options,
                                                               Step* step) const {
  // The row depends on the module and PC, the sources asked for, (for
  // SFrame's topmost-only rules) whether this is the frame the walk began at,
  // and (an EHABI entry at its function's first instruction) whether the PC is exact.
  const unsigned variant = static_cast<unsigned>(options.sources) | (options.use_debug_frame ? 4u : 0u) |
                           (frame.source == FrameSource::kContext ? 8u : 0u) | (frame.activation ? 16u : 0u);
  const uint64_t link_pc = frame.lookup_pc - frame.module->bias;
  if (const RowCache::Entry* e = options.row_cache->find(frame.module->id, link_pc, variant)) {
    step->sframe_miss = e->sframe_miss;
    step->lookup_error = e->lookup_error;
    step->cannot_unwind = e->cannot_unwind;
    if (!e->found) return false;
    if (e->flat.usable) step->flat = &e->flat;  // no copy of the row
    else step->row = e->row;
    step->source = e->source;
    return true;
  }
  RowCache::Entry entry;
  entry.found = find_row_uncached(frame, options, step);
  entry.sframe_miss = step->sframe_miss;
  entry.lookup_error = step->lookup_error;
  entry.cannot_unwind = step->cannot_unwind;
  if (entry.found) {
    entry.row = step->row;
    entry.source = step->source;
    if (machine_) entry.flat = RowCache::flatten(*machine_, step->row);
  }
  options.row_cache->add(frame.module->id, link_pc, variant, entry);
  return entry.found;
}

namespace {

// Whether `link_pc` is in the function whose symbol holds the ELF entry point.
bool in_entry_function(const ModuleData& data, uint64_t link_pc) {
  const uint64_t entry = data.elf().entry() & ~uint64_t{1};  // an ARM entry point may have the Thumb bit
  if (entry == 0) return false;
  auto at_pc = data.symbols().lookup(link_pc);
  auto at_entry = data.symbols().lookup(entry);
  return at_pc && at_entry && at_pc->symbol == at_entry->symbol;
}

}  // namespace

bool Unwinder::find_row_uncached(const Frame& frame, const UnwindOptions& options, Step* step) const {
  const Module* m = frame.module;
  if (!m || !m->data) {
    if (options.sources == SourceOrder::kSframe) step->sframe_miss = SframeMiss::kNoModule;
    return false;
  }
  const uint64_t link_pc = frame.lookup_pc - m->bias;
  // A handler returns to a signal trampoline's first instruction. Where a
  // return address is looked up more than an instruction before it (SPARC:
  // at the call, 8 bytes back), that is the end of whatever code precedes
  // the trampoline, whose row is not this frame's.
  if (!frame.activation && frame.pc - frame.lookup_pc > 4 && machine_->signal_frame_row(code(), frame.pc, &step->row)) {
    step->source = FrameSource::kSignal;
    return true;
  }
  if (options.sources != SourceOrder::kSframe) {
    if (const ElfCfi* cfi = m->data->cfi()) {
      for (const auto& src : cfi->sources()) {
        if (!src->section) continue;
        if (src->kind == dwarf::CfiKind::kDebugFrame && !options.use_debug_frame) continue;
        auto match = src->get_index().find(link_pc);
        if (!match) continue;
        auto row = dwarf::row_for_pc(*src->section, *match->cie, match->fde, link_pc);
        if (!row) {
          // A broken FDE covers the PC: another source may still describe
          // it, but no heuristic may stand in for unwind information that
          // exists and is wrong.
          if (!step->lookup_error) step->lookup_error = row.error();
          continue;
        }
        step->row = *row;
        step->source = src->kind == dwarf::CfiKind::kEhFrame ? FrameSource::kEhFrame : FrameSource::kDebugFrame;
        return true;
      }
    }
    if (const ehabi::ExidxTables* exidx = m->data->exidx()) {
      auto found = ehabi::row_for_pc(*exidx, link_pc, frame.activation, &step->row);
      // EXIDX_CANTUNWIND ends the stack only in the function that holds the
      // program's entry point (crt1's _start is `.cantunwind`). Elsewhere it
      // marks code without tables: GNU ld fills the index's gaps with it
      // (C built without -funwind-tables) and merges neighbours, so the
      // fallbacks may still know the frame, as gdb's prologue analysis does.
      if (found && *found == ehabi::EntryRow::kCannotUnwind && !in_entry_function(*m->data, link_pc)) {
        // No row from the index: the sources and fallbacks below; if none
        // has one, the walk ends as the tables say (cannot-unwind).
        step->cannot_unwind = true;
      } else if (found) {
        step->source = FrameSource::kExidx;
        // The entry describes the function's body. An activation may still
        // be in the prologue, or at an epilogue's return: then the machine
        // reads the row from the instructions (the walk then checks the
        // caller as for any prologue row). Only the PC and the SP are
        // passed: the row depends on the code alone, and is cached so.
        if (frame.activation && *found == ehabi::EntryRow::kUnwinds) {
          arch::RegisterFile pc_and_sp;
          pc_and_sp.set(machine_->program_counter(), frame.pc);
          pc_and_sp.set(machine_->stack_pointer(), frame.sp);
          arch::FallbackInput in;
          in.registers = &pc_and_sp;
          FallbackCode code;
          fill_fallback_input(frame, &in, &code);
          if (in.function_known && machine_->activation_row_outside_body(in, &step->row))
            step->source = FrameSource::kPrologue;
        }
        return true;
      } else if (found.error().code != ErrorCode::kNotFound) {
        // An entry no row can express: glibc's sigreturn restorers pop r13
        // and r15 from the signal frame. The machine's signal row restores
        // the same registers and says the interrupted PC is exact.
        if (machine_->signal_frame_row(code(), frame.pc, &step->row)) {
          step->source = FrameSource::kSignal;
          return true;
        }
        if (!step->lookup_error) step->lookup_error = found.error();
      }
    }
  }
  if (options.sources != SourceOrder::kCfi) {
    const SframeMiss miss = find_sframe_row(frame, step);
    if (miss == SframeMiss::kNone) return true;
    if (options.sources == SourceOrder::kSframe) step->sframe_miss = miss;
  }
  return false;
}

SframeMiss Unwinder::find_sframe_row(const Frame& frame, Step* step) const {
  const sframe::Section* sf = frame.module->data->sframe();
  if (!sf) return SframeMiss::kNoSection;
  const uint64_t link_pc = frame.lookup_pc - frame.module->bias;
  sframe::SframeRow row;
  auto found = sframe::row_for_pc(*sf, link_pc, row);
  if (!found) {
    switch (found.error().code) {
      case sframe::Errc::kUnsortedLookup: return SframeMiss::kUnsorted;
      case sframe::Errc::kNoFde: return SframeMiss::kNoFde;
      default: break;
    }
    const sframe::Fde* fde = sf->lookup_fde(link_pc);
    return fde && fde->signal && fde->num_fres == 0 ? SframeMiss::kSignalWithoutRows : SframeMiss::kNoRow;
  }
  // Rules that read registers other than SP and FP hold only where every
  // register is known: the frame the walk started from.
  if (row.topmost_only && frame.source != FrameSource::kContext) return SframeMiss::kTopmostOnly;
  step->row = row.row;
  step->source = FrameSource::kSframe;
  return SframeMiss::kNone;
}

void Unwinder::fill_fallback_input(const Frame& frame, arch::FallbackInput* in, FallbackCode* code) const {
  in->activation = frame.activation;
  if (frame.module && frame.module->jit) {
    // Code without symbols: only what the PC shows (an entry, a return).
    in->jit_code = true;
    if (frame.activation)
      in->code_at_pc = Bytes(code->code_at_pc, this->code().read(frame.pc, code->code_at_pc, sizeof code->code_at_pc));
    return;
  }
  if (!frame.module || !frame.module->data) return;
  auto s = frame.module->data->symbols().lookup(frame.lookup_pc - frame.module->bias);
  if (!s) return;
  const uint64_t start = s->symbol->address + frame.module->bias;
  in->function_known = true;
  in->pc_offset = frame.pc - start;
  // An activation has run only the instructions before its PC.
  const size_t size = sizeof code->function_code;
  const size_t want = frame.activation ? static_cast<size_t>(std::min<uint64_t>(in->pc_offset, size)) : size;
  in->function_code = Bytes(code->function_code, want ? this->code().read(start, code->function_code, want) : 0);
  if (frame.activation)
    in->code_at_pc = Bytes(code->code_at_pc, this->code().read(frame.pc, code->code_at_pc, sizeof code->code_at_pc));
}

bool Unwinder::fallback_row(const Frame& frame, const arch::RegisterFile& regs, const UnwindOptions& options,
                            Step* step) const {
  // The signal trampoline is recognised by its code, with or without CFI.
  if (machine_->signal_frame_row(code(), frame.pc, &step->row)) {
    step->source = FrameSource::kSignal;
    return true;
  }
  if (!options.allow_frame_pointer) return false;
  // Without CFI, a frame-pointer step is safe only where the function is known
  // to have set up its frame: the machine reads its prologue from its start.
  arch::FallbackInput in;
  in.registers = &regs;
  FallbackCode code;
  fill_fallback_input(frame, &in, &code);
  const auto kind = machine_->fallback_row(in, &step->row);
  if (!kind) return false;
  step->source = *kind == arch::FallbackKind::kPrologue ? FrameSource::kPrologue
                 : in.jit_code                          ? FrameSource::kJit
                                                        : FrameSource::kFramePointer;
  return true;
}

bool Unwinder::plausible_return_address(uint64_t ra, const UnwindOptions& options) const {
  // Where a signal handler returns, also outside any module: without
  // SA_RESTORER s390's kernel writes the trampoline's svc on the signal frame.
  if (machine_->is_signal_trampoline(code(), ra)) return true;
  const uint64_t lookup = machine_->lookup_pc(ra, false);
  const Module* m = nullptr;
  if (options.row_finder ? !options.row_finder->in_code(lookup) : !(m = modules_.find(lookup))) return false;
  // Jit code: in executable memory is all that is checked. Runtimes return
  // into it by other means than a call (HotSpot's interpreter stores its
  // bytecodes' return entries, each after a dispatch jump), and a perf
  // sample holds none of its bytes.
  if (m && m->jit) return true;
  return machine_->follows_call(code(), ra);
}

WalkResult Unwinder::walk(const arch::RegisterFile& registers, FunctionRef<bool(const Frame&)> on_frame,
                          const UnwindOptions& options) const {
  arch::RegisterFile regs = registers;
  return walk_in_place(regs, on_frame, options);
}

WalkResult Unwinder::walk_in_place(arch::RegisterFile& regs, FunctionRef<bool(const Frame&)> on_frame,
                                   const UnwindOptions& options) const {
  WalkResult result;
  if (!machine_) {
    result.reason = StopReason::kUnsupportedMachine;
    result.address = elf_machine_;
    return result;
  }
  const uint16_t pc_reg = machine_->program_counter();
  const uint16_t sp_reg = machine_->stack_pointer();
  // `regs`: the frame's registers; a step turns them into its caller's.
  bool activation = !options.first_is_return_address;
  FrameSource source = FrameSource::kContext;
  SframeMiss sframe_miss = SframeMiss::kNone;
  ModuleMap::FindHint module_hint;  // a stack's frames come in runs of one module
  for (;;) {
    auto pc = regs.get(pc_reg);
    auto sp = regs.get(sp_reg);
    if (!pc || !sp) {
      result.reason = StopReason::kNoRegisters;
      return result;
    }
    Frame frame;
    frame.pc = *pc;
    frame.sp = *sp;
    frame.activation = activation;
    frame.source = source;
    frame.sframe_miss = sframe_miss;
    frame.lookup_pc = machine_->lookup_pc(frame.pc, activation);
    frame.registers = &regs;
    frame.symbol_pc = frame.lookup_pc;
    frame.module = modules_.find(frame.lookup_pc, &module_hint);
    ++result.frames;
    // The row is found before the frame is reported, so that the frame can
    // say whether it is a signal trampoline.
    Step step;
    const bool have_row = find_row(frame, options, &step) ||
                          (!step.lookup_error && fallback_row(frame, regs, options, &step));
    const bool signal_frame = have_row && !step.flat && step.row.signal_frame;
    frame.signal_trampoline = signal_frame;
    if (frame.signal_trampoline) frame.symbol_pc = frame.pc;
    if (!on_frame(frame)) {
      result.reason = StopReason::kCallback;
      return result;
    }
    if (result.frames >= options.max_frames) {
      result.reason = StopReason::kMaxFrames;
      return result;
    }
    if (!have_row && step.lookup_error) {
      result.reason = StopReason::kBadUnwindInfo;
      result.error = step.lookup_error->code;
      result.address = frame.pc;
      return result;
    }
    if (!have_row && step.cannot_unwind) {
      result.reason = StopReason::kCannotUnwind;
      result.address = frame.pc;
      return result;
    }
    if (!have_row) {
      result.reason = StopReason::kNoUnwindInfo;
      result.address = frame.pc;
      result.sframe_miss = step.sframe_miss;
      return result;
    }
    if (!step.flat) {  // a flat row restores the return address from the stack
      // An undefined return address ends the stack, whatever the CFA:
      // SFrame's outermost rows have no CFA at all.
      const RegisterRule* ra = step.row.find(step.row.return_address_register);
      if (ra && ra->kind == RuleKind::kUndefined) {
        result.reason = StopReason::kOutermost;
        return result;
      }
      // Only an activation can still hold its return address in the link
      // register: a frame that made a call has saved it, or its row is wrong.
      if (!ra && !frame.activation) {
        result.reason = StopReason::kBadUnwindInfo;
        result.error = ErrorCode::kReturnAddressNoRule;
        result.address = frame.pc;
        return result;
      }
    }
    auto applied = step.flat ? apply_flat_in_place(*step.flat, &regs) : apply_row_in_place(step.row, &regs);
    if (!applied) {
      const Error e = applied.error();
      if (e.code == ErrorCode::kMemoryUnreadable) {
        result.reason = StopReason::kBadMemory;
        result.address = e.offset;
      } else {
        result.reason = StopReason::kBadUnwindInfo;
        result.error = e.code;
        result.address = frame.pc;
        if (e.code == ErrorCode::kTooManyRegisters) result.register_number = static_cast<uint32_t>(e.offset);
      }
      return result;
    }
    auto next_pc = regs.get(pc_reg);
    if (!next_pc || *next_pc == 0) {
      result.reason = StopReason::kOutermost;
      return result;
    }
    // Guesses without unwind information must land after a call.
    if ((step.source == FrameSource::kPrologue || step.source == FrameSource::kFramePointer ||
         step.source == FrameSource::kJit) &&
        !plausible_return_address(*next_pc, options)) {
      result.reason = StopReason::kNoUnwindInfo;
      result.address = frame.pc;
      return result;
    }
    const uint64_t next_sp = regs.value_or(sp_reg, 0);
    // The stack grows down: a caller's SP is above its callee's, except across
    // a signal frame (the handler may run on an alternate stack).
    if (!signal_frame && (next_sp < *sp || (next_sp == *sp && *next_pc == *pc))) {
      result.reason = StopReason::kCfaDidNotAdvance;
      result.address = next_sp;
      return result;
    }
    activation = signal_frame;
    source = step.source;
    sframe_miss = step.sframe_miss;
  }
}

}  // namespace framewalk
