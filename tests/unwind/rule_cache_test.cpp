// The compact-rule codec on hand-made rows of each machine, and the rule
// cache's contract: a key maps to its rule, keys beyond 48 bits and rows the
// form cannot hold are refused, unloaded ranges are forgotten, rules are
// interned once however many keys share them.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <initializer_list>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "arch/machine.hpp"
#include "elf/elf_file.hpp"
#include "unwind/compact_rule.hpp"
#include "unwind/rule_cache.hpp"

namespace framewalk {
namespace {

const arch::Machine& machine(uint16_t e_machine) { return *arch::machine_for(usual_machine_key(e_machine)); }

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

UnwindRow row_with(uint16_t ra_column, uint16_t cfa_reg, int64_t cfa_offset) {
  UnwindRow row;
  row.return_address_register = ra_column;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = cfa_reg;
  row.cfa.offset = cfa_offset;
  return row;
}

// x86-64: rsp 7, rbp 6, rip 16.
TEST(CompactRule, X86_64FramesAfterPushAndAfterTheFramePointerIsSet) {
  const arch::Machine& m = machine(elf::kEmX86_64);
  UnwindRow entry = row_with(16, 7, 8);
  ASSERT_TRUE(entry.set(offset_rule(16, -8)).ok());
  CompactRule r;
  ASSERT_TRUE(compact_rule_from_row(m, entry, &r));
  EXPECT_EQ(r, (CompactRule{8, 1, 0, false, false}));
  EXPECT_EQ(encode(r) >> compact::kOffsetBits, compact::kSimple);  // the hot loops' first case

  UnwindRow body = row_with(16, 6, 16);
  ASSERT_TRUE(body.set(offset_rule(16, -8)).ok());
  ASSERT_TRUE(body.set(offset_rule(6, -16)).ok());
  ASSERT_TRUE(body.set(offset_rule(3, -24)).ok());  // rbx: not tracked, does not matter
  ASSERT_TRUE(compact_rule_from_row(m, body, &r));
  EXPECT_EQ(r, (CompactRule{16, 1, 2, true, false}));
  EXPECT_NE(encode(r) >> compact::kOffsetBits, compact::kSimple);
  EXPECT_EQ(encode(r), compact::frame_record_rule(8));  // the hot loops' second case
  EXPECT_EQ(decode(encode(r)), r);
}

// AArch64: x29 29, x30 30, sp 31, pc 32; the frame record pair below the CFA.
TEST(CompactRule, AArch64FrameRecordAndSignedReturnAddress) {
  const arch::Machine& m = machine(elf::kEmAarch64);
  UnwindRow row = row_with(30, 29, 96);
  ASSERT_TRUE(row.set(offset_rule(29, -96)).ok());
  ASSERT_TRUE(row.set(offset_rule(30, -88)).ok());
  ASSERT_TRUE(row.set(offset_rule(19, -80)).ok());
  row.negate_ra_state = true;  // signed: stripped whatever the rule
  CompactRule r;
  ASSERT_TRUE(compact_rule_from_row(m, row, &r));
  EXPECT_EQ(r, (CompactRule{96, 11, 12, true, false}));

  UnwindRow back;
  row_from_compact_rule(m, r, &back);
  EXPECT_EQ(back.cfa, row.cfa);
  ASSERT_NE(back.find(30), nullptr);
  EXPECT_EQ(*back.find(30), offset_rule(30, -88));
  ASSERT_NE(back.find(29), nullptr);
  EXPECT_EQ(*back.find(29), offset_rule(29, -96));
  EXPECT_EQ(back.find(19), nullptr);
  EXPECT_EQ(back.return_address_register, 30);
}

// A row whose registers are saved at the CFA-relative offsets given.
UnwindRow row_saving(uint16_t ra_column, uint16_t cfa_reg, int64_t cfa_offset,
                     std::initializer_list<std::pair<uint16_t, int64_t>> saved) {
  UnwindRow row = row_with(ra_column, cfa_reg, cfa_offset);
  for (const auto& [reg, offset] : saved) EXPECT_TRUE(row.set(offset_rule(reg, offset)).ok());
  return row;
}

// 32-bit ARM: r7 (Thumb's frame pointer, the second one) 7, r11 (ARM
// state's) 11, sp 13, lr 14; EHABI rows as exidx_rows gives them.
TEST(CompactRule, ArmThumbAndArmStateFramePointers) {
  const arch::Machine& m = machine(elf::kEmArm);
  ASSERT_EQ(m.second_frame_pointer(), 7);
  ASSERT_EQ(m.frame_pointer(), 11);
  // Thumb: push {r4, r7, fp, lr}; add r7, sp, #0 (vsp = r7, then the pops).
  const UnwindRow thumb = row_saving(14, 7, 16, {{4, -16}, {7, -12}, {11, -8}, {14, -4}});
  CompactRule r;
  ASSERT_TRUE(compact_rule_from_row(m, thumb, &r));
  EXPECT_EQ(r, (CompactRule{16, 1, 2, false, false, 3, true}));
  EXPECT_EQ(decode(encode(r)), r);
  UnwindRow back;
  row_from_compact_rule(m, r, &back);
  EXPECT_EQ(back.cfa, thumb.cfa);
  for (const uint16_t reg : {7, 11, 14}) {
    ASSERT_NE(back.find(reg), nullptr) << reg;
    EXPECT_EQ(*back.find(reg), *thumb.find(reg)) << reg;
  }
  EXPECT_EQ(back.find(4), nullptr);
  // ARM state: push {r4, r7, fp, lr}; add fp, sp, #12.
  ASSERT_TRUE(compact_rule_from_row(m, row_saving(14, 11, 4, {{7, -12}, {11, -8}, {14, -4}}), &r));
  EXPECT_EQ(r, (CompactRule{4, 1, 2, true, false, 3, false}));
  EXPECT_EQ(decode(encode(r)), r);
  // push {r4, lr}: the hot loops' first case, r7 and r11 unchanged.
  ASSERT_TRUE(compact_rule_from_row(m, row_saving(14, 13, 8, {{4, -8}, {14, -4}}), &r));
  EXPECT_EQ(encode(r) >> compact::kOffsetBits, compact::kSimple);
  // r7 saved farther below the CFA than the form holds for it, or outside
  // an sp-based frame: not compact.
  EXPECT_FALSE(compact_rule_from_row(m, row_saving(14, 13, 512, {{7, -4 * 64}, {14, -4}}), &r));
  EXPECT_FALSE(compact_rule_from_row(m, row_saving(14, 13, 8, {{7, -12}, {14, -4}}), &r));
  // Machines without a second frame pointer: a CFA on x7 (not a frame
  // pointer) on AArch64.
  EXPECT_FALSE(compact_rule_from_row(machine(elf::kEmAarch64), row_saving(30, 7, 16, {{30, -8}}), &r));
}

// riscv64: ra 1, sp 2, s0 8. gcc's frame pointer is the CFA itself, with
// ra and the caller's s0 just below it; an sp-based CFA must lie above.
TEST(CompactRule, Riscv64FramePointerIsTheCfa) {
  const arch::Machine& m = machine(elf::kEmRiscv);
  const UnwindRow framed = row_saving(1, 8, 0, {{1, -8}, {8, -16}, {9, -24}});
  CompactRule r;
  ASSERT_TRUE(compact_rule_from_row(m, framed, &r));
  EXPECT_EQ(r, (CompactRule{0, 1, 2, true, false}));
  EXPECT_EQ(decode(encode(r)), r);
  UnwindRow back;
  row_from_compact_rule(m, r, &back);
  EXPECT_EQ(back.cfa, framed.cfa);
  ASSERT_NE(back.find(8), nullptr);
  EXPECT_EQ(*back.find(8), offset_rule(8, -16));
  ASSERT_TRUE(compact_rule_from_row(m, row_saving(1, 2, 32, {{1, -8}, {8, -16}}), &r));
  EXPECT_EQ(r, (CompactRule{32, 1, 2, false, false}));
  EXPECT_FALSE(compact_rule_from_row(m, row_saving(1, 2, 0, {{1, -8}}), &r));
}

// ppc64le: r1 1, r31 31, LR 65. Prologues save LR in the caller's frame,
// at CFA + 16: the slots count down from CFA + 24, so that gcc's commonest
// row is the hot loops' first case; registers saved below the CFA, r31
// among them, are slots further down.
TEST(CompactRule, Ppc64leLinkRegisterInTheCallersFrame) {
  const arch::Machine& m = machine(elf::kEmPpc64);
  ASSERT_EQ(m.saved_above_cfa(), 24);
  CompactRule r;
  ASSERT_TRUE(compact_rule_from_row(m, row_saving(65, 1, 32, {{65, 16}}), &r));
  EXPECT_EQ(r, (CompactRule{32, 1, 0, false, false}));
  EXPECT_EQ(encode(r) >> compact::kOffsetBits, compact::kSimple);
  const UnwindRow framed = row_saving(65, 31, 48, {{65, 16}, {31, -8}, {30, -16}});
  ASSERT_TRUE(compact_rule_from_row(m, framed, &r));
  EXPECT_EQ(r, (CompactRule{48, 1, 4, true, false}));
  EXPECT_EQ(decode(encode(r)), r);
  UnwindRow back;
  row_from_compact_rule(m, r, &back);
  EXPECT_EQ(back.cfa, framed.cfa);
  ASSERT_NE(back.find(65), nullptr);
  EXPECT_EQ(*back.find(65), offset_rule(65, 16));
  ASSERT_NE(back.find(31), nullptr);
  EXPECT_EQ(*back.find(31), offset_rule(31, -8));
  // Words at or past CFA + 24, or not word-aligned, are not slots; an
  // sp-based CFA must lie above r1.
  EXPECT_FALSE(compact_rule_from_row(m, row_saving(65, 1, 32, {{65, 24}}), &r));
  EXPECT_FALSE(compact_rule_from_row(m, row_saving(65, 1, 32, {{65, 12}}), &r));
  EXPECT_FALSE(compact_rule_from_row(m, row_saving(65, 1, 0, {{65, 16}}), &r));
  // Elsewhere a word above the CFA is no slot.
  EXPECT_FALSE(compact_rule_from_row(machine(elf::kEmAarch64), row_saving(30, 31, 32, {{30, 16}}), &r));
}

TEST(CompactRule, RowsTheFormCannotHold) {
  const arch::Machine& a64 = machine(elf::kEmAarch64);
  const arch::Machine& x64 = machine(elf::kEmX86_64);
  CompactRule r;
  // No rule for x30 in a return-address frame: the walk ends there.
  ASSERT_TRUE(compact_rule_from_row(a64, row_with(30, 31, 0), &r));
  EXPECT_TRUE(r.outermost);
  // A frame record at the bottom of a 32 KiB frame.
  UnwindRow big = row_with(30, 29, 32784);
  ASSERT_TRUE(big.set(offset_rule(29, -32784)).ok());
  ASSERT_TRUE(big.set(offset_rule(30, -32776)).ok());
  ASSERT_TRUE(compact_rule_from_row(a64, big, &r));
  EXPECT_EQ(r, (CompactRule{32784, 4097, 4098, true, false}));
  EXPECT_EQ(decode(encode(r)), r);
  UnwindRow misaligned = row_with(16, 7, 12);
  ASSERT_TRUE(misaligned.set(offset_rule(16, -8)).ok());
  EXPECT_FALSE(compact_rule_from_row(x64, misaligned, &r));
  UnwindRow other_base = row_with(16, 3, 16);  // CFA = rbx + 16
  ASSERT_TRUE(other_base.set(offset_rule(16, -8)).ok());
  EXPECT_FALSE(compact_rule_from_row(x64, other_base, &r));
  UnwindRow signal = row_with(16, 7, 8);
  ASSERT_TRUE(signal.set(offset_rule(16, -8)).ok());
  signal.signal_frame = true;
  EXPECT_FALSE(compact_rule_from_row(x64, signal, &r));
  UnwindRow sp_restored = row_with(16, 7, 16);
  ASSERT_TRUE(sp_restored.set(offset_rule(16, -8)).ok());
  ASSERT_TRUE(sp_restored.set(offset_rule(7, -16)).ok());
  EXPECT_FALSE(compact_rule_from_row(x64, sp_restored, &r));
  UnwindRow ra_in_register = row_with(16, 7, 8);
  ASSERT_TRUE(ra_in_register.set(RegisterRule{16, RuleKind::kRegister, 3, {}, 0}).ok());
  EXPECT_FALSE(compact_rule_from_row(x64, ra_in_register, &r));
  // An sp-based frame must hold the slots it reads.
  UnwindRow outside = row_with(16, 7, 8);
  ASSERT_TRUE(outside.set(offset_rule(16, -8)).ok());
  ASSERT_TRUE(outside.set(offset_rule(6, -16)).ok());
  EXPECT_FALSE(compact_rule_from_row(x64, outside, &r));
  UnwindRow huge = row_with(16, 7, int64_t{kMaxCompactCfaOffset} + 8);
  ASSERT_TRUE(huge.set(offset_rule(16, -8)).ok());
  EXPECT_FALSE(compact_rule_from_row(x64, huge, &r));
  // The outermost frame: the return address undefined.
  UnwindRow outermost = row_with(16, 7, 8);
  ASSERT_TRUE(outermost.set(RegisterRule{16, RuleKind::kUndefined, 0, {}, 0}).ok());
  ASSERT_TRUE(compact_rule_from_row(x64, outermost, &r));
  EXPECT_TRUE(r.outermost);
}

// A cache of its own, in zeroed page-aligned memory, as a profiler would make one.
struct MappedCache {
  MappedCache() {
    void* p = mmap(nullptr, sizeof(RuleCache), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    cache = static_cast<RuleCache*>(p);
  }
  ~MappedCache() { munmap(cache, sizeof(RuleCache)); }
  RuleCache* cache;
};

TEST(RuleCache, KeysMapToTheirRulesAndRulesAreInternedOnce) {
  MappedCache mapped;
  RuleCache& cache = *mapped.cache;
  const CompactRule a{16, 1, 2, true, false}, b{48, 1, 0, false, false};
  uint64_t encoded = 0;
  EXPECT_EQ(cache.find(0x401000, &encoded), RuleCache::kNoSlot);
  ASSERT_TRUE(cache.remember(0x401000, a, cache.generation()));
  ASSERT_TRUE(cache.remember(0x7f0000402000, a, cache.generation()));
  ASSERT_TRUE(cache.remember(0x403001, b, cache.generation()));
  ASSERT_NE(cache.find(0x401000, &encoded), RuleCache::kNoSlot);
  EXPECT_EQ(decode(encoded), a);
  ASSERT_NE(cache.find(0x7f0000402000, &encoded), RuleCache::kNoSlot);
  EXPECT_EQ(decode(encoded), a);
  ASSERT_NE(cache.find(0x403001, &encoded), RuleCache::kNoSlot);
  EXPECT_EQ(decode(encoded), b);
  EXPECT_EQ(cache.rules_held(), 2u);
  // Keys sharing their low 12 bits (one set) both stay: two ways.
  ASSERT_TRUE(cache.remember(0x501000, b, cache.generation()));
  EXPECT_TRUE(cache.contains(0x401000));
  EXPECT_TRUE(cache.contains(0x501000));
  // A key beyond 48 bits is never cached (the step loop takes it).
  EXPECT_FALSE(cache.remember(uint64_t{1} << 48, a, cache.generation()));
  EXPECT_FALSE(cache.contains(uint64_t{1} << 48));
}

TEST(RuleCache, AnUnloadedRangeIsForgottenAndALookupThatRacedItIsDropped) {
  MappedCache mapped;
  RuleCache& cache = *mapped.cache;
  const CompactRule r{32, 1, 0, false, false};
  const uint64_t before = cache.generation();
  ASSERT_TRUE(cache.remember(0x10010, r, before));
  ASSERT_TRUE(cache.remember(0x20010, r, before));
  cache.forget_between(0x10000, 0x1ffff);
  EXPECT_FALSE(cache.contains(0x10010));
  EXPECT_TRUE(cache.contains(0x20010));
  // A row looked up before the unload must not be cached after it.
  EXPECT_FALSE(cache.remember(0x10010, r, before));
  EXPECT_FALSE(cache.contains(0x10010));
  cache.flush();
  EXPECT_FALSE(cache.contains(0x20010));
  EXPECT_EQ(cache.rules_held(), 1u);  // rules outlive flushes: they name no address
}

TEST(RuleCache, ThreadsFillAndReadItTogether) {
  MappedCache mapped;
  RuleCache& cache = *mapped.cache;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache, t] {
      for (uint64_t i = 0; i < 2000; ++i) {
        const uint64_t key = 0x400000 + 16 * (i * 4 + static_cast<uint64_t>(t));
        const CompactRule rule{static_cast<uint32_t>(8 * (1 + i % 50)), 1, 0, false, false};
        cache.remember(key, rule, cache.generation());
        uint64_t encoded = 0;
        // Whatever a slot holds, it is a rule that was stored for its key.
        if (cache.find(key, &encoded) != RuleCache::kNoSlot) {
          EXPECT_EQ(decode(encoded), rule);
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(cache.rules_held(), 50u);
}

}  // namespace
}  // namespace framewalk
