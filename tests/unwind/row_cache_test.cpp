// RowCache: rows found once are reused, and a walk through the cache is the
// same walk as one without it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <vector>

#include "arch/capture.hpp"
#include "arch/machine.hpp"
#include "base/own_memory.hpp"
#include "target/local_target.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {
namespace {

struct Walked {
  std::vector<uint64_t> pcs;
  std::vector<FrameSource> sources;
  StopReason reason{};
};

Walked walk_with(const Unwinder& unwinder, const arch::RegisterFile& regs, RowCache* cache) {
  UnwindOptions options;
  options.first_is_return_address = true;
  options.row_cache = cache;
  Walked w;
  w.reason = unwinder
                 .walk(regs, [&](const Frame& f) {
                   w.pcs.push_back(f.pc);
                   w.sources.push_back(f.source);
                   return true;
                 }, options)
                 .reason;
  return w;
}

struct Walks {
  Walked plain, first, second;
  size_t rows_after_first = 0, rows_after_second = 0;
};

// Walks three times from 20 frames down, while those frames are live: with
// no cache, through a fresh cache, then through the same cache again.
__attribute__((noinline)) void walk_from_depth(int depth, const Unwinder& unwinder, Walks& out) {
  if (depth > 0) {
    walk_from_depth(depth - 1, unwinder, out);
    asm volatile("" ::: "memory");
    return;
  }
  uint64_t raw[arch::kCaptureWords];
  arch::framewalk_capture(raw);
  const arch::RegisterFile regs = arch::from_host_capture(raw);
  out.plain = walk_with(unwinder, regs, nullptr);
  RowCache cache;
  out.first = walk_with(unwinder, regs, &cache);
  out.rows_after_first = cache.size();
  out.second = walk_with(unwinder, regs, &cache);
  out.rows_after_second = cache.size();
}

// This process's memory, read as the in-process paths read it (also under
// qemu-user, which has no process_vm_readv).
class OwnMemory final : public Memory {
 public:
  size_t read(uint64_t address, void* out, size_t size) override { return read_own_memory(address, out, size); }
};

TEST(RowCache, ReusesRowsAndWalksTheSame) {
  OwnMemory memory;
  const Unwinder unwinder(LocalUnwinder::instance().modules(), memory, arch::host_machine().key());
  Walks w;
  walk_from_depth(20, unwinder, w);
  ASSERT_GT(w.plain.pcs.size(), 20u);
  EXPECT_GT(w.rows_after_first, 0u);
  EXPECT_EQ(w.rows_after_second, w.rows_after_first);  // the second walk found every row in the cache
  for (const Walked* walked : {&w.first, &w.second}) {
    EXPECT_EQ(walked->pcs, w.plain.pcs);
    EXPECT_EQ(walked->sources, w.plain.sources);
    EXPECT_EQ(walked->reason, w.plain.reason);
  }
}

}  // namespace
}  // namespace framewalk
