#include "profile/profile_file.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/reserved_buffer.hpp"
#include "base/text.hpp"
#include "elf/elf_file.hpp"  // gnu_debuglink_crc32, decompress_zstd
#if FRAMEWALK_PROFILE_ZSTD
#include <zstd.h>
#endif

namespace framewalk::profile {

namespace {

// Sample flags.
constexpr uint8_t kSampleOffCpu = 1, kSampleTid = 2, kSampleCpu = 4, kSampleWeight = 8, kSampleNoStack = 16,
                  kSampleKnownFlags = 31;

void put_uleb(std::string* out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out->push_back(static_cast<char>(b));
  } while (v);
}
void put_sleb(std::string* out, int64_t v) {
  bool more = true;
  while (more) {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) more = false; else b |= 0x80;
    out->push_back(static_cast<char>(b));
  }
}
void put_u32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void put_string(std::string* out, std::string_view s) {
  put_uleb(out, s.size());
  out->append(s);
}

const char* chunk_name(uint8_t type) {
  switch (static_cast<ChunkType>(type)) {
    case ChunkType::kStrings: return "strings";
    case ChunkType::kModules: return "modules";
    case ChunkType::kFrames: return "frames";
    case ChunkType::kSymbols: return "symbols";
    case ChunkType::kNodes: return "stack nodes";
    case ChunkType::kThreads: return "threads";
    case ChunkType::kSamples: return "samples";
    case ChunkType::kInfo: return "recording";
    case ChunkType::kAccounting: return "accounting";
    case ChunkType::kEnd: return "end";
  }
  return "unknown";
}

Bytes as_bytes(const std::string& s) { return Bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

}  // namespace

const char* to_string(ProfileFileErrc code) noexcept {
  switch (code) {
    case ProfileFileErrc::kBadMagic: return "not a framewalk profile (no FWPROF magic)";
    case ProfileFileErrc::kUnsupportedVersion: return "unsupported profile version";
    case ProfileFileErrc::kTruncated: return "truncated";
    case ProfileFileErrc::kBadChecksum: return "bad checksum";
    case ProfileFileErrc::kBadChunkType: return "unknown chunk type";
    case ProfileFileErrc::kChunkTooLarge: return "chunk too large";
    case ProfileFileErrc::kBadId: return "undefined id";
    case ProfileFileErrc::kBadCount: return "count larger than its chunk";
    case ProfileFileErrc::kTrailingBytes: return "bytes after the last entry";
    case ProfileFileErrc::kCompressed: return "compressed chunk that cannot be decompressed";
    case ProfileFileErrc::kTotalsDiffer: return "totals differ from the chunks";
  }
  return "unknown error";
}

std::string describe(const ProfileFileError& e) {
  std::string s = to_string(e.code);
  switch (e.code) {
    case ProfileFileErrc::kUnsupportedVersion:
    case ProfileFileErrc::kBadChunkType:
    case ProfileFileErrc::kChunkTooLarge:
    case ProfileFileErrc::kBadId:
    case ProfileFileErrc::kBadCount:
      s += " " + std::to_string(e.value);
      break;
    default:
      break;
  }
  if (e.chunk && e.code != ProfileFileErrc::kBadChunkType) s += std::string(" in the ") + chunk_name(e.chunk) + " chunk";
  return s + " at offset " + hex(e.offset);
}

bool is_profile_file(Bytes data) {
  return data.size() >= sizeof kProfileFileMagic && std::memcmp(data.data(), kProfileFileMagic, 6) == 0;
}

// ---------------------------------------------------------------- writing

void ProfileFileWriter::chunk(ChunkType type, const std::string& payload, std::string* out) {
  uint8_t flags = 0;
  const std::string* stored = &payload;
#if FRAMEWALK_PROFILE_ZSTD
  std::string packed;
  if (options_.compress && payload.size() > 64) {
    std::string size;
    put_uleb(&size, payload.size());
    packed = size;
    const size_t bound = ZSTD_compressBound(payload.size());
    packed.resize(size.size() + bound);
    const size_t n = ZSTD_compress(packed.data() + size.size(), bound, payload.data(), payload.size(),
                                   options_.compression_level);
    if (!ZSTD_isError(n) && size.size() + n < payload.size()) {
      packed.resize(size.size() + n);
      stored = &packed;
      flags = 1;
    }
  }
#endif
  out->push_back(static_cast<char>(type));
  out->push_back(static_cast<char>(flags));
  put_u32(out, static_cast<uint32_t>(stored->size()));
  put_u32(out, elf::gnu_debuglink_crc32(as_bytes(*stored)));
  out->append(*stored);
}

