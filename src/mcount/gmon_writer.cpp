#include "mcount/gmon_writer.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace framewalk::mcount {

namespace {
constexpr uint8_t kTagTimeHistogram = 0;
constexpr uint8_t kTagCallGraphArc = 1;
constexpr uint32_t kGmonVersion = 1;
}  // namespace

void GmonWriter::header() {
  bytes("gmon", 4);
  u32(kGmonVersion);
  // The spare bytes say that every arc's from_pc is its call's exact return
  // address (glibc rounds them down to 16 bytes): "fwra". gprof ignores them.
  const unsigned char spare[12] = {'f', 'w', 'r', 'a'};
  bytes(spare, sizeof spare);
}

void GmonWriter::histogram(uintptr_t low_pc, uintptr_t high_pc, const uint32_t* bins, std::size_t nbins,
                           uint32_t rate) {
  uint32_t most = 0;
  for (std::size_t i = 0; i < nbins; ++i) {
    uint32_t v = __atomic_load_n(&bins[i], __ATOMIC_RELAXED);
    if (v > most) most = v;
  }
  uint32_t records = most == 0 ? 1 : (most + 65534) / 65535;
  for (uint32_t r = 0; r < records; ++r) {
    u8(kTagTimeHistogram);
    address(low_pc);
    address(high_pc);
    u32(static_cast<uint32_t>(nbins));
    u32(rate);
    char dimen[kGmonHistogramDimenBytes] = {'s', 'e', 'c', 'o', 'n', 'd', 's'};
    bytes(dimen, sizeof dimen);
    u8('s');
    uint64_t floor = uint64_t{r} * 65535;
    for (std::size_t i = 0; i < nbins; ++i) {
      uint64_t v = __atomic_load_n(&bins[i], __ATOMIC_RELAXED);
      uint64_t part = v > floor ? v - floor : 0;
      u16(static_cast<uint16_t>(part > 65535 ? 65535 : part));
    }
  }
}

void GmonWriter::arc(uintptr_t from_pc, uintptr_t self_pc, uint64_t count) {
  while (count > 0) {
    uint32_t part = count > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(count);
    u8(kTagCallGraphArc);
    address(from_pc);
    address(self_pc);
    u32(part);
    count -= part;
  }
}

void GmonWriter::bytes(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    if (used_ == sizeof buffer_) flush();
    std::size_t n = sizeof buffer_ - used_;
    if (n > size) n = size;
    std::memcpy(buffer_ + used_, p, n);
    used_ += n;
    p += n;
    size -= n;
  }
}

void GmonWriter::flush() {
  std::size_t done = 0;
  while (done < used_ && !failed_) {
    ssize_t n = write(fd_, buffer_ + done, used_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  used_ = 0;
}

bool GmonWriter::finish() {
  flush();
  return !failed_;
}

}  // namespace framewalk::mcount
