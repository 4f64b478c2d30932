// The bodies of the libFuzzer targets. Each fuzz/<target>.cpp forwards
// LLVMFuzzerTestOneInput to one of these; tests/fuzz/replay_test.cpp calls them
// on every committed corpus and regression input, so that a fixed crash stays
// fixed in the ordinary (gcc) test suite too.
#pragma once

#include <cstddef>
#include <cstdint>

namespace framewalk::fuzz {

// ElfFile::parse on the bytes, then everything an ELF file offers.
int fuzz_elf(const uint8_t* data, size_t size);
// The bytes as .eh_frame and as .debug_frame, 4- and 8-byte addresses.
int fuzz_cfi(const uint8_t* data, size_t size);
// Byte 0 and 1..8 are options and the initial value, the rest an expression.
int fuzz_expression(const uint8_t* data, size_t size);
// Byte 0 chooses byte order, address size and address; the rest is .eh_frame_hdr.
int fuzz_eh_frame_hdr(const uint8_t* data, size_t size);
// Byte 0 chooses the address; the rest is an .sframe section.
int fuzz_sframe(const uint8_t* data, size_t size);
// As fuzz_sframe; a valid section is written again and must read back the same.
int fuzz_sframe_roundtrip(const uint8_t* data, size_t size);
// Byte 0 chooses the SFrame version and text range; the rest is .eh_frame,
// turned into SFrame that must agree with it wherever it claims coverage.
int fuzz_sframe_generate(const uint8_t* data, size_t size);
// The bytes as a core file: threads, modules, memory, and a walk of each thread.
int fuzz_core(const uint8_t* data, size_t size);
// Registers, memory and CFI for the step loop and the row executor.
int fuzz_unwind(const uint8_t* data, size_t size);
// The bytes as an ar archive; each member as an ELF file, relocated and dumped as readelf does.
int fuzz_archive(const uint8_t* data, size_t size);
// The bytes as an ARM ELF file dumped as readelf -u does, and as bare EHABI tables.
int fuzz_exidx(const uint8_t* data, size_t size);
// Byte 0 chooses address size and byte order; the rest is a gmon.out, reported in every format.
int fuzz_gmon(const uint8_t* data, size_t size);
// The bytes as a .fwprof recording (framewalk record), reported in every format and written again.
int fuzz_profile_file(const uint8_t* data, size_t size);
// Byte 0 chooses byte order and address size, bytes 1-2 the length of a
// .debug_line_str that follows; the rest is .debug_line, read into a line table.
int fuzz_line(const uint8_t* data, size_t size);
// .debug_info, its abbreviations and range lists (six length-prefixed sections,
// then .debug_info), read into a function index asked at every entry.
int fuzz_dwarf_info(const uint8_t* data, size_t size);
// Byte 0 chooses the byte order; the rest is a .dwp's .debug_cu_index, parsed,
// looked up and its rows' contributions sliced.
int fuzz_cu_index(const uint8_t* data, size_t size);
// A user back-end of the C API that lies: threads listed twice or negative,
// registers past the register file, memory reads that claim more than asked.
int fuzz_backend(const uint8_t* data, size_t size);
// The bytes as a perf.data file: read record by record, each record decoded
// alone again, and every sample unwound (no file opened).
int fuzz_perf_data(const uint8_t* data, size_t size);
int fuzz_perf_map(const uint8_t* data, size_t size);
// The bytes as a jitdump file (jit-PID.dump), read whole and cut at and inside
// its records; loads looked up in a JitCodeIndex.
int fuzz_jitdump(const uint8_t* data, size_t size);
// The bytes as a process's memory holding a GDB JIT descriptor and its list.
int fuzz_gdb_jit(const uint8_t* data, size_t size);

}  // namespace framewalk::fuzz

// A property the parsers promise; a violation aborts like a crash so that the
// fuzzer records the input.
#define FUZZ_CHECK(cond) ::framewalk::fuzz::check((cond), #cond, __FILE__, __LINE__)

namespace framewalk::fuzz {
void check(bool ok, const char* what, const char* file, int line);
}  // namespace framewalk::fuzz
