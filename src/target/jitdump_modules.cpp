#include "target/jitdump_modules.hpp"

#include <sys/stat.h>

#include "arch/machine.hpp"
#include "base/byte_reader.hpp"
#include "base/text.hpp"
#include "elf/elf_synth.hpp"

namespace framewalk {

bool is_jitdump_of(std::string_view path, pid_t pid) {
  const std::string name = "/jit-" + std::to_string(pid) + ".dump";
  return path.size() > name.size() && path.substr(path.size() - name.size()) == name;  // " (deleted)": gone
}

std::string jitdump_marker(const std::vector<MapEntry>& maps, pid_t pid) {
  for (const MapEntry& e : maps)
    if (is_jitdump_of(e.path, pid)) return e.path;
  return "";
}

Result<std::unique_ptr<JitdumpFile>> read_jitdump(const std::string& path) {
  FW_TRY(auto image, FileImage::map(path));
  FW_TRY(auto dump, symbol::parse_jitdump(image->bytes()));
  auto file = std::make_unique<JitdumpFile>();
  file->path = path;
  file->image = std::move(image);
  file->dump = std::move(dump);
  return file;
}

namespace {

// Why the records after some point of `file` are left out, as a sentence
// naming the file and offset; "" when none are, or when the last record is
// only cut short by the end of the file (the runtime is writing it).
std::string damage_of(const JitdumpFile& file, uint64_t shift = 0) {
  const auto& stopped = file.dump.stopped;
  if (!stopped) return "";
  if (stopped->code == ErrorCode::kTruncated) {
    // Cut by the file's end, or a field past its record's own end (damage)?
    const Bytes bytes = file.image->bytes();
    ByteReader r(bytes, file.dump.header.endian);
    uint32_t total = 0;
    if (!r.seek(file.dump.stopped_record_offset + 4)) return "";
    if (auto t = r.u32()) total = *t; else return "";
    if (file.dump.stopped_record_offset + total > bytes.size()) return "";
  }
  return file.path + ": " + to_string(stopped->code) + " at offset 0x" + hex_digits(stopped->offset + shift) +
         ": the records after it are left out";
}

}  // namespace

std::unique_ptr<JitdumpFile> load_jitdump(const std::string& path, std::vector<std::string>* warnings) {
  auto file = read_jitdump(path);
  if (!file) {
    warnings->push_back(path + ": " + to_string(file.error().code) + " at offset 0x" +
                        hex_digits(file.error().offset) + ": the process's jitdump is not read");
    return nullptr;
  }
  if (std::string damage = damage_of(**file); !damage.empty()) warnings->push_back(std::move(damage));
  return std::move(*file);
}

std::optional<Module> jitdump_module(const JitdumpFile& file, const symbol::JitCodeLoad& load) {
  const symbol::JitDump& dump = file.dump;
  if (!load.unwinding_info || load.code_size == 0) return std::nullopt;
  const symbol::JitUnwindingInfo& unwind = dump.unwinding_infos[*load.unwinding_info];
  if (unwind.eh_frame.empty()) return std::nullopt;  // "use frame pointers"
  const arch::Machine* machine = arch::machine_for(usual_machine_key(static_cast<uint16_t>(dump.header.elf_mach)));
  if (!machine) return std::nullopt;
  elf::SyntheticImage image;
  image.machine = machine->elf_machine();
  image.is64 = machine->address_size() == 8;
  image.endian = machine->endian();
  image.code_address = load.code_addr;
  image.code_size = load.code_size;
  if (load.code.size() == load.code_size) image.code.assign(load.code.begin(), load.code.end());
  image.eh_frame.assign(unwind.eh_frame.begin(), unwind.eh_frame.end());
  // Where the runtime computed the table's pc-relative pointers (perf's genelf).
  image.eh_frame_address = load.code_addr + ((load.code_size + 7) & ~uint64_t{7});
  image.symbols.push_back({std::string(load.name), load.code_addr, load.code_size});
  auto data = module_data_from_image(image, file.path);
  if (!data) return std::nullopt;
  Module m;
  m.start = load.code_addr;
  m.end = load.code_end();
  m.name = file.path;
  m.data = *data;
  return m;
}

size_t add_jitdump_modules(ModuleMap& modules, const JitdumpFile& file) {
  const symbol::JitDump& dump = file.dump;
  const symbol::JitCodeIndex index(dump, dump.header.pid);
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  size_t added = 0;
  for (const symbol::JitCodeLoad& load : dump.loads) {
    // Still there: no later load or move took the address (by the latest
    // time a record can have: placements last until UINT64_MAX, exclusive).
    if (!load.unwinding_info || index.find(load.code_addr, UINT64_MAX - 1) != &load) continue;
    auto m = jitdump_module(file, load);
    if (!m) continue;
    taken.emplace_back(m->start, m->end);
    modules.add(std::move(*m));
    ++added;
  }
  modules.carve_jit(std::move(taken));
  return added;
}

void JitdumpFeed::end_overlapping(ModuleMap& modules, uint64_t start, uint64_t end) {
  auto it = added_.upper_bound(start);
  if (it != added_.begin() && std::prev(it)->second.end > start) --it;
  while (it != added_.end() && it->first < end) {
    // Gone already when its range was unmapped (its jit module with it).
    if (modules.remove(it->second.id) && !it->second.jit_name.empty())
      modules.add(jit_module(it->first, it->second.end, it->second.jit_name));
    it = added_.erase(it);
  }
}

void JitdumpFeed::reread(const std::string& path, std::vector<std::string>* warnings) {
  calls_ = 0;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) == bytes_) return;
  // A file that shrank was written anew: read it from its start.
  if (static_cast<uint64_t>(st.st_size) < bytes_) consumed_ = 0;
  std::string problem;
  auto image = FileImage::map(path);
  if (!image) {
    problem = path + ": " + to_string(image.error().code) + " at offset 0x" + hex_digits(image.error().offset) +
              ": the process's jitdump is not read";
  } else {
    // Only what was appended since the last reading (records read before
    // are in force already): the header, then the records from where that
    // reading ended, parsed as a file of their own.
    const Bytes all = (*image)->bytes();
    std::shared_ptr<const FileImage> part = *image;
    if (consumed_ > 0 && consumed_ <= all.size() && header_size_ <= consumed_) {
      std::vector<uint8_t> joined(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(header_size_));
      joined.insert(joined.end(), all.begin() + static_cast<std::ptrdiff_t>(consumed_), all.end());
      part = FileImage::from_buffer(std::move(joined));
    } else {
      consumed_ = 0;
    }
    auto dump = symbol::parse_jitdump(part->bytes());
    if (!dump) {
      problem = path + ": " + to_string(dump.error().code) + " at offset 0x" + hex_digits(dump.error().offset) +
                ": the process's jitdump is not read";
    } else {
      auto file = std::make_unique<JitdumpFile>();
      file->path = path;
      file->image = part;
      file->dump = std::move(*dump);
      // Offsets in the part are the file's less what was left out.
      const uint64_t shift = consumed_ ? consumed_ - file->dump.header.size : 0;
      problem = damage_of(*file, shift);
      const uint64_t end = file->dump.stopped ? file->dump.stopped_record_offset : part->bytes().size();
      header_size_ = file->dump.header.size;
      consumed_ = end + shift;
      bytes_ = static_cast<uint64_t>(st.st_size);
      file_ = std::move(file);
      next_load_ = next_move_ = 0;  // the part holds only records not in force yet
    }
  }
  if (!problem.empty() && problem != problem_) warnings->push_back(problem);
  problem_ = problem;
}

