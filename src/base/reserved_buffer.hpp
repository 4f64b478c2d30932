// A writable buffer whose pages exist only once written: `reserve` takes
// address space for the most a producer may write (a decompressor's claimed
// size) and the kernel backs a page when it is first touched. So a
// decompressor writes straight into its final buffer, with no zeroing, no
// doubling copies and no page touched twice; and a hostile size claim costs
// address space, not memory. Large buffers ask for transparent huge pages
// (fewer faults). Move-only; the memory is returned when it dies.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk {

class ReservedBuffer {
 public:
  ReservedBuffer() = default;
  // Room for `capacity` bytes (0 is allowed). Fails with kIoError (offset:
  // errno) when the address space cannot be had.
  static Result<ReservedBuffer> reserve(size_t capacity);

  ReservedBuffer(ReservedBuffer&& other) noexcept;
  ReservedBuffer& operator=(ReservedBuffer&& other) noexcept;
  ReservedBuffer(const ReservedBuffer&) = delete;
  ReservedBuffer& operator=(const ReservedBuffer&) = delete;
  ~ReservedBuffer();

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  // How much of it holds data (set by the producer; at most the capacity).
  size_t size() const { return size_; }
  void set_size(size_t size) { size_ = size < capacity_ ? size : capacity_; }
  Bytes bytes() const { return {data_, size_}; }

 private:
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;  // of the mapping (0: none)
  size_t size_ = 0;
};

}  // namespace framewalk
