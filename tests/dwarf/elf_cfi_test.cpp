// ElfCfi's sources as threads share them: the lazy FDE index.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "dwarf/elf_cfi.hpp"

namespace framewalk {
namespace {

// The first lookups of several threads at once must all get the one index.
// Without .eh_frame_hdr the index is built by parsing every FDE (this test
// binary has thousands), which takes long enough for the builds to overlap.
TEST(ElfCfi, IndexBuiltByManyThreadsAtOnceIsTheSameForAll) {
#if defined(__arm__)
  GTEST_SKIP() << "32-bit ARM code unwinds through .ARM.exidx: this program's .eh_frame has no FDEs to index";
#endif
  auto file = elf::ElfFile::open("/proc/self/exe");
  ASSERT_TRUE(file);
  constexpr int kThreads = 4;
  for (int round = 0; round < 30; ++round) {
    auto cfi = ElfCfi::load(*file);
    ASSERT_TRUE(cfi);
    const CfiSource* eh_frame = nullptr;
    for (const auto& src : cfi->sources())
      if (src->kind == dwarf::CfiKind::kEhFrame && src->section) eh_frame = src.get();
    ASSERT_NE(eh_frame, nullptr);
    const_cast<CfiSource*>(eh_frame)->hdr.reset();

    std::atomic<int> waiting{kThreads};
    std::vector<const dwarf::CfiIndex*> seen(kThreads, nullptr);
    std::vector<size_t> fdes(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        waiting.fetch_sub(1);
        while (waiting.load() > 0) std::this_thread::yield();
        const dwarf::CfiIndex& index = eh_frame->get_index();
        seen[t] = &index;
        fdes[t] = index.indexed_fdes();
      });
    }
    for (auto& t : threads) t.join();
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(seen[t], &eh_frame->get_index()) << "thread " << t << " round " << round;
      EXPECT_EQ(fdes[t], eh_frame->get_index().indexed_fdes()) << "thread " << t << " round " << round;
    }
    EXPECT_GT(eh_frame->get_index().indexed_fdes(), 100u);
    EXPECT_FALSE(eh_frame->get_index().uses_eh_frame_hdr());
  }
}

}  // namespace
}  // namespace framewalk
