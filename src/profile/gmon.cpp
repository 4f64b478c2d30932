#include "profile/gmon.hpp"

#include <cstdio>
#include <cstring>
#include <optional>

namespace framewalk::profile {

const char* to_string(GmonErrc code) noexcept {
  switch (code) {
    case GmonErrc::kTruncated: return "truncated record";
    case GmonErrc::kBadMagic: return "not a gmon.out file (no \"gmon\" magic)";
    case GmonErrc::kUnsupportedVersion: return "unsupported gmon.out version";
    case GmonErrc::kBadTag: return "unknown record tag";
    case GmonErrc::kHistogramPastEnd: return "histogram runs past the end of the file";
    case GmonErrc::kBadHistogramRange: return "histogram's high_pc is below its low_pc";
    case GmonErrc::kHistogramMismatch: return "histogram does not match the ones before it";
    case GmonErrc::kBasicBlocksPastEnd: return "basic-block counts run past the end of the file";
  }
  return "unknown error";
}

std::string describe(const GmonError& error) {
  char where[40];
  std::snprintf(where, sizeof where, " at offset 0x%llx", static_cast<unsigned long long>(error.offset));
  std::string text = to_string(error.code);
  switch (error.code) {
    case GmonErrc::kUnsupportedVersion:
    case GmonErrc::kBadTag:
      text += " " + std::to_string(error.value);
      break;
    case GmonErrc::kHistogramPastEnd:
      text += " (" + std::to_string(error.value) + " bins)";
      break;
    case GmonErrc::kBasicBlocksPastEnd:
      text += " (" + std::to_string(error.value) + " counts)";
      break;
    default:
      break;
  }
  return text + where;
}

namespace {

using Problem = std::optional<GmonError>;

// Binds the value of a ByteReader read, or returns kTruncated at the offset
// of the field that did not fit.
#define GMON_TRY(decl, expr)                                                      \
  auto FW_CONCAT(gmon_, __LINE__) = (expr);                                       \
  if (!FW_CONCAT(gmon_, __LINE__).ok())                                           \
    return GmonError{GmonErrc::kTruncated, FW_CONCAT(gmon_, __LINE__).error().offset, 0}; \
  decl = *FW_CONCAT(gmon_, __LINE__)

class Reader {
 public:
  Reader(Bytes data, const GmonLayout& layout) : in_(data, layout.endian), address_size_(layout.address_size) {}

  GmonResult read() {
    if (in_.size() < 4 || std::memcmp(in_.data().data(), "gmon", 4) != 0)
      return GmonError{GmonErrc::kBadMagic, 0, 0};
    if (Problem p = header()) return *p;
    while (!in_.at_end()) {
      const uint64_t tag_offset = in_.absolute_offset();
      const uint8_t tag = *in_.u8();
      Problem p;
      switch (tag) {
        case kGmonTagTimeHist: p = histogram(tag_offset); break;
        case kGmonTagCgArc: p = arc(tag_offset); break;
        case kGmonTagBbCount:
          // Version 0 basic-block records carry strings and line numbers
          // this reader does not know; nothing current writes them.
          if (file_.version == 0) return GmonError{GmonErrc::kBadTag, tag_offset, tag};
          p = basic_blocks();
          break;
        default: return GmonError{GmonErrc::kBadTag, tag_offset, tag};
      }
      if (p) return *p;
    }
    return std::move(file_);
  }

 private:
  Problem header() {
    (void)in_.skip(4);
    GMON_TRY(const uint32_t version, in_.u32());
    if (version > 1) return GmonError{GmonErrc::kUnsupportedVersion, 4, version};
    GMON_TRY(Bytes spare, in_.bytes(12));
    file_.exact_call_sites = spare[0] == 'f' && spare[1] == 'w' && spare[2] == 'r' && spare[3] == 'a';
    file_.version = version;
    return std::nullopt;
  }

  Problem histogram(uint64_t tag_offset) {
    GmonHistogram h;
    h.offset = tag_offset;
    const uint64_t range_offset = in_.absolute_offset();
    GMON_TRY(h.low_pc, in_.address(address_size_));
    GMON_TRY(h.high_pc, in_.address(address_size_));
    const uint64_t size_offset = in_.absolute_offset();
    GMON_TRY(const uint32_t bins, in_.u32());
    GMON_TRY(h.rate, in_.u32());
    GMON_TRY(Bytes dimension, in_.bytes(15));
    GMON_TRY(const uint8_t abbreviation, in_.u8());
    if (h.high_pc < h.low_pc) return GmonError{GmonErrc::kBadHistogramRange, range_offset, 0};
    const auto* text = reinterpret_cast<const char*>(dimension.data());
    h.dimension.assign(text, strnlen(text, dimension.size()));
    h.abbreviation = static_cast<char>(abbreviation);
    // The bins' size is checked against the file before anything is allocated.
    if (uint64_t{bins} * 2 > in_.remaining()) return GmonError{GmonErrc::kHistogramPastEnd, size_offset, bins};
    h.bins.resize(bins);
    for (uint32_t i = 0; i < bins; ++i) h.bins[i] = *in_.u16();
    return merge(std::move(h));
  }

  // Histograms of one range are summed (saturating, as gprof's 16-bit bins);
  // disjoint ones are kept; anything else is refused, as gprof refuses it.
  Problem merge(GmonHistogram&& h) {
    ++file_.histogram_records;
    for (GmonHistogram& seen : file_.histograms) {
      if (seen.rate != h.rate || seen.dimension != h.dimension || seen.abbreviation != h.abbreviation)
        return GmonError{GmonErrc::kHistogramMismatch, h.offset, 0};
      if (seen.low_pc == h.low_pc && seen.high_pc == h.high_pc && seen.bins.size() == h.bins.size()) {
        for (size_t i = 0; i < h.bins.size(); ++i) {
          const uint32_t sum = uint32_t{seen.bins[i]} + h.bins[i];
          seen.bins[i] = sum > 0xffff ? 0xffff : static_cast<uint16_t>(sum);
        }
        return std::nullopt;
      }
      if (h.low_pc < seen.high_pc && seen.low_pc < h.high_pc)
        return GmonError{GmonErrc::kHistogramMismatch, h.offset, 0};
    }
    file_.histograms.push_back(std::move(h));
    return std::nullopt;
  }

  Problem arc(uint64_t tag_offset) {
    GmonArc a;
    a.offset = tag_offset;
    GMON_TRY(a.from_pc, in_.address(address_size_));
    GMON_TRY(a.self_pc, in_.address(address_size_));
    GMON_TRY(a.count, in_.u32());
    file_.arcs.push_back(a);
    return std::nullopt;
  }

  Problem basic_blocks() {
    const uint64_t count_offset = in_.absolute_offset();
    GMON_TRY(const uint32_t count, in_.u32());
    if (uint64_t{count} * 2 * address_size_ > in_.remaining())
      return GmonError{GmonErrc::kBasicBlocksPastEnd, count_offset, count};
    for (uint32_t i = 0; i < count; ++i) {
      const uint64_t address = *in_.address(address_size_);
      file_.basic_blocks.push_back(GmonBasicBlock{address, *in_.address(address_size_)});
    }
    return std::nullopt;
  }

  ByteReader in_;
  unsigned address_size_;
  GmonFile file_;
};

#undef GMON_TRY

}  // namespace

GmonResult read_gmon(Bytes data, const GmonLayout& layout) {
  if (layout.address_size != 4 && layout.address_size != 8) return GmonError{GmonErrc::kTruncated, 0, 0};
  return Reader(data, layout).read();
}

}  // namespace framewalk::profile
