#include "base/reserved_buffer.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <utility>

namespace framewalk {

namespace {
// Below this a huge page would mostly be waste.
constexpr size_t kHugePageWorthwhile = size_t{4} << 20;
}  // namespace

Result<ReservedBuffer> ReservedBuffer::reserve(size_t capacity) {
  ReservedBuffer b;
  if (capacity == 0) return b;
  void* p = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
#ifdef MADV_HUGEPAGE
  if (capacity >= kHugePageWorthwhile) ::madvise(p, capacity, MADV_HUGEPAGE);  // advice only
#endif
  b.data_ = static_cast<uint8_t*>(p);
  b.capacity_ = capacity;
  return b;
}

ReservedBuffer::ReservedBuffer(ReservedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)),
      size_(std::exchange(other.size_, 0)) {}

ReservedBuffer& ReservedBuffer::operator=(ReservedBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(data_, capacity_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

ReservedBuffer::~ReservedBuffer() {
  if (data_) ::munmap(data_, capacity_);
}

}  // namespace framewalk
