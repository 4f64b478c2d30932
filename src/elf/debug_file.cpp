#include "elf/debug_file.hpp"
#include "elf/debuginfod.hpp"

#include <unistd.h>


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

bool build_id_is(const std::string& path, const std::vector<uint8_t>& want) {
  auto file = ElfFile::open(path);
  if (!file) return false;
  auto id = (*file)->build_id();
  return id && *id == want;
}

}  // namespace

std::string build_id_hex(const std::vector<uint8_t>& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(id.size() * 2);
  for (uint8_t b : id) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

std::optional<std::string> find_debug_file(const ElfFile& file, const std::string& path,
                                           const DebugFileSearch& search) {
  if (auto id = file.build_id(); id && id->size() >= 2) {
    const std::string hex = build_id_hex(*id);
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
  if (auto id = file.build_id(); search.debuginfod && id && !id->empty())
    if (auto fetched = debuginfod_find_debuginfo(*id)) return fetched;
  return std::nullopt;
}

std::optional<std::string> find_supplementary_file(const ElfFile& debug_file, const std::string& debug_path,
                                                   const DebugFileSearch& search) {
  auto link = debug_file.debugaltlink();
  if (!link) return std::nullopt;
  const auto& [written, id] = *link;
  std::vector<std::string> candidates;
  candidates.push_back(written[0] == '/' ? written : directory_of(debug_path) + "/" + written);
  if (id.size() >= 2) {
    const std::string hex = build_id_hex(id);
    for (const std::string& root : search.debug_roots)
      candidates.push_back(root + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug");
  }
  for (const std::string& c : candidates)
    if (exists(c) && build_id_is(c, id)) return c;
  if (search.debuginfod && !id.empty())
    if (auto fetched = debuginfod_find_debuginfo(id)) return fetched;
  return std::nullopt;
}

std::optional<std::string> find_dwp_file(const std::string& path) {
  std::string candidate = path + ".dwp";
  if (exists(candidate)) return candidate;
  return std::nullopt;
}

}  // namespace framewalk::elf
