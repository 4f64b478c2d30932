#include "arch/ppc64le/machine.hpp"

#include "arch/power/machine.hpp"
#include "arch/ppc64le/frames.hpp"

namespace framewalk::arch::ppc64le {

namespace {

class Ppc64leMachine final : public power::PowerMachine {
 public:
  constexpr Ppc64leMachine() : PowerMachine(kArchInfo, kAbi) {}

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[12];
    if (pc & 3) return false;
    if (!is_trampoline(Bytes(code, memory.read(pc, code, sizeof code)))) return false;
    if (row) *row = ppc64le::signal_frame_row();
    return true;
  }

  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext); }
};

constinit const Ppc64leMachine kMachine;

}  // namespace

const Machine& machine() { return kMachine; }

}  // namespace framewalk::arch::ppc64le
