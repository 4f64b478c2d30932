#include "local/eh_frame_lookup.hpp"

#include <dlfcn.h>
#include <link.h>

#include "arch/machine.hpp"
#include "dwarf/cfa_program.hpp"
#include "dwarf/eh_frame_hdr.hpp"

namespace framewalk::local {

namespace {
// Two remembered states (compilers nest one) instead of the executor's
// default eight: a signal handler's stack may be small.
constexpr int kRememberDepth = 2;
}  // namespace

bool find_own_eh_frame_row(uint64_t lookup_pc, UnwindRow* row) {
  dl_find_object dlfo;
  if (_dl_find_object(reinterpret_cast<void*>(lookup_pc), &dlfo) != 0 || !dlfo.dlfo_eh_frame) return false;
  const arch::Machine& host = arch::host_machine();
  const auto map_end = reinterpret_cast<uint64_t>(dlfo.dlfo_map_end);
  const auto hdr_address = reinterpret_cast<uint64_t>(dlfo.dlfo_eh_frame);
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

}  // namespace framewalk::local
