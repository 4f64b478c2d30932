// DWARF register names per machine as readelf spells them (checked against
// binutils 2.40's readelf on CFI naming every register number).
#include <gtest/gtest.h>

#include <string>

#include "arch/arch.hpp"

namespace framewalk::arch {
namespace {

std::string name(uint16_t machine, unsigned reg) {
  const char* n = dwarf_register_name(dwarf_arch_for(usual_machine_key(machine)), reg);
  return n ? n : "-";
}

TEST(RegisterNamesTest, S390) {
  EXPECT_EQ(name(22, 0), "-");  // readelf shows r0..r15 as "r0"..
  EXPECT_EQ(name(22, 15), "-");
  EXPECT_EQ(name(22, 16), "f0");
  EXPECT_EQ(name(22, 17), "f2");
  EXPECT_EQ(name(22, 20), "f1");
  EXPECT_EQ(name(22, 31), "f15");
  EXPECT_EQ(name(22, 32), "cr0");
  EXPECT_EQ(name(22, 63), "a15");
  EXPECT_EQ(name(22, 64), "pswm");
  EXPECT_EQ(name(22, 65), "pswa");
  EXPECT_EQ(name(22, 66), "-");
  EXPECT_EQ(name(22, 68), "v16");
  EXPECT_EQ(name(22, 72), "v17");
  EXPECT_EQ(name(22, 83), "v31");
  EXPECT_EQ(name(22, 84), "-");
}

TEST(RegisterNamesTest, Riscv) {
  EXPECT_EQ(name(243, 0), "zero");
  EXPECT_EQ(name(243, 1), "ra");
  EXPECT_EQ(name(243, 2), "sp");
  EXPECT_EQ(name(243, 8), "s0");
  EXPECT_EQ(name(243, 31), "t6");
  EXPECT_EQ(name(243, 32), "ft0");
  EXPECT_EQ(name(243, 40), "fs0");
  EXPECT_EQ(name(243, 63), "ft11");
  EXPECT_EQ(name(243, 64), "-");
  EXPECT_EQ(name(243, 95), "-");
  EXPECT_EQ(name(243, 96), "v0");
  EXPECT_EQ(name(243, 127), "v31");
  EXPECT_EQ(name(243, 128), "-");
  EXPECT_EQ(name(243, 4095), "-");
  EXPECT_EQ(name(243, 4096), "ustatus");
  EXPECT_EQ(name(243, 4096 + 0x300), "mstatus");
  EXPECT_EQ(name(243, 4096 + 0xc00), "cycle");
  EXPECT_EQ(name(243, 4096 + 6), "csr6");  // a CSR without a name
  EXPECT_EQ(name(243, 8191), "csr4095");
  EXPECT_EQ(name(243, 8192), "-");
}

TEST(RegisterNamesTest, VariantsOfOneNumberShareTheNames) {
  // 31-bit s390 and riscv32 number their registers as s390x and riscv64 do.
  const ArchInfo* s390 = dwarf_arch_for(MachineKey{kEmS390, false, Endian::kBig, 0});
  ASSERT_NE(s390, nullptr);
  EXPECT_STREQ(dwarf_register_name(s390, 65), "pswa");
  const ArchInfo* riscv32 = dwarf_arch_for(MachineKey{kEmRiscv, false, Endian::kLittle, 0});
  ASSERT_NE(riscv32, nullptr);
  EXPECT_STREQ(dwarf_register_name(riscv32, 1), "ra");
}

TEST(RegisterNamesTest, PowerPcHasNone) {
  // readelf names no PowerPC registers: "r65", not "lr"; ppc's and
  // ppc64le's descriptors have none.
  for (uint16_t machine : {kEmPpc, kEmPpc64}) {
    const ArchInfo* power = dwarf_arch_for(usual_machine_key(machine));
    ASSERT_NE(power, nullptr);
    EXPECT_EQ(dwarf_register_name(power, 65), nullptr);
    EXPECT_EQ(dwarf_register_name(power, 1), nullptr);
  }
}

}  // namespace
}  // namespace framewalk::arch
