#include "target/core_file.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "arch/machine.hpp"

namespace framewalk {

namespace {

constexpr uint32_t kNtPrstatus = 1, kNtPrpsinfo = 3, kNtAuxv = 6, kNtFile = 0x46494c45;
constexpr uint64_t kAtSysinfoEhdr = 33, kAtEntry = 9;

// A 64-bit Linux elf_prstatus: pr_cursig at 12, pr_pid at 32, pr_reg (the
// machine's elf_gregset_t) at 112.
constexpr size_t kPrstatusCursig = 12, kPrstatusPid = 32, kPrstatusReg = 112;
// elf_prpsinfo: pr_pid at 24, pr_fname[16] at 40.
constexpr size_t kPrpsinfoPid = 24, kPrpsinfoFname = 40;

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
      const elf::ElfFile* file = open(m.path);
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
      auto f = elf::ElfFile::open(sysroot_ + path);
      it = files_.emplace(path, f ? *f : nullptr).first;
    }
    return it->second.get();
  }

  std::shared_ptr<elf::ElfFile> core_;
  const std::vector<CoreMapping>& mappings_;
  std::string sysroot_;
  std::vector<elf::Segment> loads_;
  std::map<std::string, std::shared_ptr<elf::ElfFile>> files_;
};

std::string hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string hex_bytes(const std::vector<uint8_t>& v) {
  std::string s;
  char buf[3];
  for (uint8_t b : v) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

// The build-id of an ELF image mapped at `start`, read through memory.
std::optional<std::vector<uint8_t>> build_id_in_memory(Memory& memory, uint64_t start) {
  uint8_t header[64];
  if (memory.read(start, header, sizeof header) != sizeof header || std::memcmp(header, "\x7f" "ELF", 4) != 0 ||
      header[4] != 2)
    return std::nullopt;
  uint64_t phoff;
  uint16_t phentsize, phnum;
  std::memcpy(&phoff, header + 32, 8);
  std::memcpy(&phentsize, header + 54, 2);
  std::memcpy(&phnum, header + 56, 2);
  if (phentsize != 56 || phnum > 64) return std::nullopt;
  std::vector<uint8_t> phdrs(size_t{phnum} * 56);
  if (memory.read(start + phoff, phdrs.data(), phdrs.size()) != phdrs.size()) return std::nullopt;
  uint64_t first_vaddr = ~uint64_t{0};
  for (unsigned i = 0; i < phnum; ++i) {
    uint32_t type;
    uint64_t vaddr, offset;
    std::memcpy(&type, &phdrs[i * 56], 4);
    std::memcpy(&offset, &phdrs[i * 56 + 8], 8);
    std::memcpy(&vaddr, &phdrs[i * 56 + 16], 8);
    if (type == elf::kPtLoad && offset == 0) first_vaddr = std::min(first_vaddr, vaddr);
  }
  if (first_vaddr == ~uint64_t{0}) return std::nullopt;
  const uint64_t bias = start - (first_vaddr & ~uint64_t{0xfff});
  for (unsigned i = 0; i < phnum; ++i) {
    uint32_t type;
    uint64_t vaddr, filesz;
    std::memcpy(&type, &phdrs[i * 56], 4);
    std::memcpy(&vaddr, &phdrs[i * 56 + 16], 8);
    std::memcpy(&filesz, &phdrs[i * 56 + 32], 8);
    if (type != elf::kPtNote || filesz > 4096) continue;
    std::vector<uint8_t> notes(filesz);
    if (memory.read(bias + vaddr, notes.data(), notes.size()) != notes.size()) continue;
    ByteReader r(notes, Endian::kLittle);
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

}  // namespace

Result<std::unique_ptr<CoreFile>> CoreFile::open(const std::string& path, const CoreOptions& options) {
  FW_TRY(auto image, FileImage::map(path));
  return parse(std::move(image), path, options);
}

Result<std::unique_ptr<CoreFile>> CoreFile::parse(std::shared_ptr<const FileImage> image, const std::string& name,
                                                  const CoreOptions& options) {
  std::unique_ptr<CoreFile> core(new CoreFile());
  core->options_ = options;
  FW_TRY(core->core_, elf::ElfFile::parse(std::move(image), name));
  if (core->core_->type() != elf::kEtCore) return Error{ErrorCode::kUnsupportedElf, 16};
  core->machine_ = arch::machine_for(core->core_->machine());
  if (!core->machine_ || !core->core_->is_64()) return Error{ErrorCode::kUnsupportedMachine, core->core_->machine()};
  FW_CHECK(core->parse_notes());
  const uint64_t size = core->core_->image().size();
  for (const elf::Segment& p : core->core_->segments())
    if (p.filesz && p.offset + p.filesz > size) core->missing_bytes_ += p.offset + p.filesz - std::max(p.offset, size);
  core->memory_ = std::make_unique<CoreMemory>(core->core_, core->mappings_, options.sysroot);
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
      switch (type) {
        case kNtPrstatus: {
          const size_t gregset_size = machine_->gregset_size();
          if (desc.size() < kPrstatusReg + gregset_size) return Error{ErrorCode::kTruncated, desc_offset};
          CoreThread t;
          int16_t cursig;
          std::memcpy(&cursig, desc.data() + kPrstatusCursig, 2);
          int32_t tid;
          std::memcpy(&tid, desc.data() + kPrstatusPid, 4);
          t.tid = tid;
          t.signal = cursig;
          t.registers = machine_->registers_from_gregset(desc.subspan(kPrstatusReg, gregset_size));
          threads_.push_back(t);
          break;
        }
        case kNtPrpsinfo: {
          if (desc.size() < kPrpsinfoFname + 16) return Error{ErrorCode::kTruncated, desc_offset};
          int32_t pid;
          std::memcpy(&pid, desc.data() + kPrpsinfoPid, 4);
          pid_ = pid;
          const char* name = reinterpret_cast<const char*>(desc.data() + kPrpsinfoFname);
          process_name_.assign(name, strnlen(name, 16));
          break;
        }
        case kNtAuxv: {
          while (d.remaining() >= 16) {
            FW_TRY(uint64_t key, d.u64());
            FW_TRY(uint64_t value, d.u64());
            auxv_.emplace_back(key, value);
          }
          break;
        }
        case kNtFile: {
          FW_TRY(uint64_t count, d.u64());
          FW_TRY(uint64_t page_size, d.u64());
          if (count > d.remaining() / 24) return Error{ErrorCode::kBadLength, desc_offset};
          std::vector<CoreMapping> maps(count);
          for (auto& m : maps) {
            FW_TRY(m.start, d.u64());
            FW_TRY(m.end, d.u64());
            FW_TRY(uint64_t pages, d.u64());
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

ModuleMap CoreFile::modules(ModuleCache& cache, std::vector<std::string>* warnings) {
  ModuleMap result;
  uint64_t entry = 0, vdso = 0;
  for (auto& [k, v] : auxv_) {
    if (k == kAtEntry) entry = v;
    if (k == kAtSysinfoEhdr) vdso = v;
  }
  size_t i = 0;
  while (i < mappings_.size()) {
    size_t j = i + 1;
    while (j < mappings_.size() && mappings_[j].path == mappings_[i].path) ++j;
    const CoreMapping& first = mappings_[i];
    Module m;
    m.start = first.start;
    m.end = mappings_[j - 1].end;
    m.name = first.path;
    const bool is_exe = entry >= m.start && entry < m.end;
    const std::string open_path = is_exe && !options_.exe.empty() ? options_.exe : options_.sysroot + first.path;
    auto data = cache.get(open_path, first.path, "core:" + open_path);
    if (data) {
      m.data = *data;
      auto bias = load_bias(*m.data, first.start, first.file_offset);
      m.bias = bias ? *bias : first.start;
      // The file on disk must be the one that was mapped.
      auto want = build_id_in_memory(*memory_, first.start);
      auto have = m.data->elf().build_id();
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
  return result;
}

}  // namespace framewalk
