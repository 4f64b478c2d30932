// Errors as values: every parser returns Result<T>, never throws or aborts on input.
#pragma once

#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace framewalk {

enum class ErrorCode : uint16_t {
  kTruncated,              // a read ran past the end of its buffer
  kLeb128TooLong,          // a LEB128 longer than the cap (or its value overflows 64 bits)
  kBadPointerEncoding,     // unknown DW_EH_PE_* value
  kPointerEncodingNoBase,  // relative encoding whose base address is not known
  kIndirectPointer,        // DW_EH_PE_indirect needs memory we were not given
  kBadLength,              // a length field points past the end of its section
  kBadCiePointer,          // an FDE's CIE pointer does not lead to a CIE
  kBadCieVersion,
  kBadAugmentation,        // an augmentation string we cannot parse past
  kBadAddressSize,
  kBadSegmentSize,
  kUnknownCfaOpcode,
  kBadRegister,            // register number beyond what the model can hold
  kTooManyRules,           // more register rules in one row than the row can hold
  kRememberStackOverflow,
  kRestoreWithoutRemember,
  kLocationWentBackwards,  // DW_CFA_set_loc / advance moved below the FDE start
  kCfaNotRegisterRule,     // def_cfa_offset while the CFA is an expression
  kExprStackUnderflow,
  kExprStackOverflow,
  kExprTooManySteps,
  kExprUnknownOpcode,
  kExprBadBranch,          // skip/bra target outside the expression
  kExprDivideByZero,
  kExprUnsupported,        // an operator valid in DWARF but not allowed in CFI
  kExprNeedsMemory,        // deref without a memory reader
  kExprNeedsRegister,      // register value the caller does not know
  kExprEmptyStack,         // the expression ended with nothing on the stack
  kMemoryUnreadable,
  kReturnAddressNoRule,    // the row has no rule for its return-address column
  kReturnAddressUnknown,   // the return address comes from a register whose value is not known
  kBadElf,                 // not an ELF file or inconsistent header
  kUnsupportedElf,
  kUnsupportedMachine,     // a valid file of a machine not (yet) unwound; offset = e_machine
  kSectionOutOfFile,       // a section or segment lies outside the file
  kDecompressFailed,
  kNoDecompressor,  // built without zlib/zstd/xz (FRAMEWALK_COMPRESSION=OFF)
  kIoError,
  kNotFound,
  kBadEhFrameHdr,
  kUnsortedTable,
  kBadArchiveHeader,       // an ar member header without its terminator or with a bad size field
  kBadArchiveName,         // an ar member name that cannot be resolved (long-name or BSD form)
  kArchiveMemberPastEnd,   // an ar member's size runs past the end of the archive
  kNestedThinArchive,      // a thin archive's member is itself an archive
  kBadExidxEntry,          // an .ARM.exidx function word with bit 31 set
  kBadExtabPointer,        // an .ARM.exidx entry's prel31 pointer leads into no .ARM.extab
  kBadPersonalityIndex,    // an EHABI compact entry with a reserved index (3..15) or bits 28-30 set
  kTruncatedUnwindOpcode,  // an EHABI unwind instruction runs past its entry's declared words
  kSpareUnwindOpcode,      // an EHABI unwind instruction that is spare or reserved
  kExidxVspAfterPop,       // EHABI `vsp = r[n]` after a pop: no one CFA is the base of both
  kExidxPopsStackPointer,  // EHABI instructions pop r13: the caller's SP is loaded, not the final vsp
  kBadLineVersion,         // a .debug_line unit of a version other than 2..5
  kBadLineHeader,          // a .debug_line header field out of range (line_range 0, opcode_base 0, header length)
  kBadForm,                // a DW_FORM a DWARF reader cannot read or skip here
  kBadStringOffset,        // a DW_FORM_strp/line_strp offset outside its string section
  kBadUnitVersion,         // a .debug_info unit of a version other than 2..5
  kBadAbbreviation,        // an abbreviation code not in the unit's table, or a broken table
  kBadUnitType,            // a DWARF 5 unit type other than DW_UT_compile..split_type
  kBadReference,           // a DIE reference outside its unit or section, or to no DIE
  kBadRangeList,           // a .debug_ranges / .debug_rnglists entry that cannot be read
  kBadIndex,               // a strx/addrx/rnglistx index outside its table (or no base for it)
  kNeedsSupplementary,     // DW_FORM_GNU_ref_alt / GNU_strp_alt without the supplementary (dwz) file
  kTooDeep,                // a chain of DIE references or a DIE tree deeper than the reader follows
  kBadCuIndex,             // a .debug_cu_index of a .dwp that cannot be read (header, slot, row or contribution)
  kSplitUnitNotFound,      // no .dwp row and no .dwo file for a skeleton unit
  kSplitUnitMismatch,      // a split unit whose dwo id is not its skeleton's
  kUnitTooLarge,           // a .debug_info unit whose functions take over 4 GiB decoded: more than a decoded unit addresses
  kNoSuchProcess,          // the process (or thread) does not exist; offset: the id
  kThreadGone,             // the thread exited while it was being stopped or read
  kNotPermitted,           // ptrace was refused; offset: errno
  kNoRegisters,            // a thread's registers could not be read; offset: errno (0: the back-end gave none)
  kTooManyRegisters,       // more registers than the register file holds; offset: the register number
  kBadArgument,            // an API call's argument is out of range or null
  kInvalidState,           // an API call out of order (a walk of a detached thread, a target without threads)
};

