#include "target/snapshot_target.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <cctype>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "arch/machine.hpp"
#include "base/text.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {

namespace {

// As uname -m names them.
struct MachineName {
  const char* name;
  MachineKey key;
};
const MachineName kMachines[] = {{"x86_64", usual_machine_key(kEmX86_64)},
                                 {"aarch64", usual_machine_key(kEmAarch64)},
                                 {"arm", usual_machine_key(kEmArm)},
                                 {"i386", usual_machine_key(kEm386)},
                                 {"ppc64le", usual_machine_key(kEmPpc64)},
                                 {"ppc", usual_machine_key(kEmPpc)},
                                 {"s390x", usual_machine_key(kEmS390)},
                                 {"riscv64", usual_machine_key(kEmRiscv)},
                                 {"sparc64", usual_machine_key(kEmSparcv9)}};

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Blocks of memory as TID.stack and code hold them: each its address and
// size (8 bytes each, little-endian), then its bytes.
template <typename Fail>
Result<std::vector<SnapshotData::Block>> parse_blocks(const std::string& text, const std::string& file, Fail& fail) {
  std::vector<SnapshotData::Block> out;
  size_t at = 0;
  auto get64 = [&](size_t offset) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(text[offset + static_cast<size_t>(i)]);
    return v;
  };
  while (at < text.size()) {
    if (text.size() - at < 16)
      return fail(file, "a block's address and size cut short at offset " + std::to_string(at), ErrorCode::kTruncated,
                  at);
    SnapshotData::Block b;
    b.address = get64(at);
    const uint64_t size = get64(at + 8);
    if (size > text.size() - at - 16)
      return fail(file, "the block at offset " + std::to_string(at) + " says " + std::to_string(size) +
                            " bytes, more than the file holds", ErrorCode::kTruncated, at);
    if (size > ~uint64_t{0} - b.address)
      return fail(file, "the block at offset " + std::to_string(at) + " runs past the end of the address space",
                  ErrorCode::kBadLength, at);
    b.bytes.assign(text.begin() + static_cast<long>(at + 16), text.begin() + static_cast<long>(at + 16 + size));
    at += 16 + size;
    out.push_back(std::move(b));
  }
  return out;
}

std::string block_bytes(const std::vector<SnapshotData::Block>& blocks) {
  std::string bytes;
  auto put64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes += static_cast<char>(v >> (8 * i));
  };
  for (const SnapshotData::Block& b : blocks) {
    put64(b.address);
    put64(b.bytes.size());
    bytes.append(b.bytes.begin(), b.bytes.end());
  }
  return bytes;
}

}  // namespace

Result<SnapshotData> read_snapshot(const std::string& directory, std::string* problem) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& file, const std::string& what, ErrorCode code = ErrorCode::kBadArgument,
                  uint64_t offset = 0) -> Error {
    if (problem) *problem = directory + "/" + file + ": " + what;
    return Error{code, offset};
  };
  SnapshotData data;
  {
    std::error_code ec;
    data.directory = fs::absolute(directory, ec).lexically_normal().string();
  }
  std::string text;
  if (!read_file(directory + "/machine", &text)) return fail("machine", std::strerror(errno), ErrorCode::kIoError, errno);
  const std::string name = trim(text);
  for (const MachineName& m : kMachines)
    if (name == m.name) data.machine = m.key;
  if (!data.machine.elf_machine) {
    std::string known;
    for (const MachineName& m : kMachines) known += std::string(known.empty() ? "" : ", ") + m.name;
    return fail("machine", "unknown machine '" + name + "' (" + known + ")");
  }
  if (read_file(directory + "/pid", &text)) data.pid = static_cast<pid_t>(std::atoi(text.c_str()));
  if (read_file(directory + "/name", &text)) data.name = trim(text);
  if (!read_file(directory + "/maps", &text)) return fail("maps", std::strerror(errno), ErrorCode::kIoError, errno);
  data.maps = parse_proc_maps(text);
  std::error_code ec;
  std::vector<pid_t> tids;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    const std::string file = entry.path().filename().string();
    const size_t dot = file.find(".regs");
    if (dot == std::string::npos || dot + 5 != file.size() || dot == 0) continue;
    if (!std::all_of(file.begin(), file.begin() + static_cast<long>(dot), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    tids.push_back(static_cast<pid_t>(std::atol(file.substr(0, dot).c_str())));
  }
  if (ec) return fail("", ec.message(), ErrorCode::kIoError, static_cast<uint64_t>(ec.value()));
  std::sort(tids.begin(), tids.end());
  if (tids.empty()) return fail("", "no thread (TID.regs file)", ErrorCode::kNotFound);
  for (pid_t tid : tids) {
    SnapshotData::Thread t;
    t.tid = tid;
    const std::string regs = std::to_string(tid) + ".regs";
    if (!read_file(directory + "/" + regs, &text)) return fail(regs, std::strerror(errno), ErrorCode::kIoError, errno);
    std::istringstream lines(text);
    std::string line;
    unsigned number = 0;
    while (std::getline(lines, line)) {
      ++number;
      line = trim(line);
      if (line.empty() || line[0] == '#') continue;
      unsigned reg = 0;
      uint64_t value = 0;
      int used = 0;
      if (std::sscanf(line.c_str(), "%u %" SCNx64 "%n", &reg, &value, &used) != 2 ||
          static_cast<size_t>(used) != line.size())
        return fail(regs, "line " + std::to_string(number) + ": not \"DWARF-NUMBER HEX-VALUE\"");
      if (!t.registers.set(reg, value))
        return fail(regs, "line " + std::to_string(number) + ": register " + std::to_string(reg) +
                              ": more registers than the register file holds",
                    ErrorCode::kTooManyRegisters, reg);
    }
    const std::string stack = std::to_string(tid) + ".stack";
    if (read_file(directory + "/" + stack, &text)) {
      auto blocks = parse_blocks(text, stack, fail);
      if (!blocks) return blocks.error();
      t.stack = std::move(*blocks);
    }
    data.threads.push_back(std::move(t));
  }
  if (read_file(directory + "/code", &text)) {
    auto blocks = parse_blocks(text, "code", fail);
    if (!blocks) return blocks.error();
    data.code = std::move(*blocks);
  }
  return data;
}

