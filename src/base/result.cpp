#include "base/result.hpp"

namespace framewalk {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kTruncated: return "truncated data";
    case ErrorCode::kLeb128TooLong: return "LEB128 value too long";
    case ErrorCode::kBadPointerEncoding: return "unknown pointer encoding";
    case ErrorCode::kPointerEncodingNoBase: return "pointer encoding needs a base address that is not known";
    case ErrorCode::kIndirectPointer: return "indirect pointer cannot be read";
    case ErrorCode::kBadLength: return "length runs past the end of the section";
    case ErrorCode::kBadCiePointer: return "CIE pointer does not point to a CIE";
    case ErrorCode::kBadCieVersion: return "unsupported CIE version";
    case ErrorCode::kBadAugmentation: return "unknown augmentation";
    case ErrorCode::kBadAddressSize: return "bad address size";
    case ErrorCode::kBadSegmentSize: return "bad segment selector size";
    case ErrorCode::kUnknownCfaOpcode: return "unknown call frame instruction";
    case ErrorCode::kBadRegister: return "register number out of range";
    case ErrorCode::kTooManyRules: return "too many register rules in one row";
    case ErrorCode::kRememberStackOverflow: return "DW_CFA_remember_state nested too deeply";
    case ErrorCode::kRestoreWithoutRemember: return "DW_CFA_restore_state without DW_CFA_remember_state";
    case ErrorCode::kLocationWentBackwards: return "location moved outside the FDE";
    case ErrorCode::kCfaNotRegisterRule: return "CFA offset changed while the CFA is an expression";
    case ErrorCode::kExprStackUnderflow: return "DWARF expression stack underflow";
    case ErrorCode::kExprStackOverflow: return "DWARF expression stack overflow";
    case ErrorCode::kExprTooManySteps: return "DWARF expression ran too many steps";
    case ErrorCode::kExprUnknownOpcode: return "unknown DWARF expression operator";
    case ErrorCode::kExprBadBranch: return "DWARF expression branch outside the expression";
    case ErrorCode::kExprDivideByZero: return "DWARF expression divides by zero";
    case ErrorCode::kExprUnsupported: return "DWARF expression operator not allowed in CFI";
    case ErrorCode::kExprNeedsMemory: return "DWARF expression reads memory but none was given";
    case ErrorCode::kExprNeedsRegister: return "DWARF expression reads a register whose value is not known";
    case ErrorCode::kExprEmptyStack: return "DWARF expression left an empty stack";
    case ErrorCode::kMemoryUnreadable: return "memory unreadable";
    case ErrorCode::kReturnAddressNoRule: return "no rule for the return address";
    case ErrorCode::kReturnAddressUnknown: return "the return address is in a register whose value is not known";
    case ErrorCode::kBadElf: return "not a valid ELF file";
    case ErrorCode::kUnsupportedElf: return "unsupported ELF file";
    case ErrorCode::kUnsupportedMachine: return "machine not supported";
    case ErrorCode::kSectionOutOfFile: return "section lies outside the file";
    case ErrorCode::kDecompressFailed: return "decompression failed";
    case ErrorCode::kNoDecompressor: return "compressed, and framewalk was built without its decompressor";
    case ErrorCode::kIoError: return "I/O error";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kBadEhFrameHdr: return "bad .eh_frame_hdr";
    case ErrorCode::kUnsortedTable: return ".eh_frame_hdr table is not sorted";
    case ErrorCode::kBadArchiveHeader: return "bad archive member header";
    case ErrorCode::kBadArchiveName: return "bad archive member name";
    case ErrorCode::kArchiveMemberPastEnd: return "archive member runs past the end of the archive";
    case ErrorCode::kNestedThinArchive: return "nested thin archives are not supported";
    case ErrorCode::kBadExidxEntry: return "index entry with bit 31 of its function word set";
    case ErrorCode::kBadExtabPointer: return "index entry points outside every section";
    case ErrorCode::kBadPersonalityIndex: return "reserved compact personality index";
    case ErrorCode::kTruncatedUnwindOpcode: return "unwind instruction runs past its entry";
    case ErrorCode::kSpareUnwindOpcode: return "spare or reserved unwind instruction";
    case ErrorCode::kExidxVspAfterPop: return "unwind instructions set vsp from a register after a pop";
    case ErrorCode::kExidxPopsStackPointer: return "unwind instructions pop the stack pointer";
    case ErrorCode::kBadLineVersion: return "unsupported .debug_line version";
    case ErrorCode::kBadLineHeader: return "bad .debug_line header";
    case ErrorCode::kBadForm: return "unsupported or invalid DW_FORM";
    case ErrorCode::kBadStringOffset: return "string offset outside its section";
    case ErrorCode::kBadUnitVersion: return "unsupported .debug_info unit version";
    case ErrorCode::kBadAbbreviation: return "bad abbreviation";
    case ErrorCode::kBadUnitType: return "unknown .debug_info unit type";
    case ErrorCode::kBadReference: return "bad DIE reference";
    case ErrorCode::kBadRangeList: return "bad range list";
    case ErrorCode::kBadIndex: return "index outside its table";
    case ErrorCode::kNeedsSupplementary: return "reference into a supplementary file that was not given";
    case ErrorCode::kTooDeep: return "DIE references or nesting too deep";
    case ErrorCode::kBadCuIndex: return "bad .debug_cu_index";
    case ErrorCode::kSplitUnitNotFound: return "split DWARF unit not found (no .dwp row, no .dwo file)";
    case ErrorCode::kSplitUnitMismatch: return "split DWARF unit of another dwo id";
    case ErrorCode::kUnitTooLarge: return "DWARF unit with over 4 GiB of functions to index";
    case ErrorCode::kNoSuchProcess: return "no such process";
    case ErrorCode::kThreadGone: return "thread exited";
    case ErrorCode::kNotPermitted: return "ptrace not permitted";
    case ErrorCode::kNoRegisters: return "cannot read registers";
    case ErrorCode::kTooManyRegisters: return "more registers than the register file holds";
    case ErrorCode::kBadArgument: return "invalid argument";
    case ErrorCode::kInvalidState: return "call out of order";
  }
  return "unknown error";
}

}  // namespace framewalk
