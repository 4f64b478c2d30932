// Real .sframe sections with binutils' own dumps (tests/data/sframe,
// from simple-frame-rs: objdump --sframe of binutils 2.40 .. 2.46): the dump of
// EVERY vector must match its groundtruth from "Contents of the SFrame
// section" on (objdump's banner names a temporary file). The release is the
// file name's suffix (-2.45.json), else the one matching the section version.
// Vectors with empty content are files without .sframe: objdump prints only
// its banner, and framewalk nothing.
//
// The same sections also exercise the rows and lookups: every FRE becomes a
// row, and the row looked up at each FRE's first PC is that FRE's.
#include <gtest/gtest.h>

#include "support/run_command.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "sframe/sframe_dump.hpp"
#include "sframe/sframe_rows.hpp"
#include "sframe/sframe_section.hpp"

namespace framewalk::sframe {
namespace {

namespace fs = std::filesystem;

const fs::path kVectorDir = fs::path(FRAMEWALK_SOURCE_DIR) / "tests" / "data" / "sframe";

struct Vector {
  std::string name;
  uint64_t section_base = 0;
  std::vector<uint8_t> content;
  std::string groundtruth;
};

// Just enough JSON for the vector files: one object whose values are a
// number, an array of numbers and a string.
class MiniJson {
 public:
  explicit MiniJson(std::string text) : s_(std::move(text)) {}

  bool parse(Vector* v) {
    if (!eat('{')) return false;
    do {
      std::string key;
      if (!string(&key) || !eat(':')) return false;
      if (key == "section_base") {
        if (!number(&v->section_base)) return false;
      } else if (key == "content") {
        if (!eat('[')) return false;
        if (!eat(']')) {
          do {
            uint64_t b;
            if (!number(&b) || b > 255) return false;
            v->content.push_back(static_cast<uint8_t>(b));
          } while (eat(','));
          if (!eat(']')) return false;
        }
      } else if (key == "groundtruth") {
        if (!string(&v->groundtruth)) return false;
      } else {
        return false;
      }
    } while (eat(','));
    return eat('}');
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool number(uint64_t* out) {
    ws();
    const size_t start = i_;
    uint64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') v = v * 10 + static_cast<uint64_t>(s_[i_++] - '0');
    *out = v;
    return i_ > start;
  }
  bool string(std::string* out) {
    if (!eat('"')) return false;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        const char e = s_[i_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case '"': c = '"'; break;
          case '\\': c = '\\'; break;
          case '/': c = '/'; break;
          case 'u': {
            if (i_ + 4 > s_.size()) return false;
            const unsigned long cp = std::stoul(s_.substr(i_, 4), nullptr, 16);
            i_ += 4;
            if (cp > 0x7f) return false;  // the vectors are ASCII
            c = static_cast<char>(cp);
            break;
          }
          default: return false;
        }
      }
      out->push_back(c);
    }
    return eat('"');
  }

