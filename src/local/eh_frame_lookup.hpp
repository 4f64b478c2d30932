// Rows of this process's own code, found without a module map: the
// dynamic linker's _dl_find_object (lock-free, async-signal-safe) gives the
// object's .eh_frame_hdr, whose table gives the FDE, which the CFI executor
// runs up to the PC. Allocates nothing, takes no lock: usable from a
// signal handler, by the fast path's misses and by the portable path.
#pragma once

#include <cstdint>

#include "model/unwind_row.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::local {

bool find_own_eh_frame_row(uint64_t lookup_pc, UnwindRow* row);

// The same as a RowFinder for Unwinder::walk.
class OwnEhFrameRows final : public RowFinder {
 public:
  bool find(uint64_t lookup_pc, UnwindRow* row) const override { return find_own_eh_frame_row(lookup_pc, row); }
};

}  // namespace framewalk::local
