// objdump --sframe emulation on hand-written sections: what the vectors do
// not cover (flags, fixed FP offsets, s390x, big-endian data, FLEX rule
// shapes, releases that cannot dump a version) and each release's quirks.
#include "sframe/sframe_dump.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sframe/sframe_builder.hpp"

namespace framewalk::sframe {
namespace {

using test::build;
using test::ctrl;
using test::FdeSpec;
using test::fre;
using test::FreSpec;
using test::keep;
using test::SectionSpec;

constexpr uint64_t kAddress = 0x2000;

std::string dump(const SectionSpec& spec, Binutils release) {
  auto s = Section::parse(keep(build(spec)), kAddress);
  if (!s) return std::string("parse error: ") + to_string(s.error().code);
  auto text = objdump_text(*s, release);
  if (!text) return std::string("dump error: ") + to_string(text.error().code);
  return *text;
}

SectionSpec one_function(SectionSpec spec, std::vector<FreSpec> fres, unsigned fde_type = 0) {
  FdeSpec f;
  f.start = 0x1000;
  f.size = 0x40;
  f.fde_type = fde_type;
  f.fres = std::move(fres);
  spec.fdes = {f};
  return spec;
}

SectionSpec version(uint8_t v) {
  SectionSpec s;
  s.version = v;
  return s;
}

TEST(SframeDumpTest, Releases) {
  EXPECT_EQ(binutils_for_version(1), Binutils::k2_40);
  EXPECT_EQ(binutils_for_version(2), Binutils::k2_45);
  EXPECT_EQ(binutils_for_version(3), Binutils::k2_46);
  EXPECT_EQ(parse_binutils("2.40"), Binutils::k2_40);
  EXPECT_EQ(parse_binutils("2.41"), Binutils::k2_45);
  EXPECT_EQ(parse_binutils("2.44"), Binutils::k2_45);
  EXPECT_EQ(parse_binutils("2.45"), Binutils::k2_45);
  EXPECT_EQ(parse_binutils("2.46"), Binutils::k2_46);
  EXPECT_EQ(parse_binutils("2.47"), Binutils::k2_46);
  for (const char* bad : {"", "2", "2.", "2.39", "3.40", "2.4x", "2.40.1"}) EXPECT_FALSE(parse_binutils(bad)) << bad;
  EXPECT_STREQ(to_string(Binutils::k2_45), "2.45");
}

TEST(SframeDumpTest, WholeV3Dump) {
  SectionSpec spec = one_function(version(3), {fre(0, {8}), fre(1, {16, -16}), fre(4, {16, -16}, false)});
  EXPECT_EQ(dump(spec, Binutils::k2_46),
            "Contents of the SFrame section .sframe:\n"
            "  Header :\n"
            "\n"
            "    Version: SFRAME_VERSION_3\n"
            "    Flags: SFRAME_F_FDE_SORTED,\n"
            "           SFRAME_F_FDE_FUNC_START_PCREL\n"
            "    CFA fixed RA offset: -8\n"
            "    Num FDEs: 1\n"
            "    Num FREs: 3\n"
            "\n"
            "  Function Index :\n"
            "\n"
            "    func idx [0]: pc = 0x1000, size = 64 bytes\n"
            "    STARTPC         CFA       FP        RA           \n"
            "    0000000000001000  sp+8      u         f            \n"
            "    0000000000001001  sp+16     c-16      f            \n"
            "    0000000000001004  fp+16     c-16      f            \n");
}

TEST(SframeDumpTest, Binutils240Flags) {
  // 2.40 copies the names with strcpy: the last known flag wins.
  const struct {
    uint8_t flags;
    const char* line;
  } cases[] = {{0, "    Flags: NONE\n"},
               {1, "    Flags: SFRAME_F_FDE_SORTED\n"},
               {2, "    Flags: SFRAME_F_FRAME_POINTER\n"},
               {3, "    Flags: SFRAME_F_FRAME_POINTER\n"}};
  for (const auto& c : cases) {
    SectionSpec spec = one_function(version(1), {fre(0, {8})});
    spec.flags = c.flags;
    const std::string text = dump(spec, Binutils::k2_40);
    EXPECT_NE(text.find(c.line), std::string::npos) << text;
    EXPECT_EQ(text.find("CFA fixed"), std::string::npos);  // 2.40 prints no fixed offsets
  }
}

TEST(SframeDumpTest, LaterFlagLines) {
  SectionSpec spec = one_function(version(2), {fre(0, {8})});
  spec.flags = 7;
  EXPECT_NE(dump(spec, Binutils::k2_45).find("    Flags: SFRAME_F_FDE_SORTED,\n"
                                             "           SFRAME_F_FRAME_POINTER,\n"
                                             "           SFRAME_F_FDE_FUNC_START_PCREL\n"),
            std::string::npos);
  EXPECT_NE(dump(spec, Binutils::k2_46).find("           SFRAME_F_FRAME_POINTER,\n"), std::string::npos);
  spec.flags = 0;
  EXPECT_NE(dump(spec, Binutils::k2_46).find("    Flags: NONE\n"), std::string::npos);
}

TEST(SframeDumpTest, V1AmdRaIsUnderBinutils240) {
  const std::string text = dump(one_function(version(1), {fre(0, {8}), fre(1, {16, -16})}), Binutils::k2_40);
  EXPECT_NE(text.find("    Version: SFRAME_VERSION_1\n    Flags: SFRAME_F_FDE_SORTED\n    Num FDEs: 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("    0000000000001001  sp+16     c-16      u            \n"), std::string::npos) << text;
}

TEST(SframeDumpTest, ReleasesThatCannotDumpAVersion) {
  const SectionSpec v1 = one_function(version(1), {fre(0, {8})});
  const SectionSpec v2 = one_function(version(2), {fre(0, {8})});
  const SectionSpec v3 = one_function(version(3), {fre(0, {8})});
  EXPECT_EQ(dump(v2, Binutils::k2_40), "dump error: this binutils dump cannot show this SFrame version");
  EXPECT_EQ(dump(v3, Binutils::k2_40), "dump error: this binutils dump cannot show this SFrame version");
  EXPECT_EQ(dump(v3, Binutils::k2_45), "dump error: this binutils dump cannot show this SFrame version");
  EXPECT_EQ(dump(v1, Binutils::k2_46), "dump error: this binutils dump cannot show this SFrame version");
  // 2.41-2.45 read a V1 header but no further.
  EXPECT_EQ(dump(v1, Binutils::k2_45),
            "Contents of the SFrame section .sframe:\n"
            "  Header :\n"
            "\n"
            "    Version: SFRAME_VERSION_1\n"
            "    Flags: SFRAME_F_FDE_SORTED\n"
            "    CFA fixed RA offset: -8\n"
            "    Num FDEs: 1\n"
            "    Num FREs: 1\n"
            "\n"
            " No further information can be displayed.  SFrame version not supported\n");
  // 2.46 dumps V2 too.
  EXPECT_NE(dump(v2, Binutils::k2_46).find("SFRAME_VERSION_2"), std::string::npos);
}

TEST(SframeDumpTest, NegativeCfaOffsetsKeepTheirPlusSign) {
  // DEFAULT rows print "%s+%d", FLEX rows "%s%+d".
  EXPECT_NE(dump(one_function(version(3), {fre(0, {-8})}), Binutils::k2_46).find("  sp+-8     u"),
            std::string::npos);
  EXPECT_NE(dump(one_function(version(3), {fre(0, {ctrl(7, false), -8})}, 1), Binutils::k2_46).find("  sp-8      u"),
            std::string::npos);
}

TEST(SframeDumpTest, FixedFpOffset) {
  SectionSpec spec = one_function(version(2), {fre(0, {16})});
  spec.fixed_fp = -16;
  const std::string text = dump(spec, Binutils::k2_45);
  EXPECT_NE(text.find("    CFA fixed FP offset: -16\n    CFA fixed RA offset: -8\n"), std::string::npos);
  EXPECT_NE(text.find("  sp+16     c-16      f   "), std::string::npos) << text;
  spec.version = 1;
  spec.flags = 1;
  EXPECT_NE(dump(spec, Binutils::k2_40).find("  sp+16     u         u   "), std::string::npos);
}

TEST(SframeDumpTest, RaUndefinedBeforeAndAfterBinutils246) {
  const SectionSpec spec = one_function(version(2), {fre(0, {8}), fre(4, {})});
  EXPECT_NE(dump(spec, Binutils::k2_46).find("    0000000000001004  RA undefined\n"), std::string::npos);
  // 2.45 knew no such FRE: it prints libsframe's -1 for the absent CFA word.
  EXPECT_NE(dump(spec, Binutils::k2_45).find("    0000000000001004  sp+-1     u         f            \n"),
            std::string::npos)
      << dump(spec, Binutils::k2_45);
}

TEST(SframeDumpTest, PcmaskShowsBlockOffsets) {
  SectionSpec spec = version(2);
  FdeSpec f;
  f.start = 0x1030;
  f.size = 0x30;
  f.pc_mask = true;
  f.rep_size = 16;
  f.fres = {fre(0, {8}), fre(0xb, {16})};
  spec.fdes = {f};
  const std::string text = dump(spec, Binutils::k2_45);
  EXPECT_NE(text.find("    STARTPC[m]      CFA       FP        RA           \n"
                      "    0000000000000000  sp+8      u         f            \n"
                      "    000000000000000b  sp+16     u         f            \n"),
            std::string::npos)
      << text;
}

TEST(SframeDumpTest, S390x) {
  SectionSpec spec;
  spec.version = 2;
  spec.endian = Endian::kBig;
  spec.abi = 4;
  spec.fixed_ra = 0;
  spec = one_function(spec, {fre(0, {0}), fre(6, {2, -48, -72}), fre(10, {2, 0, -72}), fre(14, {2, 33, 35})});
  EXPECT_NE(dump(spec, Binutils::k2_45).find("    0000000000001000  sp+160    u         u            \n"
                                             "    0000000000001006  sp+176    c-72      c-48         \n"
                                             "    000000000000100a  sp+176    c-72      U            \n"
                                             "    000000000000100e  sp+176    r17       r16          \n"),
            std::string::npos)
      << dump(spec, Binutils::k2_45);
  // V3 has no register encoding: odd words are offsets.
  spec.version = 3;
  spec.fdes[0].fres = {fre(0, {-20, -33})};
  EXPECT_NE(dump(spec, Binutils::k2_46).find("  sp+0      u         c-33         \n"), std::string::npos)
      << dump(spec, Binutils::k2_46);
  // FLEX: registers by number, the CFA offset decoded.
  spec.fdes[0].fde_type = 1;
  spec.fdes[0].fres = {fre(0, {ctrl(15, false), 1, ctrl(16, false), 0, ctrl(11, true), 8})};
  EXPECT_NE(dump(spec, Binutils::k2_46).find("attr = \"F\"\n"), std::string::npos);
  EXPECT_NE(dump(spec, Binutils::k2_46).find("  sp+168    (fp+8)    r16+0        \n"), std::string::npos)
      << dump(spec, Binutils::k2_46);
}

TEST(SframeDumpTest, FlexRuleShapes) {
  SectionSpec spec = one_function(
      version(3),
      {
          fre(0, {ctrl(10, false), 0}),                                    // r10+0, RA fixed, FP untracked
          fre(1, {ctrl(6, true), -8, 0, ctrl(6, true), 0}),                // (fp-8), RA padding, (fp+0)
          fre(2, {ctrl(6, false), 16, ctrl(3, false), 0, ctrl(0, true, false), -16}),  // RA in rbx, FP c-16
          fre(3, {ctrl(7, false), 8, ctrl(3, true), 8}),                   // RA = *(rbx+8)
          fre(4, {ctrl(7, false), 8, ctrl(0, true, false), -16}),           // RA at c-16
      },
      1);
  spec.fdes[0].signal = true;
  const std::string text = dump(spec, Binutils::k2_46);
  EXPECT_NE(text.find("size = 64 bytes, attr = \"SF\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    0000000000001000  r10+0     u         f            \n"
                      "    0000000000001001  (fp-8)    (fp+0)    U            \n"
                      "    0000000000001002  fp+16     c-16      r3+0         \n"
                      "    0000000000001003  sp+8      u         (r3+8)       \n"
                      "    0000000000001004  sp+8      u         c-16         \n"),
            std::string::npos)
      << text;
  // Without a fixed RA offset an absent RA rule is "u".
  spec.abi = 2;
  spec.fixed_ra = 0;
  spec.fdes[0].fres = {fre(0, {ctrl(31, false), 16})};
  EXPECT_NE(dump(spec, Binutils::k2_46).find("  sp+16     u         u            \n"), std::string::npos);
}

TEST(SframeDumpTest, Aarch64PauthAndBothByteOrders) {
  SectionSpec le;
  le.abi = 2;
  le.fixed_ra = 0;
  FreSpec signed_ra = fre(8, {16, -8, -16});
  signed_ra.mangled_ra = true;
  le = one_function(le, {fre(0, {0}), signed_ra});
  le.fdes[0].pauth_key_b = true;
  SectionSpec be = le;
  be.endian = Endian::kBig;
  be.abi = 1;
  for (Binutils release : {Binutils::k2_46}) {
    const std::string text = dump(le, release);
    EXPECT_NE(text.find("size = 64 bytes, pauth = B key\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  sp+16     c-16      c-8[s]       \n"), std::string::npos) << text;
    EXPECT_EQ(text, dump(be, release));
  }
  for (uint8_t v : {1, 2}) {
    le.version = be.version = v;
    le.flags = be.flags = 1;
    const Binutils release = binutils_for_version(v);
    EXPECT_EQ(dump(le, release), dump(be, release));
    EXPECT_NE(dump(le, release).find("c-8[s]"), std::string::npos);
  }
}

// libsframe computes a PCREL function start from the header size and the
// FDE index, without sfh_fdeoff: with fdeoff != 0 its pc is off by fdeoff.
TEST(SframeDumpTest, PcrelStartIgnoresFdeoffLikeLibsframe) {
  SectionSpec spec = one_function(version(2), {fre(0, {8})});
  spec.fdeoff = 4;
  spec.freoff = 4 + 20;
  auto s = Section::parse(keep(build(spec)), kAddress);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->fdes()[0].start, 0x1000u);
  EXPECT_NE(objdump_text(*s, Binutils::k2_45)->find("pc = 0xffc,"), std::string::npos);
}

TEST(SframeDumpTest, SectionName) {
  auto s = Section::parse(keep(build(one_function(version(3), {fre(0, {8})}))), kAddress);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(objdump_text(*s, Binutils::k2_46, ".sframe.foo")->rfind("Contents of the SFrame section .sframe.foo:\n", 0),
            0u);
}

}  // namespace
}  // namespace framewalk::sframe
