// Perf map files on hand-written lines: START SIZE NAME (hexadecimal, with
// or without 0x; a name with spaces), lookups at a range's edges, later
// lines winning where ranges overlap, malformed lines counted with the
// first one's number, and a file read again for the lines appended since
// (a line not yet ended left for the next time).
#include "symbol/perf_map.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace framewalk::symbol {
namespace {

std::string name_at(const PerfMap& m, uint64_t address) {
  const PerfMap::Entry* e = m.find(address);
  return e ? std::string(e->name) : "-";
}

TEST(PerfMap, LinesAndLookups) {
  PerfMap m("test");
  m.add_text("7f0000001000 40 LazyCompile:~foo file.js:1\n0x7f0000001040 0x20 Builtin:bar\r\n\n");
  EXPECT_EQ(m.lines(), 2u);
  EXPECT_EQ(m.malformed(), 0u);
  EXPECT_EQ(name_at(m, 0x7f0000000fff), "-");
  EXPECT_EQ(name_at(m, 0x7f0000001000), "LazyCompile:~foo file.js:1");
  EXPECT_EQ(name_at(m, 0x7f000000103f), "LazyCompile:~foo file.js:1");
  EXPECT_EQ(name_at(m, 0x7f0000001040), "Builtin:bar");
  EXPECT_EQ(name_at(m, 0x7f000000105f), "Builtin:bar");
  EXPECT_EQ(name_at(m, 0x7f0000001060), "-");
}

TEST(PerfMap, LaterLinesWin) {
  PerfMap m("test");
  m.add_text("1000 100 old\n1040 10 new\n2000 10 a\n2000 10 b\n");
  EXPECT_EQ(name_at(m, 0x1000), "old");
  EXPECT_EQ(name_at(m, 0x1040), "new");
  EXPECT_EQ(name_at(m, 0x104f), "new");
  EXPECT_EQ(name_at(m, 0x1050), "old");  // the old range goes on after the new one
  EXPECT_EQ(name_at(m, 0x10ff), "old");
  EXPECT_EQ(name_at(m, 0x2005), "b");
  ASSERT_EQ(m.entries().size(), 4u);
  for (size_t i = 1; i < m.entries().size(); ++i)
    EXPECT_LE(m.entries()[i - 1].start + m.entries()[i - 1].size, m.entries()[i].start);
}

TEST(PerfMap, MalformedLinesCounted) {
  PerfMap m("test");
  m.add_text("1000 10 ok\ngarbage\n2000 10\n3000 0 empty\nzz 10 x\nffffffffffffffff 10 wraps\n"
             "10000000000000000 1 too-long\n4000 10 fine\n");
  EXPECT_EQ(m.lines(), 2u);
  EXPECT_EQ(m.malformed(), 6u);
  EXPECT_EQ(m.first_malformed_line(), 2u);
  EXPECT_EQ(name_at(m, 0x4001), "fine");
}

TEST(PerfMap, AFileReadAgainForWhatWasAppended) {
  char path[] = "/tmp/framewalk-perfmap-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  PerfMap m(path);
  {
    std::ofstream f(path);
    f << "1000 10 first\n2000 10 sec";  // the second line not ended yet
  }
  ASSERT_TRUE(m.refresh().ok());
  EXPECT_EQ(name_at(m, 0x1000), "first");
  EXPECT_EQ(name_at(m, 0x2000), "-");
  {
    std::ofstream f(path, std::ios::app);
    f << "ond\n3000 10 third\n";
  }
  ASSERT_TRUE(m.refresh().ok());
  EXPECT_EQ(name_at(m, 0x2000), "second");
  EXPECT_EQ(name_at(m, 0x3000), "third");
  EXPECT_EQ(m.lines(), 3u);
  std::remove(path);
  // A map that is not there is no error, and names nothing.
  PerfMap none("/tmp/framewalk-no-such-map.map");
  EXPECT_TRUE(none.refresh().ok());
  EXPECT_EQ(none.find(0x1000), nullptr);
}

}  // namespace
}  // namespace framewalk::symbol
