#include "perf/perf_data.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "base/text.hpp"

#if FRAMEWALK_PERF_ZSTD
#include <zstd.h>
#endif

// Reads into an existing field (FW_TRY declares; this assigns, safe under an if).
#define PERF_READ(dst, expr)              \
  do {                                    \
    auto perf_read_ = (expr);             \
    if (!perf_read_.ok()) return perf_read_.error(); \
    dst = std::move(perf_read_.value());  \
  } while (0)

namespace framewalk::perf {

namespace {

constexpr size_t kHeaderSize = 8;          // perf_event_header
constexpr size_t kFileHeaderSize = 104;    // perf_file_header
constexpr size_t kPipeHeaderSize = 16;     // perf_pipe_file_header
constexpr uint32_t kAttrSizeVer0 = 64;
constexpr size_t kMaxAttrSize = 4096;      // what perf itself accepts (PAGE_SIZE)
constexpr uint64_t kMaxIds = uint64_t{1} << 20;
// Decompressed bytes of one COMPRESSED record at most (a record of 64 KiB
// from one ring-buffer flush; perf's own buffer is the ring's size).
constexpr uint64_t kMaxDecompressed = uint64_t{64} << 20;

// Feature bits (perf's enum HEADER_*).
enum Feature : unsigned {
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsrelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCompressed = 27,
  kFeatBits = 256,
};

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

struct NamedError {
  Error error;
  const char* what;
};

// The sample_id trailer's size for a sample_type.
size_t trailer_size(uint64_t t) {
  size_t n = 0;
  for (uint64_t bit : {sample::kTid, sample::kTime, sample::kId, sample::kStreamId, sample::kCpu,
                       sample::kIdentifier})
    if (t & bit) n += 8;
  return n;
}

std::string event_name(const EventAttr& a) {
  static const char* const kHardware[] = {"cycles", "instructions", "cache-references", "cache-misses",
                                          "branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
                                          "stalled-cycles-backend", "ref-cycles"};
  static const char* const kSoftware[] = {"cpu-clock", "task-clock", "page-faults", "context-switches",
                                          "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
                                          "emulation-faults", "dummy", "bpf-output", "cgroup-switches"};
  if (a.type == 0 && a.config < std::size(kHardware)) return kHardware[a.config];
  if (a.type == 1 && a.config < std::size(kSoftware)) return kSoftware[a.config];
  return "raw:" + std::to_string(a.type) + ":" + hex(a.config);
}

}  // namespace

bool is_perf_data(Bytes bytes) { return bytes.size() >= 8 && load64(bytes.data()) == kMagic; }

std::string record_type_name(uint32_t type) {
  switch (type) {
    case kMmap: return "MMAP";
    case kLost: return "LOST";
    case kComm: return "COMM";
    case kExit: return "EXIT";
    case kThrottle: return "THROTTLE";
    case kUnthrottle: return "UNTHROTTLE";
    case kFork: return "FORK";
    case kRead: return "READ";
    case kSample: return "SAMPLE";
    case kMmap2: return "MMAP2";
    case kAux: return "AUX";
    case kItraceStart: return "ITRACE_START";
    case kLostSamples: return "LOST_SAMPLES";
    case kSwitch: return "SWITCH";
    case kSwitchCpuWide: return "SWITCH_CPU_WIDE";
    case kNamespaces: return "NAMESPACES";
    case kKsymbol: return "KSYMBOL";
    case kBpfEvent: return "BPF_EVENT";
    case kCgroup: return "CGROUP";
    case kTextPoke: return "TEXT_POKE";
    case kHeaderAttr: return "HEADER_ATTR";
    case kHeaderBuildId: return "HEADER_BUILD_ID";
    case kFinishedRound: return "FINISHED_ROUND";
    case kIdIndex: return "ID_INDEX";
    case kAuxtrace: return "AUXTRACE";
    case kHeaderFeature: return "HEADER_FEATURE";
    case kCompressed: return "COMPRESSED";
    case kFinishedInit: return "FINISHED_INIT";
    default: return "type " + std::to_string(type);
  }
}

Result<EventAttr> parse_event_attr(Bytes bytes) {
  ByteReader r(bytes, Endian::kLittle);
  EventAttr a;
  PERF_READ(a.type, r.u32());
  PERF_READ(a.size, r.u32());
  PERF_READ(a.config, r.u64());
  PERF_READ(a.sample_period, r.u64());
  PERF_READ(a.sample_type, r.u64());
  PERF_READ(a.read_format, r.u64());
  PERF_READ(a.flags, r.u64());
  // Later fields, where the attr is long enough to hold them.
  auto at64 = [&](size_t off) -> uint64_t { return off + 8 <= bytes.size() ? load64(bytes.data() + off) : 0; };
  a.branch_sample_type = at64(72);
  a.sample_regs_user = at64(80);
  if (bytes.size() >= 92) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + 88, 4);
    a.sample_stack_user = v;
  }
  if (bytes.size() >= 96) std::memcpy(&a.clockid, bytes.data() + 92, 4);
  a.sample_regs_intr = at64(96);
  a.name = event_name(a);
  return a;
}

