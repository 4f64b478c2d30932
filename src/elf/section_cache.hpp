// A cache on disk of inflated sections: a compressed section (SHF_COMPRESSED
// or .zdebug_*) of a file with a build-id, once inflated, is written to a file
// of its own, and a later run maps that file instead of inflating again
// (distributions' debug files compress their DWARF; inflating it was most of
// a symbolizer's start). Off by default in the library; `framewalk addr2line`
// turns it on unless FRAMEWALK_CACHE=off.
//
// A cache file is never trusted: its header must name the same build-id,
// section (index, name, compression, sizes) and format version, its length
// must be exactly the header's and the payload's, and the payload's checksum
// must match; a file that fails any of these (truncated, corrupted, another
// section's) is ignored, the section inflated again and the file replaced.
// Files are written whole under a temporary name and renamed into place, never
// rewritten in place. The directory is kept under a size bound by removing
// the files least recently used (a file used is touched).
//
// Defined in elf_file.cpp, beside the inflation they spare.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/mapped_file.hpp"

namespace framewalk::elf {

inline constexpr uint64_t kDefaultSectionCacheBytes = uint64_t{1} << 30;  // 1 GiB
inline constexpr uint64_t kDefaultSectionCacheMinSection = uint64_t{64} << 10;

struct SectionCacheSettings {
  std::string directory;                           // created (mode 0700) when first written
  uint64_t max_bytes = kDefaultSectionCacheBytes;  // the directory's cache files, at most
  uint64_t min_section_bytes = kDefaultSectionCacheMinSection;  // smaller sections are inflated each time
};

// The cache of the sections inflated from now on (nullopt: none, the default).
void set_section_cache(std::optional<SectionCacheSettings> settings);
std::optional<SectionCacheSettings> section_cache();

// The settings the environment asks for: none when FRAMEWALK_CACHE is "off"
// (or "0", "no", "false"); the directory $XDG_CACHE_HOME/framewalk, else
// $HOME/.cache/framewalk (none without either); FRAMEWALK_CACHE_MAX_MB
// bounds its size (default 1024).
std::optional<SectionCacheSettings> section_cache_from_environment();

// What identifies an inflated section.
struct SectionCacheKey {
  std::vector<uint8_t> build_id;  // of the file the section is in; not empty
  uint32_t index = 0;             // section index
  std::string name;
  uint32_t compression = 0;       // ch_type; kZdebugCompression for .zdebug_*
  uint64_t compressed_size = 0;   // sh_size, in the file
  uint64_t size = 0;              // inflated
};
inline constexpr uint32_t kZdebugCompression = 0x42494c5a;  // "ZLIB"

// The cache file format (little-endian), version 1:
//   0  8  "FWSECTN\n"
//   8  4  version (1)
//  12  4  compression
//  16  8  index
//  24  8  compressed size
//  32  8  payload size (the inflated size)
//  40  8  payload checksum (section_cache_checksum)
//  48  8  payload offset (the header's end rounded up to 4096)
//  56  2  build-id length B
//  58  2  name length N
//  60  4  zero
//  64  B+N  build-id, name; zeros up to the payload
inline constexpr uint32_t kSectionCacheVersion = 1;
inline constexpr size_t kSectionCachePayloadAlign = 4096;

// A 64-bit checksum (not cryptographic: it finds truncation and corruption,
// not forgery); several GB/s.
uint64_t section_cache_checksum(Bytes data);
// The file name of a key in the cache directory.
std::string section_cache_file_name(const SectionCacheKey& key);
// The header (with its padding) of a cache file of `payload`.
std::vector<uint8_t> section_cache_header(const SectionCacheKey& key, Bytes payload);

enum class SectionCacheCheck { kOk, kTooShort, kNotCacheFile, kOtherSection, kWrongLength, kBadChecksum };
const char* to_string(SectionCacheCheck check);
// Checks the image of a cache file against `key`; on kOk, *payload is the inflated section.
SectionCacheCheck check_section_cache_file(Bytes file, const SectionCacheKey& key, Bytes* payload);

// A cache file mapped, and the inflated section in it.
struct CachedSection {
  std::shared_ptr<const FileImage> image;
  Bytes data;
};
// The section from the cache, or nullopt (no file, or one refused).
std::optional<CachedSection> load_cached_section(const SectionCacheSettings& settings, const SectionCacheKey& key);
// Writes the section to the cache (then keeps the directory within its
// bound); false when it could not (the cache is only a cache: no error).
bool store_cached_section(const SectionCacheSettings& settings, const SectionCacheKey& key, Bytes data);

}  // namespace framewalk::elf