Result<void> write_snapshot(const SnapshotData& data, const std::string& directory) {
  std::filesystem::create_directories(directory);
  auto write = [&](const std::string& file, const std::string& bytes) {
    std::ofstream out(directory + "/" + file, std::ios::binary | std::ios::trunc);
    out << bytes;
    return static_cast<bool>(out);
  };
  std::string machine;
  const arch::ArchInfo* arch = arch::arch_for(data.machine);
  for (const MachineName& m : kMachines)
    if (arch && arch::arch_for(m.key) == arch) machine = m.name;
  if (machine.empty()) return Error{ErrorCode::kUnsupportedMachine, data.machine.elf_machine};
  bool good = write("machine", machine + "\n") && write("pid", std::to_string(data.pid) + "\n") &&
              (data.name.empty() || write("name", data.name + "\n"));
  // Objects in memory only: files of their own, named in maps by their
  // absolute paths.
  std::map<std::string, std::string> object_paths;
  if (!data.objects.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(directory + "/objects", ec);
    const std::string absolute = std::filesystem::absolute(directory + "/objects", ec).lexically_normal().string();
    for (const SnapshotData::Object& o : data.objects) {
      good &= write("objects/" + o.file, std::string(o.bytes.begin(), o.bytes.end()));
      object_paths[o.file] = absolute + "/" + o.file;
    }
  }
  std::string maps;
  for (const MapEntry& entry : data.maps) {
    MapEntry e = entry;
    if (auto it = object_paths.find(e.path); it != object_paths.end()) e.path = it->second;
    char line[128];
    std::snprintf(line, sizeof line, "%" PRIx64 "-%" PRIx64 " %s %08" PRIx64 " %s %" PRIu64, e.start, e.end,
                  e.perms.c_str(), e.offset, e.device.empty() ? "00:00" : e.device.c_str(), e.inode);
    maps += line;
    if (!e.path.empty()) maps += "                          " + e.path;
    maps += "\n";
  }
  good &= write("maps", maps);
  for (const SnapshotData::Thread& t : data.threads) {
    std::string regs;
    for (unsigned r = 0; r < arch::RegisterFile::kMaxRegisters; ++r)
      if (auto v = t.registers.get(r)) regs += std::to_string(r) + " " + hex_digits(*v) + "\n";
    for (unsigned i = 0; i < t.registers.high_count(); ++i) {
      const unsigned r = t.registers.high_number(i);
      regs += std::to_string(r) + " " + hex_digits(*t.registers.get(r)) + "\n";
    }
    good &= write(std::to_string(t.tid) + ".regs", regs);
    const std::string bytes = block_bytes(t.stack);
    if (!bytes.empty()) good &= write(std::to_string(t.tid) + ".stack", bytes);
  }
  if (!data.code.empty()) good &= write("code", block_bytes(data.code));
  if (!good) return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
  return ok();
}

