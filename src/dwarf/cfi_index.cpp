#include "dwarf/cfi_index.hpp"

#include <algorithm>

namespace framewalk::dwarf {

CfiIndex CfiIndex::build(const CfiSection& section, const EhFrameHdr* hdr) {
  CfiIndex index;
  index.section_ = &section;
  if (hdr && section.kind() == CfiKind::kEhFrame) {
    if (!hdr->has_table()) {
      index.hdr_rejected_ = "no search table";
    } else if (hdr->eh_frame_address() != section.info().bases.section_address) {
      index.hdr_rejected_ = "eh_frame_ptr does not point to .eh_frame";
    } else if (hdr->first_unsorted()) {
      index.hdr_rejected_ = "search table is not sorted";
    } else {
      index.hdr_ = *hdr;
      return index;
    }
  }
  section.for_each(
      [&](const CfiSection::Entry& e) {
        if (e.type == CfiSection::Entry::Type::kFde && e.fde.pc_range != 0)
          index.items_.push_back(Item{e.fde.pc_begin, e.fde.pc_end(), e.offset, 0});
        return true;
      },
      nullptr);
  std::stable_sort(index.items_.begin(), index.items_.end(),
                   [](const Item& a, const Item& b) { return a.pc_begin < b.pc_begin; });
  uint64_t max_end = 0;
  for (Item& i : index.items_) {
    max_end = std::max(max_end, i.pc_end);
    i.max_end = max_end;
  }
  index.items_.shrink_to_fit();
  return index;
}

Result<FdeMatch> CfiIndex::find(uint64_t pc) const {
  FdeMatch m{};
  if (hdr_) {
    FW_TRY(EhFrameHdr::TableEntry e, hdr_->lookup(pc));
    const uint64_t base = section_->info().bases.section_address;
    if (e.fde_address < base || e.fde_address - base >= section_->data().size())
      return Error{ErrorCode::kBadEhFrameHdr, 0};
    FW_TRY(m.fde, section_->fde_at(e.fde_address - base, &m.cie));
    if (!m.fde.contains(pc)) return Error{ErrorCode::kNotFound, m.fde.offset};
    return m;
  }
  auto it = std::upper_bound(items_.begin(), items_.end(), pc,
                             [](uint64_t p, const Item& i) { return p < i.pc_begin; });
  // FDEs may overlap or nest: walk back while an earlier FDE can still reach pc.
  while (it != items_.begin()) {
    --it;
    if (it->max_end <= pc) break;
    if (pc >= it->pc_begin && pc < it->pc_end) {
      FW_TRY(m.fde, section_->fde_at(it->fde_offset, &m.cie));
      return m;
    }
  }
  return Error{ErrorCode::kNotFound, 0};
}

}  // namespace framewalk::dwarf
