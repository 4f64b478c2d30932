// Hand-written perf.data files for the reader's tests (and the fuzz seeds):
// records byte by byte, attributes of any size, the file's sections laid
// out as `perf record` lays them.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace framewalk::perf::test {

class Bytes8 {
 public:
  Bytes8& u8(uint8_t v) {
    b.push_back(v);
    return *this;
  }
  Bytes8& u16(uint16_t v) { return put(v, 2); }
  Bytes8& u32(uint32_t v) { return put(v, 4); }
  Bytes8& u64(uint64_t v) { return put(v, 8); }
  Bytes8& raw(const std::vector<uint8_t>& v) {
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
  // A NUL-terminated string padded with zeros to 8 bytes, as perf writes names.
  Bytes8& name(const std::string& s) {
    b.insert(b.end(), s.begin(), s.end());
    b.push_back(0);
    while (b.size() % 8) b.push_back(0);
    return *this;
  }
  Bytes8& put(uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  std::vector<uint8_t> b;
};

// One record: header (size patched by done()), then fields.
struct Rec : Bytes8 {
  Rec(uint32_t type, uint16_t misc = 0) {
    u32(type);
    u16(misc);
    u16(0);
  }
  std::vector<uint8_t> done() {
    const uint16_t size = static_cast<uint16_t>(b.size());
    std::memcpy(b.data() + 6, &size, 2);
    return b;
  }
};

struct Attr {
  uint32_t type = 1;  // PERF_TYPE_SOFTWARE
  uint64_t config = 0;  // cpu-clock
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t flags = uint64_t{1} << 18;  // sample_id_all
  uint64_t branch_sample_type = 0;
  uint64_t regs_user = 0;
  uint32_t stack_user = 0;
  uint32_t size = 128;
  std::vector<uint64_t> ids;
  std::vector<uint8_t> bytes() const {
    Bytes8 a;
    a.u32(type).u32(size).u64(config).u64(4000).u64(sample_type).u64(read_format).u64(flags);
    a.u32(0).u32(0).u64(0).u64(0);          // wakeup_events, bp_type, config1, config2 (72)
    a.u64(branch_sample_type);              // 80
    a.u64(regs_user).u32(stack_user).u32(0);  // 96
    while (a.b.size() < size) a.u8(0);
    a.b.resize(size);
    return a.b;
  }
};

// A perf.data file: header, attrs (with ids), data, feature sections.
inline std::vector<uint8_t> perf_file(const std::vector<Attr>& attrs, const std::vector<std::vector<uint8_t>>& records,
                                      const std::map<unsigned, std::vector<uint8_t>>& features = {}) {
  const uint32_t attr_size = attrs.empty() ? 144 : attrs[0].size + 16;
  const uint64_t attrs_offset = 104;
  const uint64_t attrs_size = attr_size * attrs.size();
  uint64_t ids_offset = attrs_offset + attrs_size;
  std::vector<uint8_t> data;
  for (const auto& r : records) data.insert(data.end(), r.begin(), r.end());
  uint64_t ids_total = 0;
  for (const Attr& a : attrs) ids_total += 8 * a.ids.size();
  const uint64_t data_offset = ids_offset + ids_total;
  Bytes8 f;
  f.u64(0x32454c4946524550ull).u64(104).u64(attr_size);
  f.u64(attrs_offset).u64(attrs_size);
  f.u64(data_offset).u64(data.size());
  f.u64(0).u64(0);
  uint64_t bits[4] = {};
  for (const auto& [bit, bytes] : features) bits[bit / 64] |= uint64_t{1} << (bit % 64);
  for (uint64_t w : bits) f.u64(w);
  uint64_t next_ids = ids_offset;
  for (const Attr& a : attrs) {
    f.raw(a.bytes());
    f.u64(next_ids).u64(8 * a.ids.size());
    next_ids += 8 * a.ids.size();
  }
  for (const Attr& a : attrs)
    for (uint64_t id : a.ids) f.u64(id);
  f.raw(data);
  // The feature table, then the features' bytes.
  uint64_t at = f.b.size() + 16 * features.size();
  for (const auto& [bit, bytes] : features) {
    f.u64(at).u64(bytes.size());
    at += bytes.size();
  }
  for (const auto& [bit, bytes] : features) f.raw(bytes);
  return f.b;
}

// perf_header_string.
inline Bytes8& header_string(Bytes8& b, const std::string& s) {
  const uint32_t len = static_cast<uint32_t>((s.size() + 1 + 7) / 8 * 8);
  b.u32(len);
  std::vector<uint8_t> padded(len, 0);
  std::memcpy(padded.data(), s.data(), s.size());
  return b.raw(padded);
}

}  // namespace framewalk::perf::test