size_t AttrSet::add(EventAttr attr) {
  const size_t index = attrs_.size();
  for (uint64_t id : attr.ids) ids_.emplace_back(id, index);
  std::stable_sort(ids_.begin(), ids_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  attrs_.push_back(std::move(attr));
  return index;
}

void AttrSet::add_ids(size_t index, std::span<const uint64_t> ids) {
  if (index >= attrs_.size()) return;
  for (uint64_t id : ids) {
    ids_.emplace_back(id, index);
    attrs_[index].ids.push_back(id);
  }
  std::stable_sort(ids_.begin(), ids_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::optional<size_t> AttrSet::by_id(uint64_t id) const {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id, [](const auto& e, uint64_t v) { return e.first < v; });
  if (it == ids_.end() || it->first != id) return std::nullopt;
  return it->second;
}

namespace {

// Which event a record belongs to: the only one, else by the id at the
// place the first event's sample_type puts it (perf requires every event of
// a file to put it at the same place).
Result<std::optional<size_t>> find_attr(Bytes body, bool is_sample, const AttrSet& attrs, uint64_t body_offset) {
  if (attrs.size() == 0) return Error{ErrorCode::kNotFound, 0};
  if (attrs.size() == 1) return std::optional<size_t>(0);
  const uint64_t t = attrs.attrs()[0].sample_type;
  size_t pos;
  if (is_sample) {
    if (t & sample::kIdentifier) {
      pos = 0;
    } else if (t & sample::kId) {
      pos = 0;
      for (uint64_t bit : {sample::kIp, sample::kTid, sample::kTime, sample::kAddr})
        if (t & bit) pos += 8;
    } else {
      return std::optional<size_t>(0);
    }
  } else {
    if (!attrs.attrs()[0].sample_id_all()) return std::optional<size_t>();
    size_t from_end;
    if (t & sample::kIdentifier) {
      from_end = 8;
    } else if (t & sample::kId) {
      from_end = 8;
      for (uint64_t bit : {sample::kStreamId, sample::kCpu})
        if (t & bit) from_end += 8;
    } else {
      return std::optional<size_t>(0);
    }
    if (from_end > body.size()) return Error{ErrorCode::kTruncated, body_offset};
    pos = body.size() - from_end;
  }
  if (pos + 8 > body.size()) return Error{ErrorCode::kTruncated, body_offset + pos};
  const uint64_t id = load64(body.data() + pos);
  auto index = attrs.by_id(id);
  // Records the perf tool synthesizes (the mappings and threads a process
  // had already) carry id 0: they go with the first event, as perf reads them.
  if (!index && id == 0) return std::optional<size_t>(0);
  if (!index) return Error{ErrorCode::kNotFound, body_offset + pos};
  return index;
}

Result<void> read_sample_id(ByteReader& r, uint64_t t, SampleId* s) {
  s->sample_type = t;
  if (t & sample::kTid) {
    PERF_READ(s->pid, r.u32());
    PERF_READ(s->tid, r.u32());
  }
  if (t & sample::kTime) PERF_READ(s->time, r.u64());
  if (t & sample::kId) PERF_READ(s->id, r.u64());
  if (t & sample::kStreamId) PERF_READ(s->stream_id, r.u64());
  if (t & sample::kCpu) {
    PERF_READ(s->cpu, r.u32());
    FW_TRY(uint32_t reserved, r.u32());
    (void)reserved;
  }
  if (t & sample::kIdentifier) PERF_READ(s->id, r.u64());
  return {};
}

// A counted run of 64-bit words: its count (already read) times 8 bytes.
Result<Bytes> words(ByteReader& r, uint64_t count) {
  if (count > r.remaining() / 8) return r.error(ErrorCode::kBadLength);
  return r.bytes(count * 8);
}

Result<void> decode_sample(ByteReader& r, const EventAttr& attr, Sample* s) {
  const uint64_t t = attr.sample_type;
  s->sample_type = t;
  if (t & sample::kIdentifier) PERF_READ(s->id, r.u64());
  if (t & sample::kIp) PERF_READ(s->ip, r.u64());
  if (t & sample::kTid) {
    PERF_READ(s->pid, r.u32());
    PERF_READ(s->tid, r.u32());
  }
  if (t & sample::kTime) PERF_READ(s->time, r.u64());
  if (t & sample::kAddr) PERF_READ(s->addr, r.u64());
  if (t & sample::kId) PERF_READ(s->id, r.u64());
  if (t & sample::kStreamId) PERF_READ(s->stream_id, r.u64());
  if (t & sample::kCpu) {
    PERF_READ(s->cpu, r.u32());
    FW_TRY(uint32_t reserved, r.u32());
    (void)reserved;
  }
  if (t & sample::kPeriod) PERF_READ(s->period, r.u64());
  if (t & sample::kRead) {
    const uint64_t f = attr.read_format;
    const size_t start = r.offset();
    const unsigned per_value = 1 + ((f & read_format::kId) ? 1 : 0) + ((f & read_format::kLost) ? 1 : 0);
    const unsigned times = ((f & read_format::kTotalTimeEnabled) ? 1 : 0) + ((f & read_format::kTotalTimeRunning) ? 1 : 0);
    if (f & read_format::kGroup) {
      FW_TRY(uint64_t nr, r.u64());
      if (nr > r.remaining() / 8 / per_value) return r.error(ErrorCode::kBadLength);
      FW_CHECK(r.skip(8 * (times + nr * per_value)));
    } else {
      FW_CHECK(r.skip(8 * (per_value + times)));
    }
    s->read_values = r.data().subspan(start, r.offset() - start);
  }
  if (t & sample::kCallchain) {
    FW_TRY(uint64_t nr, r.u64());
    PERF_READ(s->callchain, words(r, nr));
    s->callchain_size = static_cast<size_t>(nr);
  }
  if (t & sample::kRaw) {
    FW_TRY(uint32_t size, r.u32());
    PERF_READ(s->raw, r.bytes(size));
  }
  if (t & sample::kBranchStack) {
    const size_t start = r.offset();
    FW_TRY(uint64_t nr, r.u64());
    if (attr.branch_sample_type & (1u << 17)) FW_CHECK(r.skip(8));  // PERF_SAMPLE_BRANCH_HW_INDEX: hw_idx
    if (nr > r.remaining() / 24) return r.error(ErrorCode::kBadLength);
    FW_CHECK(r.skip(24 * nr));  // from, to, flags
    if (attr.branch_sample_type & (1u << 19)) FW_CHECK(r.skip(8 * nr));  // PERF_SAMPLE_BRANCH_COUNTERS
    s->branch_stack = r.data().subspan(start, r.offset() - start);
  }
  if (t & sample::kRegsUser) {
    PERF_READ(s->regs_user_abi, r.u64());
    s->regs_user_mask = attr.sample_regs_user;
    if (s->regs_user_abi != 0) {
      const size_t n = static_cast<size_t>(std::popcount(attr.sample_regs_user));
      FW_TRY(Bytes values, words(r, n));
      for (size_t i = 0; i < n; ++i) s->regs_user[i] = load64(values.data() + 8 * i);
      s->regs_user_count = n;
    }
  }
  if (t & sample::kStackUser) {
    FW_TRY(uint64_t size, r.u64());
    if (size != 0) {
      PERF_READ(s->stack_user, r.bytes(size));
      PERF_READ(s->stack_dyn_size, r.u64());
      if (s->stack_dyn_size > size) return Error{ErrorCode::kBadLength, r.absolute_offset() - 8};
    }
  }
  if (t & (sample::kWeight | sample::kWeightStruct)) PERF_READ(s->weight, r.u64());
  if (t & sample::kDataSrc) PERF_READ(s->data_src, r.u64());
  if (t & sample::kTransaction) PERF_READ(s->transaction, r.u64());
  if (t & sample::kRegsIntr) {
    PERF_READ(s->regs_intr_abi, r.u64());
    if (s->regs_intr_abi != 0) PERF_READ(s->regs_intr, words(r, static_cast<uint64_t>(std::popcount(attr.sample_regs_intr))));
  }
  if (t & sample::kPhysAddr) PERF_READ(s->phys_addr, r.u64());
  if (t & sample::kCgroup) PERF_READ(s->cgroup, r.u64());
  if (t & sample::kDataPageSize) PERF_READ(s->data_page_size, r.u64());
  if (t & sample::kCodePageSize) PERF_READ(s->code_page_size, r.u64());
  if (t & sample::kAux) {
    FW_TRY(uint64_t size, r.u64());
    PERF_READ(s->aux, r.bytes(size));
  }
  return {};
}

}  // namespace

namespace {

// A Sample as Sample{} makes it, but for the register array, of which only
// regs_user_count words are read (zeroing its 512 bytes for every sample is
// a tenth of a report's reading).
void reset(Sample& s) {
  static_assert(std::is_trivially_copyable_v<Sample>);
  static const Sample kEmpty{};
  const size_t array = offsetof(Sample, regs_user), after = array + sizeof s.regs_user;
  std::memcpy(static_cast<void*>(&s), &kEmpty, array);
  std::memcpy(reinterpret_cast<uint8_t*>(&s) + after, reinterpret_cast<const uint8_t*>(&kEmpty) + after,
              sizeof(Sample) - after);
}

}  // namespace

void append_compacted(const Record& r, std::vector<uint8_t>* out) {
  const Bytes all = r.bytes;
  const Bytes stack = r.sample.stack_user;
  const uint64_t kept = std::min<uint64_t>(stack.size(), (r.sample.stack_dyn_size + 7) & ~uint64_t{7});
  const bool inside = !stack.empty() && stack.data() >= all.data() + 16 &&
                      stack.data() + stack.size() <= all.data() + all.size();
  if (r.type != kSample || !inside || kept == stack.size()) {
    out->insert(out->end(), all.begin(), all.end());
    return;
  }
  // [header .. size word) [kept bytes of the copy] [dyn_size and what follows]
  const size_t at = static_cast<size_t>(stack.data() - all.data());
  const size_t first = out->size();
  out->insert(out->end(), all.begin(), all.begin() + static_cast<std::ptrdiff_t>(at - 8));
  const uint64_t size_word = kept;
  out->insert(out->end(), reinterpret_cast<const uint8_t*>(&size_word), reinterpret_cast<const uint8_t*>(&size_word) + 8);
  out->insert(out->end(), stack.begin(), stack.begin() + static_cast<std::ptrdiff_t>(kept));
  out->insert(out->end(), all.begin() + static_cast<std::ptrdiff_t>(at + stack.size()), all.end());
  const uint16_t header_size = static_cast<uint16_t>(out->size() - first);
  std::memcpy(out->data() + first + 6, &header_size, 2);
}

Result<void> decode_record(Bytes bytes, const AttrSet& attrs, Record* out) {
  ByteReader r(bytes, Endian::kLittle);
  PERF_READ(out->type, r.u32());
  PERF_READ(out->misc, r.u16());
  PERF_READ(out->size, r.u16());
  if (out->size < kHeaderSize || out->size != bytes.size()) return Error{ErrorCode::kBadLength, 6};
  out->bytes = bytes;
  out->attr.reset();
  out->sample_id = SampleId{};
  const Bytes body = bytes.subspan(kHeaderSize);
  const uint32_t type = out->type;
  if (type == kSample) {
    FW_TRY(std::optional<size_t> index, find_attr(body, true, attrs, kHeaderSize));
    out->attr = index;
    Sample& s = out->sample;
    reset(s);
    s.attr = *index;
    s.misc = out->misc;
    ByteReader br(body, Endian::kLittle, kHeaderSize);
    FW_CHECK(decode_sample(br, attrs.attrs()[*index], &s));
    return {};
  }
  if (type >= kHeaderAttr || type == 0) return {};  // the perf tool's own records: the caller's business
  // A kernel record: its sample_id trailer, then its own fields before it.
  Bytes fields = body;
  if (attrs.size() > 0) {
    FW_TRY(std::optional<size_t> index, find_attr(body, false, attrs, kHeaderSize));
    if (index && attrs.attrs()[*index].sample_id_all()) {
      const uint64_t t = attrs.attrs()[*index].sample_type;
      const size_t n = trailer_size(t);
      if (n > body.size()) return Error{ErrorCode::kTruncated, kHeaderSize};
      ByteReader tr(body.subspan(body.size() - n), Endian::kLittle, kHeaderSize + body.size() - n);
      FW_CHECK(read_sample_id(tr, t, &out->sample_id));
      fields = body.first(body.size() - n);
      out->attr = index;
    }
  }
  ByteReader f(fields, Endian::kLittle, kHeaderSize);
  switch (type) {
    case kMmap:
    case kMmap2: {
      Mmap& m = out->mmap;
      m = Mmap{};
      PERF_READ(m.pid, f.u32());
      PERF_READ(m.tid, f.u32());
      PERF_READ(m.address, f.u64());
      PERF_READ(m.length, f.u64());
      PERF_READ(m.pgoff, f.u64());
      if (type == kMmap2) {
        if (out->misc & misc::kMmapBuildId) {
          PERF_READ(m.build_id_size, f.u8());
          FW_CHECK(f.skip(3));
          FW_TRY(Bytes id, f.bytes(20));
          std::memcpy(m.build_id, id.data(), 20);
          if (m.build_id_size > 20) return Error{ErrorCode::kBadLength, kHeaderSize + 40};
          m.has_build_id = true;
        } else {
          PERF_READ(m.major, f.u32());
          PERF_READ(m.minor, f.u32());
          PERF_READ(m.inode, f.u64());
          PERF_READ(m.inode_generation, f.u64());
        }
        PERF_READ(m.prot, f.u32());
        PERF_READ(m.flags, f.u32());
      }
      PERF_READ(m.filename, f.cstring());
      m.executable = !(out->misc & misc::kMmapData) && (type == kMmap || (m.prot & 4 /* PROT_EXEC */));
      if (!out->sample_id.sample_type) {
        out->sample_id.pid = m.pid;
        out->sample_id.tid = m.tid;
      }
      return {};
    }
    case kComm: {
      Comm& c = out->comm;
      PERF_READ(c.pid, f.u32());
      PERF_READ(c.tid, f.u32());
      PERF_READ(c.comm, f.cstring());
      c.exec = out->misc & misc::kCommExec;
      return {};
    }
    case kFork:
    case kExit: {
      Task& t = out->task;
      PERF_READ(t.pid, f.u32());
      PERF_READ(t.ppid, f.u32());
      PERF_READ(t.tid, f.u32());
      PERF_READ(t.ptid, f.u32());
      PERF_READ(t.time, f.u64());
      return {};
    }
    case kLost:
      PERF_READ(out->lost.id, f.u64());
      PERF_READ(out->lost.lost, f.u64());
      return {};
    case kLostSamples:
      out->lost.id = out->sample_id.id;
      PERF_READ(out->lost.lost, f.u64());
      return {};
    case kThrottle:
    case kUnthrottle:
      PERF_READ(out->throttle.time, f.u64());
      PERF_READ(out->throttle.id, f.u64());
      PERF_READ(out->throttle.stream_id, f.u64());
      return {};
    default:
      return {};  // known to the kernel, not to this reader: skipped by its size
  }
}

std::string describe(const ReadError& e) {
  std::string s = "record " + std::to_string(e.record) + " at offset " + hex(e.record_offset) + ": ";
  if (!e.what.empty()) s += e.what + ": ";
  if (e.error.code == ErrorCode::kIoError) return s + std::strerror(static_cast<int>(e.error.offset));
  return s + to_string(e.error.code) + " at offset " + hex(e.error.offset);
}

// --- sources -----------------------------------------------------------------

FdSource::FdSource(int fd) : fd_(fd) {
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    seekable_ = true;
    size_ = static_cast<uint64_t>(st.st_size);
  }
}

Result<size_t> FdSource::read_at(uint64_t offset, void* out, size_t size) {
  if (!seekable_ && offset != position_) return Error{ErrorCode::kBadArgument, offset};
  size_t done = 0;
  while (done < size) {
    const ssize_t n = seekable_ ? pread(fd_, static_cast<uint8_t*>(out) + done, size - done,
                                        static_cast<off_t>(offset + done))
                                : read(fd_, static_cast<uint8_t*>(out) + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  if (!seekable_) position_ += done;
  return done;
}

Result<size_t> BufferSource::read_at(uint64_t offset, void* out, size_t size) {
  if (size == 0 || offset >= bytes_.size()) return size_t{0};  // memcpy must not see an empty vector's null
  const size_t n = std::min<uint64_t>(size, bytes_.size() - offset);
  std::memcpy(out, bytes_.data() + offset, n);
  return n;
}

// --- the file framing ---------------------------------------------------------

namespace {

// A window over the source that moves forward: what a record needs is read
// once, in large reads; what remains of the last read is kept.
class Window {
 public:
  static constexpr size_t kChunk = size_t{1} << 20;
  explicit Window(ByteSource& source) : source_(source) {}
  // The `size` bytes at `offset` (offset never behind the previous call's);
  // fewer at the end of the source.
  Result<Bytes> get(uint64_t offset, size_t size) {
    if (offset < start_ || offset + size > start_ + buffer_.size()) {
      // Keep what is already read from `offset` on.
      size_t keep = 0;
      if (offset >= start_ && offset < start_ + buffer_.size()) {
        keep = static_cast<size_t>(start_ + buffer_.size() - offset);
        std::memmove(buffer_.data(), buffer_.data() + (offset - start_), keep);
      }
      // A chunk, but no more than the source holds (a small file, a test's bytes).
      size_t chunk = kChunk;
      if (auto total = source_.size(); total && *total > offset && *total - offset < chunk)
        chunk = static_cast<size_t>(*total - offset);
      const size_t want = std::max(size, chunk);
      buffer_.resize(want);
      const uint64_t read_from = offset + keep;
      FW_TRY(size_t got, source_.read_at(read_from, buffer_.data() + keep, want - keep));
      buffer_.resize(keep + got);
      start_ = offset;
    }
    const size_t off = static_cast<size_t>(offset - start_);
    const size_t n = std::min(size, buffer_.size() - off);
    return Bytes(buffer_.data() + off, n);
  }

 private:
  ByteSource& source_;
  uint64_t start_ = 0;
  std::vector<uint8_t> buffer_;
};

// Reads exactly `size` bytes at `offset` (random access, header parts).
Result<std::vector<uint8_t>> read_exact(ByteSource& source, uint64_t offset, uint64_t size) {
  if (auto total = source.size(); total && (offset > *total || size > *total - offset))
    return Error{ErrorCode::kTruncated, offset};
  if (size > (uint64_t{1} << 32)) return Error{ErrorCode::kBadLength, offset};
  std::vector<uint8_t> out(static_cast<size_t>(size));
  if (size == 0) return out;
  FW_TRY(size_t got, source.read_at(offset, out.data(), out.size()));
  if (got != size) return Error{ErrorCode::kTruncated, offset + got};
  return out;
}

// perf_header_string: a u32 length, then that many bytes (NUL-padded).
Result<std::string> header_string(ByteReader& r) {
  FW_TRY(uint32_t len, r.u32());
  FW_TRY(Bytes b, r.bytes(len));
  const auto* p = reinterpret_cast<const char*>(b.data());
  return std::string(p, strnlen(p, b.size()));
}

// build_id_event records (HEADER_BUILD_ID; one per pipe-mode record).
Result<void> parse_build_ids(Bytes bytes, uint64_t base, std::vector<BuildIdEntry>* out) {
  ByteReader r(bytes, Endian::kLittle, base);
  while (!r.at_end()) {
    const uint64_t start = r.absolute_offset();
    FW_TRY(uint32_t type, r.u32());
    (void)type;
    FW_TRY(uint16_t misc_bits, r.u16());
    FW_TRY(uint16_t size, r.u16());
    if (size < 8 + 4 + 24) return Error{ErrorCode::kBadLength, start + 6};
    FW_TRY(ByteReader e, r.split(size - 8u));
    BuildIdEntry entry;
    entry.misc = misc_bits;
    FW_TRY(uint32_t pid, e.u32());
    entry.pid = static_cast<int32_t>(pid);
    FW_TRY(Bytes id, e.bytes(24));
    size_t id_size = 20;
    if (misc_bits & misc::kBuildIdSize) id_size = std::min<size_t>(id[20], 20);
    else while (id_size > 0 && id[id_size - 1] == 0) --id_size;  // perf pads a short id with zeros
    entry.build_id.assign(id.begin(), id.begin() + static_cast<std::ptrdiff_t>(id_size));
    const Bytes name = e.data().subspan(e.offset());
    const auto* p = reinterpret_cast<const char*>(name.data());
    entry.filename.assign(p, strnlen(p, name.size()));
    out->push_back(std::move(entry));
  }
  return {};
}

// HEADER_EVENT_DESC: the events' names.
Result<void> parse_event_desc(Bytes bytes, uint64_t base, AttrSet* attrs, std::vector<std::string>* names) {
  (void)attrs;
  ByteReader r(bytes, Endian::kLittle, base);
  FW_TRY(uint32_t nr, r.u32());
  FW_TRY(uint32_t attr_size, r.u32());
  for (uint32_t i = 0; i < nr; ++i) {
    FW_CHECK(r.skip(attr_size));
    FW_TRY(uint32_t nr_ids, r.u32());
    FW_TRY(std::string name, header_string(r));
    if (nr_ids > r.remaining() / 8) return r.error(ErrorCode::kBadLength);
    FW_CHECK(r.skip(8 * uint64_t{nr_ids}));
    names->push_back(std::move(name));
  }
  return {};
}

const char* feature_name(unsigned bit) {
  switch (bit) {
    case kFeatBuildId: return "BUILD_ID";
    case kFeatHostname: return "HOSTNAME";
    case kFeatOsrelease: return "OSRELEASE";
    case kFeatVersion: return "VERSION";
    case kFeatArch: return "ARCH";
    case kFeatCmdline: return "CMDLINE";
    case kFeatEventDesc: return "EVENT_DESC";
    case kFeatCompressed: return "COMPRESSED";
    default: return "feature";
  }
}

// One feature section's bytes into `info` (the ones that matter; others ignored).
Result<void> parse_feature(unsigned bit, Bytes bytes, uint64_t base, FileInfo* info) {
  ByteReader r(bytes, Endian::kLittle, base);
  switch (bit) {
    case kFeatBuildId: return parse_build_ids(bytes, base, &info->build_ids);
    case kFeatHostname: PERF_READ(info->hostname, header_string(r)); return {};
    case kFeatOsrelease: PERF_READ(info->osrelease, header_string(r)); return {};
    case kFeatVersion: PERF_READ(info->version, header_string(r)); return {};
    case kFeatArch: PERF_READ(info->arch, header_string(r)); return {};
    case kFeatCmdline: {
      FW_TRY(uint32_t nr, r.u32());
      if (nr > r.remaining() / 4) return r.error(ErrorCode::kBadLength);
      std::vector<std::string> args;
      for (uint32_t i = 0; i < nr; ++i) {
        FW_TRY(std::string a, header_string(r));
        args.push_back(std::move(a));
      }
      info->cmdline = std::move(args);
      return {};
    }
    case kFeatEventDesc: {
      std::vector<std::string> names;
      FW_CHECK(parse_event_desc(bytes, base, &info->attrs, &names));
      // In the attrs section's order, as perf writes both.
      std::vector<EventAttr> attrs = info->attrs.attrs();
      if (names.size() == attrs.size()) {
        AttrSet named;
        for (size_t i = 0; i < attrs.size(); ++i) {
          if (!names[i].empty()) attrs[i].name = names[i];
          named.add(std::move(attrs[i]));
        }
        info->attrs = std::move(named);
      }
      return {};
    }
    case kFeatCompressed: {
      FW_TRY(uint32_t version, r.u32());
      FW_TRY(uint32_t type, r.u32());
      FW_TRY(uint32_t level, r.u32());
      (void)version;
      (void)type;
      info->compression_level = level;
      return {};
    }
    default: return {};
  }
}

#if FRAMEWALK_PERF_ZSTD
struct ZstdStream {
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  ~ZstdStream() { ZSTD_freeDCtx(ctx); }
};
#endif

// Placeholders until read() gives the callbacks.
const auto no_info = [](const FileInfo&) { return true; };
const auto no_record = [](const Record&) { return true; };

}  // namespace

class PerfDataReader::Impl {
 public:
  explicit Impl(ByteSource& source) : source_(source), window_(source), on_info_(no_info), on_record_(no_record) {}

  const FileInfo& info() const { return info_; }
  ReadSummary run(FunctionRef<bool(const FileInfo&)> on_info, FunctionRef<bool(const Record&)> on_record) {
    on_info_ = on_info;
    on_record_ = on_record;
    if (!read_header()) return std::move(summary_);
    if (!info_.pipe && !on_info_(info_)) return std::move(summary_);
    read_records();
    return std::move(summary_);
  }

 private:
  bool fail(Error e, std::string what, uint64_t record_offset) {
    // Inside a COMPRESSED record: that record's index (its offset is given).
    summary_.error = ReadError{e, in_compressed_ ? compressed_index_ : index_, record_offset, std::move(what)};
    return false;
  }

  bool read_header() {
    auto head = read_exact(source_, 0, kPipeHeaderSize);
    if (!head) return fail(head.error(), "file header", 0);
    const uint64_t magic = load64(head->data());
    const uint64_t header_size = load64(head->data() + 8);
    if (magic != kMagic) {
      if (__builtin_bswap64(magic) == kMagic)
        return fail(Error{ErrorCode::kUnsupportedElf, 0}, "a big-endian perf.data (not supported)", 0);
      if (magic == 0x454c494652455000ull || magic == 0x0050455246494c45ull)
        return fail(Error{ErrorCode::kUnsupportedElf, 0}, "perf.data version 1 (PERFFILE; not supported)", 0);
      return fail(Error{ErrorCode::kBadElf, 0}, "file header: not a perf.data file (no PERFILE2 magic)", 0);
    }
    if (header_size == kPipeHeaderSize) {
      info_.pipe = true;
      data_offset_ = kPipeHeaderSize;
      data_end_ = ~uint64_t{0};
      return true;
    }
    if (header_size < kFileHeaderSize) return fail(Error{ErrorCode::kBadLength, 8}, "file header: its size", 0);
    auto h = read_exact(source_, 0, kFileHeaderSize);
    if (!h) return fail(h.error(), "file header", 0);
    ByteReader r(*h, Endian::kLittle);
    (void)r.skip(16);
    const uint64_t attr_size = r.u64().value();
    const uint64_t attrs_offset = r.u64().value(), attrs_size = r.u64().value();
    info_.data_offset = r.u64().value();
    info_.data_size = r.u64().value();
    (void)r.skip(16);  // event_types
    for (uint64_t& w : info_.features) w = r.u64().value();

    // Attributes: perf_file_attr { attr (attr_size - 16 bytes); ids section }.
    if (attrs_size > 0) {
      if (attr_size < kAttrSizeVer0 + 16 || attr_size > kMaxAttrSize + 16)
        return fail(Error{ErrorCode::kBadLength, 16}, "file header: attr_size", 0);
      if (attrs_size % attr_size != 0 || attrs_size / attr_size > 4096)
        return fail(Error{ErrorCode::kBadLength, 32}, "file header: the attrs section's size", 0);
      auto attrs = read_exact(source_, attrs_offset, attrs_size);
      if (!attrs) return fail(attrs.error(), "attrs section", attrs_offset);
      for (uint64_t off = 0; off < attrs_size; off += attr_size) {
        const Bytes one = Bytes(*attrs).subspan(off, attr_size);
        auto attr = parse_event_attr(one.first(attr_size - 16));
        if (!attr) return fail(Error{attr.error().code, attrs_offset + off + attr.error().offset}, "attrs section", attrs_offset);
        const uint64_t ids_offset = load64(one.data() + attr_size - 16), ids_size = load64(one.data() + attr_size - 8);
        if (ids_size % 8 != 0 || ids_size / 8 > kMaxIds)
          return fail(Error{ErrorCode::kBadLength, attrs_offset + off + attr_size - 8}, "attrs section: an ids size", attrs_offset);
        auto ids = read_exact(source_, ids_offset, ids_size);
        if (!ids) return fail(ids.error(), "attrs section: the ids of event " + std::to_string(off / attr_size), attrs_offset);
        for (size_t i = 0; i < ids_size / 8; ++i) attr->ids.push_back(load64(ids->data() + 8 * i));
        info_.attrs.add(std::move(*attr));
      }
    }

    // Features: one section descriptor per bit set, after the data section.
    const uint64_t feat_offset = info_.data_offset + info_.data_size;
    unsigned count = 0;
    for (unsigned bit = 0; bit < kFeatBits; ++bit)
      if ((info_.features[bit / 64] >> (bit % 64)) & 1) ++count;
    if (count > 0 && feat_offset >= info_.data_offset) {
      auto table = read_exact(source_, feat_offset, uint64_t{count} * 16);
      if (!table) {
        info_.feature_problems.push_back("feature table: " + std::string(to_string(table.error().code)) +
                                         " at offset " + hex(table.error().offset));
      } else {
        unsigned i = 0;
        // EVENT_DESC renames the attributes: read it after the others (it comes
        // after BUILD_ID anyway; the order matters only for clarity).
        for (unsigned bit = 0; bit < kFeatBits; ++bit) {
          if (!((info_.features[bit / 64] >> (bit % 64)) & 1)) continue;
          const uint64_t off = load64(table->data() + 16 * i), size = load64(table->data() + 16 * i + 8);
          ++i;
          if (bit != kFeatBuildId && bit != kFeatHostname && bit != kFeatOsrelease && bit != kFeatVersion &&
              bit != kFeatArch && bit != kFeatCmdline && bit != kFeatEventDesc && bit != kFeatCompressed)
            continue;
          auto bytes = read_exact(source_, off, size);
          Result<void> parsed = bytes ? parse_feature(bit, *bytes, off, &info_) : Result<void>(bytes.error());
          if (!parsed)
            info_.feature_problems.push_back(std::string(feature_name(bit)) + ": " + to_string(parsed.error().code) +
                                             " at offset " + hex(parsed.error().offset));
        }
      }
    }
    data_offset_ = info_.data_offset;
    data_end_ = info_.data_offset + info_.data_size;
    if (info_.data_size == 0 && count == 0) {
      // A file whose writer did not finish (it writes the data size and the
      // features last): its records run to the end.
      if (auto size = source_.size(); size && *size > info_.data_offset) data_end_ = *size;
    }
    return true;
  }

  // Handles one record of the stream (or of a COMPRESSED record's contents).
  bool handle(Bytes bytes, uint64_t offset) {
    const uint32_t type = load32(bytes.data());
    if (type == kHeaderAttr) {
      const Bytes body = bytes.subspan(kHeaderSize);
      if (body.size() < kAttrSizeVer0) return fail(Error{ErrorCode::kTruncated, offset + kHeaderSize}, "HEADER_ATTR", offset);
      uint32_t size = load32(body.data() + 4);
      if (size == 0) size = kAttrSizeVer0;
      if (size < kAttrSizeVer0 || size > body.size())
        return fail(Error{ErrorCode::kBadLength, offset + kHeaderSize + 4}, "HEADER_ATTR: its attr's size", offset);
      auto attr = parse_event_attr(body.first(size));
      if (!attr) return fail(Error{attr.error().code, offset + kHeaderSize + attr.error().offset}, "HEADER_ATTR", offset);
      for (size_t i = size; i + 8 <= body.size(); i += 8) attr->ids.push_back(load64(body.data() + i));
      // The same attributes again: more ids of the event before (an event
      // with more instances than one record's 64 KiB hold).
      const Bytes raw = body.first(size);
      if (info_.attrs.size() > 0 && raw.size() == last_attr_.size() &&
          std::equal(raw.begin(), raw.end(), last_attr_.begin())) {
        info_.attrs.add_ids(info_.attrs.size() - 1, attr->ids);
      } else {
        last_attr_.assign(raw.begin(), raw.end());
        info_.attrs.add(std::move(*attr));
      }
    } else if (type == kHeaderFeature) {
      if (bytes.size() < kHeaderSize + 8) return fail(Error{ErrorCode::kTruncated, offset + kHeaderSize}, "HEADER_FEATURE", offset);
      const uint64_t bit = load64(bytes.data() + kHeaderSize);
      if (bit < kFeatBits) {
        auto parsed = parse_feature(static_cast<unsigned>(bit), bytes.subspan(kHeaderSize + 8), offset + kHeaderSize + 8, &info_);
        if (!parsed)
          info_.feature_problems.push_back(std::string(feature_name(static_cast<unsigned>(bit))) + ": " +
                                           to_string(parsed.error().code) + " at offset " + hex(parsed.error().offset));
      }
    } else if (type == kHeaderBuildId) {
      if (auto parsed = parse_build_ids(bytes, offset, &info_.build_ids); !parsed)
        return fail(parsed.error(), "HEADER_BUILD_ID", offset);
    } else if (info_.pipe && !info_sent_) {
      info_sent_ = true;
      if (!on_info_(info_)) return false;
    }
    // Pipe mode: what comes before on_info is in the FileInfo it gets.
    if (info_.pipe && !info_sent_) {
      ++index_;
      return true;
    }
    if (type == kCompressed) return decompress(bytes, offset);
    if (auto decoded = decode_record(bytes, info_.attrs, &record_); !decoded) {
      // Inside a COMPRESSED record the offset is within the decompressed record.
      if (in_compressed_)
        return fail(decoded.error(), "COMPRESSED: the " + record_type_name(type) + " record inside it (offset within that record)", offset);
      return fail(Error{decoded.error().code, offset + decoded.error().offset}, record_type_name(type), offset);
    }
    record_.index = index_;
    record_.file_offset = offset;
    ++summary_.records;
    ++index_;
    return on_record_(record_);
  }

  static uint32_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }

  // PERF_RECORD_COMPRESSED: a zstd stream over the records of one or more
  // ring-buffer flushes; a record may continue in the next COMPRESSED record.
  bool decompress(Bytes bytes, uint64_t offset) {
    ++summary_.compressed_records;
    const uint64_t own_index = index_++;
    compressed_index_ = own_index;
    in_compressed_ = true;
    const bool go_on = decompress_records(bytes, offset);
    in_compressed_ = false;
    return go_on;
  }

  bool decompress_records(Bytes bytes, uint64_t offset) {
#if FRAMEWALK_PERF_ZSTD
    if (!zstd_) zstd_ = std::make_unique<ZstdStream>();
    constexpr size_t kOut = size_t{256} << 10;
    ZSTD_inBuffer in{bytes.data() + kHeaderSize, bytes.size() - kHeaderSize, 0};
    uint64_t produced = 0;
    bool more = true;
    while (in.pos < in.size || more) {
      if (pending_.size() < pending_used_ + kOut) pending_.resize(pending_used_ + kOut);
      ZSTD_outBuffer out{pending_.data() + pending_used_, kOut, 0};
      const size_t rc = ZSTD_decompressStream(zstd_->ctx, &out, &in);
      if (ZSTD_isError(rc))
        return fail(Error{ErrorCode::kDecompressFailed, offset + kHeaderSize + in.pos}, "COMPRESSED", offset);
      pending_used_ += out.pos;
      produced += out.pos;
      if (produced > kMaxDecompressed)
        return fail(Error{ErrorCode::kBadLength, offset}, "COMPRESSED: over 64 MiB decompressed", offset);
      more = out.pos == out.size;  // the output was full: there may be more to flush
      // Deliver the records complete so far.
      size_t pos = 0;
      while (pending_used_ - pos >= kHeaderSize) {
        uint16_t size;
        std::memcpy(&size, pending_.data() + pos + 6, 2);
        if (size < kHeaderSize)
          return fail(Error{ErrorCode::kBadLength, offset}, "COMPRESSED: a record of size " + std::to_string(size) + " inside", offset);
        if (pending_used_ - pos < size) break;
        const uint32_t type = load32(pending_.data() + pos);
        if (type == kCompressed)
          return fail(Error{ErrorCode::kBadLength, offset}, "COMPRESSED: a compressed record inside", offset);
        if (!handle(Bytes(pending_.data() + pos, size), offset)) return false;
        pos += size;
      }
      std::memmove(pending_.data(), pending_.data() + pos, pending_used_ - pos);
      pending_used_ -= pos;
      if (!more && in.pos == in.size) break;
    }
    return true;
#else
    (void)bytes;
    return fail(Error{ErrorCode::kNoDecompressor, offset}, "COMPRESSED (built without zstd)", offset);
#endif
  }

  void read_records() {
    uint64_t offset = data_offset_;
    while (offset < data_end_) {
      auto head = window_.get(offset, kHeaderSize);
      if (!head) {
        fail(head.error(), "reading", offset);
        return;
      }
      if (head->empty() && info_.pipe) break;  // the end of the stream
      if (head->size() < kHeaderSize) {
        fail(Error{ErrorCode::kTruncated, offset + head->size()}, "record header (the file ends)", offset);
        return;
      }
      // Read now: the next get() may move the window's buffer under `head`.
      const uint32_t type = load32(head->data());
      uint16_t size;
      std::memcpy(&size, head->data() + 6, 2);
      if (size < kHeaderSize) {
        fail(Error{ErrorCode::kBadLength, offset + 6}, "a record of size " + std::to_string(size), offset);
        return;
      }
      if (size > data_end_ - offset) {
        fail(Error{ErrorCode::kBadLength, offset + 6},
             record_type_name(type) + " of size " + std::to_string(size) + " past the data section's end", offset);
        return;
      }
      auto bytes = window_.get(offset, size);
      if (!bytes) {
        fail(bytes.error(), "reading", offset);
        return;
      }
      if (bytes->size() < size) {
        fail(Error{ErrorCode::kTruncated, offset + bytes->size()},
             record_type_name(type) + " of size " + std::to_string(size) + " (the file ends)", offset);
        return;
      }
      uint64_t next = offset + size;
      // AUXTRACE records carry `size` bytes of trace data after themselves.
      uint64_t trace = 0;
      if (type == kAuxtrace && size >= kHeaderSize + 8) {
        trace = load64(bytes->data() + kHeaderSize);
        if (trace > data_end_ - next) {
          fail(Error{ErrorCode::kBadLength, offset + kHeaderSize}, "AUXTRACE: its trace data runs past the data section's end",
               offset);
          return;
        }
      }
      if (!handle(*bytes, offset)) return;
      if (trace) {
        // Read past (a pipe cannot seek), in chunks.
        for (uint64_t at = next; at < next + trace;) {
          const size_t n = static_cast<size_t>(std::min<uint64_t>(next + trace - at, Window::kChunk));
          auto skipped = window_.get(at, n);
          if (!skipped) {
            fail(skipped.error(), "AUXTRACE: its trace data", offset);
            return;
          }
          if (skipped->size() < n) {
            fail(Error{ErrorCode::kTruncated, at + skipped->size()}, "AUXTRACE: its trace data (the file ends)", offset);
            return;
          }
          at += n;
        }
      }
      offset = next + trace;
    }
    if (pending_used_ != 0 && !summary_.error)
      fail(Error{ErrorCode::kTruncated, offset}, "COMPRESSED: the stream ends inside a record", offset);
    if (info_.pipe && !info_sent_) {
      info_sent_ = true;
      on_info_(info_);
    }
  }

  ByteSource& source_;
  Window window_;
  FunctionRef<bool(const FileInfo&)> on_info_;
  FunctionRef<bool(const Record&)> on_record_;
  FileInfo info_;
  std::vector<uint8_t> last_attr_;  // the last HEADER_ATTR's attr bytes (pipe mode)
  bool info_sent_ = false;
  bool in_compressed_ = false;
  uint64_t compressed_index_ = 0;
  uint64_t data_offset_ = 0, data_end_ = 0;
  uint64_t index_ = 0;
  Record record_;
  ReadSummary summary_;
  std::vector<uint8_t> pending_;
  size_t pending_used_ = 0;
#if FRAMEWALK_PERF_ZSTD
  std::unique_ptr<ZstdStream> zstd_;
#endif
};

PerfDataReader::PerfDataReader(ByteSource& source) : impl_(std::make_unique<Impl>(source)) {}
PerfDataReader::~PerfDataReader() = default;
ReadSummary PerfDataReader::read(FunctionRef<bool(const FileInfo&)> on_info, FunctionRef<bool(const Record&)> on_record) {
  return impl_->run(on_info, on_record);
}
const FileInfo& PerfDataReader::info() const { return impl_->info(); }

ReadSummary read_perf_data(ByteSource& source, FunctionRef<bool(const FileInfo&)> on_info,
                           FunctionRef<bool(const Record&)> on_record) {
  PerfDataReader reader(source);
  return reader.read(on_info, on_record);
}

}  // namespace framewalk::perf
