#include "target/libgcc_frames.hpp"

#include <algorithm>
#include <set>

#include "base/text.hpp"
#include "dwarf/cfi_section.hpp"
#include "elf/elf_synth.hpp"

namespace framewalk {

namespace {

// A table's records can be tens of thousands; a runtime's far fewer.
constexpr size_t kMaxRecords = size_t{1} << 20;
// A table whose FDEs span more than this is not one piece of jit code.
constexpr uint64_t kMaxCodeSpan = uint64_t{1} << 30;

struct Layout {
  unsigned pointer;
  Endian endian;
};

class Reader {
 public:
  Reader(Memory& memory, const arch::Machine& machine, LibgccRegistry* out)
      : memory_(memory), machine_(machine), l_{machine.address_size(), machine.endian()}, out_(out) {}

  // The list headed by the pointer at `head`; false when a problem ended it.
  bool list(uint64_t head) {
    auto first = word(head);
    if (!first) return fail("cannot be read", head);
    for (uint64_t object = *first; object != 0;) {
      if (!seen_.insert(object).second) return fail("loops", object);
      if (seen_.size() > kLibgccMaxObjects) return fail("has too many objects", object);
      auto u = word(object + 3 * l_.pointer);
      auto s = word(object + 4 * l_.pointer);
      auto next = word(object + 5 * l_.pointer);
      if (!u || !s || !next) return fail("cannot be read", object);
      const bool sorted = *s & 1, from_array = (*s >> 1) & 1;
      uint64_t data = *u;
      if (sorted) {  // u.sort: a struct fde_vector, whose first field is what u was
        auto orig = word(*u);
        if (!orig) return fail("cannot be read", *u);
        data = *orig;
      }
      if (!from_array) {
        if (!table(object, data)) return false;
      } else {  // __register_frame_table: a null-ended array of tables
        for (size_t i = 0;; ++i) {
          if (i >= kLibgccMaxObjects) return fail("has too many objects", data);
          auto t = word(data + i * l_.pointer);
          if (!t) return fail("cannot be read", data + i * l_.pointer);
          if (*t == 0) break;
          if (!table(object, *t)) return false;
        }
      }
      object = *next;
    }
    return true;
  }

 private:
  Result<uint64_t> word(uint64_t address) { return memory_.read_word(address, l_.pointer, l_.endian); }

  bool fail(const char* problem, uint64_t address) {
    out_->problem = problem;
    out_->problem_address = address;
    return false;
  }

  // The .eh_frame at `address`, up to its zero length word.
  bool table(uint64_t object, uint64_t address) {
    if (++tables_ > kLibgccMaxTables) return fail("has too many tables", address);
    uint64_t end = address;
    for (size_t records = 0;; ++records) {
      if (records >= kMaxRecords) return fail("has too many records", address);
      auto length = memory_.read_word(end, 4, l_.endian);
      if (!length) return fail("cannot be read", end);
      if (*length == 0) break;
      uint64_t size = 4 + *length;
      if (*length == 0xffffffff) {  // a 64-bit length follows
        auto wide = memory_.read_word(end + 4, 8, l_.endian);
        if (!wide) return fail("cannot be read", end + 4);
        if (*wide > kLibgccMaxTableBytes) return fail("is too large", end);
        size = 12 + *wide;
      }
      if (end + size < end || end + size - address > kLibgccMaxTableBytes) return fail("is too large", address);
      end += size;
    }
    LibgccTable t;
    t.object = object;
    t.address = address;
    t.bytes.resize(end - address);
    if (!t.bytes.empty() && memory_.read(address, t.bytes.data(), t.bytes.size()) != t.bytes.size())
      return fail("cannot be read", address);
    // What its FDEs cover.
    dwarf::CfiSectionInfo info;
    info.kind = dwarf::CfiKind::kEhFrame;
    info.endian = l_.endian;
    info.address_size = static_cast<uint8_t>(l_.pointer);
    info.arch = &machine_.info();
    info.bases.section_address = address;
    const dwarf::CfiSection section(Bytes(t.bytes.data(), t.bytes.size()), info);
    t.pc_start = UINT64_MAX;
    section.for_each(
        [&](const dwarf::CfiSection::Entry& e) {
          if (e.type == dwarf::CfiSection::Entry::Type::kFde && e.fde.pc_range != 0 &&
              e.fde.pc_begin + e.fde.pc_range > e.fde.pc_begin) {
            t.pc_start = std::min(t.pc_start, e.fde.pc_begin);
            t.pc_end = std::max(t.pc_end, e.fde.pc_end());
          }
          return true;
        },
        [](const dwarf::CfiDiagnostic&) {});
    if (t.pc_start < t.pc_end) out_->tables.push_back(std::move(t));
    return true;
  }