void ProfileFileWriter::flush(const SampleProfile& p, std::string* out) {
  if (!header_) {
    out->append(kProfileFileMagic, 6);
    out->push_back(0);
    out->push_back(static_cast<char>(kProfileFileVersion));
    header_ = true;
  }
  std::string b;
  if (p.string_count() > strings_) {
    put_uleb(&b, p.string_count() - strings_);
    for (size_t i = strings_; i < p.string_count(); ++i) put_string(&b, p.string(static_cast<StringId>(i)));
    strings_ = p.string_count();
    chunk(ChunkType::kStrings, b, out);
  }
  if (!info_written_) {
    b.clear();
    const RecordingInfo& in = p.info();
    put_uleb(&b, in.event);
    put_uleb(&b, in.frequency);
    put_uleb(&b, in.period);
    put_uleb(&b, in.weight_unit);
    put_uleb(&b, in.start_time_ns);
    put_uleb(&b, in.duration_ns);
    put_uleb(&b, in.hostname);
    put_uleb(&b, in.command_line.size());
    for (StringId s : in.command_line) put_uleb(&b, s);
    chunk(ChunkType::kInfo, b, out);
    info_written_ = true;
  }
  if (p.modules().size() > modules_) {
    b.clear();
    put_uleb(&b, p.modules().size() - modules_);
    for (size_t i = modules_; i < p.modules().size(); ++i) {
      const SampleModule& m = p.modules()[i];
      put_uleb(&b, m.path);
      put_uleb(&b, m.build_id);
      put_uleb(&b, m.start);
      put_uleb(&b, m.end - m.start);
      put_uleb(&b, m.file_offset);
      put_uleb(&b, m.bias);
    }
    modules_ = p.modules().size();
    chunk(ChunkType::kModules, b, out);
  }
  if (p.frames().size() > frames_) {
    b.clear();
    put_uleb(&b, p.frames().size() - frames_);
    for (size_t i = frames_; i < p.frames().size(); ++i) {
      const SampleFrame& f = p.frames()[i];
      put_uleb(&b, f.module == kNoModule ? 0 : uint64_t{f.module} + 1);
      put_uleb(&b, f.address);
    }
    frames_ = p.frames().size();
    chunk(ChunkType::kFrames, b, out);
  }
  const std::vector<uint32_t>& named = p.named_frames_log();
  if (named.size() > named_) {
    b.clear();
    put_uleb(&b, named.size() - named_);
    for (size_t i = named_; i < named.size(); ++i) {
      const SampleFrame& f = p.frames()[named[i]];
      put_uleb(&b, named[i]);
      put_uleb(&b, f.line_count);
      for (const SourceLine& l : p.lines_of(f)) {
        put_uleb(&b, l.function);
        put_uleb(&b, l.file);
        put_uleb(&b, l.line);
        put_uleb(&b, l.column);
      }
    }
    named_ = named.size();
    chunk(ChunkType::kSymbols, b, out);
  }
  if (p.nodes().size() > nodes_) {
    b.clear();
    put_uleb(&b, p.nodes().size() - nodes_);
    for (size_t i = nodes_; i < p.nodes().size(); ++i) {
      const StackNode& n = p.nodes()[i];
      put_uleb(&b, n.parent == kNoNode ? 0 : i - n.parent);  // 1 for a node right after its parent
      put_uleb(&b, n.frame);
    }
    nodes_ = p.nodes().size();
    chunk(ChunkType::kNodes, b, out);
  }
  const std::vector<uint32_t>& threads = p.thread_log();
  if (threads.size() > threads_) {
    b.clear();
    put_uleb(&b, threads.size() - threads_);
    for (size_t i = threads_; i < threads.size(); ++i) {
      const SampleThread& t = p.threads()[threads[i]];
      put_uleb(&b, t.pid);
      put_uleb(&b, t.tid);
      put_uleb(&b, t.name);
    }
    threads_ = threads.size();
    chunk(ChunkType::kThreads, b, out);
  }
  // Samples in chunks of at most samples_per_chunk, each decoded on its own.
  while (p.samples().size() > samples_) {
    b.clear();
    const size_t n = std::min<size_t>(p.samples().size() - samples_, std::max<size_t>(options_.samples_per_chunk, 1));
    put_uleb(&b, n);
    uint64_t time = 0;
    uint32_t tid = 0;
    uint16_t cpu = 0;
    uint64_t weight = 0;
    bool first = true;
    for (size_t i = samples_; i < samples_ + n; ++i) {
      const Sample& s = p.samples()[i];
      uint8_t flags = s.kind == SampleKind::kOffCpu ? kSampleOffCpu : 0;
      if (first || s.tid != tid) flags |= kSampleTid;
      if (first || s.cpu != cpu) flags |= kSampleCpu;
      if (first || s.weight != weight) flags |= kSampleWeight;
      if (s.stack == kNoNode) flags |= kSampleNoStack;
      b.push_back(static_cast<char>(flags));
      if (s.stack != kNoNode) put_uleb(&b, s.stack);
      put_sleb(&b, static_cast<int64_t>(s.time_ns - time));
      if (flags & kSampleTid) put_uleb(&b, s.tid);
      if (flags & kSampleCpu) put_uleb(&b, s.cpu);
      if (flags & kSampleWeight) put_uleb(&b, s.weight);
      time = s.time_ns, tid = s.tid, cpu = s.cpu, weight = s.weight, first = false;
    }
    samples_ += n;
    chunk(ChunkType::kSamples, b, out);
  }
  b.clear();
  put_uleb(&b, p.lost_samples());
  put_uleb(&b, p.stop_reasons().size());
  for (const StopReasonCount& r : p.stop_reasons()) {
    put_uleb(&b, r.reason);
    put_uleb(&b, r.count);
  }
  chunk(ChunkType::kAccounting, b, out);
}

