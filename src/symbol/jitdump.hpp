// jitdump files (perf's `jit-PID.dump`): what a JIT writes of each piece of
// code it makes, in time order: its name, address and bytes (CODE_LOAD), a
// move (CODE_MOVE), its source lines (DEBUG_INFO) and its unwind tables
// (UNWINDING_INFO). Written by V8 (--perf-prof), perf's JVMTI agent, .NET,
// CPython's -X perf_jit, wasmtime, LLVM's PerfJITEventListener, QEMU.
//
// parse_jitdump reads a whole file as perf does: the 40-byte header (either
// byte order: a magic read swapped means every field is), then records of
// `u32 id; u32 total_size; u64 timestamp` stepped by total_size (V8 pads
// some to 8 bytes). A damaged record ends the reading: what came before it
// is kept and `stopped` says why and where. perf attaches the last
// DEBUG_INFO and UNWINDING_INFO read to the next CODE_LOAD (without
// comparing addresses), which uses them up; so does this reader (perf
// leaves an UNWINDING_INFO of no .eh_frame_hdr or a DEBUG_INFO of no entries
// in place for the loads after: here each applies to one load at most).
//
// Everything points into the bytes given: keep them while the JitDump lives.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::symbol {

// "JiTD", as the header's first four bytes read in the writer's byte order.
inline constexpr uint32_t kJitdumpMagic = 0x4A695444;
inline constexpr uint32_t kJitdumpVersion = 1;  // the newest perf reads
inline constexpr size_t kJitdumpHeaderSize = 40;
inline constexpr size_t kJitRecordHeaderSize = 16;
// The one header flag perf knows: timestamps from the CPU's clock (TSC).
inline constexpr uint64_t kJitdumpFlagArchTimestamp = 1;

enum class JitRecordId : uint32_t {
  kCodeLoad = 0,
  kCodeMove = 1,
  kDebugInfo = 2,
  kCodeClose = 3,
  kUnwindingInfo = 4,
};

struct JitdumpHeader {
  uint32_t version = 0;
  uint32_t size = 0;      // bytes up to the first record (40 or more)
  uint32_t elf_mach = 0;  // the code's ELF e_machine
  uint32_t pid = 0;       // the writer's
  uint64_t timestamp = 0;
  uint64_t flags = 0;
  Endian endian = Endian::kLittle;
  bool swapped = false;  // the file's byte order is not this machine's
};

// Each record's `index` is its place among all the file's records (from 0);
// `file_offset` where it starts.
struct JitCodeLoad {
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, code_addr = 0, code_size = 0, code_index = 0, timestamp = 0;
  std::string_view name;
  Bytes code;  // the record's last code_size bytes
  size_t index = 0;
  uint64_t file_offset = 0;
  // The DEBUG_INFO and UNWINDING_INFO that apply to it (indices into
  // JitDump::debug_infos / unwinding_infos): the last ones read before it
  // and after the previous CODE_LOAD.
  std::optional<size_t> debug_info, unwinding_info;
  uint64_t code_end() const { return code_addr + code_size; }  // never overflows (checked)
};

struct JitCodeMove {
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, old_code_addr = 0, new_code_addr = 0, code_size = 0, code_index = 0, timestamp = 0;
  size_t index = 0;
  uint64_t file_offset = 0;
};

struct JitLine {
  uint64_t address = 0;
  int32_t line = 0, discriminator = 0;
  std::string_view file;  // "\xff" (the previous entry's file) resolved; "" if the first is
};

struct JitDebugInfo {
  uint64_t code_addr = 0, timestamp = 0;
  std::vector<JitLine> lines;
  size_t index = 0;
  uint64_t file_offset = 0;
};

// perf's genelf.c split: .eh_frame is the first unwinding_size -
// eh_frame_hdr_size bytes of the data, .eh_frame_hdr the last
// eh_frame_hdr_size (the spec's prose says otherwise; writers follow perf).
// pc-relative encodings in them assume they sit at code_addr +
// ALIGN_8(code_size) of the CODE_LOAD they apply to.
struct JitUnwindingInfo {
  uint64_t unwinding_size = 0, eh_frame_hdr_size = 0, mapped_size = 0, timestamp = 0;
  Bytes eh_frame, eh_frame_hdr;
  size_t index = 0;
  uint64_t file_offset = 0;
};

struct JitDump {
  JitdumpHeader header;
  std::vector<JitCodeLoad> loads;
  std::vector<JitCodeMove> moves;
  std::vector<JitDebugInfo> debug_infos;
  std::vector<JitUnwindingInfo> unwinding_infos;
  size_t records = 0;          // records read (every kind)
  size_t code_closes = 0;      // CODE_CLOSE records
  size_t unknown_records = 0;  // records of an id this reader does not know, skipped
  // Why reading ended before the end of the input, or nullopt. kTruncated at
  // a record's offset: its header or its total_size runs past the end (a file
  // cut there); kBadLength at a record's offset: a total_size under 16;
  // otherwise the error of the field that could not be read (kTruncated,
  // kBadLength) at its offset.
  std::optional<Error> stopped;
  uint64_t stopped_record_offset = 0;  // the offset of the record that stopped the reading
};

// Errors (the header only; a bad record sets `stopped`): kTruncated at the
// field that runs past the end; kBadElf at 0: not a jitdump (no magic);
// kUnsupportedElf at 4: a version newer than kJitdumpVersion; kBadLength at
// 8: a header size under 40 or past the end; kUnsupportedElf at 32: a flag
// other than kJitdumpFlagArchTimestamp (perf refuses those files).
Result<JitDump> parse_jitdump(Bytes file);

// The code of one process over time: which CODE_LOAD held an address at a
// time, after the CODE_MOVEs before it (matched to the last load of their
// code_index) and where later loads took the address over.
class JitCodeIndex {
 public:
  JitCodeIndex(const JitDump& dump, uint32_t pid);

  // The load whose code covered `address` at `timestamp`: of those placed
  // there at or before it (loaded or moved there) and not moved away since,
  // the last placed; nullptr when none.
  const JitCodeLoad* find(uint64_t address, uint64_t timestamp) const;

  size_t size() const { return placements_.size(); }
  size_t unmatched_moves() const { return unmatched_moves_; }  // moves of a code_index never loaded before

 private:
  struct Placement {
    uint64_t start, end;
    uint64_t from, until;  // [from, until) in record timestamps
    size_t order;          // ties of `from`: the later record wins
    const JitCodeLoad* load;
  };
  std::vector<Placement> placements_;  // sorted by start
  uint64_t max_size_ = 0;              // of any placement: how far back a lookup looks
  size_t unmatched_moves_ = 0;
};

}  // namespace framewalk::symbol