  Memory& memory_;
  const arch::Machine& machine_;
  Layout l_;
  LibgccRegistry* out_;
  std::set<uint64_t> seen_;
  size_t tables_ = 0;  // tables met, read or not
};

}  // namespace

LibgccRegistry read_libgcc_registry(Memory& memory, uint64_t unseen_head, uint64_t seen_head,
                                    const arch::Machine& machine) {
  LibgccRegistry registry;
  Reader reader(memory, machine, &registry);
  if (unseen_head && !reader.list(unseen_head)) return registry;
  if (seen_head) reader.list(seen_head);
  return registry;
}

size_t add_libgcc_frame_modules(ModuleMap& modules, Memory& memory, const arch::Machine& machine,
                                std::vector<std::string>* warnings) {
  struct Found {
    std::string file;
    uint64_t unseen, seen;
  };
  std::vector<Found> found;
  for (const auto& m : modules.modules()) {
    if (!m->data || m->jit) continue;
    const ModuleData::LibgccHeads heads = m->data->libgcc_object_heads();
    if (heads.unseen || heads.seen)
      found.push_back({m->name, heads.unseen ? *heads.unseen + m->bias : 0, heads.seen ? *heads.seen + m->bias : 0});
  }
  size_t added = 0;
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  for (const Found& f : found) {
    const LibgccRegistry registry = read_libgcc_registry(memory, f.unseen, f.seen, machine);
    if (!registry.problem.empty() && warnings)
      warnings->push_back(f.file + ": what __register_frame registered (libgcc's lists at 0x" + hex_digits(f.unseen) +
                          " and 0x" + hex_digits(f.seen) + ") " + registry.problem + " (at 0x" +
                          hex_digits(registry.problem_address) + "); tables read before it: " +
                          std::to_string(registry.tables.size()));
    for (const LibgccTable& t : registry.tables) {
      // A file's own code has its file's tables (crtbegin registers a
      // program's .eh_frame where no PT_GNU_EH_FRAME is used); a table
      // registered twice is taken once (its first module is such a one).
      bool in_file = false;
      for (const auto& m : modules.modules())
        in_file |= !m->jit && m->data && m->start < t.pc_end && t.pc_start < m->end;
      if (in_file) continue;
      const std::string name = "[registered@0x" + hex_digits(t.address) + "]";
      if (t.pc_end - t.pc_start > kMaxCodeSpan) {
        if (warnings)
          warnings->push_back(f.file + ": the table registered at 0x" + hex_digits(t.address) + " covers 0x" +
                              hex_digits(t.pc_start) + "-0x" + hex_digits(t.pc_end) + ": too wide, left out");
        continue;
      }
      elf::SyntheticImage image;
      image.machine = machine.elf_machine();
      image.is64 = machine.address_size() == 8;
      image.endian = machine.endian();
      image.code_address = t.pc_start;
      image.code_size = t.pc_end - t.pc_start;
      image.eh_frame = t.bytes;
      image.eh_frame.insert(image.eh_frame.end(), 4, 0);  // its end, as registered
      image.eh_frame_address = t.address;
      auto data = module_data_from_image(image, name);
      if (!data) {
        if (warnings)
          warnings->push_back(f.file + ": the table registered at 0x" + hex_digits(t.address) + ": " +
                              to_string(data.error().code) + ": left out");
        continue;
      }
      Module m;
      m.start = t.pc_start;
      m.end = t.pc_end;
      m.name = name;
      m.data = *data;
      taken.emplace_back(m.start, m.end);
      modules.add(std::move(m));
      ++added;
    }
  }
  modules.carve_jit(std::move(taken));
  return added;
}

}  // namespace framewalk