  std::string s_;
  size_t i_ = 0;
};

std::vector<Vector> load_vectors() {
  std::vector<Vector> out;
  if (!fs::is_directory(kVectorDir)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kVectorDir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    std::ifstream in(p);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Vector v;
    v.name = p.filename().string();
    EXPECT_TRUE(MiniJson(text).parse(&v)) << "cannot read " << p;
    out.push_back(std::move(v));
  }
  return out;
}

std::string expected_text(const std::string& groundtruth) {
  const size_t at = groundtruth.find("Contents of the SFrame section");
  return at == std::string::npos ? std::string() : groundtruth.substr(at);
}

std::optional<Binutils> release_from_name(const std::string& name) {
  static const std::regex kSuffix(R"(-(2\.\d+)\.json$)");
  std::smatch m;
  if (!std::regex_search(name, m, kSuffix)) return std::nullopt;
  return parse_binutils(m[1].str());
}

// What framewalk prints for a vector ("" for a file without .sframe).
std::string dump_vector(const Vector& v) {
  if (v.content.empty()) return "";
  auto section = Section::parse(v.content, v.section_base);
  if (!section) return std::string("parse error: ") + to_string(section.error().code);
  const Binutils release = release_from_name(v.name).value_or(binutils_for_version(section->version()));
  auto text = objdump_text(*section, release);
  if (!text) return std::string("dump error: ") + to_string(text.error().code);
  return *text;
}

TEST(SframeVectors, EveryGroundtruthReproduced) {
  ASSERT_TRUE(fs::is_directory(kVectorDir)) << kVectorDir << " is missing";
  const std::vector<Vector> vectors = load_vectors();
  size_t passed = 0;
  for (const Vector& v : vectors) {
    SCOPED_TRACE(v.name);
    const std::string want = expected_text(v.groundtruth);
    const std::string got = dump_vector(v);
    EXPECT_EQ(got, want);
    if (got == want) ++passed;
  }
  std::printf("[ SFRAME   ] %zu of %zu vectors reproduce binutils' dump exactly\n", passed, vectors.size());
  EXPECT_EQ(passed, vectors.size());
  EXPECT_GE(vectors.size(), 90u);
}

// Every version, both start encodings and every feature the vectors carry.
TEST(SframeVectors, CoverVersionsAndFeatures) {
  bool v1 = false, v2 = false, v2_pcrel = false, v3 = false, flex = false, signal = false, mask = false,
       ra_undefined = false, pauth_b = false, mangled = false, topmost = false, deref_cfa = false;
  for (const Vector& v : load_vectors()) {
    if (v.content.empty()) continue;
    auto s = Section::parse(v.content, v.section_base);
    ASSERT_TRUE(s.ok()) << v.name << ": " << to_string(s.error().code) << " at " << s.error().offset;
    v1 |= s->version() == 1;
    v2 |= s->version() == 2 && !s->pcrel();
    v2_pcrel |= s->version() == 2 && s->pcrel();
    v3 |= s->version() == 3;
    for (const Fde& fde : s->fdes()) {
      flex |= fde.fde_type == FdeType::kFlex;
      signal |= fde.signal;
      mask |= fde.pc_type == PcType::kMask;
      pauth_b |= fde.pauth_key_b;
      auto rows = fde_rows(*s, fde);
      ASSERT_TRUE(rows.ok()) << v.name;
      for (const SframeRow& r : *rows) {
        ra_undefined |= r.outermost;
        mangled |= r.ra_mangled;
        topmost |= r.topmost_only;
        deref_cfa |= r.row.cfa.kind == CfaKind::kExpression;
      }
    }
  }
  EXPECT_TRUE(v1 && v2 && v2_pcrel && v3);
  EXPECT_TRUE(flex && signal && mask && ra_undefined && pauth_b && mangled && topmost && deref_cfa);
}

// For each FRE of each sorted vector: the lookup at the FRE's first PC finds
// that FDE, that FRE and the same row fde_rows gives.
TEST(SframeVectors, LookupsAgreeWithRows) {
  size_t checked = 0;
  for (const Vector& v : load_vectors()) {
    if (v.content.empty()) continue;
    SCOPED_TRACE(v.name);
    auto s = Section::parse(v.content, v.section_base);
    ASSERT_TRUE(s.ok());
    if (!s->sorted()) continue;
    for (const Fde& fde : s->fdes()) {
      auto rows = fde_rows(*s, fde);
      ASSERT_TRUE(rows.ok());
      for (const SframeRow& r : *rows) {
        if (r.row.pc_begin == r.row.pc_end) continue;  // an FRE at the function's end
        auto hit = row_for_pc(*s, r.row.pc_begin);
        ASSERT_TRUE(hit.ok()) << std::hex << r.row.pc_begin << " " << to_string(hit.error().code);
        EXPECT_EQ(hit->fde_index, fde.index);
        EXPECT_EQ(hit->fre_index, r.fre_index);
        EXPECT_TRUE(hit->row.same_rules(r.row));
        EXPECT_EQ(hit->row.pc_begin, r.row.pc_begin);
        EXPECT_EQ(hit->row.pc_end, r.row.pc_end);
        // The last byte of the range is still this row.
        auto last = row_for_pc(*s, r.row.pc_end - 1);
        ASSERT_TRUE(last.ok());
        EXPECT_EQ(last->fre_index, r.fre_index);
        ++checked;
      }
      // Past the end of the function: another FDE or none.
      auto after = s->find_fde(fde.end());
      if (after.ok()) {
        EXPECT_NE((*after)->index, fde.index);
      }
    }
  }
  EXPECT_GT(checked, 400u);
}

// The command on a bare section file gives the same text.
TEST(SframeVectors, CommandRawMatches) {
  const fs::path vector_path = kVectorDir / "cfi-sframe-x86_64-esc-expr-1-2.46.json";
  ASSERT_TRUE(fs::exists(vector_path));
  Vector v;
  {
    std::ifstream in(vector_path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_TRUE(MiniJson(text).parse(&v));
  }
  const fs::path raw = fs::path(FRAMEWALK_BINARY_DIR) / "sframe_vector_esc_expr.bin";
  {
    std::ofstream out(raw, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(v.content.data()), static_cast<std::streamsize>(v.content.size()));
  }
  const std::string cmd = std::string(FRAMEWALK_CLI) + " sframe --raw " + raw.string() + " --address " +
                          std::to_string(v.section_base);
  int status = -1;
  const std::string out = framewalk::test::run_command(cmd, &status, /*with_stderr=*/false);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, expected_text(v.groundtruth));
  fs::remove(raw);
}

}  // namespace
}  // namespace framewalk::sframe

namespace framewalk::sframe {
namespace {

// --rows names the registers of the section's ABI: AArch64's x29, x30 and sp.
TEST(SframeVectors, CommandRowsNameAarch64Registers) {
  const fs::path vector_path = kVectorDir / "cfi-sframe-aarch64-pac-ab-key-1-2.46.json";
  ASSERT_TRUE(fs::exists(vector_path));
  Vector v;
  {
    std::ifstream in(vector_path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_TRUE(MiniJson(text).parse(&v));
  }
  const fs::path raw = fs::path(FRAMEWALK_BINARY_DIR) / "sframe_vector_pac_ab_key.bin";
  {
    std::ofstream out(raw, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(v.content.data()), static_cast<std::streamsize>(v.content.size()));
  }
  const std::string cmd = std::string(FRAMEWALK_CLI) + " sframe --rows --raw " + raw.string() + " --address " +
                          std::to_string(v.section_base);
  int status = -1;
  const std::string out = framewalk::test::run_command(cmd, &status, /*with_stderr=*/false);
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("fde 0 fre 2  CFA=sp+16  x29=[CFA-16]  x30=[CFA-8]  ra-signed(A key)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("fde 1 fre 1  CFA=sp+0  ra-signed(B key)\n"), std::string::npos) << out;
  fs::remove(raw);
}

}  // namespace
}  // namespace framewalk::sframe
