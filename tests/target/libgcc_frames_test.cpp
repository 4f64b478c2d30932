// libgcc's registry of __register_frame tables read from memory: both
// lists, single tables, __register_frame_table's arrays, sorted objects
// (their fde_vector's orig_data), the 32-bit layout, and lists that loop
// or point at memory that cannot be read.
#include "target/libgcc_frames.hpp"

#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "elf/elf_file.hpp"
#include "support/sparse_memory.hpp"

namespace framewalk {
namespace {

const arch::Machine& machine(uint16_t e_machine) { return *arch::machine_for(usual_machine_key(e_machine)); }

// An .eh_frame at `at`: one CIE ("zR", pc-relative sdata4 pointers) and one
// FDE for [pc, pc + range), then the zero length word. Returns its size
// without that word.
uint64_t put_table(test::SparseMemory& m, uint64_t at, uint64_t pc, uint32_t range) {
  const uint8_t cie[] = {20, 0, 0, 0,  0, 0, 0, 0,  1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b,
                         0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0};
  m.code(at, cie, sizeof cie);
  const uint64_t fde = at + sizeof cie;
  m.put(fde, 16, 4);
  m.put(fde + 4, fde + 4 - at, 4);                            // back to the CIE
  m.put(fde + 8, static_cast<uint32_t>(pc - (fde + 8)), 4);  // pc-relative
  m.put(fde + 12, range, 4);
  m.put(fde + 16, 0, 4);  // no augmentation data, padding
  m.put(fde + 20, 0, 4);  // the end
  return sizeof cie + 20;
}

// struct object at `at` in a `pointer`-byte layout.
void put_object(test::SparseMemory& m, uint64_t at, unsigned pointer, uint64_t u, uint64_t s, uint64_t next) {
  m.put(at, ~uint64_t{0}, pointer);  // pc_begin: not yet known
  m.put(at + pointer, 0, pointer);
  m.put(at + 2 * pointer, 0, pointer);
  m.put(at + 3 * pointer, u, pointer);
  m.put(at + 4 * pointer, s, pointer);
  m.put(at + 5 * pointer, next, pointer);
}

constexpr uint64_t kUnseen = 0x1000, kSeen = 0x1008;
constexpr uint64_t kFromArray = 2, kSorted = 1;

TEST(LibgccFrames, BothListsEveryKindOfObject) {
  test::SparseMemory m;
  // unseen: A (one table) -> B (an array of two); seen: C (sorted).
  m.put(kUnseen, 0x3000, 8);
  put_object(m, 0x3000, 8, 0x10000, 0x7f8, 0x3100);
  put_object(m, 0x3100, 8, 0x4000, 0x7f8 | kFromArray, 0);
  m.put(0x4000, 0x11000, 8);
  m.put(0x4008, 0x12000, 8);
  m.put(0x4010, 0, 8);
  m.put(kSeen, 0x3200, 8);
  put_object(m, 0x3200, 8, 0x5000, kSorted | (0x1b << 3) | (1 << 11), 0);
  m.put(0x5000, 0x13000, 8);  // fde_vector: orig_data, count, array
  m.put(0x5008, 1, 8);
  m.put(0x5010, 0x13000 + 24, 8);
  const uint64_t size = put_table(m, 0x10000, 0x50000, 0x100);
  put_table(m, 0x11000, 0x60000, 0x40);
  put_table(m, 0x12000, 0x61000, 0x20);
  put_table(m, 0x13000, 0x70000, 0x10);
  const LibgccRegistry got = read_libgcc_registry(m, kUnseen, kSeen, machine(elf::kEmX86_64));
  EXPECT_EQ(got.problem, "");
  ASSERT_EQ(got.tables.size(), 4u);
  const uint64_t objects[] = {0x3000, 0x3100, 0x3100, 0x3200};
  const uint64_t addresses[] = {0x10000, 0x11000, 0x12000, 0x13000};
  const uint64_t pcs[][2] = {{0x50000, 0x50100}, {0x60000, 0x60040}, {0x61000, 0x61020}, {0x70000, 0x70010}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(got.tables[i].object, objects[i]) << i;
    EXPECT_EQ(got.tables[i].address, addresses[i]) << i;
    EXPECT_EQ(got.tables[i].bytes.size(), size) << i;
    EXPECT_EQ(got.tables[i].pc_start, pcs[i][0]) << i;
    EXPECT_EQ(got.tables[i].pc_end, pcs[i][1]) << i;
  }
}

TEST(LibgccFrames, ThirtyTwoBitLayout) {
  test::SparseMemory m;
  m.put(kUnseen, 0x3000, 4);
  put_object(m, 0x3000, 4, 0x10000, 0x7f8, 0);
  put_table(m, 0x10000, 0x8000, 0x80);
  const LibgccRegistry got = read_libgcc_registry(m, kUnseen, 0, machine(elf::kEmArm));
  EXPECT_EQ(got.problem, "");
  ASSERT_EQ(got.tables.size(), 1u);
  EXPECT_EQ(got.tables[0].pc_start, 0x8000u);
  EXPECT_EQ(got.tables[0].pc_end, 0x8080u);
}

// Two objects whose arrays name one table 40,000 times each: more tables
// than a registry is read for. (Computed, not stored: a SparseMemory of
// that many words would make the test slow under qemu.)
class RepeatedTable final : public Memory {
 public:
  static constexpr uint64_t kArrayA = 0x100000, kArrayB = 0x200000, kEntries = 40000, kTable = 0x10000;
  RepeatedTable() {
    m_.put(kUnseen, 0x3000, 4);
    put_object(m_, 0x3000, 4, kArrayA, 0x7f8 | kFromArray, 0x3100);
    put_object(m_, 0x3100, 4, kArrayB, 0x7f8 | kFromArray, 0);
    table_size_ = put_table(m_, kTable, 0x8000, 0x80) + 4;
    table_.resize(table_size_);
    m_.read(kTable, table_.data(), table_size_);
  }
  size_t read(uint64_t address, void* out, size_t size) override {
    auto* dst = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < size; ++i) {
      const uint64_t a = address + i;
      if (a >= kTable && a < kTable + table_size_) {
        dst[i] = table_[a - kTable];
      } else if ((a >= kArrayA && a < kArrayA + 4 * (kEntries + 1)) || (a >= kArrayB && a < kArrayB + 4 * (kEntries + 1))) {
        const uint64_t entry = (a - (a >= kArrayB ? kArrayB : kArrayA)) / 4;
        const uint32_t word = entry < kEntries ? static_cast<uint32_t>(kTable) : 0;
        dst[i] = static_cast<uint8_t>(word >> (8 * (a % 4)));
      } else if (m_.read(a, dst + i, 1) != 1) {
        return i;
      }
    }
    return size;
  }

