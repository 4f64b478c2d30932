#include "target/gdb_jit.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_set>

#include "base/text.hpp"
#include "elf/symbols.hpp"

namespace framewalk {

const char* to_string(GdbJitProblem problem) {
  switch (problem) {
    case GdbJitProblem::kNone: return "none";
    case GdbJitProblem::kUnreadable: return "cannot be read";
    case GdbJitProblem::kVersion: return "has a version other than 1";
    case GdbJitProblem::kLoop: return "loops";
    case GdbJitProblem::kBrokenLink: return "has an entry whose prev_entry is not the entry before it";
    case GdbJitProblem::kTooMany: return "has too many entries";
    case GdbJitProblem::kTooLarge: return "has an object too large to be one";
    case GdbJitProblem::kChanging: return "was being changed (Android's action_seqlock)";
  }
  return "?";
}

namespace {

struct Layout {
  unsigned pointer;      // bytes of a pointer
  unsigned size_offset;  // of symfile_size in an entry
  Endian endian;
};

Layout layout_of(const arch::Machine& machine) {
  const unsigned p = machine.address_size();
  // 3 pointers, rounded up to uint64_t's alignment (4 on i386).
  const unsigned align = p == 8 || machine.elf_machine() != elf::kEm386 ? 8 : 4;
  return Layout{p, (3 * p + align - 1) / align * align, machine.endian()};
}

// One reading from the head; problems set in `out`.
void read_once(Memory& memory, uint64_t descriptor, const Layout& l, GdbJitList* out) {
  auto fail = [&](GdbJitProblem p, uint64_t address) {
    out->problem = p;
    out->problem_address = address;
  };
  auto version = memory.read_word(descriptor, 4, l.endian);
  if (!version) return fail(GdbJitProblem::kUnreadable, descriptor);
  if (*version != 1) return fail(GdbJitProblem::kVersion, descriptor);
  // Android's extension: its seqlock, read before the head.
  const uint64_t android = descriptor + 8 + 2 * l.pointer;
  char magic[8] = {};
  const bool is_android = memory.read(android, magic, sizeof magic) == sizeof magic &&
                          (std::memcmp(magic, "Android1", 8) == 0 || std::memcmp(magic, "Android2", 8) == 0);
  const bool entry_seqlocks = is_android && magic[7] == '2';
  const uint64_t seqlock_at = android + 20;
  uint64_t seqlock = 0;
  if (is_android) {
    auto s = memory.read_word(seqlock_at, 4, l.endian);
    if (!s) return fail(GdbJitProblem::kUnreadable, seqlock_at);
    if (*s & 1) return fail(GdbJitProblem::kChanging, descriptor);
    seqlock = *s;
  }
  // Unchanged since the reading began (Android's), else the reading starts over.
  auto unchanged = [&] {
    if (!is_android) return true;
    auto s = memory.read_word(seqlock_at, 4, l.endian);
    return s && *s == seqlock;
  };
  auto first = memory.read_word(descriptor + 8 + l.pointer, l.pointer, l.endian);
  if (!first) return fail(GdbJitProblem::kUnreadable, descriptor + 8 + l.pointer);
  std::unordered_set<uint64_t> seen;
  uint64_t previous = 0;
  for (uint64_t entry = *first; entry != 0;) {
    if (out->objects.size() >= kGdbJitMaxEntries) return fail(GdbJitProblem::kTooMany, entry);
    if (!seen.insert(entry).second) return fail(GdbJitProblem::kLoop, entry);
    auto next = memory.read_word(entry, l.pointer, l.endian);
    auto prev = memory.read_word(entry + l.pointer, l.pointer, l.endian);
    auto symfile = memory.read_word(entry + 2 * l.pointer, l.pointer, l.endian);
    auto size = memory.read_word(entry + l.size_offset, 8, l.endian);
    if (!next || !prev || !symfile || !size) return fail(GdbJitProblem::kUnreadable, entry);
    if (!unchanged()) return fail(GdbJitProblem::kChanging, descriptor);
    if (entry_seqlocks) {  // odd: an entry being removed
      auto s = memory.read_word(entry + l.size_offset + 16, 4, l.endian);
      if (!s) return fail(GdbJitProblem::kUnreadable, entry);
      if (*s & 1) return fail(GdbJitProblem::kChanging, descriptor);
    }
    // ART's reader uses no prev_entry (ART sets it only to unlink).
    if (!is_android && *prev != previous) return fail(GdbJitProblem::kBrokenLink, entry);
    if (*size > kGdbJitMaxObjectBytes) return fail(GdbJitProblem::kTooLarge, entry);
    // Its last byte first: a wild pointer costs no buffer of its claimed size.
    uint8_t last;
    if (*size && memory.read(*symfile + *size - 1, &last, 1) != 1) return fail(GdbJitProblem::kUnreadable, *symfile);
    GdbJitObject object;
    object.entry = entry;
    object.address = *symfile;
    object.bytes.resize(static_cast<size_t>(*size));
    if (!object.bytes.empty() && memory.read(*symfile, object.bytes.data(), object.bytes.size()) != object.bytes.size())
      return fail(GdbJitProblem::kUnreadable, *symfile);
    if (!unchanged()) return fail(GdbJitProblem::kChanging, descriptor);
    out->objects.push_back(std::move(object));
    previous = entry;
    entry = *next;
  }
}

// The range of the object's code: its allocated executable sections.
bool code_range(const elf::ElfFile& file, uint64_t* start, uint64_t* end) {
  *start = UINT64_MAX;
  *end = 0;
  for (const elf::Section& s : file.sections()) {
    if (!(s.flags & elf::kShfAlloc) || !(s.flags & elf::kShfExecinstr) || s.size == 0 || s.address == 0) continue;
    if (s.address + s.size < s.address) continue;
    *start = std::min(*start, s.address);
    *end = std::max(*end, s.address + s.size);
  }
  return *start < *end;
}

}  // namespace

GdbJitList read_gdb_jit_list(Memory& memory, uint64_t descriptor, const arch::Machine& machine) {
  const Layout layout = layout_of(machine);
  GdbJitList list;
  // A runtime may change the list while a running process is read: a
  // reading that meets a broken link or a loop is done again from the head.
  for (;;) {
    list.objects.clear();
    list.problem = GdbJitProblem::kNone;
    list.problem_address = 0;
    ++list.attempts;
    read_once(memory, descriptor, layout, &list);
    const bool changing = list.problem == GdbJitProblem::kBrokenLink || list.problem == GdbJitProblem::kLoop ||
                          list.problem == GdbJitProblem::kChanging;
    if (!changing || list.attempts >= 3) return list;
  }
}

size_t add_gdb_jit_modules(ModuleMap& modules, Memory& memory, const arch::Machine& machine, ModuleCache& cache,
                           std::vector<std::string>* warnings) {
  struct Found {
    std::string file;
    uint64_t descriptor;
  };
  std::vector<Found> descriptors;
  for (const auto& m : modules.modules()) {
    if (!m->data || m->jit) continue;
    if (auto value = m->data->gdb_jit_descriptor())
      descriptors.push_back({m->name, *value + m->bias});
  }
  size_t added = 0;
  std::vector<std::pair<uint64_t, uint64_t>> objects;
  std::set<std::string> known;
  if (!descriptors.empty())
    for (const auto& m : modules.modules())
      if (!m->jit) known.insert(m->name);
  for (const Found& d : descriptors) {
    const GdbJitList list = read_gdb_jit_list(memory, d.descriptor, machine);
    if (list.problem != GdbJitProblem::kNone && warnings)
      warnings->push_back(d.file + ": the GDB JIT list of __jit_debug_descriptor at 0x" + hex_digits(d.descriptor) +
                          " " + to_string(list.problem) + " (at 0x" + hex_digits(list.problem_address) + "); objects read before it: " +
                          std::to_string(list.objects.size()));
    for (const GdbJitObject& object : list.objects) {
      const std::string name = "[gdb-jit@0x" + hex_digits(object.address) + "]";
      // Read before (a recording reads a running process's list again).
      if (known.count(name)) continue;
      auto data = cache.from_bytes(object.bytes, name, "gdb-jit:" + hex_digits(object.entry));
      if (!data) {
        if (warnings) warnings->push_back(d.file + ": GDB JIT object at 0x" + hex_digits(object.address) + ": " +
                                          to_string(data.error().code) + " at offset 0x" +
                                          hex_digits(data.error().offset) + ": left out");
        continue;
      }
      Module m;
      if (!code_range((*data)->elf(), &m.start, &m.end)) continue;
      m.name = name;
      m.data = *data;
      objects.emplace_back(m.start, m.end);
      modules.add(std::move(m));
      ++added;
    }
  }
  modules.carve_jit(std::move(objects));
  return added;
}

}  // namespace framewalk
