// Rows of this process's own code, found without a module map: the
// dynamic linker's _dl_find_object (lock-free, async-signal-safe) gives the
// object's unwind table, .eh_frame_hdr (whose table gives the FDE, which
// the CFI executor runs up to the PC) or, on 32-bit ARM, the PT_ARM_EXIDX
// index (whose entry the EHABI executor runs). Allocates nothing, takes no
// lock: usable from a signal handler, by the fast path's misses and by the
// portable path.
#pragma once

#include <cstdint>

#include "model/unwind_row.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::local {

bool find_own_eh_frame_row(uint64_t lookup_pc, UnwindRow* row);

// The host's own unwind tables as a RowFinder for Unwinder::walk.
class OwnUnwindTables final : public RowFinder {
 public:
  bool find(const Frame& frame, UnwindRow* row) const override;
  FrameSource source() const override;
  // In an object the dynamic linker knows (_dl_find_object).
  bool in_code(uint64_t address) const override;
};

}  // namespace framewalk::local
