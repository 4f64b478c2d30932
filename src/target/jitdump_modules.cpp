#include "target/jitdump_modules.hpp"

#include "arch/machine.hpp"
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

std::unique_ptr<JitdumpFile> load_jitdump(const std::string& path, std::vector<std::string>* warnings) {
  auto file = read_jitdump(path);
  if (!file) {
    warnings->push_back(path + ": " + to_string(file.error().code) + " at offset 0x" +
                        hex_digits(file.error().offset) + ": the process's jitdump is not read");
    return nullptr;
  }
  const auto& stopped = (*file)->dump.stopped;
  if (stopped && stopped->code != ErrorCode::kTruncated)
    warnings->push_back(path + ": " + to_string(stopped->code) + " at offset 0x" + hex_digits(stopped->offset) +
                        ": the records after it are left out");
  return std::move(*file);
}

size_t add_jitdump_modules(ModuleMap& modules, const JitdumpFile& file) {
  const symbol::JitDump& dump = file.dump;
  const arch::Machine* machine = arch::machine_for(static_cast<uint16_t>(dump.header.elf_mach));
  if (!machine) return 0;
  const symbol::JitCodeIndex index(dump, dump.header.pid);
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  size_t added = 0;
  for (const symbol::JitCodeLoad& load : dump.loads) {
    if (!load.unwinding_info || load.code_size == 0) continue;
    const symbol::JitUnwindingInfo& unwind = dump.unwinding_infos[*load.unwinding_info];
    if (unwind.eh_frame.empty()) continue;  // "use frame pointers"
    // Still there: no later load or move took the address (by the latest
    // time a record can have: placements last until UINT64_MAX, exclusive).
    if (index.find(load.code_addr, UINT64_MAX - 1) != &load) continue;
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
    if (!data) continue;
    Module m;
    m.start = load.code_addr;
    m.end = load.code_end();
    m.name = file.path;
    m.data = *data;
    taken.emplace_back(m.start, m.end);
    modules.add(std::move(m));
    ++added;
  }
  modules.carve_jit(std::move(taken));
  return added;
}

}  // namespace framewalk
