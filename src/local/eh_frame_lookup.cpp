#include "local/eh_frame_lookup.hpp"

#include <dlfcn.h>
#include <link.h>

#include "arch/machine.hpp"
#include "dwarf/cfa_program.hpp"
#include "dwarf/eh_frame_hdr.hpp"
#include "ehabi/exidx_rows.hpp"
#include "local/registered_frames.hpp"

namespace framewalk::local {

namespace {
// Two remembered states (compilers nest one) instead of the executor's
// default eight: a signal handler's stack may be small.
constexpr int kRememberDepth = 2;
}  // namespace

bool find_own_eh_frame_row(uint64_t lookup_pc, UnwindRow* row) {
  dl_find_object dlfo;
  if (_dl_find_object(reinterpret_cast<void*>(static_cast<uintptr_t>(lookup_pc)), &dlfo) != 0 || !dlfo.dlfo_eh_frame)
    return false;
  const arch::Machine& host = arch::host_machine();
  const auto map_end = reinterpret_cast<uintptr_t>(dlfo.dlfo_map_end);
  const auto hdr_address = reinterpret_cast<uintptr_t>(dlfo.dlfo_eh_frame);
  if (hdr_address >= map_end) return false;
  const Bytes hdr_bytes(reinterpret_cast<const uint8_t*>(hdr_address), map_end - hdr_address);
  auto hdr = dwarf::EhFrameHdr::parse(hdr_bytes, host.endian(), host.address_size(), hdr_address);
  if (!hdr) return false;
  auto hit = hdr->lookup(lookup_pc);
  if (!hit) return false;
  const uint64_t eh_frame = hdr->eh_frame_address();
  if (eh_frame >= map_end || hit->fde_address < eh_frame || hit->fde_address >= map_end) return false;
  dwarf::CfiSectionInfo info;
  info.kind = dwarf::CfiKind::kEhFrame;
  info.endian = host.endian();
  info.address_size = host.address_size();
  info.arch = &host.info();
  info.bases.section_address = eh_frame;
  const dwarf::CfiSection section(Bytes(reinterpret_cast<const uint8_t*>(eh_frame), map_end - eh_frame), info);
  dwarf::Cie cie;
  auto fde = section.fde_at_uncached(hit->fde_address - eh_frame, &cie);
  if (!fde || !fde->contains(lookup_pc)) return false;
  dwarf::RememberRoom<kRememberDepth> room;
  return dwarf::row_for_pc(section, cie, *fde, lookup_pc, *row, room.space()).ok();
}

bool OwnUnwindTables::in_code(uint64_t address) const {
  dl_find_object dlfo;
  return _dl_find_object(reinterpret_cast<void*>(static_cast<uintptr_t>(address)), &dlfo) == 0 ||
         in_registered_code(address);
}

#if defined(DLFO_STRUCT_HAS_EH_COUNT) && DLFO_STRUCT_HAS_EH_COUNT
// 32-bit ARM: dlfo_eh_frame is the object's PT_ARM_EXIDX index, of
// dlfo_eh_count 8-byte entries; table entries lie in the object's mapping.
bool OwnUnwindTables::find(const Frame& frame, UnwindRow* row) const {
  const uint64_t lookup_pc = frame.lookup_pc;
  dl_find_object dlfo;
  if (_dl_find_object(reinterpret_cast<void*>(static_cast<uintptr_t>(lookup_pc)), &dlfo) != 0 || !dlfo.dlfo_eh_frame ||
      dlfo.dlfo_eh_count <= 0)
    return find_registered_row(lookup_pc, row);
  const auto index = reinterpret_cast<uintptr_t>(dlfo.dlfo_eh_frame);
  const auto map_start = reinterpret_cast<uintptr_t>(dlfo.dlfo_map_start);
  const auto map_end = reinterpret_cast<uintptr_t>(dlfo.dlfo_map_end);
  const uint64_t index_size = uint64_t{static_cast<uint32_t>(dlfo.dlfo_eh_count)} * 8;
  if (index < map_start || index >= map_end || index_size > map_end - index) return false;
  ehabi::ExidxTables tables;
  tables.index = {Bytes(reinterpret_cast<const uint8_t*>(index), index_size), index, Endian::kLittle};
  tables.extab = {Bytes(reinterpret_cast<const uint8_t*>(map_start), map_end - map_start), map_start, Endian::kLittle};
  auto found = ehabi::row_for_pc(tables, lookup_pc, frame.activation, row);
  // EXIDX_CANTUNWIND: no row (the walk ends there, as at a thread's start).
  return (found && *found == ehabi::EntryRow::kUnwinds) || find_registered_row(lookup_pc, row);
}
FrameSource OwnUnwindTables::source() const { return FrameSource::kExidx; }
#else
bool OwnUnwindTables::find(const Frame& frame, UnwindRow* row) const {
  return find_own_eh_frame_row(frame.lookup_pc, row) || find_registered_row(frame.lookup_pc, row);
}
FrameSource OwnUnwindTables::source() const { return FrameSource::kEhFrame; }
#endif

}  // namespace framewalk::local
