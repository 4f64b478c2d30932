// `framewalk cfi` on damaged copies of a real ELF file: truncated at many
// lengths, with .eh_frame zeroed, mutated, or with a broken CIE length or CIE
// pointer. Whatever the damage, the command must neither crash nor hang, must
// report every problem as "framewalk: FILE: ..." on stderr, and must exit 1
// exactly when it reported something.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "json_check.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

template <typename T>
T get(const std::vector<uint8_t>& b, size_t off) {
  T v{};
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}
template <typename T>
void put(std::vector<uint8_t>& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}

// What the test needs to know of the (ELF64 little-endian) original.
struct Layout {
  uint64_t shoff = 0;
  uint16_t shnum = 0;
  uint64_t eh_offset = 0, eh_size = 0;  // .eh_frame in the file
  size_t eh_index = 0;                  // its section header
  uint64_t first_fde = 0;               // section offset of the first FDE
};

bool read_layout(const std::vector<uint8_t>& b, Layout& l) {
  if (b.size() < 64 || std::memcmp(b.data(), "\x7f" "ELF\x02\x01", 6) != 0) return false;
  l.shoff = get<uint64_t>(b, 0x28);
  l.shnum = get<uint16_t>(b, 0x3c);
  const uint16_t shstrndx = get<uint16_t>(b, 0x3e);
  if (l.shoff + uint64_t{l.shnum} * 64 > b.size() || shstrndx >= l.shnum) return false;
  const uint64_t strtab = get<uint64_t>(b, l.shoff + shstrndx * 64 + 0x18);
  for (size_t i = 0; i < l.shnum; ++i) {
    const size_t h = l.shoff + i * 64;
    const char* name = reinterpret_cast<const char*>(b.data() + strtab + get<uint32_t>(b, h));
    if (std::strcmp(name, ".eh_frame") != 0) continue;
    l.eh_index = i;
    l.eh_offset = get<uint64_t>(b, h + 0x18);
    l.eh_size = get<uint64_t>(b, h + 0x20);
  }
  if (l.eh_size < 64 || l.eh_offset + l.eh_size > b.size()) return false;
  for (uint64_t off = 0; off + 8 <= l.eh_size;) {
    const uint32_t len = get<uint32_t>(b, l.eh_offset + off);
    if (len == 0 || len == 0xffffffffu) break;
    if (get<uint32_t>(b, l.eh_offset + off + 4) != 0) {
      l.first_fde = off;
      return true;
    }
    off += 4 + uint64_t{len};
  }
  return false;
}

struct Variant {
  std::string name;
  std::vector<uint8_t> bytes;
  bool must_report_offset = false;  // a record is broken: exit 1 naming the offset
};

struct Outcome {
  int wait_status = 0;
  std::string out, err;
};

