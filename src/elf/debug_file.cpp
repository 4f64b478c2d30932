#include "elf/debug_file.hpp"
#include "elf/debuginfod.hpp"

#include <unistd.h>

#include <cstdio>

namespace framewalk::elf {

namespace {

bool exists(const std::string& p) { return ::access(p.c_str(), R_OK) == 0; }

bool crc_matches(const std::string& path, uint32_t want) {
  auto image = FileImage::map(path);
  if (!image) return false;
  return gnu_debuglink_crc32((*image)->bytes()) == want;
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::optional<std::string> find_debug_file(const ElfFile& file, const std::string& path,
                                           const DebugFileSearch& search) {
  if (auto id = file.build_id(); id && id->size() >= 2) {
    std::string hex;
    char buf[3];
    for (uint8_t b : *id) {
      std::snprintf(buf, sizeof buf, "%02x", b);
      hex += buf;
    }
    for (const std::string& root : search.debug_roots) {
      const std::string candidate = root + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
      if (exists(candidate)) return candidate;
    }
  }
  if (auto link = file.debuglink()) {
    const std::string dir = directory_of(path);
    std::vector<std::string> candidates = {dir + "/" + link->first, dir + "/.debug/" + link->first};
    for (const std::string& root : search.debug_roots) candidates.push_back(root + dir + "/" + link->first);
    for (const std::string& c : candidates) {
      if (c == path) continue;
      if (exists(c) && crc_matches(c, link->second)) return c;
    }
  }
  // Last, a debuginfod server (when enabled and DEBUGINFOD_URLS names one).
  if (auto id = file.build_id(); id && !id->empty())
    if (auto fetched = debuginfod_find_debuginfo(*id)) return fetched;
  return std::nullopt;
}

}  // namespace framewalk::elf