const char* to_string(ErrorCode code) noexcept;

// An error names what went wrong and where: `offset` is relative to the buffer
// the failing reader was given (a section offset for section parsers).
struct Error {
  ErrorCode code;
  uint64_t offset = 0;
};

// A minimal expected<T, Error>: GCC 12 / Clang 14 in C++20 mode lack std::expected.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(const T& value) : ok_(true) { new (&value_) T(value); }              // NOLINT
  Result(T&& value) : ok_(true) { new (&value_) T(std::move(value)); }        // NOLINT
  Result(Error error) : ok_(false) { new (&error_) Error(error); }            // NOLINT
  Result(const Result& o) : ok_(o.ok_) {
    if (ok_) new (&value_) T(o.value_); else new (&error_) Error(o.error_);
  }
  Result(Result&& o) noexcept : ok_(o.ok_) {
    if (ok_) new (&value_) T(std::move(o.value_)); else new (&error_) Error(o.error_);
  }
  Result& operator=(Result o) noexcept {
    this->~Result();
    new (this) Result(std::move(o));
    return *this;
  }
  ~Result() {
    if (ok_) value_.~T();
  }

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  T& value() & { return value_; }
  const T& value() const& { return value_; }
  T&& value() && { return std::move(value_); }
  T value_or(T fallback) const { return ok_ ? value_ : fallback; }
  T& operator*() & { return value_; }
  const T& operator*() const& { return value_; }
  T* operator->() { return &value_; }
  const T* operator->() const { return &value_; }
  const Error& error() const { return error_; }

 private:
  bool ok_;
  union {
    T value_;
    Error error_;
  };
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : ok_(false), error_(error) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  bool ok_ = true;
  Error error_{};
};

inline Result<void> ok() { return {}; }

}  // namespace framewalk

// Propagate an error to the caller; bind the value otherwise.
#define FW_CONCAT_INNER(a, b) a##b
#define FW_CONCAT(a, b) FW_CONCAT_INNER(a, b)
#define FW_TRY_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                 \
  if (!tmp.ok()) return tmp.error(); \
  decl = std::move(tmp.value())
#define FW_TRY(decl, expr) FW_TRY_IMPL(FW_CONCAT(fw_try_, __COUNTER__), decl, expr)
#define FW_CHECK(expr)                                  \
  do {                                                  \
    auto fw_check_ = (expr);                            \
    if (!fw_check_.ok()) return fw_check_.error();      \
  } while (0)