// Runs `timeout 20 framewalk ARGS...` with stdout and stderr into files.
Outcome run_cli(const std::vector<std::string>& args, const fs::path& dir) {
  const fs::path out_path = dir / "stdout", err_path = dir / "stderr";
  std::vector<std::string> argv_s = {"timeout", "20", FRAMEWALK_CLI};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  Outcome o;
  const int rc = posix_spawnp(&pid, "timeout", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    o.wait_status = -1;
    o.err = std::string("posix_spawnp: ") + std::strerror(rc);
    return o;
  }
  while (waitpid(pid, &o.wait_status, 0) < 0 && errno == EINTR) {
  }
  const auto out = read_file(out_path), err = read_file(err_path);
  o.out.assign(out.begin(), out.end());
  o.err.assign(err.begin(), err.end());
  return o;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* candidate : {"/bin/ls", "/usr/bin/ls", "/usr/lib/x86_64-linux-gnu/libc.so.6", FRAMEWALK_CLI}) {
      if (!fs::exists(candidate)) continue;
      original_ = read_file(candidate);
      if (read_layout(original_, layout_)) {
        source_ = candidate;
        break;
      }
    }
    if (source_.empty()) GTEST_SKIP() << "no x86-64 ELF file with .eh_frame found";
    dir_ = fs::temp_directory_path() / ("framewalk-bad-input-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Runs the three formats on one variant and checks the contract.
  void check(const Variant& v) {
    const fs::path file = dir_ / v.name;
    write_file(file, v.bytes);
    const std::string prefix = "framewalk: " + file.string() + ": ";
    for (const char* format : {"text", "readelf", "json"}) {
      SCOPED_TRACE(v.name + " --format=" + format + " (from " + source_ + ")");
      const Outcome o = run_cli({"cfi", std::string("--format=") + format, file.string()}, dir_);
      ++runs_;
      ASSERT_TRUE(o.wait_status >= 0 && WIFEXITED(o.wait_status)) << "wait status " << o.wait_status << "\n" << o.err;
      const int code = WEXITSTATUS(o.wait_status);
      ASSERT_NE(code, 124) << "timed out";
      ASSERT_TRUE(code == 0 || code == 1) << "exit status " << code << " (128+N: killed by signal N)\n" << o.err;
      EXPECT_EQ(code == 1, !o.err.empty()) << "exit status " << code << " with stderr:\n" << o.err;
      bool offset_named = false;
      for (const std::string& line : lines_of(o.err)) {
        EXPECT_TRUE(line.size() > prefix.size() && line.compare(0, prefix.size(), prefix) == 0)
            << "stderr line: " << line;
        // A problem with a CFI section (.eh_frame, .eh_frame_hdr, .debug_frame)
        // names where it is; only the summary that there is none need not.
        const bool about_cfi = (line.find(".eh_frame") != std::string::npos ||
                                line.find(".debug_frame") != std::string::npos) &&
                               line.find("no .eh_frame or .debug_frame") == std::string::npos;
        if (about_cfi) {
          EXPECT_NE(line.find("at offset 0x"), std::string::npos) << "stderr line: " << line;
        }
        if (line.find("at offset 0x") != std::string::npos) offset_named = true;
      }
      if (v.must_report_offset) {
        EXPECT_EQ(code, 1);
        EXPECT_TRUE(offset_named) << "no message names an offset:\n" << o.err;
      }
      if (std::string(format) == "json") {
        EXPECT_TRUE(o.out.size() >= 2 && o.out.front() == '[' && o.out.compare(o.out.size() - 2, 2, "]\n") == 0)
            << "not a JSON array: " << o.out.substr(0, 200);
        EXPECT_TRUE(framewalk::fuzz::valid_json(o.out)) << "not valid JSON";
      }
      if (HasFatalFailure()) return;
    }
  }

  std::string source_;
  std::vector<uint8_t> original_;
  Layout layout_;
  fs::path dir_;
  int runs_ = 0;
};

TEST_F(BadInput, Truncated) {
  const uint64_t eh = layout_.eh_offset, ehs = layout_.eh_size, sh = layout_.shoff;
  std::vector<uint64_t> lengths = {0, 1, 4, 5, 6, 15, 16, 17, 24, 40, 52, 58, 62, 63, 64, 65, 200,
                                   eh, eh + 1, eh + 4, eh + 9, eh + ehs / 3, eh + ehs / 2, eh + ehs - 1,
                                   sh, sh + 1, sh + 63, sh + 64, sh + 64 * layout_.eh_index + 30,
                                   original_.size() - 64, original_.size() - 1};
  for (uint64_t n : lengths) {
    if (n >= original_.size()) continue;
    check({"truncated-" + std::to_string(n), std::vector<uint8_t>(original_.begin(), original_.begin() + n)});
    if (HasFatalFailure()) return;
  }
  // The section header says .eh_frame ends in the middle of a record.
  for (uint64_t size : {uint64_t{3}, uint64_t{7}, layout_.first_fde + 10, ehs / 2 + 1, ehs - 3}) {
    Variant v{"eh-frame-size-" + std::to_string(size), original_};
    put<uint64_t>(v.bytes, sh + 64 * layout_.eh_index + 0x20, size);
    check(v);
    if (HasFatalFailure()) return;
  }
  // ... or runs past the end of the file.
  Variant past{"eh-frame-past-eof", original_};
  put<uint64_t>(past.bytes, sh + 64 * layout_.eh_index + 0x20, original_.size());
  check(past);
}

TEST_F(BadInput, ZeroedEhFrame) {
  Variant all{"eh-frame-zeroed", original_};
  std::fill(all.bytes.begin() + static_cast<long>(layout_.eh_offset),
            all.bytes.begin() + static_cast<long>(layout_.eh_offset + layout_.eh_size), 0);
  check(all);
  Variant middle{"eh-frame-zeroed-middle", original_};
  const uint64_t from = layout_.eh_offset + layout_.eh_size / 2;
  std::fill(middle.bytes.begin() + static_cast<long>(from), middle.bytes.begin() + static_cast<long>(from + 64), 0);
  check(middle);
}

TEST_F(BadInput, MutatedEhFrame) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    Variant v{"eh-frame-mutated-" + std::to_string(seed), original_};
    const int changes = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < changes; ++i) {
      const uint64_t at = layout_.eh_offset + rng() % layout_.eh_size;
      static constexpr uint8_t kInteresting[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0x40};
      switch (rng() % 3) {
        case 0: v.bytes[at] = static_cast<uint8_t>(rng()); break;
        case 1: v.bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        default: v.bytes[at] = kInteresting[rng() % sizeof kInteresting]; break;
      }
    }
    check(v);
    if (HasFatalFailure()) return;
  }
}

