#include "base/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace framewalk {

Result<std::shared_ptr<const FileImage>> FileImage::map(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Error{ErrorCode::kIoError, static_cast<uint64_t>(err)};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{ErrorCode::kIoError, static_cast<uint64_t>(EISDIR)};
  }
  std::shared_ptr<FileImage> image(new FileImage());
  image->size_ = static_cast<size_t>(st.st_size);
  if (image->size_ > 0) {
    void* p = ::mmap(nullptr, image->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return Error{ErrorCode::kIoError, static_cast<uint64_t>(err)};
    }
    image->data_ = static_cast<const uint8_t*>(p);
    image->mapped_ = true;
  }
  ::close(fd);
  return std::shared_ptr<const FileImage>(std::move(image));
}

std::shared_ptr<const FileImage> FileImage::from_buffer(std::vector<uint8_t> buffer) {
  std::shared_ptr<FileImage> image(new FileImage());
  image->owned_ = std::move(buffer);
  image->data_ = image->owned_.data();
  image->size_ = image->owned_.size();
  return image;
}

std::shared_ptr<const FileImage> FileImage::slice(std::shared_ptr<const FileImage> whole, size_t offset,
                                                 size_t size) {
  std::shared_ptr<FileImage> image(new FileImage());
  image->data_ = whole->data_ + offset;
  image->size_ = size;
  image->whole_ = std::move(whole);
  return image;
}

FileImage::~FileImage() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace framewalk