void ProfileFileWriter::finish(const SampleProfile& p, std::string* out) {
  info_written_ = false;  // the recording's info again: its duration is known now
  flush(p, out);
  std::string b;
  put_uleb(&b, p.string_count());
  put_uleb(&b, p.frames().size());
  put_uleb(&b, p.nodes().size());
  put_uleb(&b, p.samples().size());
  chunk(ChunkType::kEnd, b, out);
}

std::string write_profile_file(const SampleProfile& p, ProfileWriterOptions options) {
  std::string out;
  ProfileFileWriter w(options);
  w.finish(p, &out);
  return out;
}

// ---------------------------------------------------------------- reading

namespace {

#define PF_TRY(decl, expr)                                                            \
  auto FW_CONCAT(pf_, __LINE__) = (expr);                                             \
  if (!FW_CONCAT(pf_, __LINE__).ok())                                                 \
    return ProfileFileError{ProfileFileErrc::kTruncated, FW_CONCAT(pf_, __LINE__).error().offset, 0}; \
  decl = *FW_CONCAT(pf_, __LINE__)

// One chunk's payload applied to the profile: decoded whole first, then
// appended, so that a damaged chunk leaves the profile as it was.
class ChunkReader {
 public:
  ChunkReader(SampleProfile* p, Bytes payload, uint64_t offset) : p_(p), in_(payload, Endian::kLittle, offset) {}

  std::optional<ProfileFileError> read(ChunkType type, bool* end) {
    switch (type) {
      case ChunkType::kStrings: return strings();
      case ChunkType::kModules: return modules();
      case ChunkType::kFrames: return frames();
      case ChunkType::kSymbols: return symbols();
      case ChunkType::kNodes: return nodes();
      case ChunkType::kThreads: return threads();
      case ChunkType::kSamples: return samples();
      case ChunkType::kInfo: return info();
      case ChunkType::kAccounting: return accounting();
      case ChunkType::kEnd: *end = true; return totals();
    }
    return ProfileFileError{ProfileFileErrc::kBadChunkType, in_.base_offset(), static_cast<uint64_t>(type)};
  }

 private:
  using Err = std::optional<ProfileFileError>;

