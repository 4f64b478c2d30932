// The ar archive reader on archives written byte by byte: GNU short and long
// names, symbol tables, BSD `#1/N` names, thin archives, odd-sized padding, and
// every damaged form, each with the offset it is reported at.
#include "elf/archive.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/mapped_file.hpp"

namespace framewalk::elf {
namespace {

// One 60-byte header: the name field as given (space-padded), and `size`.
std::string header(const std::string& name, const std::string& size) {
  std::string h = name;
  h.resize(16, ' ');
  h += "0           0     0     644     ";  // date, uid, gid, mode
  std::string s = size;
  s.resize(10, ' ');
  return h + s + "`\n";
}

// A member: header and contents, padded to an even length.
std::string member(const std::string& name, const std::string& contents) {
  std::string m = header(name, std::to_string(contents.size())) + contents;
  if (m.size() % 2) m += '\n';
  return m;
}

Bytes bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

struct Read {
  std::vector<ArchiveMember> members;
  std::optional<Error> error;
};

Read read_all(const std::string& image) {
  Read out;
  auto reader = ArchiveReader::open(bytes_of(image));
  if (!reader) {
    out.error = reader.error();
    return out;
  }
  for (;;) {
    auto next = reader->next();
    if (!next) {
      out.error = next.error();
      return out;
    }
    if (!*next) return out;
    out.members.push_back(**next);
  }
}

std::string text_of(Bytes b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

TEST(Archive, RecognisesBothMagics) {
  EXPECT_TRUE(is_archive(bytes_of("!<arch>\n")));
  EXPECT_TRUE(is_archive(bytes_of("!<thin>\n")));
  EXPECT_FALSE(is_archive(bytes_of("!<arch>")));
  EXPECT_FALSE(is_archive(bytes_of("\x7f" "ELF\x02\x01\x01\x00")));
  auto bad = ArchiveReader::open(bytes_of("!<arc>\n\n"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kBadArchiveHeader);
  EXPECT_EQ(bad.error().offset, 0u);
}

TEST(Archive, EmptyArchiveHasNoMembers) {
  const Read r = read_all("!<arch>\n");
  EXPECT_FALSE(r.error);
  EXPECT_TRUE(r.members.empty());
}

TEST(Archive, GnuShortNamesSymbolTablesAndPadding) {
  const std::string image = std::string("!<arch>\n") + member("/", std::string("\0\0\0\0", 4)) +
                            member("/SYM64/", std::string(8, '\0')) + member("odd.o/", "abc") +
                            member("even.o/", "wxyz");
  const Read r = read_all(image);
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.members.size(), 2u);
  EXPECT_EQ(r.members[0].name, "odd.o");
  EXPECT_EQ(text_of(r.members[0].data), "abc");
  EXPECT_EQ(r.members[0].header_offset, 8u + 64 + 68);
  EXPECT_EQ(r.members[0].data_offset, r.members[0].header_offset + 60);
  EXPECT_EQ(r.members[0].size, 3u);
  // The odd member is followed by one byte of padding.
  EXPECT_EQ(r.members[1].header_offset, r.members[0].header_offset + 60 + 4);
  EXPECT_EQ(r.members[1].name, "even.o");
  EXPECT_EQ(text_of(r.members[1].data), "wxyz");
}

TEST(Archive, SpacePaddedShortNameWithoutSlash) {
  const Read r = read_all(std::string("!<arch>\n") + member("plain.o", "x"));
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.members.size(), 1u);
  EXPECT_EQ(r.members[0].name, "plain.o");
  // The field as stored, for readelf's way of printing such names (Go's archives).
  EXPECT_EQ(r.members[0].name_field, "plain.o         ");
}

TEST(Archive, GnuLongNames) {
  const std::string table = "a_member_name_longer_than_sixteen.o/\nsecond_long_member_name.o/\n";
  const std::string image = std::string("!<arch>\n") + member("//", table) + member("/0", "one") +
                            member("/37", "two");
  const Read r = read_all(image);
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.members.size(), 2u);
  EXPECT_EQ(r.members[0].name, "a_member_name_longer_than_sixteen.o");
  EXPECT_EQ(r.members[1].name, "second_long_member_name.o");
  EXPECT_EQ(text_of(r.members[1].data), "two");
}

TEST(Archive, BsdNamesAreTakenFromTheContents) {
  // The name is NUL-padded inside the contents; the size covers name and data.
  const std::string name = std::string("bsd_style_member_name.o") + '\0';
  const std::string image = std::string("!<arch>\n") + member("#1/24", name + "data") +
                            member("#1/12", std::string("__.SYMDEF\0\0\0", 12) + "symbols");
  const Read r = read_all(image);
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.members.size(), 1u) << "the BSD symbol table is skipped";
  EXPECT_EQ(r.members[0].name, "bsd_style_member_name.o");
  EXPECT_EQ(text_of(r.members[0].data), "data");
  EXPECT_EQ(r.members[0].data_offset, 8u + 60 + 24);
  EXPECT_EQ(r.members[0].size, 28u);
}

