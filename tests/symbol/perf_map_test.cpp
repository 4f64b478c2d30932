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

namespace framewalk::symbol {
namespace {

// A jitdump's loads and moves as names, after the map's lines, in file
// order: a move takes its code's name to the new range; later wins.
TEST(PerfMap, NamesFromAJitdump) {
  PerfMap map("none");
  map.add_text("1000 100 from_the_map\n");
  JitDump dump;
  const std::string names = "first" "second";
  JitCodeLoad a;
  a.code_addr = 0x1000;
  a.code_size = 0x40;
  a.code_index = 1;
  a.name = std::string_view(names).substr(0, 5);
  a.index = 0;
  JitCodeLoad b = a;
  b.code_addr = 0x2000;
  b.code_index = 2;
  b.name = std::string_view(names).substr(5);
  b.index = 1;
  JitCodeMove m;
  m.old_code_addr = 0x2000;
  m.new_code_addr = 0x3000;
  m.code_size = 0x40;
  m.code_index = 2;
  m.index = 2;
  JitCodeMove orphan = m;  // of code never loaded: nothing
  orphan.code_index = 9;
  orphan.new_code_addr = 0x5000;
  orphan.index = 3;
  dump.loads = {a, b};
  dump.moves = {m, orphan};
  EXPECT_EQ(map.add_jitdump(dump), 3u);
  ASSERT_NE(map.find(0x1010), nullptr);
  EXPECT_EQ(map.find(0x1010)->name, "first");         // the jitdump's line came later
  EXPECT_EQ(map.find(0x1080)->name, "from_the_map");  // beyond the load: the map's
  EXPECT_EQ(map.find(0x2010)->name, "second");
  EXPECT_EQ(map.find(0x3010)->name, "second");
  EXPECT_EQ(map.find(0x5010), nullptr);
  EXPECT_EQ(map.lines(), 1u);  // lines read from the file only
}

TEST(PerfMap, SourceLinesFromAJitdumpsDebugInfo) {
  PerfMap map("none");
  JitDump dump;
  JitCodeLoad a;
  a.code_addr = 0x1000;
  a.code_size = 0x40;
  a.code_index = 1;
  a.name = "f";
  a.debug_info = 0;
  JitDebugInfo d;
  d.code_addr = 0x1000;
  // Out of order, one outside the load, one without a file: left out.
  d.lines = {{0x1020, 7, 0, "b.js"}, {0x1000, 3, 0, "a.js"}, {0x2000, 9, 0, "c.js"}, {0x1030, 8, 0, ""}};
  dump.debug_infos = {d};
  JitCodeLoad b = a;  // a load without DEBUG_INFO: no lines
  b.code_addr = 0x3000;
  b.debug_info.reset();
  b.index = 1;
  dump.loads = {a, b};
  map.add_jitdump(dump);
  for (uint64_t at : {0x1000, 0x101f, 0x1020, 0x102f}) ASSERT_NE(map.source_line(at), nullptr) << at;
  EXPECT_EQ(map.source_line(0x1000)->file, "a.js");
  EXPECT_EQ(map.source_line(0x101f)->line, 3u);
  EXPECT_EQ(map.source_line(0x1020)->file, "b.js");
  EXPECT_EQ(map.source_line(0x102f)->line, 7u);
  EXPECT_EQ(map.source_line(0x1030), nullptr);  // a line of no known file ends b.js's
  EXPECT_EQ(map.source_line(0x1040), nullptr);
  EXPECT_EQ(map.source_line(0x0fff), nullptr);
  EXPECT_EQ(map.source_line(0x3000), nullptr);
  // A later jitdump's lines for the same code win.
  JitDump later = dump;
  later.loads = {a};
  later.debug_infos[0].lines = {{0x1000, 40, 0, "new.js"}};
  map.add_jitdump(later);
  ASSERT_NE(map.source_line(0x1030), nullptr);
  EXPECT_EQ(map.source_line(0x1030)->file, "new.js");
}

}  // namespace
}  // namespace framewalk::symbol
