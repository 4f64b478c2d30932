// perf.data as `perf record` writes it, read as a stream: the file header,
// the attributes of each event (perf_event_attr of whatever size perf wrote,
// with the sample ids that name it), the feature sections that matter to an
// unwinder (build-ids, command line, host, kernel release, machine), then
// the data section one record at a time. Pipe mode (`perf record -o -`)
// too: its attributes and features come as records.
//
// Two layers: decode_record() turns the bytes of one record into fields,
// given the events' attributes: the same bytes a perf_event_open ring buffer
// holds, so a live recorder feeds it its records. read_perf_data() is the
// file framing around it: it reads the data section through a buffer of one
// record (64 KiB at most; PERF_RECORD_COMPRESSED's are decompressed into a
// buffer of their own), so a file of millions of samples needs no memory in
// proportion. A record's fields point into that buffer: valid during the
// callback only.
//
// Errors are values. A damaged file ends the stream with an error naming the
// record's index and file offset; every record before it was delivered.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/function_ref.hpp"
#include "base/result.hpp"

namespace framewalk::perf {

// The magic of perf.data ("PERFILE2"), as its first eight bytes read little-endian.
inline constexpr uint64_t kMagic = 0x32454c4946524550ull;
// Whether `bytes` start like a perf.data file.
bool is_perf_data(Bytes bytes);

// Record types (perf_event.h's, then the perf tool's own, from 64).
enum RecordType : uint32_t {
  kMmap = 1,
  kLost = 2,
  kComm = 3,
  kExit = 4,
  kThrottle = 5,
  kUnthrottle = 6,
  kFork = 7,
  kRead = 8,
  kSample = 9,
  kMmap2 = 10,
  kAux = 11,
  kItraceStart = 12,
  kLostSamples = 13,
  kSwitch = 14,
  kSwitchCpuWide = 15,
  kNamespaces = 16,
  kKsymbol = 17,
  kBpfEvent = 18,
  kCgroup = 19,
  kTextPoke = 20,
  kAuxOutputHwId = 21,
  kHeaderAttr = 64,
  kHeaderEventType = 65,
  kHeaderTracingData = 66,
  kHeaderBuildId = 67,
  kFinishedRound = 68,
  kIdIndex = 69,
  kAuxtraceInfo = 70,
  kAuxtrace = 71,
  kAuxtraceError = 72,
  kThreadMap = 73,
  kCpuMap = 74,
  kStatConfig = 75,
  kStat = 76,
  kStatRound = 77,
  kEventUpdate = 78,
  kTimeConv = 79,
  kHeaderFeature = 80,
  kCompressed = 81,
  kFinishedInit = 82,
};
// "SAMPLE", "MMAP2", ...; "type N" for others.
std::string record_type_name(uint32_t type);

// perf_event_attr.sample_type bits.
namespace sample {
inline constexpr uint64_t kIp = 1u << 0, kTid = 1u << 1, kTime = 1u << 2, kAddr = 1u << 3, kRead = 1u << 4,
                          kCallchain = 1u << 5, kId = 1u << 6, kCpu = 1u << 7, kPeriod = 1u << 8,
                          kStreamId = 1u << 9, kRaw = 1u << 10, kBranchStack = 1u << 11, kRegsUser = 1u << 12,
                          kStackUser = 1u << 13, kWeight = 1u << 14, kDataSrc = 1u << 15,
                          kIdentifier = 1u << 16, kTransaction = 1u << 17, kRegsIntr = 1u << 18,
                          kPhysAddr = 1u << 19, kAux = 1u << 20, kCgroup = 1u << 21, kDataPageSize = 1u << 22,
                          kCodePageSize = 1u << 23, kWeightStruct = 1u << 24;
}  // namespace sample

// read_format bits.
namespace read_format {
inline constexpr uint64_t kTotalTimeEnabled = 1, kTotalTimeRunning = 2, kId = 4, kGroup = 8, kLost = 16;
}

// perf_event_header.misc bits that change a record's layout or meaning.
namespace misc {
inline constexpr uint16_t kCpuModeMask = 7, kKernel = 1, kUser = 2, kHypervisor = 3, kGuestKernel = 4,
                          kGuestUser = 5;
inline constexpr uint16_t kMmapData = 1u << 13;     // MMAP/MMAP2: a data mapping (not executable)
inline constexpr uint16_t kCommExec = 1u << 13;     // COMM: the name an exec gave
inline constexpr uint16_t kMmapBuildId = 1u << 14;  // MMAP2: a build-id in place of device and inode
inline constexpr uint16_t kBuildIdSize = 1u << 15;  // a build-id event whose id has its size
inline constexpr uint16_t kSwitchOut = 1u << 13;         // SWITCH: leaving the CPU (else coming back)
inline constexpr uint16_t kSwitchOutPreempt = 1u << 14;  // SWITCH out: preempted, still runnable
}  // namespace misc

// Callchain context markers (PERF_CONTEXT_*): the frames after one are of that context.
namespace context {
inline constexpr uint64_t kHypervisor = static_cast<uint64_t>(-32), kKernel = static_cast<uint64_t>(-128),
                          kUser = static_cast<uint64_t>(-512), kGuest = static_cast<uint64_t>(-2048),
                          kGuestKernel = static_cast<uint64_t>(-2176), kGuestUser = static_cast<uint64_t>(-2560),
                          kMax = static_cast<uint64_t>(-4095);
}  // namespace context

// What decoding needs of one event's perf_event_attr (and the rest, for a report).
struct EventAttr {
  uint32_t type = 0;
  uint32_t size = 0;  // as the file gives it (0: the first version's 64)
  uint64_t config = 0;
  uint64_t sample_period = 0;  // or the frequency, when `freq`
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t flags = 0;  // the bit fields after read_format
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;
  uint32_t sample_stack_user = 0;
  int32_t clockid = 0;  // the samples' clock, with use_clockid (else the kernel's perf clock)
  uint64_t sample_regs_intr = 0;
  std::vector<uint64_t> ids;  // the sample ids of its instances
  std::string name;           // from HEADER_EVENT_DESC; else made from type and config