TEST_F(BadInput, CorruptedCieLength) {
  const uint64_t cie = layout_.eh_offset;  // .eh_frame starts with a CIE
  // Past the end of the section, a reserved 32-bit value, and too short for its fields.
  for (uint32_t len : {static_cast<uint32_t>(layout_.eh_size + 100), 0xfffffff0u, 0xfffffff7u, 5u}) {
    std::ostringstream name;
    name << "cie-length-0x" << std::hex << len;
    Variant v{name.str(), original_, true};
    put<uint32_t>(v.bytes, cie, len);
    check(v);
    if (HasFatalFailure()) return;
  }
}

TEST_F(BadInput, BadCiePointer) {
  const uint64_t field = layout_.eh_offset + layout_.first_fde + 4;
  // Before the start of the section, at the FDE itself, and into the middle of its CIE.
  for (uint32_t pointer : {static_cast<uint32_t>(layout_.first_fde + 0x1000), 4u, static_cast<uint32_t>(layout_.first_fde + 4 - 6)}) {
    std::ostringstream name;
    name << "cie-pointer-0x" << std::hex << pointer;
    Variant v{name.str(), original_, true};
    put<uint32_t>(v.bytes, field, pointer);
    check(v);
    if (HasFatalFailure()) return;
  }
}

// A minimal ELF64 file whose only section (besides the names) is `eh_frame`.
std::vector<uint8_t> elf_with_eh_frame(const std::vector<uint8_t>& eh_frame) {
  static const char kNames[] = "\0.eh_frame\0.shstrtab";
  const uint64_t data_off = 0x1000, names_off = data_off + eh_frame.size();
  const uint64_t sh_off = (names_off + sizeof kNames + 7) & ~uint64_t{7};
  std::vector<uint8_t> b(sh_off + 3 * 64, 0);
  std::memcpy(b.data(), "\x7f" "ELF\x02\x01\x01", 7);
  put<uint16_t>(b, 16, 3);   // ET_DYN
  put<uint16_t>(b, 18, 62);  // x86-64
  put<uint32_t>(b, 20, 1);
  put<uint64_t>(b, 0x28, sh_off);
  put<uint16_t>(b, 0x34, 64);
  put<uint16_t>(b, 0x36, 56);
  put<uint16_t>(b, 0x3a, 64);
  put<uint16_t>(b, 0x3c, 3);
  put<uint16_t>(b, 0x3e, 2);
  std::memcpy(b.data() + data_off, eh_frame.data(), eh_frame.size());
  std::memcpy(b.data() + names_off, kNames, sizeof kNames);
  const uint64_t eh = sh_off + 64, names = sh_off + 128;
  put<uint32_t>(b, eh, 1);
  put<uint32_t>(b, eh + 4, 1);        // PROGBITS
  put<uint64_t>(b, eh + 8, 2);        // SHF_ALLOC
  put<uint64_t>(b, eh + 0x10, 0x1000);
  put<uint64_t>(b, eh + 0x18, data_off);
  put<uint64_t>(b, eh + 0x20, eh_frame.size());
  put<uint32_t>(b, names, 11);
  put<uint32_t>(b, names + 4, 3);     // STRTAB
  put<uint64_t>(b, names + 0x18, names_off);
  put<uint64_t>(b, names + 0x20, sizeof kNames);
  return b;
}

// Many FDEs of one CIE whose program is long: the text and JSON dumps ran the
// CIE's program again for every FDE (minutes for this file), and must not.
TEST_F(BadInput, LongCieProgramManyFdes) {
  std::vector<uint8_t> eh;
  std::vector<uint8_t> cie = {0, 0, 0, 0, 1, 0, 1, 0x78, 0x10, 0x0c, 0x07, 0x08};  // id, v1, "", caf, daf, ra, def_cfa
  cie.resize(cie.size() + 200000, 0);                                                  // DW_CFA_nop
  eh.resize(4);
  put<uint32_t>(eh, 0, static_cast<uint32_t>(cie.size()));
  eh.insert(eh.end(), cie.begin(), cie.end());
  for (uint32_t i = 0; i < 10000; ++i) {
    const size_t at = eh.size();
    eh.resize(at + 24);
    put<uint32_t>(eh, at, 20);
    put<uint32_t>(eh, at + 4, static_cast<uint32_t>(at + 4));  // back to the CIE at 0
    put<uint64_t>(eh, at + 8, 0x1000 + 16 * i);
    put<uint64_t>(eh, at + 16, 16);
  }
  eh.resize(eh.size() + 4, 0);
  check({"long-cie-program", elf_with_eh_frame(eh)});
}

}  // namespace
