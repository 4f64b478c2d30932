// `framewalk cfi` on ar archives made here from objects compiled for the test:
// regular, thin (members beside the archive) and BSD-named archives, members
// that are not ELF or empty, damaged archives, and --pc. The readelf format is
// compared with the installed readelf itself.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "json_check.hpp"
#include "support/run_command.hpp"

namespace {

namespace fs = std::filesystem;
using framewalk::test::run_command;

struct Outcome {
  int status = -1;
  std::string out, err;
};

// Runs `command` in `dir` with stdout and stderr kept apart.
Outcome run_in(const fs::path& dir, const std::string& command) {
  Outcome r;
  const fs::path err = dir / "stderr.txt";
  r.out = run_command("cd '" + dir.string() + "' && " + command + " 2>'" + err.string() + "'", &r.status, false);
  std::ifstream in(err);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return r;
}

std::string framewalk() { return std::string("'") + FRAMEWALK_CLI + "'"; }

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spill(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// One 60-byte ar header with a space-padded name field.
std::string ar_header(const std::string& name, size_t size) {
  std::string h = name;
  h.resize(16, ' ');
  h += "0           0     0     644     ";
  std::string s = std::to_string(size);
  s.resize(10, ' ');
  return h + s + "`\n";
}

// Exit status 1, `problem` on stderr, and the dump of the members after it.
void expect_reported_and_went_on(const Outcome& got, const std::string& problem, const std::string& dumped) {
  EXPECT_EQ(got.status, 1);
  EXPECT_NE(got.err.find(problem), std::string::npos) << got.err;
  EXPECT_NE(got.out.find(dumped), std::string::npos) << got.out;
}

class ArchiveCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("framewalk_archive_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "objs");
    spill(dir_ / "objs/leaf.c", "int leaf(int x) { return x * 3 + 1; }\n");
    spill(dir_ / "objs/frames.c",
          "#include <string.h>\nint use(char*);\n"
          "int big(int n) { char b[256]; memset(b, n, sizeof b); return use(b) + n; }\n"
          "static int helper(int n) { return n ? use(0) : 1; }\n"
          "int callers(int n) { return helper(n) + big(n); }\n");
    spill(dir_ / "objs/data.c", "int table[4] = {1, 2, 3, 4};\n");
    spill(dir_ / "objs/note.txt", "not an object\n");
    int status = -1;
    const std::string out = run_command(
        "cd '" + (dir_ / "objs").string() + "' && cc -O2 -c leaf.c frames.c && cc -O0 -g -c data.c && "
        "cc -O2 -g -fno-asynchronous-unwind-tables -c frames.c -o a_member_with_a_name_longer_than_16.o && "
        ": > empty.o",
        &status);
    ASSERT_EQ(status, 0) << out;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static fs::path dir_;
};
fs::path ArchiveCli::dir_;

TEST_F(ArchiveCli, ReadelfFormatOfARegularArchiveIsReadelfs) {
  const std::string make =
      "ar rc regular.a leaf.o note.txt frames.o empty.o a_member_with_a_name_longer_than_16.o data.o";
  ASSERT_EQ(run_in(dir_ / "objs", make).status, 0);
  const Outcome expected = run_in(dir_ / "objs", "readelf --debug-dump=frames-interp regular.a");
  const Outcome got = run_in(dir_ / "objs", framewalk() + " cfi --format=readelf regular.a");
  ASSERT_NE(expected.out.find("File: regular.a(a_member_with_a_name_longer_than_16.o)"), std::string::npos);
  EXPECT_EQ(got.out, expected.out);
  // Two members are not ELF: both are reported, by name, and the status says so, as readelf's does.
  EXPECT_EQ(got.status, expected.status);
  EXPECT_EQ(got.status, 1);
  EXPECT_NE(got.err.find("framewalk: regular.a(note.txt): not a valid ELF file at offset 0x0"), std::string::npos)
      << got.err;
  EXPECT_NE(got.err.find("framewalk: regular.a(empty.o): not a valid ELF file"), std::string::npos) << got.err;
}

TEST_F(ArchiveCli, ThinArchiveMembersAreReadBesideTheArchive) {
  ASSERT_EQ(run_in(dir_ / "objs", "ar rcT thin.a leaf.o frames.o a_member_with_a_name_longer_than_16.o").status, 0);
  // Outcome from elsewhere: member paths are relative to the archive's directory.
  const Outcome expected = run_in(dir_, "readelf --debug-dump=frames-interp objs/thin.a");
  const Outcome got = run_in(dir_, framewalk() + " cfi --format=readelf objs/thin.a");
  ASSERT_NE(expected.out.find("File: objs/thin.a[frames.o]"), std::string::npos) << expected.out;
  EXPECT_EQ(got.out, expected.out);
  EXPECT_EQ(got.status, 0) << got.err;
  EXPECT_EQ(got.err, "");
}

TEST_F(ArchiveCli, ThinArchiveWithAMemberNotElfStopsAsReadelf) {
  ASSERT_EQ(run_in(dir_ / "objs", "ar rcT thin_note.a leaf.o note.txt frames.o").status, 0);
  const Outcome expected = run_in(dir_ / "objs", "readelf --debug-dump=frames-interp thin_note.a");
  const Outcome got = run_in(dir_ / "objs", framewalk() + " cfi --format=readelf thin_note.a");
  EXPECT_EQ(got.out, expected.out);
  EXPECT_EQ(got.status, 1);
  EXPECT_NE(got.err.find("framewalk: thin_note.a[note.txt]: not a valid ELF file"), std::string::npos) << got.err;
  // The other formats report it and go on with the next member.
  expect_reported_and_went_on(run_in(dir_ / "objs", framewalk() + " cfi thin_note.a"),
                              "framewalk: thin_note.a[note.txt]: not a valid ELF file",
                              "thin_note.a[frames.o]: .eh_frame");
}

TEST_F(ArchiveCli, ThinArchiveWithAMissingMember) {
  ASSERT_EQ(run_in(dir_ / "objs", "cp leaf.o gone.o && ar rcT thin_gone.a gone.o frames.o && rm gone.o").status, 0);
  expect_reported_and_went_on(run_in(dir_, framewalk() + " cfi objs/thin_gone.a"),
                              "framewalk: objs/thin_gone.a[gone.o]: objs/gone.o: No such file or directory",
                              "objs/thin_gone.a[frames.o]: .eh_frame");
}

TEST_F(ArchiveCli, NestedThinArchiveIsRefused) {
  // GNU ar flattens nested thin archives; written by hand, a member may be one.
  ASSERT_EQ(run_in(dir_ / "objs", "ar rcT inner.a leaf.o").status, 0);
  const size_t inner_size = slurp(dir_ / "objs/inner.a").size();
  spill(dir_ / "objs/outer.a", "!<thin>\n" + ar_header("inner.a/", inner_size) + ar_header("frames.o/", 1));
  expect_reported_and_went_on(run_in(dir_ / "objs", framewalk() + " cfi outer.a"),
                              "framewalk: outer.a[inner.a]: inner.a: nested thin archives are not supported",
                              "outer.a[frames.o]: .eh_frame");
}

TEST_F(ArchiveCli, BsdNamesGiveTheSameDumpAsGnuNames) {
  // readelf does not decode `#1/N` names, so the BSD archive is compared with
  // readelf on a GNU archive of the same members.
  const std::vector<std::string> names = {"leaf.o", "frames.o", "a_member_with_a_name_longer_than_16.o"};
  std::string bsd = "!<arch>\n";
  std::string gnu_members;
  for (const std::string& name : names) {
    std::string padded = name;
    padded.resize((name.size() + 8) & ~size_t{7}, '\0');  // NUL-padded, as BSD ar does
    const std::string object = slurp(dir_ / "objs" / name);
    bsd += ar_header("#1/" + std::to_string(padded.size()), padded.size() + object.size()) + padded + object;
    if (bsd.size() % 2) bsd += '\n';
    gnu_members += " " + name;
  }
  spill(dir_ / "objs/bsd.a", bsd);
  ASSERT_EQ(run_in(dir_ / "objs", "ar rc gnu.a" + gnu_members + " && cp gnu.a bsd_names.a").status, 0);
  const Outcome expected = run_in(dir_ / "objs", "readelf --debug-dump=frames-interp gnu.a");
  const Outcome got = run_in(dir_ / "objs", framewalk() + " cfi --format=readelf bsd.a");
  std::string renamed = expected.out;
  for (size_t at; (at = renamed.find("File: gnu.a(")) != std::string::npos;) renamed.replace(at, 11, "File: bsd.a");
  ASSERT_NE(renamed.find("File: bsd.a(a_member_with_a_name_longer_than_16.o)"), std::string::npos);
  EXPECT_EQ(got.out, renamed);
  EXPECT_EQ(got.status, 0) << got.err;
}

TEST_F(ArchiveCli, TextAndJsonNameEveryMember) {
  ASSERT_EQ(run_in(dir_ / "objs", "ar rc both.a leaf.o data.o frames.o a_member_with_a_name_longer_than_16.o").status,
            0);
  const Outcome text = run_in(dir_ / "objs", framewalk() + " cfi both.a");
  EXPECT_EQ(text.status, 0) << text.err;  // data.o has no CFI, which is no problem in an archive
  EXPECT_NE(text.out.find("both.a(leaf.o): .eh_frame"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("both.a(frames.o): .eh_frame"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("both.a(a_member_with_a_name_longer_than_16.o): .debug_frame"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("both.a(data.o)"), std::string::npos) << text.out;
  const Outcome json = run_in(dir_ / "objs", framewalk() + " cfi --format=json both.a");
  EXPECT_EQ(json.status, 0) << json.err;
  EXPECT_TRUE(framewalk::fuzz::valid_json(json.out)) << json.out.substr(0, 400);
  EXPECT_NE(json.out.find("\"file\":\"both.a(frames.o)\""), std::string::npos);
}

TEST_F(ArchiveCli, PcIsRefusedOnArchives) {
  ASSERT_EQ(run_in(dir_ / "objs", "ar rc pc.a leaf.o").status, 0);
  const Outcome got = run_in(dir_ / "objs", framewalk() + " cfi --pc 0x0 pc.a");
  EXPECT_EQ(got.status, 2);
  EXPECT_EQ(got.out, "");
  EXPECT_NE(got.err.find("framewalk: pc.a: --pc needs an executable"), std::string::npos) << got.err;
}

TEST_F(ArchiveCli, DamagedArchivesAreReportedWithTheirOffset) {
  ASSERT_EQ(run_in(dir_ / "objs", "ar rc damaged.a leaf.o frames.o").status, 0);
  const std::string whole = slurp(dir_ / "objs/damaged.a");
  // Every truncation: never a crash, and a report exactly when the status is 1.
  for (size_t length = 8; length < whole.size(); length += 7) {
    SCOPED_TRACE(length);
    spill(dir_ / "objs/cut.a", whole.substr(0, length));
    const Outcome got = run_in(dir_ / "objs", framewalk() + " cfi --format=readelf cut.a");
    ASSERT_TRUE(got.status == 0 || got.status == 1) << got.status;
    EXPECT_EQ(got.status == 1, !got.err.empty()) << got.err;
    if (got.status == 1) {
      EXPECT_EQ(got.err.rfind("framewalk: cut.a", 0), 0u) << got.err;
    }
  }
  // A member whose size runs past the end: named with the header's offset.
  const size_t second = whole.find("frames.o/");
  ASSERT_NE(second, std::string::npos);
  std::string past = whole;
  past.replace(second + 48, 10, "999999    ");
  spill(dir_ / "objs/past.a", past);
  const Outcome got = run_in(dir_ / "objs", framewalk() + " cfi --format=readelf past.a");
  EXPECT_EQ(got.status, 1);
  char expected[128];
  std::snprintf(expected, sizeof expected,
                "framewalk: past.a: archive member runs past the end of the archive at offset 0x%zx\n", second);
  EXPECT_EQ(got.err, expected);
  EXPECT_NE(got.out.find("File: past.a(leaf.o)"), std::string::npos) << "the members before are dumped";
}

}  // namespace
