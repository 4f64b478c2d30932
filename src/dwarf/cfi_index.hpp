// Finds the FDE covering a PC: through .eh_frame_hdr's table when it is sound,
// otherwise through a sorted index built by scanning the section once.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dwarf/cfi_section.hpp"
#include "dwarf/eh_frame_hdr.hpp"

namespace framewalk::dwarf {

struct FdeMatch {
  const Cie* cie;
  Fde fde;
};

class CfiIndex {
 public:
  // `hdr` may be null. The header is used only if its table is sorted and
  // points into `section`; otherwise (and for .debug_frame) an index is built.
  static CfiIndex build(const CfiSection& section, const EhFrameHdr* hdr);

  Result<FdeMatch> find(uint64_t pc) const;

  bool uses_eh_frame_hdr() const { return hdr_.has_value(); }
  size_t indexed_fdes() const { return items_.size(); }
  // Why the header was not used (empty when it was, or when there was none).
  const char* hdr_rejected_reason() const { return hdr_rejected_; }

 private:
  struct Item {
    uint64_t pc_begin;
    uint64_t pc_end;
    uint64_t fde_offset;
    uint64_t max_end;  // the largest pc_end of this item and all before it
  };
  const CfiSection* section_ = nullptr;
  std::optional<EhFrameHdr> hdr_;
  const char* hdr_rejected_ = "";
  std::vector<Item> items_;
};

}  // namespace framewalk::dwarf
