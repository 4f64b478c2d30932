#include "arch/ppc/machine.hpp"

#include "arch/power/machine.hpp"
#include "arch/ppc/frames.hpp"

namespace framewalk::arch::ppc {

namespace {

class PpcMachine final : public power::PowerMachine {
 public:
  constexpr PpcMachine() : PowerMachine(kArchInfo, kAbi) {}

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[8];
    if (pc & 3) return false;
    const Trampoline trampoline = trampoline_of(Bytes(code, memory.read(pc, code, sizeof code)));
    if (trampoline == Trampoline::kNone) return false;
    if (row) *row = ppc::signal_frame_row(trampoline);
    return true;
  }

  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext); }
};

constinit const PpcMachine kMachine;

}  // namespace

const Machine& machine() { return kMachine; }

}  // namespace framewalk::arch::ppc
