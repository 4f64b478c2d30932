#include "arch/machine.hpp"

#include "arch/aarch64/frames.hpp"
#include "arch/aarch64/machine.hpp"
#include "arch/arm/machine.hpp"
#include "arch/arm/frames.hpp"
#include "arch/capture.hpp"
#include "arch/i386/frames.hpp"
#include "arch/i386/machine.hpp"
#include "arch/ppc/machine.hpp"
#include "arch/ppc64le/frames.hpp"
#include "arch/ppc64le/machine.hpp"
#include "arch/riscv64/frames.hpp"
#include "arch/riscv64/machine.hpp"
#include "arch/s390x/frames.hpp"
#include "arch/s390x/machine.hpp"
#include "arch/sparc/machine.hpp"
#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/machine.hpp"

namespace framewalk::arch {

namespace {
// Every machine framewalk unwinds. A new one: its folder, and a line here.
std::span<const Machine* const> machines() {
  static const Machine* const kMachines[] = {&x86_64::machine(), &aarch64::machine(), &arm::machine(),
                                             &i386::machine(), &ppc64le::machine(), &s390x::machine(),
                                             &riscv64::machine(), &ppc::machine(), &x86_64::x32_machine(),
                                             &sparc::sparc64_machine(), &s390x::s390_machine(),
                                             &sparc::sparc32_machine(), &sparc::sparc32plus_machine()};
  return kMachines;
}
}  // namespace

const Machine* machine_for(const MachineKey& key) {
  for (const Machine* m : machines())
    if (m->info().matches(key)) return m;
  return nullptr;
}

const Machine* compat_machine(const Machine& machine) {
  if (&machine == &x86_64::machine()) return &i386::machine();
  if (&machine == &aarch64::machine()) return &arm::machine();
  return nullptr;
}

std::string supported_machine_names() {
  std::string names;
  for (const Machine* m : machines()) {
    if (!names.empty()) names += ", ";
    names += machine_name(m->key());
  }
  return names;
}

const Machine& host_machine() {
#if defined(__x86_64__)
  return x86_64::machine();
#elif defined(__aarch64__)
  return aarch64::machine();
#elif defined(__arm__)
  return arm::machine();
#elif defined(__i386__)
  return i386::machine();
#elif defined(__riscv) && __riscv_xlen == 64
  return riscv64::machine();
#elif defined(__s390x__)
  return s390x::machine();
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return ppc64le::machine();
#else
#error "framewalk has no machine descriptor for this host (src/arch/<machine>/machine.cpp)"
#endif
}

RegisterFile from_host_capture(const uint64_t* words) {
#if defined(__x86_64__)
  return x86_64::from_capture(words);
#elif defined(__aarch64__)
  return aarch64::from_capture(words);
#elif defined(__arm__)
  return arm::from_capture(words);
#elif defined(__i386__)
  return i386::from_capture(words);
#elif defined(__riscv) && __riscv_xlen == 64
  return riscv64::from_capture(words);
#elif defined(__s390x__)
  return s390x::from_capture(words);
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return ppc64le::from_capture(words);
#endif
}

RegisterFile Machine::registers_from_perf_sample(uint64_t mask, std::span<const uint64_t> values) const {
  RegisterFile r;
  const std::span<const int16_t> numbers = perf_register_numbers();
  size_t next = 0;
  for (unsigned bit = 0; bit < 64 && next < values.size(); ++bit) {
    if (!((mask >> bit) & 1)) continue;
    const uint64_t value = values[next++];
    if (bit < numbers.size() && numbers[bit] >= 0) r.set(static_cast<unsigned>(numbers[bit]), address(value));
  }
  return r;
}

}  // namespace framewalk::arch