TEST(Archive, ThinMembersHaveNoContentsInside) {
  // Sizes of the files outside; only the tables are stored in the archive.
  const std::string table = "a_thin_member_with_a_long_name.o/\n";
  const std::string image = std::string("!<thin>\n") + member("/", std::string(4, '\0')) + member("//", table) +
                            header("/0", "123456") + header("short.o/", "99");
  const Read r = read_all(image);
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.members.size(), 2u);
  EXPECT_EQ(r.members[0].name, "a_thin_member_with_a_long_name.o");
  EXPECT_EQ(r.members[0].size, 123456u);
  EXPECT_TRUE(r.members[0].data.empty());
  EXPECT_EQ(r.members[0].data_offset, 0u);
  EXPECT_EQ(r.members[1].name, "short.o");
  EXPECT_EQ(r.members[1].header_offset, r.members[0].header_offset + 60);
}

TEST(Archive, DamagedHeadersKeepTheMembersBefore) {
  const std::string good = std::string("!<arch>\n") + member("first.o/", "1234");
  const uint64_t second = good.size();

  struct Case {
    const char* what;
    std::string tail;
    ErrorCode code;
    uint64_t offset;
  };
  std::string no_terminator = header("x.o/", "4");
  no_terminator[58] = 'X';
  const Case cases[] = {
      {"truncated header", header("x.o/", "4").substr(0, 59), ErrorCode::kBadArchiveHeader, second},
      {"no terminator", no_terminator + "abcd", ErrorCode::kBadArchiveHeader, second},
      {"size not decimal", header("x.o/", "12a") + "abcd", ErrorCode::kBadArchiveHeader, second + 48},
      {"size empty", header("x.o/", "") + "abcd", ErrorCode::kBadArchiveHeader, second + 48},
      {"size past the end", header("x.o/", "5") + "abcd", ErrorCode::kArchiveMemberPastEnd, second},
      {"huge size", header("x.o/", "9999999999") + "abcd", ErrorCode::kArchiveMemberPastEnd, second},
      {"long name without table", member("/0", "abcd"), ErrorCode::kBadArchiveName, second},
      {"long name index not decimal", member("//", "n.o/\n") + member("/1x", "abcd"), ErrorCode::kBadArchiveName,
       second + 66},
      {"long name past the table", member("//", "n.o/\n") + member("/5", "abcd"), ErrorCode::kBadArchiveName,
       second + 66},
      {"BSD name longer than the member", member("#1/9", "abcd"), ErrorCode::kBadArchiveName, second},
      {"BSD name length not decimal", member("#1/x", "abcd"), ErrorCode::kBadArchiveName, second},
      {"thin archive's nesting form in a regular archive", member("//", "n.o/\n") + member("/0:8", "abcd"),
       ErrorCode::kBadArchiveName, second + 66},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Read r = read_all(good + c.tail);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, c.code);
    EXPECT_EQ(r.error->offset, c.offset);
    ASSERT_EQ(r.members.size(), 1u);
    EXPECT_EQ(r.members[0].name, "first.o");
  }
}

TEST(Archive, ReaderStaysAtTheDamagedHeader) {
  const std::string image = std::string("!<arch>\n") + member("/7", "abcd");
  auto reader = ArchiveReader::open(bytes_of(image));
  ASSERT_TRUE(reader);
  for (int i = 0; i < 2; ++i) {
    auto next = reader->next();
    ASSERT_FALSE(next);
    EXPECT_EQ(next.error().code, ErrorCode::kBadArchiveName);
    EXPECT_EQ(next.error().offset, 8u);
  }
}

TEST(Archive, NestedThinMembersAreRefused) {
  // "/OFFSET:ORIGIN": the member at ORIGIN of an archive named at OFFSET.
  const Read r = read_all(std::string("!<thin>\n") + member("//", "inner.a/\n") + header("/0:68", "16"));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, ErrorCode::kNestedThinArchive);
  EXPECT_EQ(r.error->offset, 8u + 70);
}

TEST(Archive, BsdNamesAreRefusedInThinArchives) {
  const Read r = read_all(std::string("!<thin>\n") + header("#1/8", "16"));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, ErrorCode::kBadArchiveName);
  EXPECT_EQ(r.error->offset, 8u);
}

TEST(FileImage, SliceViewsTheWholeWithoutCopying) {
  auto whole = FileImage::from_buffer({1, 2, 3, 4, 5, 6});
  const uint8_t* start = whole->bytes().data();
  auto part = FileImage::slice(whole, 2, 3);
  whole.reset();  // the slice keeps the bytes alive
  ASSERT_EQ(part->size(), 3u);
  EXPECT_EQ(part->bytes().data(), start + 2);
  EXPECT_EQ(part->bytes()[0], 3);
  EXPECT_EQ(part->bytes()[2], 5);
}

}  // namespace
}  // namespace framewalk::elf
