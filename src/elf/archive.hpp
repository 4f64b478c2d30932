// Reader for `ar` archives (static libraries): the GNU format with its
// long-name table and symbol tables, BSD `#1/N` names, and GNU thin archives,
// whose members are files beside the archive. Members are handed out one at a
// time so that the ones before a damaged header stay usable, as readelf does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::elf {

inline constexpr size_t kArchiveMagicSize = 8;
inline constexpr size_t kArchiveHeaderSize = 60;

enum class ArchiveKind : uint8_t { kRegular, kThin };

struct ArchiveMember {
  std::string name;           // long and BSD names resolved, the GNU trailing '/' removed
  uint64_t header_offset = 0; // of its 60-byte header in the archive
  uint64_t size = 0;          // the header's size field (with a BSD name, the name included)
  // The contents, inside the archive image; empty for a thin archive's
  // members, whose contents are the file `name` relative to the archive's directory.
  Bytes data;
  uint64_t data_offset = 0;   // of `data` in the archive (0 for thin members)
  // The header's name field as stored: readelf prints a short name that
  // has no GNU '/' (Go's archives, BSD's) with the field's space padding.
  std::string name_field;
};

// True when `image` starts with the magic of a regular or thin archive.
bool is_archive(Bytes image);

class ArchiveReader {
 public:
  // Checks the magic; errors carry offsets within `image`.
  static Result<ArchiveReader> open(Bytes image);

  ArchiveKind kind() const { return kind_; }

  // The next member, skipping symbol tables and the long-name table; nullopt
  // at the end. After an error the reader stays at the damaged header.
  Result<std::optional<ArchiveMember>> next();

 private:
  ArchiveReader(Bytes image, ArchiveKind kind) : image_(image), kind_(kind) {}
  Result<std::string> member_name(std::string_view field, uint64_t header_offset, Bytes* data);

  Bytes image_;
  ArchiveKind kind_;
  uint64_t next_header_ = kArchiveMagicSize;
  std::string_view long_names_;  // the GNU `//` member, once seen
};

}  // namespace framewalk::elf