  // A count of entries of at least `min_size` bytes each.
  Result<uint64_t> count(size_t min_size) {
    const uint64_t at = in_.absolute_offset();
    FW_TRY(const uint64_t n, in_.uleb128());
    count_value_ = n;
    if (n > in_.remaining() / min_size) return Error{ErrorCode::kBadLength, at};
    return n;
  }
  Err count_error(const Error& e) {
    if (e.code == ErrorCode::kBadLength) return ProfileFileError{ProfileFileErrc::kBadCount, e.offset, count_value_};
    return ProfileFileError{ProfileFileErrc::kTruncated, e.offset, 0};
  }
  Err bad_id(uint64_t at, uint64_t id) { return ProfileFileError{ProfileFileErrc::kBadId, at, id}; }
  Err done() {
    if (!in_.at_end()) return ProfileFileError{ProfileFileErrc::kTrailingBytes, in_.absolute_offset(), 0};
    return std::nullopt;
  }
  // A string id defined so far.
  Result<StringId> string_id() {
    const uint64_t at = in_.absolute_offset();
    FW_TRY(const uint64_t id, in_.uleb128());
    if (id >= p_->string_count()) {
      bad_ = id;
      return Error{ErrorCode::kBadIndex, at};
    }
    return static_cast<StringId>(id);
  }
  Err id_error(const Error& e) {
    if (e.code == ErrorCode::kBadIndex) return bad_id(e.offset, bad_);
    return ProfileFileError{ProfileFileErrc::kTruncated, e.offset, 0};
  }

#define CR_COUNT(var, min)                        \
  auto FW_CONCAT(c_, __LINE__) = count(min);      \
  if (!FW_CONCAT(c_, __LINE__)) return count_error(FW_CONCAT(c_, __LINE__).error()); \
  const uint64_t var = *FW_CONCAT(c_, __LINE__)
#define CR_STRING(var)                           \
  auto FW_CONCAT(s_, __LINE__) = string_id();    \
  if (!FW_CONCAT(s_, __LINE__)) return id_error(FW_CONCAT(s_, __LINE__).error()); \
  const StringId var = *FW_CONCAT(s_, __LINE__)

  Err strings() {
    CR_COUNT(n, 1);
    std::vector<std::string_view> got;
    got.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      PF_TRY(const uint64_t len, in_.uleb128());
      PF_TRY(const Bytes s, in_.bytes(len));
      got.emplace_back(reinterpret_cast<const char*>(s.data()), s.size());
    }
    if (Err e = done()) return e;
    for (std::string_view s : got) p_->append_string(s);
    return std::nullopt;
  }

