// gmon.out, the profile file glibc's -pg runtime writes and GNU gprof reads
// (the "new" GNU format, version 1; see docs/OUTPUT.md): a 20-byte header,
// then tagged records — PC histograms, call-graph arcs and basic-block
// counts. Nothing in the file says its address size or byte order: they are
// the executable's (as gprof takes them from BFD), so the reader is told.
//
// Every field is read through ByteReader; a length taken from the file is
// compared with what remains before anything is allocated for it, and a
// problem is a GmonError naming the file offset of the field at fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/byte_reader.hpp"

namespace framewalk::profile {

inline constexpr uint8_t kGmonTagTimeHist = 0, kGmonTagCgArc = 1, kGmonTagBbCount = 2;
inline constexpr size_t kGmonHeaderSize = 20;

enum class GmonErrc : uint8_t {
  kTruncated,            // a record or field runs past the end of the file
  kBadMagic,             // the file does not start with "gmon" (the old BSD format is not read)
  kUnsupportedVersion,   // version other than 0 or 1 (value: the version)
  kBadTag,               // a record tag other than 0, 1, 2 (value: the tag)
  kHistogramPastEnd,     // a histogram's bins run past the end of the file (value: the bin count)
  kBadHistogramRange,    // high_pc below low_pc
  kHistogramMismatch,    // a second histogram with another rate or unit, or overlapping another unequally
  kBasicBlocksPastEnd,   // a basic-block record's counts run past the end of the file (value: the count)
};

const char* to_string(GmonErrc code) noexcept;

struct GmonError {
  GmonErrc code;
  uint64_t offset = 0;  // file offset of the field (or record tag) at fault
  uint64_t value = 0;   // what the field held, where the code says
};

// "unsupported gmon.out version 2 at offset 0x4", and so on.
std::string describe(const GmonError& error);

struct GmonHistogram {
  uint64_t low_pc = 0;
  uint64_t high_pc = 0;  // exclusive
  uint32_t rate = 0;     // ticks per second (prof_rate)
  std::string dimension; // "seconds"
  char abbreviation = 0; // 's'
  std::vector<uint16_t> bins;
  uint64_t offset = 0;   // file offset of the record's tag
};

struct GmonArc {
  uint64_t from_pc = 0;  // in the caller (glibc writes the call site's 16-byte bucket)
  uint64_t self_pc = 0;  // in the callee
  uint32_t count = 0;
  uint64_t offset = 0;
};

struct GmonBasicBlock {
  uint64_t address = 0;
  uint64_t count = 0;
};

struct GmonFile {
  uint32_t version = 1;
  // Histograms with the same range are summed into one, as gprof does;
  // disjoint ones are kept apart.
  std::vector<GmonHistogram> histograms;
  std::vector<GmonArc> arcs;  // as in the file, repeats included
  std::vector<GmonBasicBlock> basic_blocks;
  size_t histogram_records = 0;
  // Written by framewalk's runtime (its spare header bytes "fwra"): arcs'
  // from_pc are exact return addresses. glibc's are rounded down to 16 bytes,
  // so there they name the calling function, not the call.
  bool exact_call_sites = false;
};

struct GmonLayout {
  unsigned address_size = 8;  // 4 or 8: the executable's ELF class
  Endian endian = Endian::kLittle;
};

// Either the file or the first problem in it.
class GmonResult {
 public:
  GmonResult(GmonFile file) : ok_(true), file_(std::move(file)) {}  // NOLINT
  GmonResult(GmonError error) : ok_(false), error_(error) {}        // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const GmonFile& value() const { return file_; }
  GmonFile& value() { return file_; }
  const GmonFile* operator->() const { return &file_; }
  const GmonFile& operator*() const { return file_; }
  const GmonError& error() const { return error_; }

 private:
  bool ok_;
  GmonFile file_;
  GmonError error_{};
};

GmonResult read_gmon(Bytes data, const GmonLayout& layout);

}  // namespace framewalk::profile
