// fuzz_jitdump: the bytes as a jitdump file (jit-PID.dump). Every record read
// lies inside the input, in file order, its code range and sizes whole;
// DEBUG_INFO and UNWINDING_INFO attached to a load came after the load
// before it; the file cut at a record's start reads the records before it
// and ends cleanly, cut just inside it reads the same and stops with
// kTruncated naming its offset; JitCodeIndex finds only loads placed at
// the address asked, no later than the time asked.
#include <algorithm>
#include <vector>

#include "fuzz_bodies.hpp"
#include "symbol/jitdump.hpp"

namespace framewalk::fuzz {

namespace {

using symbol::JitCodeLoad;
using symbol::JitDump;

bool inside(Bytes part, Bytes whole) {
  if (part.empty()) return true;
  return part.data() >= whole.data() && part.size() <= whole.size() &&
         part.data() - whole.data() <= static_cast<ptrdiff_t>(whole.size() - part.size());
}

// The offset and index of every record the reader kept, in file order.
struct Kept {
  uint64_t offset;
  size_t index;
};

std::vector<Kept> kept_records(const JitDump& d) {
  std::vector<Kept> kept;
  for (const auto& r : d.loads) kept.push_back({r.file_offset, r.index});
  for (const auto& r : d.moves) kept.push_back({r.file_offset, r.index});
  for (const auto& r : d.debug_infos) kept.push_back({r.file_offset, r.index});
  for (const auto& r : d.unwinding_infos) kept.push_back({r.file_offset, r.index});
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.index < b.index; });
  return kept;
}

void check_records(const JitDump& d, Bytes file) {
  FUZZ_CHECK(d.header.size >= symbol::kJitdumpHeaderSize && d.header.size <= file.size());
  FUZZ_CHECK((d.header.flags & ~symbol::kJitdumpFlagArchTimestamp) == 0);
  FUZZ_CHECK(d.loads.size() + d.moves.size() + d.debug_infos.size() + d.unwinding_infos.size() + d.code_closes +
                 d.unknown_records ==
             d.records);
  const std::vector<Kept> kept = kept_records(d);
  for (size_t i = 0; i < kept.size(); ++i) {
    FUZZ_CHECK(kept[i].index < d.records);
    FUZZ_CHECK(kept[i].offset >= d.header.size && kept[i].offset + symbol::kJitRecordHeaderSize <= file.size());
    if (i) FUZZ_CHECK(kept[i - 1].index < kept[i].index && kept[i - 1].offset < kept[i].offset);
    if (d.stopped) FUZZ_CHECK(kept[i].offset < d.stopped_record_offset);
  }
  if (d.stopped) {
    FUZZ_CHECK(d.stopped_record_offset >= d.header.size && d.stopped_record_offset < file.size());
    FUZZ_CHECK(d.stopped->offset >= d.stopped_record_offset && d.stopped->offset <= file.size());
  }
  size_t previous_load = 0;
  bool any_load = false;
  for (const JitCodeLoad& l : d.loads) {
    FUZZ_CHECK(l.code.size() == l.code_size && inside(l.code, file));
    FUZZ_CHECK(l.code_end() >= l.code_addr);
    FUZZ_CHECK(l.name.size() < file.size() &&
               inside(Bytes(reinterpret_cast<const uint8_t*>(l.name.data()), l.name.size()), file));
    FUZZ_CHECK(l.name.find('\0') == std::string_view::npos);
    // The name ends with its NUL before the code, which ends the record.
    FUZZ_CHECK(l.code.empty() || reinterpret_cast<const uint8_t*>(l.name.data()) + l.name.size() < l.code.data());
    if (l.debug_info) {
      FUZZ_CHECK(*l.debug_info < d.debug_infos.size());
      const size_t at = d.debug_infos[*l.debug_info].index;
      FUZZ_CHECK(at < l.index && (!any_load || at > previous_load));
    }
    if (l.unwinding_info) {
      FUZZ_CHECK(*l.unwinding_info < d.unwinding_infos.size());
      const size_t at = d.unwinding_infos[*l.unwinding_info].index;
      FUZZ_CHECK(at < l.index && (!any_load || at > previous_load));
    }
    previous_load = l.index;
    any_load = true;
  }
  for (const auto& m : d.moves)
    FUZZ_CHECK(m.new_code_addr + m.code_size >= m.new_code_addr && m.old_code_addr + m.code_size >= m.old_code_addr);
  for (const auto& u : d.unwinding_infos) {
    FUZZ_CHECK(u.eh_frame_hdr_size <= u.unwinding_size);
    FUZZ_CHECK(u.eh_frame.size() + u.eh_frame_hdr.size() == u.unwinding_size);
    FUZZ_CHECK(u.eh_frame_hdr.size() == u.eh_frame_hdr_size);
    FUZZ_CHECK(inside(u.eh_frame, file) && inside(u.eh_frame_hdr, file));
    FUZZ_CHECK(u.eh_frame.empty() || u.eh_frame.data() + u.eh_frame.size() == u.eh_frame_hdr.data() ||
               u.eh_frame_hdr.empty());
  }
  for (const auto& di : d.debug_infos)
    for (const auto& line : di.lines)
      FUZZ_CHECK(line.file.empty() ||
                 inside(Bytes(reinterpret_cast<const uint8_t*>(line.file.data()), line.file.size()), file));
}

