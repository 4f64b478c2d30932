#include "symbol/jitdump.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <utility>

namespace framewalk::symbol {

namespace {

// Payload offsets within a record (perf's jitdump.h).
constexpr uint64_t kCodeLoadSizeOffset = 40;
constexpr uint64_t kCodeMoveSizeOffset = 48;
constexpr uint64_t kDebugInfoCountOffset = 24;
constexpr uint64_t kDebugEntryMinSize = 8 + 4 + 4 + 1;  // address, line, discriminator, an empty name
constexpr uint64_t kUnwindingHdrSizeOffset = 24;
constexpr uint64_t kUnwindingDataOffset = 40;

// Whether [start, start + size) runs past the top of the address space.
bool wraps(uint64_t start, uint64_t size) { return start > std::numeric_limits<uint64_t>::max() - size; }

// What every record kind keeps of its header and place.
struct Place {
  uint64_t timestamp;
  size_t index;
  uint64_t file_offset;
};
template <typename Record>
Record placed(Record record, const Place& place) {
  record.timestamp = place.timestamp;
  record.index = place.index;
  record.file_offset = place.file_offset;
  return record;
}

Result<JitdumpHeader> parse_header(Bytes file) {
  JitdumpHeader h;
  uint32_t magic = 0;
  if (file.size() >= 4) std::memcpy(&magic, file.data(), 4);
  if (magic == kJitdumpMagic) {
    h.endian = kHostEndian;
  } else if (magic == __builtin_bswap32(kJitdumpMagic)) {
    h.endian = kHostEndian == Endian::kLittle ? Endian::kBig : Endian::kLittle;
    h.swapped = true;
  } else if (file.size() >= 4) {
    return Error{ErrorCode::kBadElf, 0};
  }
  ByteReader r(file, h.endian);
  FW_CHECK(r.skip(4));  // the magic (or kTruncated at 0)
  FW_TRY(h.version, r.u32());
  FW_TRY(h.size, r.u32());
  FW_TRY(h.elf_mach, r.u32());
  FW_CHECK(r.skip(4));  // pad1
  FW_TRY(h.pid, r.u32());
  FW_TRY(h.timestamp, r.u64());
  FW_TRY(h.flags, r.u64());
  if (h.version > kJitdumpVersion) return Error{ErrorCode::kUnsupportedElf, 4};
  if (h.size < kJitdumpHeaderSize || h.size > file.size()) return Error{ErrorCode::kBadLength, 8};
  if (h.flags & ~kJitdumpFlagArchTimestamp) return Error{ErrorCode::kUnsupportedElf, 32};
  return h;
}

// CODE_LOAD and CODE_MOVE both start with the writer's pid and tid and the code's vma.
template <typename Record>
Result<void> read_writer_and_vma(ByteReader& r, Record& record) {
  FW_TRY(record.pid, r.u32());
  FW_TRY(record.tid, r.u32());
  FW_TRY(record.vma, r.u64());
  return ok();
}

// `r` is over one record's bytes, past its 16-byte header.
Result<JitCodeLoad> parse_code_load(ByteReader& r) {
  JitCodeLoad l;
  FW_CHECK(read_writer_and_vma(r, l));
  FW_TRY(l.code_addr, r.u64());
  FW_TRY(l.code_size, r.u64());
  FW_TRY(l.code_index, r.u64());
  // perf reads the code at record + total_size - code_size; the name lies
  // between the fixed fields and it.
  const uint64_t size_at = r.base_offset() + kCodeLoadSizeOffset;
  if (l.code_size > r.remaining() || wraps(l.code_addr, l.code_size)) return Error{ErrorCode::kBadLength, size_at};
  FW_TRY(ByteReader name, r.split(r.remaining() - l.code_size));
  FW_TRY(l.name, name.cstring());
  FW_TRY(l.code, r.bytes(l.code_size));
  return l;
}

Result<JitCodeMove> parse_code_move(ByteReader& r) {
  JitCodeMove m;
  FW_CHECK(read_writer_and_vma(r, m));
  FW_TRY(m.old_code_addr, r.u64());
  FW_TRY(m.new_code_addr, r.u64());
  FW_TRY(m.code_size, r.u64());
  FW_TRY(m.code_index, r.u64());
  if (wraps(m.old_code_addr, m.code_size) || wraps(m.new_code_addr, m.code_size))
    return Error{ErrorCode::kBadLength, r.base_offset() + kCodeMoveSizeOffset};
  return m;
}

Result<JitDebugInfo> parse_debug_info(ByteReader& r) {
  JitDebugInfo d;
  FW_TRY(d.code_addr, r.u64());
  FW_TRY(uint64_t count, r.u64());
  // Counted by nr_entry: V8 pads the record after the entries.
  if (count > r.remaining() / kDebugEntryMinSize)
    return Error{ErrorCode::kBadLength, r.base_offset() + kDebugInfoCountOffset};
  d.lines.reserve(static_cast<size_t>(count));
  std::string_view previous;
  for (uint64_t i = 0; i < count; ++i) {
    JitLine& line = d.lines.emplace_back();
    FW_TRY(line.address, r.u64());
    FW_TRY(uint32_t number, r.u32());
    FW_TRY(uint32_t discriminator, r.u32());
    line.line = static_cast<int32_t>(number);
    line.discriminator = static_cast<int32_t>(discriminator);
    FW_TRY(line.file, r.cstring());
    if (line.file == "\xff") line.file = previous;
    previous = line.file;
  }
  return d;
}

Result<JitUnwindingInfo> parse_unwinding_info(ByteReader& r) {
  JitUnwindingInfo u;
  FW_TRY(u.unwinding_size, r.u64());
  FW_TRY(u.eh_frame_hdr_size, r.u64());
  FW_TRY(u.mapped_size, r.u64());
  if (u.eh_frame_hdr_size > u.unwinding_size)
    return Error{ErrorCode::kBadLength, r.base_offset() + kUnwindingHdrSizeOffset};
  if (u.unwinding_size > r.remaining()) return Error{ErrorCode::kTruncated, r.base_offset() + kUnwindingDataOffset};
  FW_TRY(u.eh_frame, r.bytes(u.unwinding_size - u.eh_frame_hdr_size));
  FW_TRY(u.eh_frame_hdr, r.bytes(u.eh_frame_hdr_size));
  return u;
}

// The DEBUG_INFO and UNWINDING_INFO read since the last CODE_LOAD.
struct Pending {
  std::optional<size_t> debug_info, unwinding_info;
};

// The record at the reader's place, added to `out`; the reader moves past it.
Result<void> read_record(ByteReader& r, JitDump& out, Pending& pending) {
  const uint64_t offset = r.absolute_offset();
  if (r.remaining() < kJitRecordHeaderSize) return Error{ErrorCode::kTruncated, offset};
  FW_TRY(const uint32_t id, r.u32());
  FW_TRY(const uint32_t total_size, r.u32());
  FW_TRY(const uint64_t timestamp, r.u64());
  if (total_size < kJitRecordHeaderSize) return Error{ErrorCode::kBadLength, offset};
  if (total_size - kJitRecordHeaderSize > r.remaining()) return Error{ErrorCode::kTruncated, offset};
  // The payload's reader starts at the record, so its errors name file offsets.
  ByteReader record(r.data().subspan(static_cast<size_t>(offset - r.base_offset()), total_size), r.endian(), offset);
  FW_CHECK(record.skip(kJitRecordHeaderSize));
  FW_CHECK(r.skip(total_size - kJitRecordHeaderSize));
  const Place place{timestamp, out.records, offset};
  switch (static_cast<JitRecordId>(id)) {
    case JitRecordId::kCodeLoad: {
      FW_TRY(JitCodeLoad l, parse_code_load(record));
      l = placed(std::move(l), place);
      l.debug_info = pending.debug_info;
      l.unwinding_info = pending.unwinding_info;
      pending = Pending{};
      out.loads.push_back(std::move(l));
      break;
    }
    case JitRecordId::kCodeMove: {
      FW_TRY(JitCodeMove m, parse_code_move(record));
      out.moves.push_back(placed(m, place));
      break;
    }
    case JitRecordId::kDebugInfo: {
      FW_TRY(JitDebugInfo d, parse_debug_info(record));
      pending.debug_info = out.debug_infos.size();
      out.debug_infos.push_back(placed(std::move(d), place));
      break;
    }
    case JitRecordId::kUnwindingInfo: {
      FW_TRY(JitUnwindingInfo u, parse_unwinding_info(record));
      pending.unwinding_info = out.unwinding_infos.size();
      out.unwinding_infos.push_back(placed(u, place));
      break;
    }
    case JitRecordId::kCodeClose:
      ++out.code_closes;
      break;
    default:
      ++out.unknown_records;  // perf skips them too, by total_size
      break;
  }
  ++out.records;
  return ok();
}

}  // namespace

Result<JitDump> parse_jitdump(Bytes file) {
  JitDump out;
  FW_TRY(out.header, parse_header(file));
  ByteReader r(file, out.header.endian);
  FW_CHECK(r.seek(out.header.size));  // within the file: parse_header checked
  Pending pending;
  while (!r.at_end()) {
    const uint64_t offset = r.absolute_offset();
    const Result<void> read = read_record(r, out, pending);
    if (!read.ok()) {
      out.stopped = read.error();
      out.stopped_record_offset = offset;
      break;
    }
  }
  return out;
}

JitCodeIndex::JitCodeIndex(const JitDump& dump, uint32_t pid) {
  // The loads and moves of the process in time order (file order within a timestamp).
  struct Event {
    uint64_t timestamp;
    size_t order;
    const JitCodeLoad* load;  // else `move`
    const JitCodeMove* move;
  };
  std::vector<Event> events;
  for (const JitCodeLoad& l : dump.loads)
    if (l.pid == pid) events.push_back(Event{l.timestamp, l.index, &l, nullptr});
  for (const JitCodeMove& m : dump.moves)
    if (m.pid == pid) events.push_back(Event{m.timestamp, m.index, nullptr, &m});
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.timestamp != b.timestamp ? a.timestamp < b.timestamp : a.order < b.order;
  });
  constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();
  std::map<uint64_t, size_t> current;  // code_index -> its placement now
  for (const Event& e : events) {
    if (e.load) {
      current[e.load->code_index] = placements_.size();
      placements_.push_back(Placement{e.load->code_addr, e.load->code_end(), e.timestamp, kForever, e.order, e.load});
      continue;
    }
    auto it = current.find(e.move->code_index);
    if (it == current.end()) {
      ++unmatched_moves_;
      continue;
    }
    Placement& old = placements_[it->second];
    if (old.until > e.timestamp) old.until = e.timestamp;
    it->second = placements_.size();
    placements_.push_back(Placement{e.move->new_code_addr, e.move->new_code_addr + e.move->code_size, e.timestamp,
                                    kForever, e.order, old.load});
  }
  std::stable_sort(placements_.begin(), placements_.end(),
                   [](const Placement& a, const Placement& b) { return a.start < b.start; });
  for (const Placement& p : placements_) max_size_ = std::max(max_size_, p.end - p.start);
}

const JitCodeLoad* JitCodeIndex::find(uint64_t address, uint64_t timestamp) const {
  // Placements starting after the address cannot hold it; of those before,
  // only the ones less than the largest size below it can.
  auto it = std::upper_bound(placements_.begin(), placements_.end(), address,
                             [](uint64_t a, const Placement& p) { return a < p.start; });
  const Placement* best = nullptr;
  while (it != placements_.begin()) {
    --it;
    if (address - it->start >= max_size_) break;
    if (address >= it->end || timestamp < it->from || timestamp >= it->until) continue;
    if (!best || it->from > best->from || (it->from == best->from && it->order > best->order)) best = &*it;
  }
  return best ? best->load : nullptr;
}

}  // namespace framewalk::symbol
