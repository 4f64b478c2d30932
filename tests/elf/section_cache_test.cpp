// The cache of inflated sections (elf/section_cache.hpp): its file format on
// hand-written bytes, the checks that refuse a truncated, corrupted or
// foreign file, the settings the environment asks for, and the directory
// kept within its bound. (A section read through the cache, and a broken
// cache file ignored: elf_file_test.cpp.)
#include "elf/section_cache.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace framewalk::elf {
namespace {

SectionCacheKey key_of() {
  SectionCacheKey k;
  k.build_id = {0xab, 0xcd, 0x01};
  k.index = 7;
  k.name = ".debug_x";
  k.compression = 1;
  k.compressed_size = 0x30;
  k.size = 5;
  return k;
}

const std::vector<uint8_t> kPayload = {'h', 'e', 'l', 'l', 'o'};

// The file of key_of() and kPayload, byte by byte as the format says.
std::vector<uint8_t> hand_written_file() {
  std::vector<uint8_t> f = {
      'F', 'W', 'S', 'E', 'C', 'T', 'N', '\n',  // magic
      1, 0, 0, 0,                               // version
      1, 0, 0, 0,                               // compression (zlib)
      7, 0, 0, 0, 0, 0, 0, 0,                   // index
      0x30, 0, 0, 0, 0, 0, 0, 0,                // compressed size
      5, 0, 0, 0, 0, 0, 0, 0,                   // payload size
      0, 0, 0, 0, 0, 0, 0, 0,                   // checksum, below
      0, 0x10, 0, 0, 0, 0, 0, 0,                // payload offset 4096
      3, 0,                                     // build-id length
      8, 0,                                     // name length
      0, 0, 0, 0,                               // zero
      0xab, 0xcd, 0x01,                         // build-id
      '.', 'd', 'e', 'b', 'u', 'g', '_', 'x'};  // name
  const uint64_t sum = section_cache_checksum(Bytes{kPayload.data(), kPayload.size()});
  for (int i = 0; i < 8; ++i) f[40 + i] = static_cast<uint8_t>(sum >> (8 * i));
  f.resize(4096, 0);
  f.insert(f.end(), kPayload.begin(), kPayload.end());
  return f;
}

SectionCacheCheck check(const std::vector<uint8_t>& file, const SectionCacheKey& key, Bytes* payload = nullptr) {
  Bytes ignored;
  return check_section_cache_file(Bytes{file.data(), file.size()}, key, payload ? payload : &ignored);
}

TEST(SectionCacheTest, HeaderIsTheDocumentedFormat) {
  const std::vector<uint8_t> file = hand_written_file();
  std::vector<uint8_t> made = section_cache_header(key_of(), Bytes{kPayload.data(), kPayload.size()});
  made.insert(made.end(), kPayload.begin(), kPayload.end());
  EXPECT_EQ(made, file);
  Bytes payload;
  ASSERT_EQ(check(file, key_of(), &payload), SectionCacheCheck::kOk);
  EXPECT_EQ(std::vector<uint8_t>(payload.begin(), payload.end()), kPayload);
  EXPECT_EQ(payload.data() - file.data(), 4096);
}

TEST(SectionCacheTest, ChecksumIsStableAndSeesEveryByte) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31 + 7);
  const uint64_t sum = section_cache_checksum(Bytes{data.data(), data.size()});
  EXPECT_EQ(sum, section_cache_checksum(Bytes{data.data(), data.size()}));
  for (size_t i : {size_t{0}, size_t{31}, size_t{32}, size_t{500}, size_t{991}, size_t{999}}) {
    SCOPED_TRACE(i);
    std::vector<uint8_t> flipped = data;
    flipped[i] ^= 0x10;
    EXPECT_NE(section_cache_checksum(Bytes{flipped.data(), flipped.size()}), sum);
  }
  // Zeros of another length, and a page of zeros where data was.
  const std::vector<uint8_t> zeros(1000, 0), fewer(999, 0);
  EXPECT_NE(section_cache_checksum(Bytes{zeros.data(), zeros.size()}),
            section_cache_checksum(Bytes{fewer.data(), fewer.size()}));
  EXPECT_NE(section_cache_checksum(Bytes{zeros.data(), zeros.size()}), sum);
}

TEST(SectionCacheTest, RefusesTruncatedCorruptedAndForeignFiles) {
  const std::vector<uint8_t> good = hand_written_file();
  // Cut anywhere: in the fixed header, in the key, in the padding, in the payload.
  for (size_t size : {size_t{0}, size_t{10}, size_t{63}, size_t{66}, size_t{100}, size_t{4096}, size_t{4100}}) {
    SCOPED_TRACE(size);
    const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(size));
    const SectionCacheCheck c = check(cut, key_of());
    EXPECT_TRUE(c == SectionCacheCheck::kTooShort || c == SectionCacheCheck::kWrongLength) << to_string(c);
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(check(longer, key_of()), SectionCacheCheck::kWrongLength);

  std::vector<uint8_t> corrupt = good;
  corrupt.back() ^= 1;
  EXPECT_EQ(check(corrupt, key_of()), SectionCacheCheck::kBadChecksum);
  corrupt = good;
  corrupt[41] ^= 1;  // the checksum itself
  EXPECT_EQ(check(corrupt, key_of()), SectionCacheCheck::kBadChecksum);

  std::vector<uint8_t> other = good;
  other[0] = 'X';
  EXPECT_EQ(check(other, key_of()), SectionCacheCheck::kNotCacheFile);
  other = good;
  other[8] = 2;  // a version this reader does not know
  EXPECT_EQ(check(other, key_of()), SectionCacheCheck::kNotCacheFile);
  other = good;
  other[49] = 0x20;  // payload offset
  EXPECT_EQ(check(other, key_of()), SectionCacheCheck::kNotCacheFile);
  other = good;
  other[56] = other[57] = 0xff;  // a build-id longer than the file
  EXPECT_EQ(check(other, key_of()), SectionCacheCheck::kTooShort);
  other = good;
  other[56] = 200;  // another build-id length
  EXPECT_EQ(check(other, key_of()), SectionCacheCheck::kOtherSection);

  // The same bytes asked for another section, file, compression or size.
  SectionCacheKey k = key_of();
  k.build_id[2] = 2;
  EXPECT_EQ(check(good, k), SectionCacheCheck::kOtherSection);
  k = key_of();
  k.index = 8;
  EXPECT_EQ(check(good, k), SectionCacheCheck::kOtherSection);
  k = key_of();
  k.name = ".debug_y";
  EXPECT_EQ(check(good, k), SectionCacheCheck::kOtherSection);
  k = key_of();
  k.compression = 2;
  EXPECT_EQ(check(good, k), SectionCacheCheck::kOtherSection);
  k = key_of();
  k.compressed_size = 0x31;
  EXPECT_EQ(check(good, k), SectionCacheCheck::kOtherSection);
  k = key_of();
  k.size = 6;
  EXPECT_EQ(check(good, k), SectionCacheCheck::kOtherSection);
}

