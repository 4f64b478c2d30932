// The register file: DWARF numbers below 64 in slots, higher ones in a list.
#include <gtest/gtest.h>

#include <vector>

#include "arch/registers.hpp"

namespace framewalk::arch {
namespace {

// Registers numbered 64 and up have a list of their own.
TEST(RegisterFile, HighNumbersAreKeptUpToTheListsSize) {
  RegisterFile r;
  for (unsigned i = 0; i < RegisterFile::kMaxHighRegisters; ++i) EXPECT_TRUE(r.set(256 + i, i + 1));
  EXPECT_FALSE(r.set(400, 7));  // full: refused, not silently lost
  EXPECT_FALSE(r.known(400));
  EXPECT_EQ(r.value_or(256 + 3, 0), 4u);
  r.forget(256 + 3);
  EXPECT_FALSE(r.known(256 + 3));
  EXPECT_EQ(r.value_or(256 + 4, 0), 5u);
  EXPECT_TRUE(r.set(400, 7));
  EXPECT_EQ(r.value_or(400, 0), 7u);
  EXPECT_TRUE(r.set(400, 8));  // replaced in place
  EXPECT_EQ(r.value_or(400, 0), 8u);
  EXPECT_EQ(r.high_count(), RegisterFile::kMaxHighRegisters);
  EXPECT_EQ(r.known_mask(), 0u);
  r.clear();
  EXPECT_FALSE(r.known(400));
  EXPECT_FALSE(r.set(0x10000, 1)) << "a number no DWARF register has";
}

// Every register of the machines elfutils unwinds fits at once beside all
// of 0-63: ppc64's 114 (64-113), s390x's PSW 64-65, AArch64's v0-v31
// (64-95), ARM's VFP d0-d31 (256-287).
TEST(RegisterFile, WhatTheMachinesRestoreAbove63Fits) {
  std::vector<std::vector<unsigned>> machines = {{}, {64, 65}, {}, {}};
  for (unsigned reg = 64; reg <= 113; ++reg) machines[0].push_back(reg);
  for (unsigned v = 64; v <= 95; ++v) machines[2].push_back(v);
  for (unsigned d = 256; d <= 287; ++d) machines[3].push_back(d);
  for (const auto& high : machines) {
    RegisterFile r;
    for (unsigned reg = 0; reg < RegisterFile::kMaxRegisters; ++reg) ASSERT_TRUE(r.set(reg, 1000 + reg));
    for (unsigned reg : high) ASSERT_TRUE(r.set(reg, 2000 + reg)) << reg;
    const RegisterFile copy = r;
    EXPECT_EQ(copy.known_mask(), ~uint64_t{0});
    for (unsigned reg = 0; reg < RegisterFile::kMaxRegisters; ++reg) EXPECT_EQ(copy.get(reg), 1000u + reg) << reg;
    for (unsigned reg : high) EXPECT_EQ(copy.get(reg), 2000u + reg) << reg;
    EXPECT_EQ(copy.high_count(), high.size());
  }
}

// A copy holds what the original knows, however few or many registers that
// is, and only that.
TEST(RegisterFile, CopiesKeepExactlyWhatIsKnown) {
  RegisterFile r;
  r.set(7, 0x77);
  r.set(16, 0x1616);
  r.set(63, 0x63);
  r.set(113, 0x113);  // ppc64's last
  r.set(65, 0x65);
  r.set(270, 0x270);
  RegisterFile c = r;
  EXPECT_EQ(c.get(7), 0x77u);
  EXPECT_EQ(c.get(16), 0x1616u);
  EXPECT_EQ(c.get(63), 0x63u);
  EXPECT_EQ(c.get(65), 0x65u);
  EXPECT_EQ(c.get(113), 0x113u);
  EXPECT_EQ(c.get(270), 0x270u);
  EXPECT_FALSE(c.known(8));
  EXPECT_FALSE(c.known(114));
  EXPECT_EQ(c.known_mask(), (uint64_t{1} << 7) | (uint64_t{1} << 16) | (uint64_t{1} << 63));
  EXPECT_EQ(c.high_count(), 3u);
  // Forgotten registers stay forgotten in later copies, also the highest.
  r.forget(63);
  r.forget(270);
  c = r;
  EXPECT_FALSE(c.known(63));
  EXPECT_FALSE(c.known(270));
  EXPECT_EQ(c.get(65), 0x65u);
  EXPECT_EQ(c.high_count(), 2u);
  // Set again after a copy that did not carry its slot.
  c.set(40, 0x40);
  RegisterFile d = c;
  EXPECT_EQ(d.get(40), 0x40u);
  EXPECT_EQ(d.get(7), 0x77u);
  // Assigning a file that knows less leaves nothing of the old one.
  RegisterFile empty;
  d = empty;
  EXPECT_FALSE(d.known(7));
  EXPECT_FALSE(d.known(40));
  EXPECT_FALSE(d.known(65));
}

}  // namespace
}  // namespace framewalk::arch
