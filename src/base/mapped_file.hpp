// A read-only file image: either an mmap of a file or an owned buffer (for the
// vDSO, core segments and decompressed data). Shared so that views stay valid.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk {

class FileImage {
 public:
  // Maps `path` read-only. On failure, the error's offset is the errno value.
  static Result<std::shared_ptr<const FileImage>> map(const std::string& path);
  static std::shared_ptr<const FileImage> from_buffer(std::vector<uint8_t> buffer);
  // `size` bytes of `whole` from `offset`, without a copy (an archive member);
  // keeps `whole` alive. The range must lie inside `whole`.
  static std::shared_ptr<const FileImage> slice(std::shared_ptr<const FileImage> whole, size_t offset,
                                                size_t size);

  FileImage(const FileImage&) = delete;
  FileImage& operator=(const FileImage&) = delete;
  ~FileImage();

  Bytes bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  // Whether the bytes are a file's (mapped, or a slice of a mapped file),
  // not a buffer made in memory.
  bool from_file() const { return mapped_ || (whole_ && whole_->from_file()); }

 private:
  FileImage() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::vector<uint8_t> owned_;
  std::shared_ptr<const FileImage> whole_;  // the image a slice views
};

}  // namespace framewalk
