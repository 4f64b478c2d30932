#include "arch/x86_64/frames.hpp"

#include <cstring>

namespace framewalk::arch::x86_64 {

namespace {
// user_regs_struct order.
enum UserReg : unsigned {
  kUR15, kUR14, kUR13, kUR12, kURbp, kURbx, kUR11, kUR10, kUR9, kUR8, kURax, kURcx, kURdx,
  kURsi, kURdi, kUOrigRax, kURip, kUCs, kUEflags, kURsp, kUSs, kUFsBase, kUGsBase, kUDs, kUEs, kUFs, kUGs
};
}  // namespace

RegisterFile from_user_regs(const uint64_t (&u)[kUserRegsCount]) {
  RegisterFile r;
  r.set(kRax, u[kURax]);
  r.set(kRdx, u[kURdx]);
  r.set(kRcx, u[kURcx]);
  r.set(kRbx, u[kURbx]);
  r.set(kRsi, u[kURsi]);
  r.set(kRdi, u[kURdi]);
  r.set(kRbp, u[kURbp]);
  r.set(kRsp, u[kURsp]);
  r.set(kR8, u[kUR8]);
  r.set(kR9, u[kUR9]);
  r.set(kR10, u[kUR10]);
  r.set(kR11, u[kUR11]);
  r.set(kR12, u[kUR12]);
  r.set(kR13, u[kUR13]);
  r.set(kR14, u[kUR14]);
  r.set(kR15, u[kUR15]);
  r.set(kRip, u[kURip]);
  return r;
}

RegisterFile from_user_regs_bytes(Bytes bytes) {
  uint64_t u[kUserRegsCount] = {};
  std::memcpy(u, bytes.data(), bytes.size() < sizeof u ? bytes.size() : sizeof u);
  return from_user_regs(u);
}

}  // namespace framewalk::arch::x86_64

namespace framewalk::arch::x86_64 {

namespace {
UnwindRow base_row(uint16_t cfa_reg, int64_t cfa_offset) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = cfa_reg;
  row.cfa.offset = cfa_offset;
  row.return_address_register = kRip;
  (void)row.set(RegisterRule{kRip, RuleKind::kOffset, -8, {}, 0});
  return row;
}
}  // namespace

UnwindRow signal_frame_row() {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kRsp;
  row.cfa.offset = 0;
  row.return_address_register = kRip;
  row.signal_frame = true;
  for (unsigned i = 0; i < 17; ++i)
    (void)row.set(RegisterRule{kGregsToDwarf[i], RuleKind::kOffset,
                               static_cast<int64_t>(kUcontextGregsOffset + 8 * i), {}, 0});
  return row;
}

UnwindRow frame_pointer_row() {
  UnwindRow row = base_row(kRbp, 16);
  (void)row.set(RegisterRule{kRbp, RuleKind::kOffset, -16, {}, 0});
  return row;
}

UnwindRow entry_row() { return base_row(kRsp, 8); }

UnwindRow after_push_rbp_row() {
  UnwindRow row = base_row(kRsp, 16);
  (void)row.set(RegisterRule{kRbp, RuleKind::kOffset, -16, {}, 0});
  return row;
}

}  // namespace framewalk::arch::x86_64