TEST(SectionCacheTest, FileNameIsBuildIdIndexAndSafeName) {
  SectionCacheKey k = key_of();
  EXPECT_EQ(section_cache_file_name(k), "abcd01-7-debug_x.fwsec");
  k.name = "../../etc/x y";
  EXPECT_EQ(section_cache_file_name(k), "abcd01-7-etcxy.fwsec");
}

// Sets an environment variable for one test (unset afterwards if it was).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(SectionCacheTest, SettingsFromTheEnvironment) {
  const ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
  const ScopedEnv home("HOME", "/home/u");
  const ScopedEnv max("FRAMEWALK_CACHE_MAX_MB", nullptr);
  {
    const ScopedEnv on("FRAMEWALK_CACHE", nullptr);
    auto s = section_cache_from_environment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->directory, "/x/cache/framewalk");
    EXPECT_EQ(s->max_bytes, kDefaultSectionCacheBytes);
  }
  for (const char* off : {"off", "0", "no", "false"}) {
    const ScopedEnv on("FRAMEWALK_CACHE", off);
    EXPECT_FALSE(section_cache_from_environment()) << off;
  }
  {
    const ScopedEnv relative("XDG_CACHE_HOME", "relative");  // not absolute: ignored, as the XDG spec says
    const ScopedEnv mb("FRAMEWALK_CACHE_MAX_MB", "3");
    auto s = section_cache_from_environment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->directory, "/home/u/.cache/framewalk");
    EXPECT_EQ(s->max_bytes, uint64_t{3} << 20);
  }
  {
    const ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
    const ScopedEnv no_home("HOME", nullptr);
    EXPECT_FALSE(section_cache_from_environment());
  }
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(SectionCacheTest, StoreLoadAndTheSizeBound) {
  char dir_template[] = "/tmp/framewalk-section-cache-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  SectionCacheSettings settings;
  settings.directory = std::string(dir_template) + "/made/here";  // made, with its parent
  const std::vector<uint8_t> data(10000, 0x5a);
  SectionCacheKey k = key_of();
  k.size = data.size();
  EXPECT_FALSE(load_cached_section(settings, k));
  ASSERT_TRUE(store_cached_section(settings, k, Bytes{data.data(), data.size()}));
  struct stat st {};
  ASSERT_EQ(::stat(settings.directory.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const std::string path = settings.directory + "/" + section_cache_file_name(k);
  EXPECT_EQ(read_file(path).size(), 4096 + data.size());
  auto hit = load_cached_section(settings, k);
  ASSERT_TRUE(hit);
  EXPECT_EQ(std::vector<uint8_t>(hit->data.begin(), hit->data.end()), data);
  // Another key's file is not this one's.
  SectionCacheKey other = k;
  other.index = 9;
  EXPECT_FALSE(load_cached_section(settings, other));
  // A size that does not match the key's is not stored.
  EXPECT_FALSE(store_cached_section(settings, other, Bytes{data.data(), 10}));

  // Room for two files: storing a third removes the least recently used.
  // Their times set well apart (the file system's clock may be coarser
  // than the time between two stores).
  settings.max_bytes = 2 * (4096 + data.size()) + 100;
  other.index = 10;
  ASSERT_TRUE(store_cached_section(settings, other, Bytes{data.data(), data.size()}));
  const auto set_age = [&](const SectionCacheKey& of, time_t seconds_ago) {
    const timespec t[2] = {{::time(nullptr) - seconds_ago, 0}, {::time(nullptr) - seconds_ago, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (settings.directory + "/" + section_cache_file_name(of)).c_str(), t, 0), 0);
  };
  set_age(k, 300);
  set_age(other, 200);
  other.index = 11;
  ASSERT_TRUE(store_cached_section(settings, other, Bytes{data.data(), data.size()}));
  other.index = 10;
  EXPECT_FALSE(::access(path.c_str(), F_OK) == 0);  // the first (index 7) went
  EXPECT_TRUE(load_cached_section(settings, other));
  // A section larger than the whole bound is not stored.
  settings.max_bytes = 1000;
  other.index = 12;
  EXPECT_FALSE(store_cached_section(settings, other, Bytes{data.data(), data.size()}));
  std::string rm = std::string("rm -rf ") + dir_template;
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

}  // namespace
}  // namespace framewalk::elf
