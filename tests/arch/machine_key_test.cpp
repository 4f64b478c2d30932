// Machines are told apart by their whole key, not e_machine alone.
#include <gtest/gtest.h>

#include "arch/arch.hpp"
#include "arch/machine.hpp"
#include "base/machine_key.hpp"
#include "sframe/sframe_section.hpp"

namespace framewalk {
namespace {

constexpr MachineKey kX86_64{kEmX86_64, true, Endian::kLittle, 0};
constexpr MachineKey kX32{kEmX86_64, false, Endian::kLittle, 0};
constexpr MachineKey kS390x{kEmS390, true, Endian::kBig, 0};
constexpr MachineKey kS390{kEmS390, false, Endian::kBig, 0};
constexpr MachineKey kAarch64Be{kEmAarch64, true, Endian::kBig, 0};
constexpr MachineKey kPpc64le{kEmPpc64, true, Endian::kLittle, 2};
constexpr MachineKey kPpc64{kEmPpc64, true, Endian::kBig, 1};
// ARM executables carry their EABI version and float ABI in e_flags.
constexpr MachineKey kArmEabi5Hard{kEmArm, false, Endian::kLittle, 0x05000400};

TEST(MachineKey, NamesTellApartMachinesOfOneNumber) {
  EXPECT_EQ(machine_name(kX86_64), "x86-64");
  EXPECT_EQ(machine_name(kX32), "x32");
  EXPECT_EQ(machine_name(kS390x), "s390x");
  EXPECT_EQ(machine_name(kS390), "s390");
  EXPECT_EQ(machine_name(kPpc64le), "ppc64le");
  EXPECT_EQ(machine_name(kPpc64), "ppc64");
  EXPECT_EQ(machine_name(usual_machine_key(kEmPpc)), "ppc");
  EXPECT_EQ(machine_name({kEmPpc, false, Endian::kLittle, 0}), "ppcle");
  EXPECT_EQ(machine_name(kAarch64Be), "AArch64 (big-endian)");
  EXPECT_EQ(machine_name(MachineKey{999, true, Endian::kLittle, 0}), "e_machine 999");
}

TEST(MachineKey, UsualKeysAreTheCommonMachineOfANumber) {
  EXPECT_EQ(usual_machine_key(kEmX86_64), kX86_64);
  EXPECT_EQ(usual_machine_key(kEmS390), kS390x);
  EXPECT_EQ(usual_machine_key(kEmPpc64), kPpc64le);
  EXPECT_FALSE(usual_machine_key(kEm386).is_64);
  EXPECT_FALSE(usual_machine_key(kEmArm).is_64);
}

TEST(MachineKey, OnlyTheWholeKeySelectsAnUnwinder) {
  ASSERT_NE(arch::machine_for(kX86_64), nullptr);
  EXPECT_EQ(arch::machine_for(kX86_64)->address_size(), 8);
  ASSERT_NE(arch::machine_for(kX32), nullptr);  // x86-64's registers, 4-byte words: another machine
  EXPECT_NE(arch::machine_for(kX32), arch::machine_for(kX86_64));
  EXPECT_EQ(arch::machine_for(kX32)->address_size(), 4);
  EXPECT_EQ(arch::machine_for(kAarch64Be), nullptr);  // not little-endian AArch64's descriptor
  ASSERT_NE(arch::machine_for(kS390), nullptr);  // s390x's registers, 4-byte words: another machine
  EXPECT_NE(arch::machine_for(kS390), arch::machine_for(kS390x));
  EXPECT_EQ(arch::machine_for(kS390)->address_size(), 4);
  ASSERT_NE(arch::machine_for(kPpc64le), nullptr);
  EXPECT_EQ(arch::machine_for(kPpc64), nullptr);  // big-endian ELFv1: not ppc64le's descriptor
  ASSERT_NE(arch::machine_for(kArmEabi5Hard), nullptr);  // e_flags do not matter to ARM
  EXPECT_EQ(arch::machine_for(kArmEabi5Hard)->address_size(), 4);
  ASSERT_NE(arch::machine_for(usual_machine_key(kEm386)), nullptr);
  EXPECT_EQ(arch::machine_for(usual_machine_key(kEm386))->program_counter(), 8);
}

TEST(MachineKey, DescriptorsFoldEveryFactOfAMachine) {
  // One descriptor per machine: the Machine reads it, SFrame's ABIs read it.
  for (const MachineKey& key : {kX86_64, kX32, usual_machine_key(kEmAarch64), usual_machine_key(kEmArm),
                                usual_machine_key(kEm386), kS390x, kS390}) {
    const arch::Machine* m = arch::machine_for(key);
    ASSERT_NE(m, nullptr) << machine_name(key);
    EXPECT_EQ(&m->info(), arch::arch_for(key));
    EXPECT_EQ(m->stack_pointer(), m->info().stack_pointer);
    EXPECT_EQ(m->return_address_column(), m->info().return_address);
  }
  const sframe::AbiRegisters s390x = sframe::abi_registers(sframe::Abi::kS390xBig);
  EXPECT_EQ(s390x.sp, 15);
  EXPECT_EQ(s390x.ra, 14);
  EXPECT_TRUE(s390x.link_register);
}

TEST(MachineKey, CfiOfAVariantIsReadWithItsNumbersRegisters) {
  // As readelf names registers by e_machine alone.
  ASSERT_NE(arch::dwarf_arch_for(kS390), nullptr);  // 31-bit s390's own descriptor, s390x's names
  EXPECT_STREQ(arch::dwarf_register_name(arch::dwarf_arch_for(kS390), 65), "pswa");
  ASSERT_NE(arch::dwarf_arch_for(kX32), nullptr);  // x32's own descriptor, x86-64's names
  EXPECT_STREQ(arch::dwarf_register_name(arch::dwarf_arch_for(kX32), 16), "rip");
  ASSERT_NE(arch::dwarf_arch_for(kAarch64Be), nullptr);
  EXPECT_EQ(arch::dwarf_arch_for(kAarch64Be)->opcode_2d, arch::CfaOpcode2d::kNegateRaState);
  ASSERT_NE(arch::dwarf_arch_for(kPpc64le), nullptr);
  ASSERT_NE(arch::dwarf_arch_for(kPpc64), nullptr);  // ppc64le's numbers (and readelf's names: none)
  EXPECT_EQ(arch::dwarf_register_name(arch::dwarf_arch_for(kPpc64), 65), nullptr);
  EXPECT_EQ(sframe::abi_for_elf(kX32), std::nullopt);
  EXPECT_EQ(sframe::abi_for_elf(kAarch64Be), sframe::Abi::kAarch64Big);
  EXPECT_EQ(sframe::abi_for_elf(kS390), std::nullopt);
}

}  // namespace
}  // namespace framewalk