namespace {

// Memory that notes every page a walk reads, to save them too: the stack
// below a signal frame on another stack (sigaltstack), a frame pointer chain
// that leaves the block saved.
class RecordingMemory final : public Memory {
 public:
  explicit RecordingMemory(Memory& inner) : inner_(inner) {}
  size_t read(uint64_t address, void* out, size_t size) override {
    const size_t n = inner_.read(address, out, size);
    if (n) {
      for (uint64_t page = address & ~uint64_t{4095}; page < address + n; page += 4096) {
        pages_.push_back(page);
        if (page > ~uint64_t{0} - 4096) break;
      }
    }
    return n;
  }
  std::vector<uint64_t> pages_;

 private:
  Memory& inner_;
};

// Up to `size` bytes at `address`, page by page until memory ends.
std::vector<uint8_t> read_block(Memory& memory, uint64_t address, size_t size) {
  std::vector<uint8_t> bytes(size);
  size_t got = 0;
  while (got < size) {
    const size_t want = std::min<size_t>(4096 - ((address + got) & 4095), size - got);
    const size_t n = memory.read(address + got, bytes.data() + got, want);
    got += n;
    if (n < want) break;
  }
  bytes.resize(got);
  return bytes;
}

// The most of a module without a file (the vDSO: two pages) a snapshot keeps.
constexpr uint64_t kMaxCodeBlock = 1u << 20;

// As deep as a stack overflow's walk goes (8 MiB of stack, 48-byte frames).
constexpr size_t kSnapshotWalkFrames = 1u << 18;

}  // namespace

SnapshotData snapshot_of(Target& target, size_t max_stack) {
  SnapshotData data;
  data.machine = target.machine();
  data.pid = target.pid();
  data.name = target.process_name();
  const arch::Machine* machine = arch::machine_for(data.machine);
  pid_t tid = 0;
  for (;;) {
    auto next = target.next_thread(tid);
    if (!next || *next == 0) break;
    tid = *next;
    SnapshotData::Thread t;
    t.tid = tid;
    if (!target.initial_registers(tid, &t.registers)) continue;
    auto sp = machine ? t.registers.get(machine->stack_pointer()) : std::nullopt;
    if (sp) {
      SnapshotData::Block b;
      b.address = *sp >= 128 ? *sp - 128 : 0;
      b.bytes = read_block(target.memory(), b.address, max_stack);
      // What a walk reads beyond that block is saved too, a page at a time.
      RecordingMemory recording(target.memory());
      Unwinder unwinder(target.modules(), recording, target.machine());
      if (auto mask = target.pointer_auth_mask()) unwinder.set_pointer_auth_mask(*mask);
      UnwindOptions o;
      o.max_frames = kSnapshotWalkFrames;
      unwinder.walk(t.registers, [](const Frame&) { return true; }, o);
      std::sort(recording.pages_.begin(), recording.pages_.end());
      recording.pages_.erase(std::unique(recording.pages_.begin(), recording.pages_.end()), recording.pages_.end());
      const uint64_t block_start = b.address, block_end = b.address + b.bytes.size();
      if (!b.bytes.empty()) t.stack.push_back(std::move(b));
      for (uint64_t page : recording.pages_) {
        if (page + 4096 > block_start && page < block_end) continue;
        if (!t.stack.empty() && t.stack.back().address + t.stack.back().bytes.size() == page && t.stack.size() > 1) {
          auto more = read_block(target.memory(), page, 4096);
          t.stack.back().bytes.insert(t.stack.back().bytes.end(), more.begin(), more.end());
          continue;
        }
        SnapshotData::Block extra;
        extra.address = page;
        extra.bytes = read_block(target.memory(), page, 4096);
        if (!extra.bytes.empty()) t.stack.push_back(std::move(extra));
      }
    }
    target.thread_detach(tid);
    data.threads.push_back(std::move(t));
  }
  for (const auto& m : target.modules().modules()) {
    MapEntry e;
    e.start = m->start;
    e.end = m->end;
    e.perms = "r-xp";
    // The file as framewalk opened it (under a sysroot, the --exe given), so
    // that the snapshot is walked here without them.
    e.path = m->data && !m->data->elf().name().empty() && m->data->elf().name()[0] == '/' ? m->data->elf().name()
                                                                                          : m->name;
    // The file offset that the module's first address maps.
    if (m->data) {
      const uint64_t vaddr = m->start - m->bias;
      for (const elf::Segment& p : m->data->elf().segments()) {
        if (p.type != elf::kPtLoad) continue;
        const uint64_t page_vaddr = p.vaddr & ~uint64_t{0xfff};
        if (vaddr >= page_vaddr && vaddr - page_vaddr < std::max<uint64_t>(p.offset - (p.offset & ~uint64_t{0xfff}) + p.filesz, 1)) {
          e.offset = (p.offset & ~uint64_t{0xfff}) + (vaddr - page_vaddr);
          break;
        }
      }
    }
    // An object in memory only (not the vDSO, whose code is saved below):
    // saved as a file, which the entry names.
    if (m->data && m->name != "[vdso]" && !m->data->elf().image_from_file()) {
      std::string file = std::to_string(data.objects.size()) + "-";
      for (char c : m->name.substr(m->name.find_last_of('/') + 1))
        file += (std::isalnum(static_cast<unsigned char>(c)) || c == '@' || c == '.' || c == '-') ? c : '_';
      file += ".elf";
      const Bytes image = m->data->elf().image();
      data.objects.push_back({file, std::vector<uint8_t>(image.begin(), image.end())});
      e.path = file;
    }
    data.maps.push_back(std::move(e));
    // Code without a file (the vDSO): its bytes, for the replay to read.
    if (m->name == "[vdso]" && m->end > m->start) {
      SnapshotData::Block b;
      b.address = m->start;
      b.bytes = read_block(target.memory(), m->start, std::min<uint64_t>(m->end - m->start, kMaxCodeBlock));
      if (!b.bytes.empty()) data.code.push_back(std::move(b));
    }
  }
  return data;
}

