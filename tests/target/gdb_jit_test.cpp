// The GDB JIT interface's list read from memory: layouts, and every way a
// list can be broken (version, loop, a link that does not lead back,
// unreadable or oversized objects); Android's extended descriptor and its
// seqlocks.
#include <gtest/gtest.h>

#include <cstring>

#include "arch/machine.hpp"
#include "elf/elf_file.hpp"
#include "support/sparse_memory.hpp"
#include "target/gdb_jit.hpp"

namespace framewalk {
namespace {

const arch::Machine& machine(uint16_t e_machine) { return *arch::machine_for(usual_machine_key(e_machine)); }

// A list in memory of 64-bit (or 32-bit ARM) layout: entries at 0x2000,
// 0x2100, ...; object i at 0x8000 + 0x1000 * i, `sizes[i]` bytes of i + 1.
struct List {
  test::SparseMemory memory;
  uint64_t descriptor = 0x1000;
  unsigned pointer;
  unsigned size_offset;

  List(bool wide, std::vector<uint64_t> sizes) : pointer(wide ? 8 : 4), size_offset(wide ? 24 : 16) {
    memory.put(descriptor, 1, 4);  // version
    memory.put(descriptor + 4, 1, 4);  // JIT_REGISTER
    memory.put(descriptor + 8, sizes.empty() ? 0 : entry(sizes.size() - 1), pointer);  // relevant_entry
    memory.put(descriptor + 8 + pointer, sizes.empty() ? 0 : entry(0), pointer);  // first_entry
    for (size_t i = 0; i < sizes.size(); ++i) {
      memory.put(entry(i), i + 1 < sizes.size() ? entry(i + 1) : 0, pointer);
      memory.put(entry(i) + pointer, i ? entry(i - 1) : 0, pointer);
      memory.put(entry(i) + 2 * pointer, object(i), pointer);
      memory.put(entry(i) + size_offset, sizes[i], 8);
      for (uint64_t b = 0; b < sizes[i]; ++b) memory.put(object(i) + b, i + 1, 1);
    }
  }
  static uint64_t entry(size_t i) { return 0x2000 + 0x100 * i; }
  static uint64_t object(size_t i) { return 0x8000 + 0x1000 * i; }
};

TEST(GdbJit, ReadsEveryObjectInOrder) {
  for (bool wide : {true, false}) {
    List l(wide, {16, 3, 40});
    const GdbJitList got =
        read_gdb_jit_list(l.memory, l.descriptor, machine(wide ? elf::kEmX86_64 : elf::kEmArm));
    EXPECT_EQ(got.problem, GdbJitProblem::kNone) << wide;
    ASSERT_EQ(got.objects.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(got.objects[i].entry, List::entry(i));
      EXPECT_EQ(got.objects[i].address, List::object(i));
      EXPECT_EQ(got.objects[i].bytes, std::vector<uint8_t>(std::vector<uint64_t>{16, 3, 40}[i], uint8_t(i + 1)));
    }
    EXPECT_EQ(got.attempts, 1u);
  }
}

TEST(GdbJit, AnEmptyListHasNoObjects) {
  List l(true, {});
  const GdbJitList got = read_gdb_jit_list(l.memory, l.descriptor, machine(elf::kEmAarch64));
  EXPECT_EQ(got.problem, GdbJitProblem::kNone);
  EXPECT_TRUE(got.objects.empty());
}

TEST(GdbJit, VersionOtherThanOne) {
  List l(true, {8});
  l.memory.put(l.descriptor, 2, 4);
  const GdbJitList got = read_gdb_jit_list(l.memory, l.descriptor, machine(elf::kEmX86_64));
  EXPECT_EQ(got.problem, GdbJitProblem::kVersion);
  EXPECT_EQ(got.problem_address, l.descriptor);
  EXPECT_TRUE(got.objects.empty());
}

TEST(GdbJit, ALoopEndsTheReadingAfterThreeAttempts) {
  List l(true, {8, 8, 8});
  l.memory.put(List::entry(2), List::entry(1), 8);  // the last entry leads back to the second
  const GdbJitList got = read_gdb_jit_list(l.memory, l.descriptor, machine(elf::kEmX86_64));
  EXPECT_EQ(got.problem, GdbJitProblem::kLoop);
  EXPECT_EQ(got.problem_address, List::entry(1));
  EXPECT_EQ(got.objects.size(), 3u);
  EXPECT_EQ(got.attempts, 3u);
  // An entry that is its own successor: a loop; as its own predecessor
  // too, a broken link first (the first entry's prev_entry must be 0).
  List self(true, {8});
  self.memory.put(List::entry(0), List::entry(0), 8);
  self.memory.put(List::entry(0) + 8, List::entry(0), 8);
  self.memory.put(self.descriptor + 16, List::entry(0), 8);
  const GdbJitList loop = read_gdb_jit_list(self.memory, self.descriptor, machine(elf::kEmX86_64));
  EXPECT_EQ(loop.problem, GdbJitProblem::kBrokenLink);  // its prev_entry is not 0
  self.memory.put(List::entry(0) + 8, 0, 8);
  const GdbJitList loop2 = read_gdb_jit_list(self.memory, self.descriptor, machine(elf::kEmX86_64));
  EXPECT_EQ(loop2.problem, GdbJitProblem::kLoop);
  EXPECT_EQ(loop2.objects.size(), 1u);
}

TEST(GdbJit, UnreadableAndOversizedObjects) {
  List l(true, {8, 8});
  l.memory.put(List::entry(1) + 16, 0x10, 8);  // symfile_addr of the second: nothing there
  GdbJitList got = read_gdb_jit_list(l.memory, l.descriptor, machine(elf::kEmX86_64));
  EXPECT_EQ(got.problem, GdbJitProblem::kUnreadable);
  EXPECT_EQ(got.problem_address, 0x10u);
  EXPECT_EQ(got.objects.size(), 1u);  // the first is kept
  List big(true, {8});
  big.memory.put(List::entry(0) + 24, kGdbJitMaxObjectBytes + 1, 8);
  got = read_gdb_jit_list(big.memory, big.descriptor, machine(elf::kEmX86_64));
  EXPECT_EQ(got.problem, GdbJitProblem::kTooLarge);
  EXPECT_EQ(got.problem_address, List::entry(0));
  List wild(true, {8});
  wild.memory.put(wild.descriptor + 16, 0xdead0000, 8);  // first_entry into nothing
  got = read_gdb_jit_list(wild.memory, wild.descriptor, machine(elf::kEmX86_64));
  EXPECT_EQ(got.problem, GdbJitProblem::kUnreadable);
  EXPECT_EQ(got.problem_address, 0xdead0000u);
  test::SparseMemory nothing;
  got = read_gdb_jit_list(nothing, 0x1000, machine(elf::kEmX86_64));
  EXPECT_EQ(got.problem, GdbJitProblem::kUnreadable);
  EXPECT_EQ(got.problem_address, 0x1000u);
  EXPECT_STREQ(to_string(GdbJitProblem::kLoop), "loops");
}

// Android's extension in `l`'s layout: magic, flags, sizes, then the
// descriptor's seqlock; with "Android2", each entry's seqlock after its
// registration timestamp.
uint64_t make_android(List& l, const char* magic, uint32_t seqlock, bool wide) {
  const uint64_t at = l.descriptor + 8 + 2 * l.pointer;
  for (int i = 0; i < 8; ++i) l.memory.put(at + i, static_cast<uint8_t>(magic[i]), 1);
  l.memory.put(at + 8, 0, 4);                    // flags
  l.memory.put(at + 12, wide ? 56 : 48, 4);      // sizeof_descriptor
  l.memory.put(at + 16, l.size_offset + 20, 4);  // sizeof_entry
  l.memory.put(at + 20, seqlock, 4);             // action_seqlock
  l.memory.put(at + 24, 1, 8);                   // action_timestamp
  for (size_t i = 0; i < 8; ++i) {
    l.memory.put(List::entry(i) + l.size_offset + 8, 100 + i, 8);  // register_timestamp
    l.memory.put(List::entry(i) + l.size_offset + 16, 2, 4);       // an even seqlock: valid
  }
  return at + 20;
}

// Memory whose word at `at` reads `before` for the first `reads` readings,
// then `after`: a seqlock that moves while a list is read.
class MovingWord final : public Memory {
 public:
  MovingWord(Memory& base, uint64_t at, uint32_t before, uint32_t after, int reads)
      : base_(base), at_(at), before_(before), after_(after), reads_(reads) {}
  size_t read(uint64_t address, void* out, size_t size) override {
    if (address == at_ && size == 4) {
      const uint32_t v = reads_-- > 0 ? before_ : after_;
      std::memcpy(out, &v, 4);
      return 4;
    }
    return base_.read(address, out, size);
  }

