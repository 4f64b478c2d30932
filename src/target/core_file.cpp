#include "target/core_file.hpp"

#include "base/text.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "arch/machine.hpp"

namespace framewalk {

namespace {

constexpr uint32_t kNtPrstatus = 1, kNtPrfpreg = 2, kNtPrpsinfo = 3, kNtAuxv = 6, kNtArmPacMask = 0x406, kNtFile = 0x46494c45;
constexpr uint64_t kAtPhdr = 3, kAtBase = 7, kAtEntry = 9, kAtSysinfoEhdr = 33, kAtExecfn = 31;
constexpr uint64_t kDtNull = 0, kDtDebug = 21;

// Linux's elf_prstatus and elf_prpsinfo, whose layout depends on the ELF
// class (longs and the timevals in them): pr_cursig, pr_pid, pr_reg (the
// machine's elf_gregset_t); pr_pid and pr_fname[16].
struct NoteLayout {
  size_t prstatus_cursig, prstatus_pid, prstatus_reg;
  size_t prpsinfo_pid, prpsinfo_fname;
};
constexpr NoteLayout kLayout64 = {12, 32, 112, 24, 40};
constexpr NoteLayout kLayout32 = {12, 24, 72, 12, 28};

// The dynamic linker's list of loaded objects, in the target's words:
// struct r_debug { int r_version; struct link_map* r_map; ... } and
// struct link_map { l_addr, l_name, l_ld, l_next, l_prev }.
constexpr unsigned kLinkMapAddr = 0, kLinkMapName = 1, kLinkMapNext = 3;
// A process has at most this many objects in its list (a loop in a damaged
// core's list ends there too).
constexpr size_t kMaxLinkMapEntries = 4096;
constexpr size_t kMaxPathBytes = 4096;

// Reads from the core's PT_LOAD segments; bytes a segment has in memory but
// not in the file (not dumped) come from the mapped file, if we have it.
class CoreMemory final : public Memory {
 public:
  CoreMemory(std::shared_ptr<elf::ElfFile> core, const std::vector<CoreMapping>& mappings, std::string sysroot)
      : core_(std::move(core)), mappings_(mappings), sysroot_(std::move(sysroot)) {
    for (const elf::Segment& p : core_->segments())
      if (p.type == elf::kPtLoad && p.memsz) loads_.push_back(p);
    std::sort(loads_.begin(), loads_.end(), [](const auto& a, const auto& b) { return a.vaddr < b.vaddr; });
  }

  // Whether the core itself holds the byte at `address` (not the files).
  bool dumped(uint64_t address) const {
    auto it = std::upper_bound(loads_.begin(), loads_.end(), address,
                               [](uint64_t a, const elf::Segment& p) { return a < p.vaddr; });
    if (it == loads_.begin()) return false;
    const elf::Segment& p = *std::prev(it);
    return address - p.vaddr < p.filesz && p.offset + (address - p.vaddr) < core_->image().size();
  }

  size_t read(uint64_t address, void* out, size_t size) override {
    size_t done = 0;
    auto* dst = static_cast<uint8_t*>(out);
    while (done < size) {
      const size_t n = read_some(address + done, dst + done, size - done);
      if (n == 0) break;
      done += n;
    }
    return done;
  }

 private:
  size_t read_some(uint64_t address, uint8_t* out, size_t size) {
    auto it = std::upper_bound(loads_.begin(), loads_.end(), address,
                               [](uint64_t a, const elf::Segment& p) { return a < p.vaddr; });
    if (it == loads_.begin()) return from_files(address, out, size);
    const elf::Segment& p = *std::prev(it);
    if (address - p.vaddr >= p.memsz) return from_files(address, out, size);
    const uint64_t off = address - p.vaddr;
    const Bytes image = core_->image();
    if (off < p.filesz) {
      const uint64_t file_off = p.offset + off;
      if (file_off >= image.size()) return 0;  // truncated core
      size_t n = static_cast<size_t>(std::min<uint64_t>({size, p.filesz - off, image.size() - file_off}));
      std::memcpy(out, image.data() + file_off, n);
      return n;
    }
    const size_t limit = static_cast<size_t>(std::min<uint64_t>(size, p.memsz - off));
    return from_files(address, out, limit);
  }

