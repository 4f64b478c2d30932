// Errors of the SFrame layer: a precise code and the section offset of the
// field that is wrong, as a value (never thrown, never aborted on).
//
// framewalk::ErrorCode (src/base) has no SFrame entries, so this layer has its
// own code list and a Result of the same shape as framewalk::Result. FW_TRY and
// FW_CHECK work with it, and framewalk::Error values from ByteReader convert
// implicitly (a ByteReader overrun becomes Errc::kTruncated).
// to_framewalk_error() maps a code to the nearest generic ErrorCode for code
// that only speaks framewalk::Error.
#pragma once

#include <cstdint>
#include <utility>
#include <variant>

#include "base/result.hpp"

namespace framewalk::sframe {

enum class Errc : uint8_t {
  // Header.
  kTruncated,            // a read ran past the end of the section (or of the area being read)
  kBadMagic,             // the first two bytes are not 0xdee2 in either byte order
  kBadVersion,           // version other than 1, 2 or 3
  kBadFlags,             // a flag bit that the version does not define
  kBadAbi,               // unknown ABI/arch, s390x in V1, or ABI byte order != data byte order
  kAuxHeader,            // sfh_auxhdr_len != 0 (nothing defines one; the kernel refuses it too)
  kFdeTableOutOfBounds,  // the FDE sub-section does not fit before the FRE sub-section
  kFreTableOutOfBounds,  // the FRE sub-section runs past the end of the section
  kFreCountMismatch,     // header num_fres != the sum of the FDEs' FRE counts
  // FDEs.
  kNotSorted,            // SORTED flag set, but function starts are not strictly increasing
  kFreOffsetOutOfBounds, // an FDE's FRE offset lies outside the FRE sub-section
  kFreCountTooLarge,     // an FDE claims more FREs than its bytes could hold
  kBadFreType,           // start-address type 3..15
  kBadFdeType,           // V3 FDE type other than DEFAULT (0) or FLEX (1)
  kZeroRepSize,          // PCMASK FDE with a repetition block of 0 bytes
  kFunctionWraps,        // function start + size reaches past the end of the address space
  // FREs.
  kFreOutOfBounds,       // an FRE runs past the end of the FRE sub-section
  kBadDataWordSize,      // data-word size code 3
  kBadDataWordCount,     // a data-word count the FDE type and ABI do not allow
  kFreStartOutOfRange,   // FRE start > function size, or (PCMASK) >= rep_size
  kFreNotIncreasing,     // FRE start addresses not strictly increasing
  kBadFlexControl,       // FLEX CFA control word without a register, or a padding word where a rule must be
  kBadRegister,          // FLEX register number too large for the row model (> 65535)
  // Queries.
  kUnsortedLookup,       // binary search asked of a section without the SORTED flag
  kNoFde,                // no FDE covers the PC
  kNoFre,                // the FDE has no FRE in force at the PC
  kUnsupportedByDumper,  // the requested binutils dump cannot show this version
};

const char* to_string(Errc code) noexcept;

struct Error {
  Errc code;
  uint64_t offset = 0;  // section offset of the offending field or record
};

// The nearest framewalk::ErrorCode, for callers that only handle framewalk::Error.
framewalk::Error to_framewalk_error(const Error& e) noexcept;

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(const T& value) : v_(std::in_place_index<0>, value) {}             // NOLINT
  Result(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}       // NOLINT
  Result(Error error) : v_(std::in_place_index<1>, error) {}                // NOLINT
  Result(const framewalk::Error& e) : v_(std::in_place_index<1>, Error{Errc::kTruncated, e.offset}) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : ok_(false), error_(error) {}                                      // NOLINT
  Result(const framewalk::Error& e) : ok_(false), error_{Errc::kTruncated, e.offset} {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  bool ok_ = true;
  Error error_{Errc::kTruncated, 0};
};

inline Result<void> ok() { return {}; }

}  // namespace framewalk::sframe
