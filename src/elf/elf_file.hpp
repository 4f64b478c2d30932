// ELF reader over a FileImage: ELF32/ELF64 in either byte order. Headers,
// sections (decompressed on demand), segments, notes and symbols.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/machine_key.hpp"
#include "base/mapped_file.hpp"
#include "base/reserved_buffer.hpp"
#include "base/result.hpp"

namespace framewalk::elf {

inline constexpr uint16_t kEtRel = 1, kEtExec = 2, kEtDyn = 3, kEtCore = 4;
inline constexpr uint32_t kShtNull = 0, kShtProgbits = 1, kShtSymtab = 2, kShtStrtab = 3,
                          kShtNobits = 8, kShtDynsym = 11, kShtX86_64Unwind = 0x70000001;
inline constexpr uint64_t kShfAlloc = 0x2, kShfExecinstr = 0x4, kShfCompressed = 0x800;
inline constexpr uint32_t kPfX = 1, kPfW = 2, kPfR = 4;
inline constexpr uint32_t kPtLoad = 1, kPtDynamic = 2, kPtInterp = 3, kPtNote = 4, kPtPhdr = 6, kPtGnuEhFrame = 0x6474e550,
                          kPtGnuSframe = 0x6474e554;
// The e_machine numbers: base/machine_key.hpp.
using framewalk::kEm386, framewalk::kEmMips, framewalk::kEmPpc, framewalk::kEmPpc64, framewalk::kEmS390,
    framewalk::kEmArm, framewalk::kEmSparcv9, framewalk::kEmX86_64, framewalk::kEmAarch64, framewalk::kEmRiscv,
    framewalk::kEmLoongarch, framewalk::kEmSparc, framewalk::kEmSparc32plus;

struct Section {
  uint32_t index = 0;
  std::string_view name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t address = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t entsize = 0;
};

struct Segment {
  uint32_t type = 0;
  uint32_t flags = 0;
  uint64_t offset = 0;
  uint64_t vaddr = 0;
  uint64_t filesz = 0;
  uint64_t memsz = 0;
  uint64_t align = 0;
};

struct Note {
  uint32_t type;
  std::string_view name;
  Bytes desc;
};

// The machine an ELF file is for, from its first bytes alone (at least up to
// e_flags: 40 bytes of an ELF32 header, 52 of an ELF64 one), without
// parsing the rest: a live process's executable, say.
Result<MachineKey> header_machine_key(Bytes header);

class ElfFile {
 public:
  // Parses the headers of `image`; `name` is used in messages only.
  static Result<std::shared_ptr<ElfFile>> parse(std::shared_ptr<const FileImage> image,
                                                std::string name);
  static Result<std::shared_ptr<ElfFile>> open(const std::string& path);

  const std::string& name() const { return name_; }
  bool is_64() const { return is_64_; }
  Endian endian() const { return endian_; }
  unsigned address_size() const { return is_64_ ? 8 : 4; }
  uint16_t type() const { return type_; }
  uint16_t machine() const { return machine_; }
  uint32_t flags() const { return flags_; }  // e_flags
  // e_machine with what tells machines of one number apart.
  MachineKey machine_key() const { return {machine_, is_64_, endian_, flags_}; }
  uint64_t entry() const { return entry_; }
  uint64_t program_header_offset() const { return phoff_; }  // e_phoff
  Bytes image() const { return image_->bytes(); }
  // Whether the image is a file's (not an object made or read into memory:
  // a GDB JIT object, a jitdump's code, a vDSO copy).
  bool image_from_file() const { return image_->from_file(); }

  const std::vector<Section>& sections() const { return sections_; }
  const std::vector<Segment>& segments() const { return segments_; }
  const Section* section_by_name(std::string_view name) const;
  // A DWARF section by its name (".debug_info"), or by the legacy GNU
  // spelling of a compressed one (".zdebug_info"), which section_data inflates.
  const Section* debug_section(std::string_view name) const;
  // The allocated section containing `address`, preferring non-empty ones.
  const Section* section_by_address(uint64_t address) const;

  // A section's bytes, decompressed when SHF_COMPRESSED (or .zdebug_*).
  // NOBITS sections yield an empty span.
  Result<Bytes> section_data(const Section& section) const;

  // The load bias for a module mapped at `map_start` with the first PT_LOAD at offset 0.
  uint64_t first_load_vaddr() const;

  std::vector<Note> notes() const;
  std::optional<std::vector<uint8_t>> build_id() const;
  // .gnu_debuglink: file name and CRC32.
  std::optional<std::pair<std::string, uint32_t>> debuglink() const;

  // .gnu_debugaltlink (dwz): the supplementary file's path as written and its build-id.
  std::optional<std::pair<std::string, std::vector<uint8_t>>> debugaltlink() const;

  // The embedded MiniDebugInfo (.gnu_debugdata, xz-compressed ELF), if any.
  Result<std::shared_ptr<ElfFile>> gnu_debugdata() const;

 private:
  ElfFile() = default;
  Result<void> parse_headers();
  void index_addresses();
  const Section* scan_by_address(uint64_t address) const;

  std::shared_ptr<const FileImage> image_;
  std::string name_;
  bool is_64_ = true;
  uint64_t phoff_ = 0;
  Endian endian_ = Endian::kLittle;
  uint16_t type_ = 0;
  uint16_t machine_ = 0;
  uint32_t flags_ = 0;
  uint64_t entry_ = 0;
  std::vector<Section> sections_;
  std::vector<Segment> segments_;
  // section_by_address's answer from each address to the next one's, as
  // (start, section index or kNoSection), when address_indexed_.
  static constexpr uint32_t kNoSection = UINT32_MAX;
  static constexpr size_t kIndexedSectionsAtMost = 1024;
  std::vector<std::pair<uint64_t, uint32_t>> address_index_;
  bool address_indexed_ = false;
  // Decompressed section contents (or why they could not be had), keyed by
  // section index; kept for the file's lifetime: inflated here, or mapped
  // from the cache on disk (elf/section_cache.hpp).
  struct DecompressedSection {
    std::once_flag once;
    std::optional<Result<Bytes>> result;
    ReservedBuffer inflated;
    std::shared_ptr<const FileImage> cached;
  };
  Result<Bytes> inflate(const Section& section, Bytes raw, DecompressedSection& slot) const;
  mutable std::mutex decompressed_mutex_;
  mutable std::map<uint32_t, std::unique_ptr<DecompressedSection>> decompressed_;
};

// Decompressed sections larger than this are refused: a hostile header must not
// make us allocate without bound. Real sections are far smaller.
inline constexpr uint64_t kMaxDecompressedSize = uint64_t{1} << 31;

// Decompression helpers (also used by tests and fuzzers), in codecs.cpp
// (codecs_none.cpp in a build without the libraries).
// zlib and zstd write into a buffer of exactly the claimed size (pages
// backed as written); xz, whose size nothing claims, into a growing vector.
Result<ReservedBuffer> decompress_zlib(Bytes input, uint64_t expected_size);
Result<ReservedBuffer> decompress_zstd(Bytes input, uint64_t expected_size);
Result<std::vector<uint8_t>> decompress_xz(Bytes input, uint64_t max_size);

// CRC-32 as used by .gnu_debuglink.
uint32_t gnu_debuglink_crc32(Bytes data, uint32_t crc = 0);

}  // namespace framewalk::elf