SnapshotTarget::SnapshotTarget(SnapshotData data, std::shared_ptr<ModuleCache> cache, std::string sysroot)
    : data_(std::move(data)), cache_(cache ? std::move(cache) : std::make_shared<ModuleCache>()),
      sysroot_(std::move(sysroot)), memory_(data_) {}

size_t SnapshotTarget::BlockMemory::read(uint64_t address, void* out, size_t size) {
  auto from = [&](const std::vector<SnapshotData::Block>& blocks) -> size_t {
    for (const SnapshotData::Block& b : blocks) {
      if (address < b.address || address - b.address >= b.bytes.size()) continue;
      const size_t off = static_cast<size_t>(address - b.address);
      const size_t n = std::min(size, b.bytes.size() - off);
      std::memcpy(out, b.bytes.data() + off, n);
      return n;
    }
    return 0;
  };
  for (const SnapshotData::Thread& t : data_.threads)
    if (const size_t n = from(t.stack)) return n;
  return from(data_.code);
}

const ModuleMap& SnapshotTarget::modules() {
  if (!modules_built_) {
    // The snapshot's own objects (objects/) are not under the sysroot.
    const std::string own = data_.directory.empty() ? std::string() : data_.directory + "/objects/";
    std::vector<MapEntry> files, objects;
    for (const MapEntry& e : data_.maps)
      (!own.empty() && e.path.rfind(own, 0) == 0 ? objects : files).push_back(e);
    modules_ = modules_from_maps(0, files, *cache_, memory_, sysroot_);
    if (!objects.empty()) {
      const ModuleMap saved = modules_from_maps(0, objects, *cache_, memory_, "");
      for (const auto& m : saved.modules()) modules_.add(*m);
    }
    modules_built_ = true;
  }
  return modules_;
}

Result<pid_t> SnapshotTarget::next_thread(pid_t after) {
  size_t i = 0;
  if (after) {
    while (i < data_.threads.size() && data_.threads[i].tid != after) ++i;
    if (i == data_.threads.size()) return Error{ErrorCode::kNotFound, static_cast<uint64_t>(after)};
    ++i;
  }
  return i < data_.threads.size() ? data_.threads[i].tid : 0;
}

Result<void> SnapshotTarget::initial_registers(pid_t tid, arch::RegisterFile* out) {
  for (const SnapshotData::Thread& t : data_.threads) {
    if (t.tid == tid) {
      *out = t.registers;
      return ok();
    }
  }
  return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(tid)};
}

std::string snapshot_perf_map(const std::string& directory) { return directory + "/perf.map"; }

Result<void> save_jit_names(const std::string& directory, std::vector<symbol::PerfMap::Entry> names) {
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  std::string text;
  uint64_t last_start = 0;
  bool any = false;
  for (const auto& e : names) {
    if (any && e.start == last_start) continue;
    any = true;
    last_start = e.start;
    // A name is the rest of its line: one with a line break would be two.
    std::string name(e.name);
    for (char& c : name)
      if (c == '\n' || c == '\r') c = ' ';
    text += hex_digits(e.start) + " " + hex_digits(e.size) + " " + name + "\n";
  }
  FILE* f = std::fopen(snapshot_perf_map(directory).c_str(), "w");
  if (!f) return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !written) return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
  return ok();
}

}  // namespace framewalk