  Err modules() {
    CR_COUNT(n, 6);
    std::vector<SampleModule> got;
    got.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      SampleModule m;
      { CR_STRING(s); m.path = s; }
      { CR_STRING(s); m.build_id = s; }
      PF_TRY(m.start, in_.uleb128());
      PF_TRY(const uint64_t size, in_.uleb128());
      m.end = m.start + size;
      if (m.end < m.start) m.end = UINT64_MAX;
      PF_TRY(m.file_offset, in_.uleb128());
      PF_TRY(m.bias, in_.uleb128());
      got.push_back(m);
    }
    if (Err e = done()) return e;
    for (const SampleModule& m : got) p_->add_module(m);
    return std::nullopt;
  }

  Err frames() {
    CR_COUNT(n, 2);
    std::vector<std::pair<uint32_t, uint64_t>> got;
    got.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t at = in_.absolute_offset();
      PF_TRY(const uint64_t module, in_.uleb128());
      if (module > p_->modules().size()) return bad_id(at, module - 1);
      PF_TRY(const uint64_t address, in_.uleb128());
      got.emplace_back(module == 0 ? kNoModule : static_cast<uint32_t>(module - 1), address);
    }
    if (Err e = done()) return e;
    for (auto [m, a] : got) p_->append_frame(m, a);
    return std::nullopt;
  }

  Err symbols() {
    CR_COUNT(n, 2);
    std::vector<std::pair<uint32_t, std::vector<SourceLine>>> got;
    got.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t at = in_.absolute_offset();
      PF_TRY(const uint64_t frame, in_.uleb128());
      if (frame >= p_->frames().size()) return bad_id(at, frame);
      CR_COUNT(lines, 4);
      std::vector<SourceLine> ls;
      ls.reserve(lines);
      for (uint64_t j = 0; j < lines; ++j) {
        SourceLine l;
        { CR_STRING(s); l.function = s; }
        { CR_STRING(s); l.file = s; }
        PF_TRY(const uint64_t line, in_.uleb128());
        PF_TRY(const uint64_t column, in_.uleb128());
        l.line = static_cast<uint32_t>(std::min<uint64_t>(line, UINT32_MAX));
        l.column = static_cast<uint32_t>(std::min<uint64_t>(column, UINT32_MAX));
        ls.push_back(l);
      }
      got.emplace_back(static_cast<uint32_t>(frame), std::move(ls));
    }
    if (Err e = done()) return e;
    for (const auto& [f, ls] : got) p_->set_frame_lines(f, ls);
    return std::nullopt;
  }

  Err nodes() {
    CR_COUNT(n, 2);
    std::vector<StackNode> got;
    got.reserve(n);
    const uint64_t base = p_->nodes().size();
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t id = base + i;
      const uint64_t at = in_.absolute_offset();
      PF_TRY(const uint64_t back, in_.uleb128());
      if (back > id) return bad_id(at, back);  // a parent is an earlier node
      const uint64_t frame_at = in_.absolute_offset();
      PF_TRY(const uint64_t frame, in_.uleb128());
      if (frame >= p_->frames().size()) return bad_id(frame_at, frame);
      got.push_back(StackNode{back == 0 ? kNoNode : static_cast<uint32_t>(id - back), static_cast<uint32_t>(frame)});
    }
    if (base + n >= kNoNode) return bad_id(in_.base_offset(), base + n);
    if (Err e = done()) return e;
    for (const StackNode& node : got) p_->append_node(node);
    return std::nullopt;
  }

  Err threads() {
    CR_COUNT(n, 3);
    std::vector<SampleThread> got;
    got.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      PF_TRY(const uint64_t pid, in_.uleb128());
      PF_TRY(const uint64_t tid, in_.uleb128());
      CR_STRING(name);
      got.push_back(SampleThread{static_cast<uint32_t>(pid), static_cast<uint32_t>(tid), name});
    }
    if (Err e = done()) return e;
    for (const SampleThread& t : got) p_->add_thread(t.pid, t.tid, p_->string(t.name));
    return std::nullopt;
  }

  Err samples() {
    CR_COUNT(n, 2);
    std::vector<Sample> got;
    got.reserve(n);
    Sample s;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t at = in_.absolute_offset();
      PF_TRY(const uint8_t flags, in_.u8());
      if (flags & ~kSampleKnownFlags) return bad_id(at, flags);
      if (i == 0 && (flags & (kSampleTid | kSampleCpu | kSampleWeight)) != (kSampleTid | kSampleCpu | kSampleWeight))
        return ProfileFileError{ProfileFileErrc::kTruncated, at, 0};
      s.kind = (flags & kSampleOffCpu) ? SampleKind::kOffCpu : SampleKind::kOnCpu;
      s.stack = kNoNode;
      if (!(flags & kSampleNoStack)) {
        const uint64_t stack_at = in_.absolute_offset();
        PF_TRY(const uint64_t stack, in_.uleb128());
        if (stack >= p_->nodes().size()) return bad_id(stack_at, stack);
        s.stack = static_cast<uint32_t>(stack);
      }
      PF_TRY(const int64_t delta, in_.sleb128());
      s.time_ns += static_cast<uint64_t>(delta);
      if (flags & kSampleTid) {
        PF_TRY(const uint64_t tid, in_.uleb128());
        s.tid = static_cast<uint32_t>(tid);
      }
      if (flags & kSampleCpu) {
        PF_TRY(const uint64_t cpu, in_.uleb128());
        s.cpu = static_cast<uint16_t>(cpu);
      }
      if (flags & kSampleWeight) { PF_TRY(s.weight, in_.uleb128()); }
      got.push_back(s);
    }
    if (Err e = done()) return e;
    for (const Sample& x : got) p_->add_sample(x);
    return std::nullopt;
  }

  Err info() {
    RecordingInfo in;
    { CR_STRING(s); in.event = s; }
    PF_TRY(in.frequency, in_.uleb128());
    PF_TRY(in.period, in_.uleb128());
    { CR_STRING(s); in.weight_unit = s; }
    PF_TRY(in.start_time_ns, in_.uleb128());
    PF_TRY(in.duration_ns, in_.uleb128());
    { CR_STRING(s); in.hostname = s; }
    CR_COUNT(n, 1);
    for (uint64_t i = 0; i < n; ++i) {
      CR_STRING(s);
      in.command_line.push_back(s);
    }
    if (Err e = done()) return e;
    p_->info() = std::move(in);
    return std::nullopt;
  }

  Err accounting() {
    PF_TRY(const uint64_t lost, in_.uleb128());
    CR_COUNT(n, 2);
    std::vector<StopReasonCount> got;
    for (uint64_t i = 0; i < n; ++i) {
      CR_STRING(r);
      PF_TRY(const uint64_t c, in_.uleb128());
      got.push_back({r, c});
    }
    if (Err e = done()) return e;
    p_->set_lost_samples(lost);
    p_->clear_stop_reasons();
    for (const StopReasonCount& r : got) p_->add_stop_reason(p_->string(r.reason), r.count);
    return std::nullopt;
  }

  Err totals() {
    const uint64_t at = in_.base_offset();
    PF_TRY(const uint64_t strings, in_.uleb128());
    PF_TRY(const uint64_t frames, in_.uleb128());
    PF_TRY(const uint64_t nodes, in_.uleb128());
    PF_TRY(const uint64_t samples, in_.uleb128());
    if (Err e = done()) return e;
    if (strings != p_->string_count() || frames != p_->frames().size() || nodes != p_->nodes().size() ||
        samples != p_->samples().size())
      return ProfileFileError{ProfileFileErrc::kTotalsDiffer, at, p_->samples().size()};
    return std::nullopt;
  }

