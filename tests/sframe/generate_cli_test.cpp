// `framewalk sframe --generate` and `framewalk check` as a user runs them, on
// the framewalk program itself: generate (v3, v2, v1) -> the copy still runs
// -> `framewalk sframe` dumps it -> `framewalk check` finds no disagreement;
// a corrupted copy makes check fail; binutils 2.40's objdump (this machine's)
// reads the v1 copy exactly as framewalk's 2.40 emulation does.
#include <gtest/gtest.h>

#include "support/run_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/mapped_file.hpp"
#include "elf/elf_file.hpp"
#include "sframe/sframe_section.hpp"

namespace {

namespace fs = std::filesystem;
using namespace framewalk;

std::string run(const std::string& cmd, int* status) { return framewalk::test::run_command(cmd, status); }

class GenerateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(FRAMEWALK_BINARY_DIR) / ("sframe_generate_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string fw() const { return FRAMEWALK_CLI; }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(GenerateCli, GenerateDumpAndCheckEachVersion) {
  for (int v : {3, 2}) {
    SCOPED_TRACE(v);
    const std::string out = path("fw" + std::to_string(v));
    int status;
    std::string text = run(fw() + " sframe --generate --sframe-version=" + std::to_string(v) + " " + fw() + " -o " + out, &status);
    ASSERT_EQ(status, 0) << text;
    EXPECT_NE(text.find("SFrame v" + std::to_string(v)), std::string::npos) << text;
    EXPECT_NE(text.find("represented"), std::string::npos) << text;
    EXPECT_NE(text.find("PT_GNU_SFRAME"), std::string::npos) << text;

    // The copy (program headers moved, a new PT_LOAD) still runs.
    text = run(out + " --version", &status);
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find("framewalk"), std::string::npos);

    text = run(fw() + " sframe " + out, &status);
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find("Version: SFRAME_VERSION_" + std::to_string(v)), std::string::npos);
    EXPECT_NE(text.find("SFRAME_F_FDE_SORTED"), std::string::npos);

    for (const std::string& cmd : {fw() + " check " + fw() + " --sframe " + out, fw() + " check " + out}) {
      text = run(cmd, &status);
      EXPECT_EQ(status, 0) << cmd << "\n" << text;
      EXPECT_NE(text.find(" 0 disagreements"), std::string::npos) << text;
      EXPECT_NE(text.find("sframe-only 0 ranges"), std::string::npos) << text;
    }
  }
}

TEST_F(GenerateCli, ACorruptedCopyFailsTheCheck) {
  const std::string out = path("fw3"), bad = path("bad");
  int status;
  ASSERT_EQ((run(fw() + " sframe --generate " + fw() + " -o " + out, &status), status), 0);
  auto image = FileImage::map(out);
  ASSERT_TRUE(image.ok());
  std::vector<uint8_t> bytes((*image)->bytes().begin(), (*image)->bytes().end());
  {
    auto f = elf::ElfFile::parse(*image, out);
    ASSERT_TRUE(f.ok());
    const elf::Section* s = (*f)->section_by_name(".sframe");
    ASSERT_NE(s, nullptr);
    auto section = sframe::Section::parse((*image)->bytes().subspan(s->offset, s->size), s->address);
    ASSERT_TRUE(section.ok());
    // The CFA offset of the first FRE of the first FDE with a non-zero offset.
    for (const sframe::Fde& fde : section->fdes()) {
      if (fde.num_fres == 0) continue;
      auto fre = section->fre(fde, 0);
      ASSERT_TRUE(fre.ok());
      if (fre->word_count == 0) continue;
      bytes[s->offset + fre->words_offset()] += 8;
      break;
    }
  }
  std::ofstream(bad, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const std::string text = run(fw() + " check " + fw() + " --sframe " + bad, &status);
  EXPECT_EQ(status, 1) << text;
  EXPECT_NE(text.find("differ 0x"), std::string::npos) << text;
  EXPECT_NE(text.find(" 1 disagreements"), std::string::npos) << text;
}

TEST_F(GenerateCli, Errors) {
  int status;
  const std::string out = path("fw3");
  run(fw() + " sframe --generate " + fw() + " -o " + out, &status);
  ASSERT_EQ(status, 0);
  std::string text = run(fw() + " sframe --generate " + out + " -o " + path("again"), &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("already has an .sframe section"), std::string::npos) << text;
  text = run(fw() + " sframe --generate " + fw(), &status);
  EXPECT_EQ(status, 2) << text;
  std::ofstream(path("not-elf")) << "hello";
  text = run(fw() + " sframe --generate " + path("not-elf") + " -o " + path("x"), &status);
  EXPECT_EQ(status, 1) << text;
  text = run(fw() + " check " + fw(), &status);
  EXPECT_EQ(status, 1) << text;
  EXPECT_NE(text.find("no .sframe section"), std::string::npos) << text;
  text = run(fw() + " sframe --generate --sframe-version=4 " + fw() + " -o " + path("x"), &status);
  EXPECT_EQ(status, 2) << text;
}

TEST_F(GenerateCli, ObjdumpOfThisMachineReadsVersionOne) {
  int status;
  const std::string version = run("objdump --version", &status);
  if (status != 0 || version.find(" 2.40") == std::string::npos)
    GTEST_SKIP() << "needs binutils 2.40's objdump (the only one that dumps SFrame v1)";
  const std::string out = path("fw1");
  std::string text = run(fw() + " sframe --generate --sframe-version=1 " + fw() + " -o " + out, &status);
  ASSERT_EQ(status, 0) << text;
  const std::string objdump = run("cd " + dir_.string() + " && objdump --sframe fw1", &status);
  ASSERT_EQ(status, 0) << objdump;
  const std::string ours = run("cd " + dir_.string() + " && " + fw() + " sframe fw1", &status);
  ASSERT_EQ(status, 0) << ours;
  EXPECT_NE(objdump.find("SFRAME_VERSION_1"), std::string::npos);
  EXPECT_EQ(objdump, ours);
  text = run(fw() + " check " + out, &status);
  EXPECT_EQ(status, 0) << text;
}

}  // namespace