  size_t from_files(uint64_t address, uint8_t* out, size_t size) {
    for (const CoreMapping& m : mappings_) {
      if (address < m.start || address >= m.end) continue;
      const elf::ElfFile* file = open(m.host_path.empty() ? sysroot_ + m.path : m.host_path);
      if (!file) return 0;
      const uint64_t file_off = m.file_offset + (address - m.start);
      const Bytes image = file->image();
      if (file_off >= image.size()) return 0;
      const size_t n = static_cast<size_t>(std::min<uint64_t>({size, m.end - address, image.size() - file_off}));
      std::memcpy(out, image.data() + file_off, n);
      return n;
    }
    return 0;
  }

  const elf::ElfFile* open(const std::string& path) {
    auto it = files_.find(path);
    if (it == files_.end()) {
      auto f = elf::ElfFile::open(path);
      it = files_.emplace(path, f ? *f : nullptr).first;
    }
    return it->second.get();
  }

  std::shared_ptr<elf::ElfFile> core_;
  const std::vector<CoreMapping>& mappings_;  // may grow after construction (modules from the link map)
  std::string sysroot_;
  std::vector<elf::Segment> loads_;
  std::map<std::string, std::shared_ptr<elf::ElfFile>> files_;
};



// The program headers of an ELF image mapped at `start`, read through memory.
struct MemoryPhdr {
  uint32_t type;
  uint64_t offset, vaddr, filesz;
};
std::optional<std::vector<MemoryPhdr>> phdrs_in_memory(Memory& memory, uint64_t start) {
  uint8_t header[64];
  if (memory.read(start, header, 52) != 52 || std::memcmp(header, "\x7f" "ELF", 4) != 0) return std::nullopt;
  const bool is_64 = header[4] == 2;
  if (is_64 && memory.read(start, header, 64) != 64) return std::nullopt;
  const Endian endian = header[5] == 2 ? Endian::kBig : Endian::kLittle;
  ByteReader h(Bytes(header, is_64 ? 64 : 52), endian);
  const unsigned asz = is_64 ? 8 : 4;
  (void)h.skip(is_64 ? 32 : 28);
  auto phoff = h.address(asz);
  (void)h.skip(asz + 4 + 2);  // e_shoff, e_flags, e_ehsize
  auto phentsize = h.u16(), phnum = h.u16();
  const unsigned want = is_64 ? 56 : 32;
  if (!phoff || !phentsize || !phnum || *phentsize != want || *phnum > 64) return std::nullopt;
  std::vector<uint8_t> bytes(size_t{*phnum} * want);
  if (memory.read(start + *phoff, bytes.data(), bytes.size()) != bytes.size()) return std::nullopt;
  std::vector<MemoryPhdr> out(*phnum);
  ByteReader r(bytes, endian);
  for (MemoryPhdr& p : out) {
    p.type = r.u32().value_or(0);
    if (is_64) {
      (void)r.skip(4);
      p.offset = r.u64().value_or(0);
      p.vaddr = r.u64().value_or(0);
      (void)r.skip(8);
      p.filesz = r.u64().value_or(0);
      (void)r.skip(24);
    } else {
      p.offset = r.u32().value_or(0);
      p.vaddr = r.u32().value_or(0);
      (void)r.skip(4);
      p.filesz = r.u32().value_or(0);
      (void)r.skip(12);
    }
  }
  return out;
}

// The build-id of an ELF image mapped at `start`, read through memory.
std::optional<std::vector<uint8_t>> build_id_in_memory(Memory& memory, uint64_t start, Endian endian) {
  auto phdrs = phdrs_in_memory(memory, start);
  if (!phdrs) return std::nullopt;
  uint64_t first_vaddr = ~uint64_t{0};
  for (const MemoryPhdr& p : *phdrs)
    if (p.type == elf::kPtLoad && p.offset == 0) first_vaddr = std::min(first_vaddr, p.vaddr);
  if (first_vaddr == ~uint64_t{0}) return std::nullopt;
  const uint64_t bias = start - (first_vaddr & ~uint64_t{0xfff});
  for (const MemoryPhdr& p : *phdrs) {
    if (p.type != elf::kPtNote || p.filesz > 4096) continue;
    std::vector<uint8_t> notes(p.filesz);
    if (memory.read(bias + p.vaddr, notes.data(), notes.size()) != notes.size()) continue;
    ByteReader r(notes, endian);
    while (r.remaining() >= 12) {
      auto namesz = r.u32(), descsz = r.u32(), ntype = r.u32();
      auto name = r.bytes((*namesz + 3) & ~3u);
      if (!name) break;
      auto desc = r.bytes((*descsz + 3) & ~3u);
      if (!desc) break;
      if (*ntype == 3 && *namesz == 4 && std::memcmp(name->data(), "GNU", 4) == 0)
        return std::vector<uint8_t>(desc->begin(), desc->begin() + *descsz);
    }
  }
  return std::nullopt;
}

// A NUL-terminated string in the target's memory, of at most kMaxPathBytes.
std::optional<std::string> string_in_memory(Memory& memory, uint64_t address) {
  std::string out;
  char chunk[256];
  while (out.size() < kMaxPathBytes) {
    const size_t n = memory.read(address + out.size(), chunk, sizeof chunk);
    if (n == 0) return std::nullopt;
    const void* nul = std::memchr(chunk, 0, n);
    if (nul) return out.append(chunk, static_cast<const char*>(nul) - chunk);
    out.append(chunk, n);
  }
  return std::nullopt;
}

// The mappings an ELF file's PT_LOAD segments make when loaded with `bias`.
void add_load_mappings(const elf::ElfFile& file, uint64_t bias, const std::string& path, const std::string& host_path,
                       std::vector<CoreMapping>* out) {
  constexpr uint64_t kPage = 0xfff;
  for (const elf::Segment& p : file.segments()) {
    if (p.type != elf::kPtLoad || p.filesz == 0) continue;
    CoreMapping m;
    m.start = (bias + p.vaddr) & ~kPage;
    // The file-backed part only: the rest is anonymous (.bss), dumped or zero.
    m.end = (bias + p.vaddr + p.filesz + kPage) & ~kPage;
    m.file_offset = p.offset & ~kPage;
    m.path = path;
    m.host_path = host_path;
    out->push_back(m);
  }
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

}  // namespace

Result<std::unique_ptr<CoreFile>> CoreFile::open(const std::string& path, const CoreOptions& options) {
  FW_TRY(auto image, FileImage::map(path));
  return parse(std::move(image), path, options);
}

Result<std::unique_ptr<CoreFile>> CoreFile::parse(std::shared_ptr<const FileImage> image, const std::string& name,
                                                  const CoreOptions& options) {
  std::unique_ptr<CoreFile> core(new CoreFile());
  core->options_ = options;
  core->name_ = name;
  FW_TRY(core->core_, elf::ElfFile::parse(std::move(image), name));
  if (core->core_->type() != elf::kEtCore) return Error{ErrorCode::kUnsupportedElf, 16};
  // An x32, armeb or aarch64_be core is another machine than x86-64's, ARM's, AArch64's.
  core->machine_ = arch::machine_for(core->core_->machine_key());
  if (!core->machine_)
    return Error{ErrorCode::kUnsupportedMachine, core->core_->machine()};
  FW_CHECK(core->parse_notes());
  // A file NT_FILE names that the sysroot lacks is taken from its own path,
  // as qemu-user falls back to the host's files (a program run from a
  // directory outside the sysroot).
  if (!options.sysroot.empty()) {
    std::error_code ec;
    for (CoreMapping& m : core->mappings_)
      if (m.host_path.empty() && !m.path.empty() && m.path[0] == '/' &&
          !std::filesystem::exists(options.sysroot + m.path, ec) && std::filesystem::exists(m.path, ec))
        m.host_path = m.path;
  }
  const uint64_t size = core->core_->image().size();
  for (const elf::Segment& p : core->core_->segments())
    if (p.filesz && p.offset + p.filesz > size) core->missing_bytes_ += p.offset + p.filesz - std::max(p.offset, size);
  auto memory = std::make_unique<CoreMemory>(core->core_, core->mappings_, options.sysroot);
  core->dumped_ = [m = memory.get()](uint64_t address) { return m->dumped(address); };
  core->memory_ = std::move(memory);
  // A core without NT_FILE (qemu-user writes none) names no files: they are
  // found from the auxiliary vector and the dynamic linker's list.
  if (!core->has_file_note_) core->mappings_from_link_map();
  return core;
}

Result<void> CoreFile::parse_notes() {
  const Bytes image = core_->image();
  bool any_notes = false;
  for (const elf::Segment& p : core_->segments()) {
    if (p.type != elf::kPtNote) continue;
    any_notes = true;
    if (p.offset > image.size() || p.filesz > image.size() - p.offset) return Error{ErrorCode::kTruncated, p.offset};
    ByteReader r(image.subspan(p.offset, p.filesz), core_->endian(), p.offset);
    while (r.remaining() >= 12) {
      FW_TRY(uint32_t namesz, r.u32());
      FW_TRY(uint32_t descsz, r.u32());
      FW_TRY(uint32_t type, r.u32());
      FW_CHECK(r.skip((uint64_t{namesz} + 3) & ~uint64_t{3}));
      const uint64_t desc_offset = r.absolute_offset();
      FW_TRY(Bytes desc, r.bytes(descsz));
      FW_CHECK(r.skip(std::min<uint64_t>(((uint64_t{descsz} + 3) & ~uint64_t{3}) - descsz, r.remaining())));
      ByteReader d(desc, core_->endian(), desc_offset);
      const unsigned word = core_->address_size();
      const NoteLayout& layout = core_->is_64() ? kLayout64 : kLayout32;
      switch (type) {
        case kNtPrstatus: {
          const size_t gregset_size = machine_->gregset_size();
          if (desc.size() < layout.prstatus_reg + gregset_size) return Error{ErrorCode::kTruncated, desc_offset};
          CoreThread t;
          ByteReader fields(desc, core_->endian(), desc_offset);
          FW_CHECK(fields.skip(layout.prstatus_cursig));
          FW_TRY(uint16_t cursig, fields.u16());
          FW_CHECK(fields.skip(layout.prstatus_pid - layout.prstatus_cursig - 2));
          FW_TRY(uint32_t tid, fields.u32());
          t.tid = static_cast<pid_t>(tid);
          t.signal = static_cast<int16_t>(cursig);
          t.registers = machine_->registers_from_gregset(desc.subspan(layout.prstatus_reg, gregset_size));
          threads_.push_back(t);
          break;
        }
        case kNtPrfpreg:
          // The floating-point registers of the thread whose NT_PRSTATUS it follows.
          if (!threads_.empty()) machine_->add_fpregset(desc, &threads_.back().registers);
          break;
        case kNtPrpsinfo: {
          if (desc.size() < layout.prpsinfo_fname + 16) return Error{ErrorCode::kTruncated, desc_offset};
          ByteReader fields(desc, core_->endian(), desc_offset);
          FW_CHECK(fields.skip(layout.prpsinfo_pid));
          FW_TRY(uint32_t pid, fields.u32());
          pid_ = static_cast<pid_t>(pid);
          const char* name = reinterpret_cast<const char*>(desc.data() + layout.prpsinfo_fname);
          process_name_.assign(name, strnlen(name, 16));
          break;
        }
        case kNtAuxv: {
          while (d.remaining() >= 2 * word) {
            FW_TRY(uint64_t key, d.address(word));
            FW_TRY(uint64_t value, d.address(word));
            auxv_.emplace_back(key, value);
          }
          break;
        }
        case kNtArmPacMask: {
          // struct user_pac_mask { u64 data_mask, insn_mask; }: return
          // addresses are code addresses.
          if (desc.size() < 16) return Error{ErrorCode::kTruncated, desc_offset};
          FW_CHECK(d.skip(8));
          FW_TRY(uint64_t insn_mask, d.u64());
          pointer_auth_mask_ = insn_mask;
          break;
        }
        case kNtFile: {
          has_file_note_ = true;
          FW_TRY(uint64_t count, d.address(word));
          FW_TRY(uint64_t page_size, d.address(word));
          if (count > d.remaining() / (3 * word)) return Error{ErrorCode::kBadLength, desc_offset};
          std::vector<CoreMapping> maps(count);
          for (auto& m : maps) {
            FW_TRY(m.start, d.address(word));
            FW_TRY(m.end, d.address(word));
            FW_TRY(uint64_t pages, d.address(word));
            m.file_offset = pages * page_size;
          }
          for (auto& m : maps) {
            auto name = d.cstring();
            if (!name) break;
            m.path = std::string(*name);
          }
          mappings_ = std::move(maps);
          break;
        }
        default: break;
      }
    }
  }
  if (!any_notes) return Error{ErrorCode::kBadElf, 0};
  if (threads_.empty()) return Error{ErrorCode::kNotFound, 0};
  if (pid_ == 0) pid_ = threads_.front().tid;
  return ok();
}

std::shared_ptr<elf::ElfFile> CoreFile::open_mapped_file(const std::string& path, std::string* host_path) const {
  std::vector<std::string> candidates;
  if (!options_.sysroot.empty() && !path.empty() && path[0] == '/') candidates.push_back(options_.sysroot + path);
  // qemu-user falls back to the host's path where the sysroot lacks a file;
  // a relative path was relative to the process's directory, where qemu
  // also writes its core.
  if (!path.empty() && path[0] != '/') candidates.push_back(directory_of(name_) + path);
  candidates.push_back(path);
  for (const std::string& c : candidates) {
    auto f = elf::ElfFile::open(c);
    // A file of another machine is the host's namesake, not the target's.
    if (f && (*f)->machine() == core_->machine()) {
      *host_path = c;
      return *f;
    }
  }
  return nullptr;
}

void CoreFile::mappings_from_link_map() {
  uint64_t phdr = 0, base = 0, execfn = 0;
  for (auto& [k, v] : auxv_) {
    if (k == kAtPhdr) phdr = v;
    if (k == kAtBase) base = v;
    if (k == kAtExecfn) execfn = v;
  }
  const unsigned word = core_->address_size();
  const Endian endian = core_->endian();
  // The executable: --exe, else the path it was started by (AT_EXECFN).
  std::string guest_path = execfn ? string_in_memory(*memory_, execfn).value_or("") : "";
  if (guest_path.empty()) guest_path = process_name_;
  std::string host_path;
  std::shared_ptr<elf::ElfFile> exe;
  if (!options_.exe.empty()) {
    auto f = elf::ElfFile::open(options_.exe);
    if (f) exe = *f, host_path = options_.exe;
  } else {
    exe = open_mapped_file(guest_path, &host_path);
  }
  if (!exe || !phdr) {
    link_map_warnings_.push_back("the core names no files (no NT_FILE note) and its executable " +
                                 (guest_path.empty() ? std::string("is unknown") : "'" + guest_path + "' was not found") +
                                 ": pass --exe (and --sysroot for its libraries)");
    return;
  }
  // Its load bias: AT_PHDR is where its program headers were mapped.
  uint64_t phdr_vaddr = ~uint64_t{0};
  for (const elf::Segment& p : exe->segments())
    if (p.type == elf::kPtPhdr) phdr_vaddr = p.vaddr;
  if (phdr_vaddr == ~uint64_t{0}) {
    for (const elf::Segment& p : exe->segments())
      if (p.type == elf::kPtLoad && exe->program_header_offset() >= p.offset &&
          exe->program_header_offset() - p.offset < p.filesz)
        phdr_vaddr = p.vaddr + (exe->program_header_offset() - p.offset);
  }
  if (phdr_vaddr == ~uint64_t{0}) {
    link_map_warnings_.push_back(host_path + ": its program headers are not loaded: cannot place it in the core");
    return;
  }
  const uint64_t exe_bias = phdr - phdr_vaddr;
  add_load_mappings(*exe, exe_bias, guest_path, host_path, &mappings_);

  // The dynamic linker's list, from the executable's DT_DEBUG.
  uint64_t r_debug = 0;
  for (const elf::Segment& p : exe->segments()) {
    if (p.type != elf::kPtDynamic) continue;
    constexpr size_t kMaxDynamicEntries = 1024;
    for (size_t i = 0; i < kMaxDynamicEntries; ++i) {
      const uint64_t at = exe_bias + p.vaddr + i * 2 * word;
      auto tag = memory_->read_word(at, word, endian);
      auto value = memory_->read_word(at + word, word, endian);
      if (!tag || !value || *tag == kDtNull) break;
      if (*tag == kDtDebug) r_debug = *value;
    }
  }
  size_t objects = 0;
  std::vector<uint64_t> seen;
  auto map = r_debug ? memory_->read_word(r_debug + word, word, endian) : Result<uint64_t>(uint64_t{0});
  for (uint64_t entry = map ? *map : 0; entry != 0 && seen.size() < kMaxLinkMapEntries;) {
    if (std::find(seen.begin(), seen.end(), entry) != seen.end()) break;  // a loop
    seen.push_back(entry);
    auto l_addr = memory_->read_word(entry + kLinkMapAddr * word, word, endian);
    auto l_name = memory_->read_word(entry + kLinkMapName * word, word, endian);
    auto l_next = memory_->read_word(entry + kLinkMapNext * word, word, endian);
    if (!l_addr || !l_name || !l_next) {
      link_map_warnings_.push_back("the dynamic linker's list of objects is unreadable at " + hex(entry) +
                                   ": objects after it are not known");
      break;
    }
    entry = *l_next;
    auto name = *l_name ? string_in_memory(*memory_, *l_name) : std::optional<std::string>("");
    if (!name || name->empty()) continue;  // the executable itself
    std::string host;
    auto file = open_mapped_file(*name, &host);
    if (!file) {
      // The vDSO is listed under its soname but has no file: NT_AUXV places it.
      if (name->find("linux-vdso") == std::string::npos && name->find("linux-gate") == std::string::npos)
        link_map_warnings_.push_back(*name + ": not found" +
                                     (options_.sysroot.empty() ? " (pass --sysroot)" : " under " + options_.sysroot) +
                                     ": frames in it get no unwind info");
      continue;
    }
    add_load_mappings(*file, *l_addr, *name, host, &mappings_);
    ++objects;
  }
  // No list (a static program, or one that stopped before the dynamic linker
  // made it): the dynamic linker itself is at AT_BASE.
  if (objects == 0 && base != 0) {
    for (const elf::Segment& p : exe->segments()) {
      if (p.type != elf::kPtInterp || p.offset >= exe->image().size()) continue;
      const Bytes image = exe->image();
      const size_t size = static_cast<size_t>(std::min<uint64_t>(p.filesz, image.size() - p.offset));
      const char* text = reinterpret_cast<const char*>(image.data() + p.offset);
      const std::string interp(text, strnlen(text, size));
      std::string host;
      if (auto file = open_mapped_file(interp, &host))
        add_load_mappings(*file, base - (file->first_load_vaddr() & ~uint64_t{0xfff}), interp, host, &mappings_);
      else
        link_map_warnings_.push_back(interp + ": not found: frames in the dynamic linker get no unwind info");
    }
  }
  std::stable_sort(mappings_.begin(), mappings_.end(),
                   [](const CoreMapping& a, const CoreMapping& b) { return a.start < b.start; });
}

ModuleMap CoreFile::modules(ModuleCache& cache, std::vector<std::string>* warnings) {
  ModuleMap result;
  if (warnings) warnings->insert(warnings->end(), link_map_warnings_.begin(), link_map_warnings_.end());
  std::vector<std::string> unchecked;  // files whose headers the core does not hold
  uint64_t entry = 0, vdso = 0;
  for (auto& [k, v] : auxv_) {
    if (k == kAtEntry) entry = v;
    if (k == kAtSysinfoEhdr) vdso = v;
  }
  size_t i = 0;
  while (i < mappings_.size()) {
    // A module: the file's mappings in address order while their file
    // offsets do not go back (a second mapping of the file, such as the
    // text node remaps onto huge pages far above it, is a module of its
    // own: the memory between them is not the file's).
    size_t j = i + 1;
    while (j < mappings_.size() && mappings_[j].path == mappings_[i].path &&
           mappings_[j].file_offset >= mappings_[j - 1].file_offset)
      ++j;
    const CoreMapping& first = mappings_[i];
    Module m;
    m.start = first.start;
    m.end = mappings_[j - 1].end;
    m.name = first.path;
    const bool is_exe = entry >= m.start && entry < m.end;
    const std::string open_path = is_exe && !options_.exe.empty() ? options_.exe
                                  : first.host_path.empty()      ? options_.sysroot + first.path
                                                                 : first.host_path;
    auto data = cache.get(open_path, first.path, "core:" + open_path);
    if (data) {
      m.data = *data;
      auto bias = load_bias(*m.data, first.start, first.file_offset);
      m.bias = bias ? *bias : first.start;
      // The file on disk must be the one that was mapped: the core's copy
      // of its first page holds the build-id, where the core has it.
      // (Only a mapping from the file's start holds its headers.)
      const bool headers = first.file_offset == 0;
      auto want = headers && dumped_(first.start) ? build_id_in_memory(*memory_, first.start, core_->endian())
                                                  : std::nullopt;
      auto have = m.data->elf().build_id();
      if (headers && !dumped_(first.start)) unchecked.push_back(open_path);
      if (want && have && *want != *have && warnings)
        warnings->push_back(open_path + ": build-id " + hex_bytes(*have) + " does not match the core's " +
                            hex_bytes(*want) + (is_exe ? " (core and executable do not match)" : ""));
    } else if (data.error().code == ErrorCode::kBadElf) {
      i = j;  // a mapped data file (locales, caches): not a module
      continue;
    } else {
      m.problem = to_string(data.error().code);
      if (warnings) warnings->push_back(open_path + ": " + m.problem + " (frames in it get no unwind info)");
    }
    result.add(std::move(m));
    i = j;
  }
  if (!unchecked.empty() && warnings) {
    std::string list;
    for (const std::string& f : unchecked) list += (list.empty() ? "" : ", ") + f;
    warnings->push_back("not checked against the core, which holds no copy of their first page (qemu-user cores "
                        "dump no code): " + list);
  }
  if (vdso) {
    // The vDSO is in the core's memory: its segment's size is the image size.
    for (const elf::Segment& p : core_->segments()) {
      if (p.type != elf::kPtLoad || vdso < p.vaddr || vdso >= p.vaddr + p.memsz) continue;
      // A vDSO is a few pages; a hostile core's segment size is not trusted.
      constexpr uint64_t kMaxVdsoBytes = 1u << 20;
      std::vector<uint8_t> bytes(std::min<uint64_t>(p.vaddr + p.memsz - vdso, kMaxVdsoBytes));
      bytes.resize(memory_->read(vdso, bytes.data(), bytes.size()));
      auto data = cache.from_bytes(std::move(bytes), "[vdso]", "core-vdso:" + hex(vdso));
      Module m;
      m.start = vdso;
      m.end = p.vaddr + p.memsz;
      m.name = "[vdso]";
      if (data) {
        m.data = *data;
        auto bias = load_bias(*m.data, vdso, 0);
        m.bias = bias ? *bias : vdso;
      }
      result.add(std::move(m));
      break;
    }
  }
  // Executable memory no file mapping explains: jit code (its pages are
  // dumped, being anonymous). Where NT_FILE lists the files, any such
  // segment; without it (qemu-user's cores), only one whose pages were
  // dumped and that no module found otherwise covers (a file's code is not
  // dumped there; were it taken for jit code, a program whose file was not
  // found would be walked by guesses). Not the kernel's half of a 64-bit
  // address space (x86-64's vsyscall page).
  const bool wide = core_->is_64();
  for (const elf::Segment& p : core_->segments()) {
    if (p.type != elf::kPtLoad || !(p.flags & elf::kPfX) || p.memsz == 0 || p.vaddr + p.memsz < p.vaddr) continue;
    if (!has_file_note_ && p.filesz == 0) continue;
    if (wide && (p.vaddr >> 63)) continue;
    bool covered = false;
    for (const auto& m : result.modules()) covered |= m->start < p.vaddr + p.memsz && p.vaddr < m->end;
    if (!covered) result.add(jit_module(p.vaddr, p.vaddr + p.memsz, ""));
  }
  return result;
}

}  // namespace framewalk
