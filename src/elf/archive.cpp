#include "elf/archive.hpp"

#include <cstring>

namespace framewalk::elf {

namespace {

constexpr std::string_view kRegularMagic = "!<arch>\n";
constexpr std::string_view kThinMagic = "!<thin>\n";

// Header layout (all ASCII): name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n".
constexpr size_t kNameField = 16;
constexpr size_t kSizeFieldOffset = 48;
constexpr size_t kSizeField = 10;
constexpr size_t kTerminatorOffset = 58;
constexpr std::string_view kBsdNamePrefix = "#1/";

std::string_view as_text(Bytes bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// A space-padded decimal field: digits, then only spaces.
std::optional<uint64_t> decimal_field(std::string_view field) {
  uint64_t value = 0;
  size_t i = 0;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '9'; ++i) value = value * 10 + (field[i] - '0');
  if (i == 0) return std::nullopt;
  for (; i < field.size(); ++i)
    if (field[i] != ' ') return std::nullopt;
  return value;
}

bool is_padded(std::string_view field, std::string_view word) {
  if (field.substr(0, word.size()) != word) return false;
  for (char c : field.substr(word.size()))
    if (c != ' ') return false;
  return true;
}

}  // namespace

bool is_archive(Bytes image) {
  const std::string_view head = as_text(image.first(std::min(image.size(), kArchiveMagicSize)));
  return head == kRegularMagic || head == kThinMagic;
}

Result<ArchiveReader> ArchiveReader::open(Bytes image) {
  if (!is_archive(image)) return Error{ErrorCode::kBadArchiveHeader, 0};
  const bool thin = as_text(image.first(kArchiveMagicSize)) == kThinMagic;
  return ArchiveReader(image, thin ? ArchiveKind::kThin : ArchiveKind::kRegular);
}

// Resolves the name field; for a BSD name, which is stored at the start of the
// contents, narrows `data` to what follows it.
Result<std::string> ArchiveReader::member_name(std::string_view field, uint64_t header_offset, Bytes* data) {
  if (field.substr(0, kBsdNamePrefix.size()) == kBsdNamePrefix) {
    const auto length = decimal_field(field.substr(kBsdNamePrefix.size()));
    // Thin archives keep no contents to hold the name in.
    if (!length || *length > data->size() || kind_ == ArchiveKind::kThin)
      return Error{ErrorCode::kBadArchiveName, header_offset};
    std::string_view name = as_text(data->first(static_cast<size_t>(*length)));
    name = name.substr(0, name.find('\0'));  // the name is NUL-padded to an alignment
    *data = data->subspan(static_cast<size_t>(*length));
    return std::string(name);
  }
  if (field[0] == '/' && field[1] >= '0' && field[1] <= '9') {
    const std::string_view digits = field.substr(1);
    // "/OFFSET:ORIGIN" names a member of an archive nested in a thin archive.
    if (digits.find(':') != std::string_view::npos)
      return Error{kind_ == ArchiveKind::kThin ? ErrorCode::kNestedThinArchive : ErrorCode::kBadArchiveName,
                   header_offset};
    const auto index = decimal_field(digits);
    if (!index || *index >= long_names_.size()) return Error{ErrorCode::kBadArchiveName, header_offset};
    std::string_view name = long_names_.substr(static_cast<size_t>(*index));
    name = name.substr(0, name.find_first_of(std::string_view("\n\0", 2)));
    if (!name.empty() && name.back() == '/') name.remove_suffix(1);
    return std::string(name);
  }
  // A short name: GNU ends it with '/', other tools pad it with spaces.
  const size_t slash = field.find('/');
  if (slash != std::string_view::npos) return std::string(field.substr(0, slash));
  const size_t last = field.find_last_not_of(' ');
  return std::string(last == std::string_view::npos ? std::string_view{} : field.substr(0, last + 1));
}

Result<std::optional<ArchiveMember>> ArchiveReader::next() {
  for (;;) {
    const uint64_t header_offset = next_header_;
    if (header_offset >= image_.size()) return std::optional<ArchiveMember>{};
    if (image_.size() - header_offset < kArchiveHeaderSize) return Error{ErrorCode::kBadArchiveHeader, header_offset};
    const std::string_view header = as_text(image_.subspan(static_cast<size_t>(header_offset), kArchiveHeaderSize));
    if (header.substr(kTerminatorOffset, 2) != "`\n") return Error{ErrorCode::kBadArchiveHeader, header_offset};
    const auto size = decimal_field(header.substr(kSizeFieldOffset, kSizeField));
    if (!size) return Error{ErrorCode::kBadArchiveHeader, header_offset + kSizeFieldOffset};
    const std::string_view name_field = header.substr(0, kNameField);

    const bool symbol_table = is_padded(name_field, "/") || is_padded(name_field, "/SYM64/");
    const bool long_name_table = is_padded(name_field, "//");
    // A thin archive holds only its tables; the members' contents live in their files.
    const bool contents_inside = kind_ == ArchiveKind::kRegular || symbol_table || long_name_table;
    const uint64_t data_offset = header_offset + kArchiveHeaderSize;
    Bytes data;
    uint64_t following = data_offset;
    if (contents_inside) {
      if (*size > image_.size() - data_offset) return Error{ErrorCode::kArchiveMemberPastEnd, header_offset};
      data = image_.subspan(static_cast<size_t>(data_offset), static_cast<size_t>(*size));
      following = data_offset + *size + (*size & 1);  // contents are padded to an even offset
    }
    if (symbol_table || long_name_table) {
      if (long_name_table) long_names_ = as_text(data);
      next_header_ = following;
      continue;
    }
    FW_TRY(std::string name, member_name(name_field, header_offset, &data));
    next_header_ = following;
    // The BSD symbol tables, under their own names.
    if (name == "__.SYMDEF" || name == "__.SYMDEF SORTED" || name == "__.SYMDEF_64" ||
        name == "__.SYMDEF_64 SORTED")
      continue;
    ArchiveMember member;
    member.name = std::move(name);
    member.name_field = std::string(name_field);
    member.header_offset = header_offset;
    member.size = *size;
    if (contents_inside) {
      member.data = data;
      member.data_offset = static_cast<uint64_t>(data.data() - image_.data());
    }
    return std::optional<ArchiveMember>(std::move(member));
  }
}

}  // namespace framewalk::elf