 private:
  test::SparseMemory m_;
  std::vector<uint8_t> table_;
  size_t table_size_ = 0;
};

TEST(LibgccFrames, LoopsAndUnreadableMemoryEndTheReading) {
  {
    RepeatedTable m;
    const LibgccRegistry got = read_libgcc_registry(m, kUnseen, 0, machine(elf::kEmArm));
    EXPECT_EQ(got.problem, "has too many tables");
    EXPECT_EQ(got.tables.size(), kLibgccMaxTables);
  }
  {
    test::SparseMemory m;  // A -> B -> A
    m.put(kUnseen, 0x3000, 8);
    put_object(m, 0x3000, 8, 0x10000, 0x7f8, 0x3100);
    put_object(m, 0x3100, 8, 0x10000, 0x7f8, 0x3000);
    put_table(m, 0x10000, 0x50000, 0x100);
    const LibgccRegistry got = read_libgcc_registry(m, kUnseen, kSeen, machine(elf::kEmX86_64));
    EXPECT_EQ(got.problem, "loops");
    EXPECT_EQ(got.problem_address, 0x3000u);
    EXPECT_EQ(got.tables.size(), 2u);  // each object's, before the loop showed
  }
  {
    test::SparseMemory m;  // an object nowhere
    m.put(kUnseen, 0x9000, 8);
    const LibgccRegistry got = read_libgcc_registry(m, kUnseen, 0, machine(elf::kEmX86_64));
    EXPECT_EQ(got.problem, "cannot be read");
    EXPECT_EQ(got.problem_address, 0x9000u);
  }
  {
    test::SparseMemory m;  // a table cut short: its second record is not there
    m.put(kUnseen, 0x3000, 8);
    put_object(m, 0x3000, 8, 0x10000, 0x7f8, 0);
    const uint8_t cie[] = {20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b, 0, 0, 0, 0, 0, 0, 0};
    m.code(0x10000, cie, sizeof cie);
    const LibgccRegistry got = read_libgcc_registry(m, kUnseen, 0, machine(elf::kEmX86_64));
    EXPECT_EQ(got.problem, "cannot be read");
    EXPECT_EQ(got.problem_address, 0x10000u + sizeof cie);
    EXPECT_TRUE(got.tables.empty());
  }
  {
    test::SparseMemory m;  // a length that runs past the limit
    m.put(kUnseen, 0x3000, 8);
    put_object(m, 0x3000, 8, 0x10000, 0x7f8, 0);
    m.put(0x10000, 0xffffffff, 4);
    m.put(0x10004, kLibgccMaxTableBytes + 1, 8);
    const LibgccRegistry got = read_libgcc_registry(m, kUnseen, 0, machine(elf::kEmX86_64));
    EXPECT_EQ(got.problem, "is too large");
  }
  {
    test::SparseMemory m;  // an empty list, and a seen list not asked for
    m.put(kUnseen, 0, 8);
    const LibgccRegistry got = read_libgcc_registry(m, kUnseen, 0, machine(elf::kEmX86_64));
    EXPECT_EQ(got.problem, "");
    EXPECT_TRUE(got.tables.empty());
  }
}

}  // namespace
}  // namespace framewalk