size_t JitdumpFeed::advance(ModuleMap& modules, const std::string& path, uint64_t time,
                            std::vector<std::string>* warnings) {
  auto pending = [&] {
    return file_ && (next_load_ < file_->dump.loads.size() || next_move_ < file_->dump.moves.size());
  };
  if (!pending() && ++calls_ >= kRecheckCalls) reread(path, warnings);
  if (!pending()) return 0;
  const symbol::JitDump& dump = file_->dump;
  size_t added = 0;
  // The records in the file's order, while their times have come.
  for (;;) {
    const symbol::JitCodeLoad* load = next_load_ < dump.loads.size() ? &dump.loads[next_load_] : nullptr;
    const symbol::JitCodeMove* move = next_move_ < dump.moves.size() ? &dump.moves[next_move_] : nullptr;
    if (load && move && move->index < load->index) load = nullptr;
    if (load) {
      if (time != kAnyTime && load->timestamp > time) break;
      ++next_load_;
      end_overlapping(modules, load->code_addr, load->code_end());
      auto m = jitdump_module(*file_, *load);
      if (!m) continue;
      const Module* around = modules.find(m->start);
      std::string jit_name = around && around->jit ? around->name : std::string();
      const uint64_t start = m->start, end = m->end;
      modules.carve_jit({{start, end}});
      added_[start] = Added{modules.add(std::move(*m)), end, std::move(jit_name)};
      ++added;
    } else if (move) {
      if (time != kAnyTime && move->timestamp > time) break;
      ++next_move_;
      // The code left: its tables' pc-relative pointers are not for where it went.
      if (move->code_size != 0 && move->old_code_addr + move->code_size > move->old_code_addr)
        end_overlapping(modules, move->old_code_addr, move->old_code_addr + move->code_size);
    } else {
      break;
    }
  }
  return added;
}

}  // namespace framewalk