 private:
  Memory& base_;
  uint64_t at_;
  uint32_t before_, after_;
  int reads_;
};

TEST(GdbJit, AndroidListsReadUnderTheirSeqlock) {
  for (bool wide : {true, false}) {
    for (const char* magic : {"Android1", "Android2"}) {
      List l(wide, {16, 3});
      make_android(l, magic, 6, wide);
      const GdbJitList got = read_gdb_jit_list(l.memory, l.descriptor, machine(wide ? elf::kEmAarch64 : elf::kEmArm));
      EXPECT_EQ(got.problem, GdbJitProblem::kNone) << magic << wide;
      EXPECT_EQ(got.objects.size(), 2u);
      EXPECT_EQ(got.attempts, 1u);
    }
  }
}

TEST(GdbJit, AndroidListBeingChangedIsReadAgain) {
  // Odd: locked by the runtime for as long as it is read.
  List locked(true, {8});
  make_android(locked, "Android1", 7, true);
  GdbJitList got = read_gdb_jit_list(locked.memory, locked.descriptor, machine(elf::kEmAarch64));
  EXPECT_EQ(got.problem, GdbJitProblem::kChanging);
  EXPECT_EQ(got.problem_address, locked.descriptor);
  EXPECT_EQ(got.attempts, 3u);
  EXPECT_TRUE(got.objects.empty());
  EXPECT_STREQ(to_string(GdbJitProblem::kChanging), "was being changed (Android's action_seqlock)");

  // Changed while the first reading went on (4 -> 6 after its first two
  // readings of the seqlock): the second reading is whole.
  List l(true, {8, 8, 8});
  const uint64_t seqlock = make_android(l, "Android1", 4, true);
  MovingWord moving(l.memory, seqlock, 4, 6, 2);
  got = read_gdb_jit_list(moving, l.descriptor, machine(elf::kEmAarch64));
  EXPECT_EQ(got.problem, GdbJitProblem::kNone);
  EXPECT_EQ(got.attempts, 2u);
  EXPECT_EQ(got.objects.size(), 3u);

  // "Android2": an entry whose own seqlock is odd is being removed.
  List removing(true, {8, 8});
  make_android(removing, "Android2", 4, true);
  removing.memory.put(List::entry(1) + removing.size_offset + 16, 3, 4);
  got = read_gdb_jit_list(removing.memory, removing.descriptor, machine(elf::kEmAarch64));
  EXPECT_EQ(got.problem, GdbJitProblem::kChanging);
  EXPECT_EQ(got.objects.size(), 1u);  // the one before it
  // "Android1" entries have no seqlock: the same word is not read as one.
  List older(true, {8, 8});
  make_android(older, "Android1", 4, true);
  older.memory.put(List::entry(1) + older.size_offset + 16, 3, 4);
  got = read_gdb_jit_list(older.memory, older.descriptor, machine(elf::kEmAarch64));
  EXPECT_EQ(got.problem, GdbJitProblem::kNone);
  EXPECT_EQ(got.objects.size(), 2u);
}

}  // namespace
}  // namespace framewalk