bool same_load(const JitCodeLoad& a, const JitCodeLoad& b) {
  return a.index == b.index && a.file_offset == b.file_offset && a.code_addr == b.code_addr &&
         a.code_size == b.code_size && a.name == b.name && a.debug_info == b.debug_info &&
         a.unwinding_info == b.unwinding_info;
}

// The file cut at `cut`: the records before it, and a stop at `stop` (none: 0).
void check_cut(const JitDump& whole, Bytes file, uint64_t cut, size_t records_before, uint64_t stop) {
  const Bytes part = file.first(static_cast<size_t>(cut));
  Result<JitDump> d = symbol::parse_jitdump(part);
  FUZZ_CHECK(d.ok());
  if (!d.ok()) return;
  check_records(*d, part);
  FUZZ_CHECK(d->records == records_before);
  if (stop) {
    FUZZ_CHECK(d->stopped && d->stopped->code == ErrorCode::kTruncated && d->stopped->offset == stop &&
               d->stopped_record_offset == stop);
  } else {
    FUZZ_CHECK(!d->stopped);
  }
  auto before = [&](const auto& records) {
    return static_cast<size_t>(std::count_if(records.begin(), records.end(),
                                             [&](const auto& r) { return r.index < records_before; }));
  };
  const size_t loads = before(whole.loads);
  FUZZ_CHECK(d->loads.size() == loads);
  for (size_t i = 0; i < std::min(loads, d->loads.size()); ++i) FUZZ_CHECK(same_load(d->loads[i], whole.loads[i]));
  FUZZ_CHECK(d->moves.size() == before(whole.moves));
  FUZZ_CHECK(d->debug_infos.size() == before(whole.debug_infos));
  FUZZ_CHECK(d->unwinding_infos.size() == before(whole.unwinding_infos));
}

void check_index(const JitDump& d, uint32_t pid) {
  const symbol::JitCodeIndex index(d, pid);
  size_t probes = 0;
  for (const JitCodeLoad& probe : d.loads) {
    if (++probes > 64) break;
    for (uint64_t address : {probe.code_addr, probe.code_end() - 1}) {
      const JitCodeLoad* found = index.find(address, probe.timestamp);
      if (!found) continue;
      FUZZ_CHECK(found->pid == pid && found->timestamp <= probe.timestamp);
      bool placed = address >= found->code_addr && address < found->code_end();
      for (const auto& m : d.moves)
        placed |= m.pid == pid && m.code_index == found->code_index && m.timestamp <= probe.timestamp &&
                  address >= m.new_code_addr && address - m.new_code_addr < m.code_size;
      FUZZ_CHECK(placed);
    }
  }
}

}  // namespace

int fuzz_jitdump(const uint8_t* data, size_t size) {
  const Bytes file(data, size);
  Result<JitDump> parsed = symbol::parse_jitdump(file);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.error().offset < symbol::kJitdumpHeaderSize);
    return 0;
  }
  const JitDump& d = *parsed;
  check_records(d, file);
  // Cuts at and just inside each record kept, and inside the one that stopped the reading.
  const std::vector<Kept> kept = kept_records(d);
  for (size_t i = 0; i < kept.size() && i < 32; ++i) {
    check_cut(d, file, kept[i].offset, kept[i].index, 0);
    check_cut(d, file, kept[i].offset + 1, kept[i].index, kept[i].offset);
    if (i + 1 < kept.size() && kept[i + 1].index == kept[i].index + 1)
      check_cut(d, file, kept[i + 1].offset - 1, kept[i].index, kept[i].offset);
  }
  if (d.stopped && d.stopped->code == ErrorCode::kTruncated && d.stopped->offset == d.stopped_record_offset)
    check_cut(d, file, file.size() - 1 > d.stopped_record_offset ? file.size() - 1 : file.size(), d.records,
              d.stopped_record_offset);
  check_index(d, d.header.pid);
  if (!d.loads.empty()) check_index(d, d.loads[0].pid);
  return 0;
}

}  // namespace framewalk::fuzz