  bool freq() const { return (flags >> 10) & 1; }
  bool sample_id_all() const { return (flags >> 18) & 1; }
  bool exclude_callchain_user() const { return (flags >> 22) & 1; }
  bool use_clockid() const { return (flags >> 25) & 1; }
};

// Parses a perf_event_attr of any size (`bytes` is the whole attr; its size
// field must agree with what the caller gives); fields newer than the bytes
// stay 0.
Result<EventAttr> parse_event_attr(Bytes bytes);

// The events of a file (or of a recorder's perf_event_open calls) and how to
// tell which one a record belongs to.
class AttrSet {
 public:
  // Adds an event; its ids must be filled. Returns its index.
  size_t add(EventAttr attr);
  // More sample ids of the event at `index`.
  void add_ids(size_t index, std::span<const uint64_t> ids);
  const std::vector<EventAttr>& attrs() const { return attrs_; }
  size_t size() const { return attrs_.size(); }
  // The event a sample id names (nullopt: none).
  std::optional<size_t> by_id(uint64_t id) const;

 private:
  std::vector<EventAttr> attrs_;
  std::vector<std::pair<uint64_t, size_t>> ids_;  // sorted by id
};

// The fields of a non-sample record's sample_id trailer (sample_id_all), or a
// sample's same fields. `sample_type` says which are there.
struct SampleId {
  uint64_t sample_type = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  bool has_time() const { return sample_type & sample::kTime; }
};

struct Sample {
  size_t attr = 0;  // index into the AttrSet
  uint64_t sample_type = 0;
  uint16_t misc = 0;  // cpu mode (misc::kCpuModeMask) and more
  uint64_t id = 0, ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0, addr = 0, stream_id = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  uint64_t weight = 0;  // WEIGHT, or WEIGHT_STRUCT's 64 bits
  uint64_t data_src = 0, transaction = 0, phys_addr = 0, cgroup = 0, data_page_size = 0, code_page_size = 0;
  // CALLCHAIN: `callchain_size` words at `callchain` (not aligned: read with callchain_at).
  Bytes callchain;
  size_t callchain_size = 0;
  uint64_t callchain_at(size_t i) const {
    if (i >= callchain_size) return 0;
    uint64_t v;
    std::memcpy(&v, callchain.data() + 8 * i, 8);
    return v;
  }
  Bytes raw;           // RAW
  Bytes read_values;   // READ (not decoded)
  Bytes branch_stack;  // BRANCH_STACK (not decoded)
  Bytes aux;           // AUX
  // REGS_USER: the ABI word (0: none sampled, 1: 32-bit, 2: 64-bit) and one
  // value per bit of the event's sample_regs_user, lowest bit first.
  uint64_t regs_user_abi = 0;
  uint64_t regs_user_mask = 0;
  uint64_t regs_user[64] = {};
  size_t regs_user_count = 0;
  uint64_t regs_intr_abi = 0;
  Bytes regs_intr;  // REGS_INTR values (not decoded)
  // STACK_USER: the bytes copied from the user stack pointer up, of which
  // `stack_dyn_size` were really on the stack.
  Bytes stack_user;
  uint64_t stack_dyn_size = 0;
  // The valid part of the stack copy.
  Bytes stack() const { return stack_user.first(stack_dyn_size < stack_user.size() ? stack_dyn_size : stack_user.size()); }
};

// MMAP and MMAP2.
struct Mmap {
  uint32_t pid = 0, tid = 0;
  uint64_t address = 0, length = 0, pgoff = 0;
  // MMAP2 only.
  uint32_t major = 0, minor = 0;
  uint64_t inode = 0, inode_generation = 0;
  uint32_t prot = 0, flags = 0;
  bool has_build_id = false;  // MMAP2 with misc::kMmapBuildId
  uint8_t build_id_size = 0;
  uint8_t build_id[20] = {};
  std::string_view filename;
  bool executable = false;  // not a data mapping (and PROT_EXEC for MMAP2)
};

struct Comm {
  uint32_t pid = 0, tid = 0;
  std::string_view comm;
  bool exec = false;
};

// FORK and EXIT.
struct Task {
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
};

// LOST, LOST_SAMPLES: how many were lost (LOST: of the event `id`).
struct Lost {
  uint64_t id = 0;
  uint64_t lost = 0;
};

// THROTTLE, UNTHROTTLE.
struct Throttle {
  uint64_t time = 0, id = 0, stream_id = 0;
};

// One record: its header, where it was, and its fields by type (those of
// other types stay default).
struct Record {
  uint32_t type = 0;
  uint16_t misc = 0;
  uint16_t size = 0;
  uint64_t index = 0;        // its place in the stream (0: the first)
  uint64_t file_offset = 0;  // where it starts (inside a COMPRESSED record: that record's offset)
  Bytes bytes;               // the whole record, header included
  std::optional<size_t> attr;  // the event it belongs to, when it says
  SampleId sample_id;          // the sample_id trailer (non-sample records with sample_id_all)
  Sample sample;
  Mmap mmap;
  Comm comm;
  Task task;
  Lost lost;
  Throttle throttle;
};

// Decodes one record (`bytes`: header and body, exactly header.size bytes)
// by the events' attributes into `out` (reused from record to record: no
// allocation). Unknown and perf-tool types are left undecoded. The error's
// offset is relative to the record's first byte.
Result<void> decode_record(Bytes bytes, const AttrSet& attrs, Record* out);

// Appends the bytes of a decoded record to `out`, a SAMPLE's user stack
// copy cut to the bytes the kernel says are valid (stack_dyn_size, rounded
// up to 8; the header's size and the copy's size word changed with it):
// the kernel writes all sample_stack_user bytes however shallow the stack,
// and every copy of the record would carry them. Any other record, and a
// sample whose copy is all valid, as it is.
void append_compacted(const Record& r, std::vector<uint8_t>* out);

// HEADER_BUILD_ID entries: the build-id of each file perf saw samples in.
struct BuildIdEntry {
  int32_t pid = 0;
  uint16_t misc = 0;  // cpu mode: kernel or user
  std::vector<uint8_t> build_id;
  std::string filename;
};

// What the file says before its records.
struct FileInfo {
  bool pipe = false;
  uint64_t data_offset = 0, data_size = 0;
  uint64_t features[4] = {};  // the feature bitmap
  AttrSet attrs;
  std::vector<BuildIdEntry> build_ids;
  std::vector<std::string> cmdline;
  std::string hostname, osrelease, arch, version;
  uint64_t compression_level = 0;  // HEADER_COMPRESSED, when there
  // Features that could not be read (they are optional): "BUILD_ID: truncated at offset 0x...".
  std::vector<std::string> feature_problems;
};

// Where a stream of records ended in an error.
struct ReadError {
  Error error;            // the code, and the file offset where it was met
  uint64_t record = 0;    // the index of the record that could not be read
  uint64_t record_offset = 0;  // where that record starts
  std::string what;       // what was being read
};
// "record 12 at offset 0x1234: sample: truncated at offset 0x1290 (stack_user)".
std::string describe(const ReadError& error);

struct ReadSummary {
  uint64_t records = 0;  // delivered
  uint64_t compressed_records = 0;
  std::optional<ReadError> error;
};

// Where the bytes come from: a file (random access) or a pipe (forward only).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes at `offset`; returns how many (0: the end), or
  // an I/O error (offset: errno). A forward-only source may refuse an
  // offset behind what it has read (kBadArgument).
  virtual Result<size_t> read_at(uint64_t offset, void* out, size_t size) = 0;
  // The size when known (a file).
  virtual std::optional<uint64_t> size() const = 0;
};

