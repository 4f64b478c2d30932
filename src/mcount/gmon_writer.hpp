// gmon.out, version 1 (the format glibc writes and GNU gprof 2.40 reads):
// the 20-byte header ("gmon", version 1, 12 spare bytes), then tagged
// records: histograms (tag 0) and call-graph arcs (tag 1). Integers are in
// the byte order of the process, addresses as wide as its pointers, which
// are the byte order and address size of the program gprof reads with it;
// there is no padding. Addresses are link-time addresses (run-time address
// minus the executable's load bias), as gprof looks them up in the file.
//
// Everything goes through a buffer on the writer itself and write(2): no
// allocation, no stdio, so a dump may run in a signal handler.
#pragma once

#include <cstddef>
#include <cstdint>

namespace framewalk::mcount {

inline constexpr unsigned kGmonHistogramDimenBytes = 15;

class GmonWriter {
 public:
  explicit GmonWriter(int fd) : fd_(fd) {}
  GmonWriter(const GmonWriter&) = delete;
  GmonWriter& operator=(const GmonWriter&) = delete;

  void header();
  // Tag-0 records for bins[0..nbins) over [low_pc, high_pc) (link-time),
  // `rate` samples per second of "seconds". gprof's bins are 16-bit, ours
  // 32-bit: a count above 65535 goes on in further records of the same
  // range, which gprof adds up. Always at least one record, so that gprof's
  // flat profile works also when no sample was taken.
  void histogram(uintptr_t low_pc, uintptr_t high_pc, const uint32_t* bins, std::size_t nbins, uint32_t rate);
  // Tag-1 records: one for each 2^32 - 1 calls (gprof adds up arcs it reads twice).
  void arc(uintptr_t from_pc, uintptr_t self_pc, uint64_t count);
  // Writes what is buffered; false when any write failed.
  bool finish();

 private:
  void bytes(const void* data, std::size_t size);
  void u8(uint8_t value) { bytes(&value, 1); }
  void u16(uint16_t value) { bytes(&value, 2); }
  void u32(uint32_t value) { bytes(&value, 4); }
  void address(uintptr_t value) { bytes(&value, sizeof value); }
  void flush();

  int fd_;
  bool failed_ = false;
  std::size_t used_ = 0;
  unsigned char buffer_[4096];
};

}  // namespace framewalk::mcount
