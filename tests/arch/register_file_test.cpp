// The register file: DWARF numbers below 64 in slots, higher ones in a short list.
#include <gtest/gtest.h>

#include "arch/registers.hpp"

namespace framewalk::arch {
namespace {

// Registers numbered 64 and up have a short list of their own.
TEST(RegisterFile, HighNumbersAreKeptUpToTheListsSize) {
  RegisterFile r;
  for (unsigned i = 0; i < RegisterFile::kMaxHighRegisters; ++i) EXPECT_TRUE(r.set(256 + i, i + 1));
  EXPECT_FALSE(r.set(300, 7));  // full: refused, not silently lost
  EXPECT_FALSE(r.known(300));
  EXPECT_EQ(r.value_or(256 + 3, 0), 4u);
  r.forget(256 + 3);
  EXPECT_FALSE(r.known(256 + 3));
  EXPECT_EQ(r.value_or(256 + 4, 0), 5u);
  EXPECT_TRUE(r.set(300, 7));
  EXPECT_EQ(r.value_or(300, 0), 7u);
  EXPECT_TRUE(r.set(300, 8));  // replaced in place
  EXPECT_EQ(r.value_or(300, 0), 8u);
  EXPECT_EQ(r.high_count(), RegisterFile::kMaxHighRegisters);
  EXPECT_EQ(r.known_mask(), 0u);
  r.clear();
  EXPECT_FALSE(r.known(300));
}

}  // namespace
}  // namespace framewalk::arch
