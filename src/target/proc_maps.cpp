#include "target/proc_maps.hpp"

#include "base/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace framewalk {

std::vector<MapEntry> parse_proc_maps(const std::string& text) {
  std::vector<MapEntry> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    MapEntry e;
    char perms[8] = {}, dev[32] = {};
    int consumed = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %31s %" SCNu64 " %n", &e.start, &e.end,
                    perms, &e.offset, dev, &e.inode, &consumed) < 6)
      continue;
    e.perms = perms;
    e.device = dev;
    if (consumed > 0 && static_cast<size_t>(consumed) <= line.size()) e.path = line.substr(consumed);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<MapEntry> read_proc_maps(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/maps";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return parse_proc_maps(text);
}

ModuleMap modules_from_maps(pid_t pid, const std::vector<MapEntry>& maps, ModuleCache& cache, Memory& memory,
                            const std::string& sysroot) {
  // pid 0: the maps of a process that is not here (a snapshot, a user's
  // back-end): files are opened by name, under `sysroot`.
  const bool live = pid != 0;
  ModuleMap result;
  size_t i = 0;
  while (i < maps.size()) {
    // A module: consecutive mappings of one file (same path and inode).
    size_t j = i + 1;
    const MapEntry& first = maps[i];
    while (j < maps.size() && maps[j].path == first.path && maps[j].inode == first.inode && !first.path.empty())
      ++j;
    bool executable = false;
    for (size_t k = i; k < j; ++k) executable |= maps[k].perms.size() > 2 && maps[k].perms[2] == 'x';
    const bool is_vdso = first.path == "[vdso]";
    if (executable && is_anonymous_mapping(first.path)) {
      // Code without a file (a JIT's): walked by frame pointer, named from a perf map.
      for (size_t k = i; k < j; ++k)
        if (maps[k].perms.size() > 2 && maps[k].perms[2] == 'x')
          result.add(jit_module(maps[k].start, maps[k].end, maps[k].path));
      i = j;
      continue;
    }
    const bool is_file = !first.path.empty() && first.path[0] == '/' && !is_jitdump_marker(first.path);
    if (!executable || (!is_file && !is_vdso)) {
      i = j;
      continue;
    }
    Module m;
    m.start = first.start;
    m.end = maps[j - 1].end;
    m.name = first.path;
    Result<std::shared_ptr<const ModuleData>> data = Error{ErrorCode::kNotFound, 0};
    if (is_vdso) {
      std::vector<uint8_t> bytes(m.end - m.start);
      const size_t got = memory.read(m.start, bytes.data(), bytes.size());
      bytes.resize(got);
      data = cache.from_bytes(std::move(bytes), "[vdso]", "[vdso]:" + hex_digits(m.start) + ":" + std::to_string(pid));
    } else {
      std::string path = first.path;
      const std::string deleted = " (deleted)";
      bool replaced = path.size() > deleted.size() && path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0;
      if (replaced) path.resize(path.size() - deleted.size());
      path = sysroot + path;
      struct stat st {};
      if (!live) replaced = false;
      else if (!replaced && (::stat(path.c_str(), &st) != 0 || st.st_ino != first.inode)) replaced = true;
      // A file deleted or replaced since it was mapped: read the mapped one.
      const std::string open_path = replaced ? "/proc/" + std::to_string(pid) + "/map_files/" + hex_digits(first.start) + "-" +
                                                   hex_digits(first.end)
                                             : path;
      data = cache.get(open_path, first.path, first.device + ":" + std::to_string(first.inode) + ":" + path);
    }
    if (data) {
      m.data = *data;
      auto bias = load_bias(*m.data, first.start, first.offset);
      m.bias = bias ? *bias : first.start;
    } else {
      m.problem = to_string(data.error().code);
      m.bias = first.start - first.offset;
    }
    result.add(std::move(m));
    i = j;
  }
  return result;
}

}  // namespace framewalk
