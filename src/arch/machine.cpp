#include "arch/machine.hpp"

#include <utility>

#include "arch/aarch64/frames.hpp"
#include "arch/aarch64/machine.hpp"
#include "arch/arm/machine.hpp"
#include "arch/arm/frames.hpp"
#include "arch/capture.hpp"
#include "arch/i386/frames.hpp"
#include "arch/i386/machine.hpp"
#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/machine.hpp"

namespace framewalk::arch {

const Machine* machine_for(uint16_t elf_machine) {
  switch (elf_machine) {
    case 62: return &x86_64::machine();
    case 183: return &aarch64::machine();
    case 40: return &arm::machine();
    case 3: return &i386::machine();
    default: return nullptr;
  }
}

std::string supported_machine_names() {
  std::string names;
  // As elf::machine_name spells them.
  static constexpr std::pair<uint16_t, const char*> kNames[] = {{62, "x86-64"}, {183, "AArch64"}, {40, "ARM"},
                                                                {3, "i386"}};
  for (auto [m, name] : kNames) {
    if (!machine_for(m)) continue;
    if (!names.empty()) names += ", ";
    names += name;
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
