// The recording file, `.fwprof`: a SampleProfile on disk, written by the
// recorder as it goes and read by `framewalk report` (docs/report.md has the
// layout). An 8-byte header ("FWPROF" 0x00 VERSION), then self-delimiting
// chunks, each complete on its own:
//
//   u8 type, u8 flags (bit 0: payload zstd-compressed), u32 payload size,
//   u32 CRC-32 of the payload as stored, payload
//
// A chunk only appends to the tables (strings, modules, frames, symbols,
// stack nodes, threads, samples) or replaces the accounting, and refers only
// to ids an earlier chunk (or itself) defined; the last chunk, kEnd, holds
// the totals. A recording cut short leaves a readable prefix: the reader
// keeps every chunk before the first damaged one and says where that was.
//
// Samples are varints: a flags byte (kind, and which of thread, CPU and
// weight differ from the previous sample's), the leaf node, the time since
// the previous sample.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/byte_reader.hpp"
#include "profile/sample_profile.hpp"

namespace framewalk::profile {

inline constexpr char kProfileFileMagic[6] = {'F', 'W', 'P', 'R', 'O', 'F'};
inline constexpr uint8_t kProfileFileVersion = 1;
inline constexpr size_t kProfileFileHeaderSize = 8;
inline constexpr size_t kChunkHeaderSize = 10;
// The largest chunk payload a reader takes (decompressed, too).
inline constexpr uint32_t kMaxChunkPayload = 64u << 20;

enum class ChunkType : uint8_t {
  kStrings = 1,
  kModules = 2,
  kFrames = 3,
  kSymbols = 4,
  kNodes = 5,
  kThreads = 6,
  kSamples = 7,
  kInfo = 8,
  kAccounting = 9,
  kEnd = 10,
};

// True when `data` starts with the file's magic (any version).
bool is_profile_file(Bytes data);

enum class ProfileFileErrc : uint8_t {
  kBadMagic,            // not a .fwprof file
  kUnsupportedVersion,  // value: the version
  kTruncated,           // a chunk or a field runs past its end
  kBadChecksum,         // the payload's CRC-32 differs (value: the computed one)
  kBadChunkType,        // value: the type
  kChunkTooLarge,       // value: the size
  kBadId,               // a string, module, frame, node or thread id not defined before (value: the id)
  kBadCount,            // a count larger than its payload can hold (value: the count)
  kTrailingBytes,       // a payload longer than its entries
  kCompressed,          // a compressed chunk and no zstd in this build, or a bad zstd frame
  kTotalsDiffer,        // the end chunk's totals are not what the chunks held (value: the samples read)
};
const char* to_string(ProfileFileErrc code) noexcept;

struct ProfileFileError {
  ProfileFileErrc code = ProfileFileErrc::kTruncated;
  uint64_t offset = 0;  // file offset of the chunk (or field) at fault
  uint64_t value = 0;
  uint8_t chunk = 0;  // the chunk's type, when known
};
// "bad checksum in the samples chunk at offset 0x1234", and so on.
std::string describe(const ProfileFileError& e);

struct ProfileFileRead {
  SampleProfile profile;
  bool complete = false;  // the end chunk was read
  size_t chunks = 0;
  // Set when reading stopped before the end of the file: the profile holds
  // every chunk before this one.
  std::optional<ProfileFileError> damage;
};

// Reads what the file holds. Fails (returns the error) only when the header
// is not a .fwprof's; a damaged chunk ends the reading with `damage` set.
struct ProfileFileResult {
  std::optional<ProfileFileRead> read;
  ProfileFileError error;
};
ProfileFileResult read_profile_file(Bytes data);

struct ProfileWriterOptions {
  bool compress = false;  // zstd (needs FRAMEWALK_COMPRESSION)
  int compression_level = 3;
  size_t samples_per_chunk = 65536;  // at most (a recording cut short loses at most one chunk's)
};

// Writes a SampleProfile incrementally: `flush` appends to `out` chunks for
// what the profile gained since the last flush (the recorder writes them
// out and may be killed any time after); `finish` flushes and writes the end
// chunk. The profile's tables must only grow between calls.
class ProfileFileWriter {
 public:
  explicit ProfileFileWriter(ProfileWriterOptions options = {}) : options_(options) {}
  void flush(const SampleProfile& p, std::string* out);
  void finish(const SampleProfile& p, std::string* out);

 private:
  void chunk(ChunkType type, const std::string& payload, std::string* out);

  ProfileWriterOptions options_;
  bool header_ = false, info_written_ = false;
  // What was written; string 0, the empty one, is in every profile.
  size_t strings_ = 1, modules_ = 0, frames_ = 0, named_ = 0, nodes_ = 0, threads_ = 0, samples_ = 0;
  uint64_t last_time_ = 0;
  uint32_t last_tid_ = 0;
  uint16_t last_cpu_ = 0;
  uint64_t last_weight_ = 0;
};

// The whole file at once.
std::string write_profile_file(const SampleProfile& p, ProfileWriterOptions options = {});

}  // namespace framewalk::profile
