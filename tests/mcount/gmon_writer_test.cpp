#include "mcount/gmon_writer.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace framewalk::mcount {
namespace {

// What the writer wrote, through a temporary file.
template <typename Body>
std::string written(Body&& body) {
  FILE* f = tmpfile();
  EXPECT_NE(f, nullptr);
  {
    GmonWriter w(fileno(f));
    body(w);
    EXPECT_TRUE(w.finish());
  }
  std::string out;
  rewind(f);
  char buf[65536];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  fclose(f);
  return out;
}

template <typename T>
T at(const std::string& s, std::size_t offset) {
  T v;
  std::memcpy(&v, s.data() + offset, sizeof v);
  return v;
}

constexpr std::size_t W = sizeof(uintptr_t);

TEST(GmonWriter, HeaderIsMagicVersionOneAndTwelveSpareBytes) {
  std::string s = written([](GmonWriter& w) { w.header(); });
  ASSERT_EQ(s.size(), 20u);
  EXPECT_EQ(s.substr(0, 4), "gmon");
  EXPECT_EQ(at<uint32_t>(s, 4), 1u);
  // "fwra": the arcs' from_pc are exact return addresses; the rest zero.
  EXPECT_EQ(s.substr(8), std::string("fwra") + std::string(8, '\0'));
}

TEST(GmonWriter, ArcIsTagAddressesAndCount) {
  std::string s = written([](GmonWriter& w) { w.arc(0x1234, 0x5678, 42); });
  ASSERT_EQ(s.size(), 1 + 2 * W + 4);
  EXPECT_EQ(s[0], 1);
  EXPECT_EQ(at<uintptr_t>(s, 1), 0x1234u);
  EXPECT_EQ(at<uintptr_t>(s, 1 + W), 0x5678u);
  EXPECT_EQ(at<uint32_t>(s, 1 + 2 * W), 42u);
}

TEST(GmonWriter, CountsAbove32BitsGoOnInMoreRecords) {
  std::string s = written([](GmonWriter& w) { w.arc(1, 2, 0x100000005ull); });
  std::size_t record = 1 + 2 * W + 4;
  ASSERT_EQ(s.size(), 2 * record);
  EXPECT_EQ(at<uint32_t>(s, 1 + 2 * W), 0xffffffffu);
  EXPECT_EQ(at<uint32_t>(s, record + 1 + 2 * W), 6u);
}

TEST(GmonWriter, HistogramRecordLayout) {
  std::vector<uint32_t> bins = {0, 7, 65535, 3};
  std::string s = written([&](GmonWriter& w) { w.histogram(0x1000, 0x1010, bins.data(), bins.size(), 100); });
  std::size_t head = 1 + 2 * W + 4 + 4 + 15 + 1;
  ASSERT_EQ(s.size(), head + 2 * bins.size());
  EXPECT_EQ(s[0], 0);
  EXPECT_EQ(at<uintptr_t>(s, 1), 0x1000u);
  EXPECT_EQ(at<uintptr_t>(s, 1 + W), 0x1010u);
  EXPECT_EQ(at<uint32_t>(s, 1 + 2 * W), 4u);
  EXPECT_EQ(at<uint32_t>(s, 1 + 2 * W + 4), 100u);
  EXPECT_EQ(s.substr(1 + 2 * W + 8, 15), std::string("seconds") + std::string(8, '\0'));
  EXPECT_EQ(s[head - 1], 's');
  EXPECT_EQ(at<uint16_t>(s, head + 2), 7u);
  EXPECT_EQ(at<uint16_t>(s, head + 4), 65535u);
}

TEST(GmonWriter, BinsAbove16BitsGoOnInRecordsOfTheSameRange) {
  std::vector<uint32_t> bins = {70000, 1};
  std::string s = written([&](GmonWriter& w) { w.histogram(0, 8, bins.data(), bins.size(), 100); });
  std::size_t record = 1 + 2 * W + 4 + 4 + 15 + 1 + 2 * bins.size();
  ASSERT_EQ(s.size(), 2 * record);
  std::size_t bins_at = record - 4;
  EXPECT_EQ(at<uint16_t>(s, bins_at), 65535u);
  EXPECT_EQ(at<uint16_t>(s, bins_at + 2), 1u);
  EXPECT_EQ(at<uint16_t>(s, record + bins_at), 70000u - 65535u);
  EXPECT_EQ(at<uint16_t>(s, record + bins_at + 2), 0u);
}

TEST(GmonWriter, AnEmptyHistogramIsStillOneRecord) {
  std::string s = written([](GmonWriter& w) { w.histogram(0, 0, nullptr, 0, 100); });
  EXPECT_EQ(s.size(), 1 + 2 * W + 4 + 4 + 15 + 1);
}

TEST(GmonWriter, AFailedWriteIsReported) {
  GmonWriter w(-1);
  w.header();
  EXPECT_FALSE(w.finish());
}

}  // namespace
}  // namespace framewalk::mcount