// A file, read with pread; a pipe or terminal, forward only.
class FdSource final : public ByteSource {
 public:
  explicit FdSource(int fd);  // not closed
  Result<size_t> read_at(uint64_t offset, void* out, size_t size) override;
  std::optional<uint64_t> size() const override { return size_; }

 private:
  int fd_;
  bool seekable_ = false;
  std::optional<uint64_t> size_;
  uint64_t position_ = 0;  // for a pipe
};

class BufferSource final : public ByteSource {
 public:
  explicit BufferSource(Bytes bytes) : bytes_(bytes) {}
  Result<size_t> read_at(uint64_t offset, void* out, size_t size) override;
  std::optional<uint64_t> size() const override { return bytes_.size(); }

 private:
  Bytes bytes_;
};

// Reads the header, attributes and features (file mode), then calls
// `on_info` once (pipe mode: when the first record that is not an attribute
// or a feature comes; attributes added later go into the same FileInfo),
// then `on_record` for each record of the data section (pipe mode: the
// attribute, feature and build-id records before on_info are not
// delivered, they are in its FileInfo; later ones are), the contents of
// COMPRESSED records in their place, in file order. Either callback returns
// false to stop. The header's own errors come back as the summary's error
// with record 0 and `what` naming the part.
ReadSummary read_perf_data(ByteSource& source, FunctionRef<bool(const FileInfo&)> on_info,
                           FunctionRef<bool(const Record&)> on_record);

// The same, with the FileInfo kept after the stream ends (pipe mode adds to
// it as it goes: build-ids come last).
class PerfDataReader {
 public:
  explicit PerfDataReader(ByteSource& source);
  ~PerfDataReader();
  PerfDataReader(const PerfDataReader&) = delete;
  PerfDataReader& operator=(const PerfDataReader&) = delete;
  // Once.
  ReadSummary read(FunctionRef<bool(const FileInfo&)> on_info, FunctionRef<bool(const Record&)> on_record);
  const FileInfo& info() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace framewalk::perf
