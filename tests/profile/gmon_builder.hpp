// Hand-written gmon.out files for the tests: a header, then records, in
// either byte order with 4- or 8-byte addresses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace framewalk::test {

class GmonBuilder {
 public:
  explicit GmonBuilder(unsigned address_size = 8, bool big_endian = false, uint32_t version = 1)
      : address_size_(address_size), big_(big_endian) {
    bytes_ = {'g', 'm', 'o', 'n'};
    u32(version);
    for (int i = 0; i < 12; ++i) bytes_.push_back(0);
  }
  // The spare bytes framewalk's runtime writes: exact call sites.
  GmonBuilder& exact_call_sites() {
    for (int i = 0; i < 4; ++i) bytes_[8 + i] = static_cast<uint8_t>("fwra"[i]);
    return *this;
  }
  GmonBuilder& histogram(uint64_t low, uint64_t high, const std::vector<uint16_t>& bins, uint32_t rate = 100,
                         const std::string& dimension = "seconds", char abbreviation = 's') {
    return histogram_header(low, high, static_cast<uint32_t>(bins.size()), rate, dimension, abbreviation)
        .bins(bins);
  }
  GmonBuilder& histogram_header(uint64_t low, uint64_t high, uint32_t count, uint32_t rate = 100,
                                const std::string& dimension = "seconds", char abbreviation = 's') {
    bytes_.push_back(0);
    address(low);
    address(high);
    u32(count);
    u32(rate);
    for (size_t i = 0; i < 15; ++i) bytes_.push_back(i < dimension.size() ? static_cast<uint8_t>(dimension[i]) : 0);
    bytes_.push_back(static_cast<uint8_t>(abbreviation));
    return *this;
  }
  GmonBuilder& bins(const std::vector<uint16_t>& bins) {
    for (uint16_t b : bins) u16(b);
    return *this;
  }
  GmonBuilder& arc(uint64_t from, uint64_t self, uint32_t count) {
    bytes_.push_back(1);
    address(from);
    address(self);
    u32(count);
    return *this;
  }
  GmonBuilder& basic_blocks(const std::vector<std::pair<uint64_t, uint64_t>>& counts) {
    bytes_.push_back(2);
    u32(static_cast<uint32_t>(counts.size()));
    for (const auto& [address_value, count] : counts) {
      address(address_value);
      address(count);
    }
    return *this;
  }
  GmonBuilder& raw(std::vector<uint8_t> more) {
    bytes_.insert(bytes_.end(), more.begin(), more.end());
    return *this;
  }
  GmonBuilder& u32(uint32_t v) { return put(v, 4); }
  GmonBuilder& u16(uint16_t v) { return put(v, 2); }
  GmonBuilder& address(uint64_t v) { return put(v, address_size_); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  GmonBuilder& put(uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      const unsigned shift = 8 * (big_ ? n - 1 - i : i);
      bytes_.push_back(static_cast<uint8_t>(v >> shift));
    }
    return *this;
  }
  unsigned address_size_;
  bool big_;
  std::vector<uint8_t> bytes_;
};

}  // namespace framewalk::test