#undef CR_COUNT
#undef CR_STRING

  SampleProfile* p_;
  ByteReader in_;
  uint64_t count_value_ = 0;
  uint64_t bad_ = 0;
};

}  // namespace

ProfileFileResult read_profile_file(Bytes data) {
  ProfileFileResult result;
  if (!is_profile_file(data) || data.size() < kProfileFileHeaderSize) {
    result.error = ProfileFileError{ProfileFileErrc::kBadMagic, 0, 0};
    return result;
  }
  if (data[6] != 0 || data[7] != kProfileFileVersion) {
    result.error = ProfileFileError{ProfileFileErrc::kUnsupportedVersion, 7, uint64_t{data[6]} << 8 | data[7]};
    return result;
  }
  result.read.emplace();
  ProfileFileRead& r = *result.read;
  ByteReader in(data, Endian::kLittle);
  (void)in.skip(kProfileFileHeaderSize);
  uint8_t type_seen = 0;
  while (!in.at_end()) {
    type_seen = 0;
    const uint64_t at = in.absolute_offset();
    const auto stop = [&](ProfileFileErrc code, uint64_t offset, uint64_t value) {
      r.damage = ProfileFileError{code, offset, value, type_seen};
    };
    if (r.complete) {
      stop(ProfileFileErrc::kTrailingBytes, at, 0);
      break;
    }
    if (in.remaining() < kChunkHeaderSize) {
      stop(ProfileFileErrc::kTruncated, at, 0);
      break;
    }
    const uint8_t type = *in.u8();
    type_seen = type;
    const uint8_t flags = *in.u8();
    const uint32_t size = *in.u32();
    const uint32_t crc = *in.u32();
    if (type < static_cast<uint8_t>(ChunkType::kStrings) || type > static_cast<uint8_t>(ChunkType::kEnd) ||
        (flags & ~1u)) {
      stop(ProfileFileErrc::kBadChunkType, at, type);
      break;
    }
    if (size > kMaxChunkPayload) {
      stop(ProfileFileErrc::kChunkTooLarge, at, size);
      break;
    }
    auto stored = in.bytes(size);
    if (!stored) {
      stop(ProfileFileErrc::kTruncated, at, 0);
      break;
    }
    if (const uint32_t computed = elf::gnu_debuglink_crc32(*stored); computed != crc) {
      stop(ProfileFileErrc::kBadChecksum, at, computed);
      break;
    }
    Bytes payload = *stored;
    uint64_t payload_offset = at + kChunkHeaderSize;
    ReservedBuffer unpacked;
    if (flags & 1) {
      ByteReader z(payload, Endian::kLittle, payload_offset);
      auto raw_size = z.uleb128();
      if (!raw_size || *raw_size > kMaxChunkPayload) {
        stop(ProfileFileErrc::kCompressed, at, 0);
        break;
      }
      auto out = elf::decompress_zstd(payload.subspan(z.offset()), *raw_size);
      if (!out) {
        stop(ProfileFileErrc::kCompressed, at, 0);
        break;
      }
      unpacked = std::move(*out);
      payload = Bytes(unpacked.data(), unpacked.size());
      payload_offset = at;  // offsets inside a decompressed payload name the chunk
    }
    ChunkReader chunk(&r.profile, payload, payload_offset);
    bool end = false;
    if (auto e = chunk.read(static_cast<ChunkType>(type), &end)) {
      if (flags & 1) e->offset = at;
      e->chunk = type;
      r.damage = *e;
      break;
    }
    ++r.chunks;
    if (end) r.complete = true;
  }
  return result;
}

}  // namespace framewalk::profile
