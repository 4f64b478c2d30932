#include "elf/elf_file.hpp"
#include "elf/section_cache.hpp"
#include "elf/string_table.hpp"

#include "base/radix_sort.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <ctime>
#include <cstdlib>
#include <cstring>

namespace framewalk::elf {

namespace {

constexpr uint32_t kElfCompressZlib = 1;
constexpr uint32_t kElfCompressZstd = 2;

}  // namespace

Result<std::shared_ptr<ElfFile>> ElfFile::open(const std::string& path) {
  FW_TRY(auto image, FileImage::map(path));
  return parse(std::move(image), path);
}

Result<std::shared_ptr<ElfFile>> ElfFile::parse(std::shared_ptr<const FileImage> image,
                                                std::string name) {
  std::shared_ptr<ElfFile> file(new ElfFile());
  file->image_ = std::move(image);
  file->name_ = std::move(name);
  FW_CHECK(file->parse_headers());
  return file;
}

namespace {
// e_ident's class and byte order, after the magic.
Result<MachineKey> identification(Bytes bytes) {
  if (bytes.size() < 16 || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0)
    return Error{ErrorCode::kBadElf, 0};
  const uint8_t elf_class = bytes[4];
  const uint8_t data = bytes[5];
  if (elf_class != 1 && elf_class != 2) return Error{ErrorCode::kBadElf, 4};
  if (data != 1 && data != 2) return Error{ErrorCode::kBadElf, 5};
  MachineKey key;
  key.is_64 = elf_class == 2;
  key.endian = data == 1 ? Endian::kLittle : Endian::kBig;
  return key;
}
}  // namespace

Result<MachineKey> header_machine_key(Bytes header) {
  FW_TRY(MachineKey key, identification(header));
  ByteReader r(header, key.endian);
  FW_CHECK(r.seek(18));
  FW_TRY(key.elf_machine, r.u16());
  FW_CHECK(r.seek(key.is_64 ? 48 : 36));
  FW_TRY(key.flags, r.u32());
  return key;
}

Result<void> ElfFile::parse_headers() {
  const Bytes bytes = image_->bytes();
  FW_TRY(const MachineKey key, identification(bytes));
  is_64_ = key.is_64;
  endian_ = key.endian;

  ByteReader r(bytes, endian_);
  FW_CHECK(r.seek(16));
  FW_TRY(type_, r.u16());
  FW_TRY(machine_, r.u16());
  FW_TRY(uint32_t version, r.u32());
  (void)version;
  const unsigned asz = address_size();
  FW_TRY(entry_, r.address(asz));
  FW_TRY(uint64_t phoff, r.address(asz));
  phoff_ = phoff;
  FW_TRY(uint64_t shoff, r.address(asz));
  FW_TRY(flags_, r.u32());
  FW_TRY(uint16_t ehsize, r.u16());
  (void)ehsize;
  FW_TRY(uint16_t phentsize, r.u16());
  FW_TRY(uint16_t phnum16, r.u16());
  FW_TRY(uint16_t shentsize, r.u16());
  FW_TRY(uint16_t shnum16, r.u16());
  FW_TRY(uint16_t shstrndx16, r.u16());

  const unsigned want_sh = is_64_ ? 64 : 40;
  const unsigned want_ph = is_64_ ? 56 : 32;
  uint64_t shnum = shnum16;
  uint32_t shstrndx = shstrndx16;
  uint64_t phnum = phnum16;

  auto read_section_header = [&](uint64_t index, Section& s) -> Result<void> {
    const uint64_t off = shoff + index * shentsize;
    if (off > bytes.size() || shentsize > bytes.size() - off) return Error{ErrorCode::kSectionOutOfFile, off};
    ByteReader sr(bytes.subspan(off, shentsize), endian_, off);
    FW_CHECK(sr.skip(4));  // sh_name: resolved once the string table is known
    FW_TRY(s.type, sr.u32());
    FW_TRY(s.flags, sr.address(asz));
    FW_TRY(s.address, sr.address(asz));
    FW_TRY(s.offset, sr.address(asz));
    FW_TRY(s.size, sr.address(asz));
    FW_TRY(s.link, sr.u32());
    uint32_t info;
    FW_TRY(info, sr.u32());
    uint64_t align;
    FW_TRY(align, sr.address(asz));
    (void)align;
    FW_TRY(s.entsize, sr.address(asz));
    s.index = static_cast<uint32_t>(index);
    s.info = info;
    return ok();
  };

  if (shoff != 0) {
    if (shentsize != want_sh) return Error{ErrorCode::kBadElf, is_64_ ? 58u : 46u};
    if (shnum == 0 || shstrndx == 0xffff) {
      // Extended numbering: the real values live in section header 0.
      Section s0;
      FW_CHECK(read_section_header(0, s0));
      if (shnum == 0) shnum = s0.size;
      if (shstrndx == 0xffff) shstrndx = s0.link;
    }
    if (shoff > bytes.size() || shnum > (bytes.size() - shoff) / shentsize)
      return Error{ErrorCode::kSectionOutOfFile, shoff};
    sections_.resize(shnum);
    std::vector<uint32_t> name_offsets(shnum);
    for (uint64_t i = 0; i < shnum; ++i) {
      const uint64_t off = shoff + i * shentsize;
      ByteReader sr(bytes.subspan(off, shentsize), endian_, off);
      FW_TRY(name_offsets[i], sr.u32());
      FW_CHECK(read_section_header(i, sections_[i]));
    }
    if (shstrndx < shnum) {
      const Section& strtab = sections_[shstrndx];
      if (strtab.type != kShtNobits && strtab.offset <= bytes.size() &&
          strtab.size <= bytes.size() - strtab.offset) {
        const auto names = strings_at(bytes.subspan(strtab.offset, strtab.size), name_offsets);
        for (uint64_t i = 0; i < shnum; ++i) sections_[i].name = names[i];
      }
    }
  }

  if (phoff != 0 && phnum != 0) {
    if (phentsize != want_ph) return Error{ErrorCode::kBadElf, is_64_ ? 54u : 42u};
    if (phnum == 0xffff && !sections_.empty()) phnum = sections_[0].info;
    if (phoff > bytes.size() || phnum > (bytes.size() - phoff) / phentsize)
      return Error{ErrorCode::kSectionOutOfFile, phoff};
    segments_.resize(phnum);
    for (uint64_t i = 0; i < phnum; ++i) {
      const uint64_t off = phoff + i * phentsize;
      ByteReader pr(bytes.subspan(off, phentsize), endian_, off);
      Segment& p = segments_[i];
      FW_TRY(p.type, pr.u32());
      if (is_64_) {
        FW_TRY(p.flags, pr.u32());
        FW_TRY(p.offset, pr.u64());
        FW_TRY(p.vaddr, pr.u64());
        FW_TRY(uint64_t paddr, pr.u64());
        (void)paddr;
        FW_TRY(p.filesz, pr.u64());
        FW_TRY(p.memsz, pr.u64());
        FW_TRY(p.align, pr.u64());
      } else {
        FW_TRY(uint32_t o, pr.u32());
        FW_TRY(uint32_t v, pr.u32());
        FW_TRY(uint32_t pa, pr.u32());
        (void)pa;
        FW_TRY(uint32_t fs, pr.u32());
        FW_TRY(uint32_t ms, pr.u32());
        FW_TRY(p.flags, pr.u32());
        FW_TRY(uint32_t al, pr.u32());
        p.offset = o; p.vaddr = v; p.filesz = fs; p.memsz = ms; p.align = al;
      }
    }
  }
  index_addresses();
  return ok();
}

void ElfFile::index_addresses() {
  // The answer of the scan below for every stretch between two section
  // boundaries, when there are few sections (linked files; an object file
  // may have thousands, all at 0) and none reaches past 2^64.
  if (sections_.size() > kIndexedSectionsAtMost) return;
  std::vector<uint64_t> bounds;
  for (const Section& s : sections_) {
    if (!(s.flags & kShfAlloc) || s.size == 0) continue;
    if (s.address + s.size < s.address) return;
    bounds.push_back(s.address);
    bounds.push_back(s.address + s.size);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  for (size_t i = 0; i < bounds.size(); ++i) {
    const Section* best = scan_by_address(bounds[i]);
    const uint32_t index = best ? best->index : kNoSection;
    if (address_index_.empty() || address_index_.back().second != index) address_index_.push_back({bounds[i], index});
  }
  address_indexed_ = true;
}

const Section* ElfFile::section_by_name(std::string_view name) const {
  for (const Section& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

const Section* ElfFile::debug_section(std::string_view name) const {
  if (const Section* s = section_by_name(name)) return s;
  if (name.size() < 2 || name[0] != '.') return nullptr;
  return section_by_name(".z" + std::string(name.substr(1)));
}

const Section* ElfFile::section_by_address(uint64_t address) const {
  if (!address_indexed_) return scan_by_address(address);
  auto it = std::upper_bound(address_index_.begin(), address_index_.end(), address,
                             [](uint64_t a, const std::pair<uint64_t, uint32_t>& e) { return a < e.first; });
  if (it == address_index_.begin()) return nullptr;
  const uint32_t index = std::prev(it)->second;
  return index == kNoSection ? nullptr : &sections_[index];
}

const Section* ElfFile::scan_by_address(uint64_t address) const {
  const Section* best = nullptr;
  for (const Section& s : sections_) {
    if (!(s.flags & kShfAlloc)) continue;
    if (address >= s.address && address - s.address < s.size) {
      if (!best || s.size < best->size) best = &s;
    }
  }
  return best;
}

uint64_t ElfFile::first_load_vaddr() const {
  for (const Segment& p : segments_)
    if (p.type == kPtLoad) return p.vaddr - p.offset;
  return 0;
}

namespace {

// A compressed section's header: how it is compressed, its inflated size and
// the compressed stream.
struct CompressedSection {
  uint32_t type = 0;  // ch_type, or kZdebugCompression
  uint64_t size = 0;
  Bytes stream;
};

Result<CompressedSection> compressed_section(const Section& s, Bytes raw, bool is_64, Endian endian) {
  CompressedSection c;
  if (s.flags & kShfCompressed) {
    ByteReader r(raw, endian, s.offset);
    FW_TRY(c.type, r.u32());
    if (is_64) {
      FW_TRY(uint32_t reserved, r.u32());
      (void)reserved;
      FW_TRY(c.size, r.u64());
      FW_TRY(uint64_t align, r.u64());
      (void)align;
    } else {
      FW_TRY(uint32_t sz, r.u32());
      c.size = sz;
      FW_TRY(uint32_t align, r.u32());
      (void)align;
    }
    c.stream = raw.subspan(r.offset());
    return c;
  }
  // Legacy .zdebug_*: "ZLIB" + 8-byte big-endian size + zlib stream.
  if (raw.size() < 12 || std::memcmp(raw.data(), "ZLIB", 4) != 0) return Error{ErrorCode::kDecompressFailed, s.offset};
  for (int i = 4; i < 12; ++i) c.size = (c.size << 8) | raw[i];
  c.type = kZdebugCompression;
  c.stream = raw.subspan(12);
  return c;
}

// The contents of compressed section `s` at file offset `offset`.
Result<ReservedBuffer> inflate_section(const CompressedSection& c, uint64_t offset) {
  Result<ReservedBuffer> decompressed = Error{ErrorCode::kDecompressFailed, offset};
  if (c.type == kElfCompressZlib || c.type == kZdebugCompression) decompressed = decompress_zlib(c.stream, c.size);
  else if (c.type == kElfCompressZstd) decompressed = decompress_zstd(c.stream, c.size);
  // The decompressors know no offsets: name the section's.
  if (!decompressed) return Error{decompressed.error().code, offset};
  return decompressed;
}

// What names section `s` in the cache, when it goes there: large enough, of
// a file with a build-id.
std::optional<SectionCacheKey> cache_key(const ElfFile& file, const Section& s, const CompressedSection& c,
                                         const SectionCacheSettings& cache) {
  if (c.size < cache.min_section_bytes || c.size > kMaxDecompressedSize) return std::nullopt;
  std::optional<std::vector<uint8_t>> id = file.build_id();
  if (!id || id->empty()) return std::nullopt;
  return SectionCacheKey{std::move(*id), s.index, std::string(s.name), c.type, s.size, c.size};
}

}  // namespace

Result<Bytes> ElfFile::section_data(const Section& s) const {
  const Bytes bytes = image_->bytes();
  if (s.type == kShtNobits) return Bytes{};
  if (s.offset > bytes.size() || s.size > bytes.size() - s.offset)
    return Error{ErrorCode::kSectionOutOfFile, s.offset};
  Bytes raw = bytes.subspan(s.offset, s.size);
  const bool gnu_z = s.name.size() > 8 && s.name.substr(0, 8) == ".zdebug_";
  if (!(s.flags & kShfCompressed) && !gnu_z) return raw;

  // Each section is decompressed once, the result (or error) kept; two
  // sections may be decompressed at the same time by two threads.
  DecompressedSection* slot;
  {
    std::lock_guard<std::mutex> lock(decompressed_mutex_);
    std::unique_ptr<DecompressedSection>& entry = decompressed_[s.index];
    if (!entry) entry = std::make_unique<DecompressedSection>();
    slot = entry.get();
  }
  bool inflated_here = false;
  std::call_once(slot->once, [&] {
    slot->result.emplace(inflate(s, raw, *slot));
    inflated_here = true;
  });
  // Written to the cache on disk by the thread that inflated it, once the
  // bytes are there: a thread waiting for them goes on meanwhile.
  if (inflated_here && *slot->result && !slot->cached) {
    const std::optional<SectionCacheSettings> cache = section_cache();
    if (auto c = compressed_section(s, raw, is_64_, endian_); c && cache)
      if (std::optional<SectionCacheKey> key = cache_key(*this, s, *c, *cache))
        (void)store_cached_section(*cache, *key, slot->inflated.bytes());
  }
  return *slot->result;
}

Result<Bytes> ElfFile::inflate(const Section& s, Bytes raw, DecompressedSection& slot) const {
  FW_TRY(const CompressedSection c, compressed_section(s, raw, is_64_, endian_));
  // From the cache on disk when it has the section (a file with a build-id).
  // (section_data writes it there once inflated.)
  if (const std::optional<SectionCacheSettings> cache = section_cache()) {
    if (std::optional<SectionCacheKey> key = cache_key(*this, s, c, *cache)) {
      if (std::optional<CachedSection> hit = load_cached_section(*cache, *key)) {
        slot.cached = std::move(hit->image);
        return hit->data;
      }
    }
  }
  FW_TRY(slot.inflated, inflate_section(c, s.offset));
  return slot.inflated.bytes();
}

std::vector<Note> ElfFile::notes() const {
  std::vector<Note> out;
  auto parse_notes = [&](Bytes data) {
    ByteReader r(data, endian_);
    while (r.remaining() >= 12) {
      auto namesz = r.u32(), descsz = r.u32(), type = r.u32();
      if (!namesz || !descsz || !type) return;
      const uint64_t name_padded = (uint64_t{*namesz} + 3) & ~uint64_t{3};
      const uint64_t desc_padded = (uint64_t{*descsz} + 3) & ~uint64_t{3};
      auto name = r.bytes(*namesz);
      if (!name) return;
      if (!r.skip(name_padded - *namesz)) return;
      auto desc = r.bytes(*descsz);
      if (!desc) return;
      (void)r.skip(std::min<uint64_t>(desc_padded - *descsz, r.remaining()));
      std::string_view n(reinterpret_cast<const char*>(name->data()), name->size());
      if (!n.empty() && n.back() == '\0') n.remove_suffix(1);
      out.push_back(Note{*type, n, *desc});
    }
  };
  bool from_sections = false;
  for (const Section& s : sections_) {
    if (s.type != 7 /* SHT_NOTE */) continue;
    from_sections = true;
    if (auto d = section_data(s)) parse_notes(*d);
  }
  if (!from_sections) {
    const Bytes bytes = image_->bytes();
    for (const Segment& p : segments_) {
      if (p.type != kPtNote) continue;
      if (p.offset > bytes.size() || p.filesz > bytes.size() - p.offset) continue;
      parse_notes(bytes.subspan(p.offset, p.filesz));
    }
  }
  return out;
}

std::optional<std::vector<uint8_t>> ElfFile::build_id() const {
  for (const Note& n : notes())
    if (n.type == 3 /* NT_GNU_BUILD_ID */ && n.name == "GNU")
      return std::vector<uint8_t>(n.desc.begin(), n.desc.end());
  return std::nullopt;
}

std::optional<std::pair<std::string, uint32_t>> ElfFile::debuglink() const {
  const Section* s = section_by_name(".gnu_debuglink");
  if (!s) return std::nullopt;
  auto data = section_data(*s);
  if (!data) return std::nullopt;
  ByteReader r(*data, endian_);
  auto name = r.cstring();
  if (!name) return std::nullopt;
  const size_t aligned = (r.offset() + 3) & ~size_t{3};
  if (!r.seek(aligned)) return std::nullopt;
  auto crc = r.u32();
  if (!crc) return std::nullopt;
  return std::make_pair(std::string(*name), *crc);
}

std::optional<std::pair<std::string, std::vector<uint8_t>>> ElfFile::debugaltlink() const {
  const Section* s = section_by_name(".gnu_debugaltlink");
  if (!s) return std::nullopt;
  auto data = section_data(*s);
  if (!data) return std::nullopt;
  ByteReader r(*data, endian_);
  auto name = r.cstring();
  if (!name || name->empty() || r.remaining() == 0) return std::nullopt;
  auto id = r.bytes(r.remaining());
  if (!id) return std::nullopt;
  return std::make_pair(std::string(*name), std::vector<uint8_t>(id->begin(), id->end()));
}

Result<std::shared_ptr<ElfFile>> ElfFile::gnu_debugdata() const {
  const Section* s = section_by_name(".gnu_debugdata");
  if (!s) return Error{ErrorCode::kNotFound, 0};
  FW_TRY(Bytes data, section_data(*s));
  auto decompressed = decompress_xz(data, kMaxDecompressedSize);
  if (!decompressed) return Error{decompressed.error().code, s->offset};
  return ElfFile::parse(FileImage::from_buffer(std::move(*decompressed)),
                        name_ + "[.gnu_debugdata]");
}

std::vector<std::string_view> strings_at(Bytes table, const std::vector<uint32_t>& offsets) {
  std::vector<std::string_view> out(offsets.size());
  // Offsets from the highest down: [offset, scanned) is searched for a NUL
  // only once, and without one the string ends where the next one did.
  std::vector<uint32_t> order(offsets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  radix_sort(order, [&](uint32_t i) { return uint64_t{offsets[i]}; });
  const char* base = reinterpret_cast<const char*>(table.data());
  size_t scanned = table.size(), nul = table.size();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const size_t i = *it;
    const size_t at = offsets[i];
    if (at >= table.size()) continue;
    if (at < scanned) {
      if (const void* p = std::memchr(base + at, 0, scanned - at)) nul = static_cast<size_t>(static_cast<const char*>(p) - base);
      scanned = at;
    }
    out[i] = std::string_view(base + at, nul - at);
  }
  return out;
}

// ---- the cache of inflated sections (elf/section_cache.hpp) ----------------------------

namespace {

// Whether a cache is set, read without the lock: where none is (every
// program but addr2line, the in-process unwinder among them) inflating a
// section takes no lock and makes no copy more than before.
std::atomic<bool> g_cache_on{false};
std::mutex g_cache_mutex;
std::optional<SectionCacheSettings> g_cache;

constexpr char kCacheMagic[8] = {'F', 'W', 'S', 'E', 'C', 'T', 'N', '\n'};
constexpr size_t kCacheFixedHeader = 64;
constexpr char kCacheSuffix[] = ".fwsec";
// A temporary file of a writer that died is removed when this old.
constexpr time_t kStaleTemporarySeconds = 3600;

void put_le(std::vector<uint8_t>& out, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t get_le(Bytes in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | in[at + i];
  return v;
}

uint64_t load_le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

uint64_t rotl(uint64_t v, int n) { return (v << n) | (v >> (64 - n)); }

size_t payload_offset(const SectionCacheKey& key) {
  const size_t header = kCacheFixedHeader + key.build_id.size() + key.name.size();
  return (header + kSectionCachePayloadAlign - 1) / kSectionCachePayloadAlign * kSectionCachePayloadAlign;
}

bool write_all(int fd, Bytes data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data = data.subspan(static_cast<size_t>(n));
  }
  return true;
}

// Every directory of `path` made, the last one private.
bool make_directory(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_directory(path.substr(0, slash))) return false;
  return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST;
}

// Removes the cache files least recently used until those left fit in the
// bound, and temporary files of writers that died; never `just_written`
// (the most recent of all, whatever the clock's granularity says).
void keep_within_bound(const SectionCacheSettings& settings, const std::string& just_written) {
  DIR* dir = ::opendir(settings.directory.c_str());
  if (!dir) return;
  struct Entry {
    std::string path;
    uint64_t size;
    struct timespec used;
  };
  std::vector<Entry> files;
  uint64_t total = 0;
  const time_t now = ::time(nullptr);
  while (const dirent* d = ::readdir(dir)) {
    const std::string_view name = d->d_name;
    const bool temporary = name.find(std::string(kCacheSuffix) + ".tmp") != std::string_view::npos;
    if (!temporary && (name.size() <= sizeof kCacheSuffix - 1 || !name.ends_with(kCacheSuffix))) continue;
    std::string path = settings.directory + "/" + std::string(name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (temporary) {
      if (now - st.st_mtime > kStaleTemporarySeconds) ::unlink(path.c_str());
      continue;
    }
    total += static_cast<uint64_t>(st.st_size);
    if (path != just_written) files.push_back({std::move(path), static_cast<uint64_t>(st.st_size), st.st_mtim});
  }
  ::closedir(dir);
  if (total <= settings.max_bytes) return;
  // Equal times (a coarse clock) in name order, so that the same directory
  // always loses the same files.
  std::sort(files.begin(), files.end(), [](const Entry& a, const Entry& b) {
    if (a.used.tv_sec != b.used.tv_sec) return a.used.tv_sec < b.used.tv_sec;
    if (a.used.tv_nsec != b.used.tv_nsec) return a.used.tv_nsec < b.used.tv_nsec;
    return a.path < b.path;
  });
  for (const Entry& f : files) {
    if (total <= settings.max_bytes) break;
    if (::unlink(f.path.c_str()) == 0) total -= f.size;
  }
}

}  // namespace

void set_section_cache(std::optional<SectionCacheSettings> settings) {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache_on.store(settings.has_value(), std::memory_order_release);
  g_cache = std::move(settings);
}

std::optional<SectionCacheSettings> section_cache() {
  if (!g_cache_on.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  return g_cache;
}

std::optional<SectionCacheSettings> section_cache_from_environment() {
  if (const char* on = std::getenv("FRAMEWALK_CACHE")) {
    const std::string_view v = on;
    if (v == "off" || v == "0" || v == "no" || v == "false") return std::nullopt;
  }
  SectionCacheSettings settings;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && xdg[0] == '/') settings.directory = std::string(xdg) + "/framewalk";
  else if (home && home[0] == '/') settings.directory = std::string(home) + "/.cache/framewalk";
  else return std::nullopt;
  if (const char* mb = std::getenv("FRAMEWALK_CACHE_MAX_MB"); mb && *mb) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(mb, &end, 10);
    if (end && *end == '\0' && v <= (UINT64_MAX >> 20)) settings.max_bytes = uint64_t{v} << 20;
  }
  return settings;
}

uint64_t section_cache_checksum(Bytes data) {
  // Four lanes of 64-bit multiply-rotate rounds over 32-byte blocks (the
  // round of xxHash64), then the tail bytes, then a final mix.
  constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull;
  uint64_t lane[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  const uint8_t* p = data.data();
  const size_t n = data.size();
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) lane[k] = rotl(lane[k] + load_le64(p + i + 8 * k) * kP2, 31) * kP1;
  uint64_t h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18);
  for (int k = 0; k < 4; ++k) h = (h ^ (rotl(lane[k] * kP2, 31) * kP1)) * kP1 + kP3;
  h += n;
  for (; i < n; ++i) h = rotl(h ^ (p[i] * kP3), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

std::string section_cache_file_name(const SectionCacheKey& key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name;
  for (uint8_t b : key.build_id) {
    name += kHex[b >> 4];
    name += kHex[b & 15];
  }
  name += '-' + std::to_string(key.index) + '-';
  // The section's name in characters safe in a file name.
  for (char c : key.name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (safe) name += c;
  }
  return name + kCacheSuffix;
}

std::vector<uint8_t> section_cache_header(const SectionCacheKey& key, Bytes payload) {
  std::vector<uint8_t> out(payload_offset(key), 0);
  std::memcpy(out.data(), kCacheMagic, sizeof kCacheMagic);
  put_le(out, 8, kSectionCacheVersion, 4);
  put_le(out, 12, key.compression, 4);
  put_le(out, 16, key.index, 8);
  put_le(out, 24, key.compressed_size, 8);
  put_le(out, 32, payload.size(), 8);
  put_le(out, 40, section_cache_checksum(payload), 8);
  put_le(out, 48, out.size(), 8);
  put_le(out, 56, key.build_id.size(), 2);
  put_le(out, 58, key.name.size(), 2);
  std::copy(key.build_id.begin(), key.build_id.end(), out.begin() + kCacheFixedHeader);
  std::copy(key.name.begin(), key.name.end(), out.begin() + kCacheFixedHeader + key.build_id.size());
  return out;
}

const char* to_string(SectionCacheCheck check) {
  switch (check) {
    case SectionCacheCheck::kOk: return "ok";
    case SectionCacheCheck::kTooShort: return "shorter than its header";
    case SectionCacheCheck::kNotCacheFile: return "not a section cache file of this version";
    case SectionCacheCheck::kOtherSection: return "another section's";
    case SectionCacheCheck::kWrongLength: return "of another length than its header says";
    case SectionCacheCheck::kBadChecksum: return "payload checksum mismatch";
  }
  return "?";
}

SectionCacheCheck check_section_cache_file(Bytes file, const SectionCacheKey& key, Bytes* payload) {
  if (file.size() < kCacheFixedHeader) return SectionCacheCheck::kTooShort;
  if (std::memcmp(file.data(), kCacheMagic, sizeof kCacheMagic) != 0 || get_le(file, 8, 4) != kSectionCacheVersion ||
      get_le(file, 60, 4) != 0)
    return SectionCacheCheck::kNotCacheFile;
  const size_t id_size = static_cast<size_t>(get_le(file, 56, 2)), name_size = static_cast<size_t>(get_le(file, 58, 2));
  if (file.size() < kCacheFixedHeader + id_size + name_size) return SectionCacheCheck::kTooShort;
  const Bytes id = file.subspan(kCacheFixedHeader, id_size);
  const Bytes name = file.subspan(kCacheFixedHeader + id_size, name_size);
  if (get_le(file, 12, 4) != key.compression || get_le(file, 16, 8) != key.index ||
      get_le(file, 24, 8) != key.compressed_size || get_le(file, 32, 8) != key.size ||
      !std::equal(id.begin(), id.end(), key.build_id.begin(), key.build_id.end()) ||
      !std::equal(name.begin(), name.end(), key.name.begin(), key.name.end(),
                  [](uint8_t a, char b) { return a == static_cast<uint8_t>(b); }))
    return SectionCacheCheck::kOtherSection;
  const uint64_t offset = get_le(file, 48, 8);
  if (offset != payload_offset(key)) return SectionCacheCheck::kNotCacheFile;
  if (file.size() < offset) return SectionCacheCheck::kTooShort;
  if (file.size() - offset != key.size) return SectionCacheCheck::kWrongLength;
  const Bytes data = file.subspan(static_cast<size_t>(offset));
  if (section_cache_checksum(data) != get_le(file, 40, 8)) return SectionCacheCheck::kBadChecksum;
  *payload = data;
  return SectionCacheCheck::kOk;
}

std::optional<CachedSection> load_cached_section(const SectionCacheSettings& settings, const SectionCacheKey& key) {
  const std::string path = settings.directory + "/" + section_cache_file_name(key);
  auto image = FileImage::map(path);
  if (!image) return std::nullopt;
  Bytes payload;
  if (check_section_cache_file((*image)->bytes(), key, &payload) != SectionCacheCheck::kOk) return std::nullopt;
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now: the last to go
  return CachedSection{std::move(*image), payload};
}

bool store_cached_section(const SectionCacheSettings& settings, const SectionCacheKey& key, Bytes data) {
  if (data.size() != key.size || key.build_id.empty()) return false;
  const std::vector<uint8_t> header = section_cache_header(key, data);
  if (header.size() + data.size() > settings.max_bytes) return false;
  if (!make_directory(settings.directory)) return false;
  const std::string path = settings.directory + "/" + section_cache_file_name(key);
  std::string temporary = path + ".tmpXXXXXX";
  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return false;
  const bool written = write_all(fd, header) && write_all(fd, data);
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    return false;
  }
  keep_within_bound(settings, path);
  return true;
}

}  // namespace framewalk::elf
