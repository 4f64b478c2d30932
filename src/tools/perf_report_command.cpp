#include "tools/perf_report_command.hpp"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "perf/perf_data.hpp"
#include "unwind/symbolize.hpp"
#include "walk/perf_samples.hpp"
#include "walk/stack_dump.hpp"
#include "tools/messages.hpp"

namespace framewalk::tools {

bool is_perf_data_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uint8_t head[8];
  const bool yes = ::pread(fd, head, 8, 0) == 8 && perf::is_perf_data(Bytes(head, 8));
  ::close(fd);
  return yes;
}

namespace {

// Names by (module, address), once each: a profile's samples share most frames.
class SymbolNames {
 public:
  const std::string& name(const Frame& frame) {
    const uint64_t module = frame.module ? frame.module->id : 0;
    auto [it, added] = names_.try_emplace(Key{module, frame.symbol_pc, frame.pc});
    if (added) {
      const FrameSymbol s = symbolize(frame);
      if (s.found) {
        char off[32];
        std::snprintf(off, sizeof off, "+0x%" PRIx64, s.offset);
        it->second = s.function + off;
      } else {
        it->second = "[unknown]";
      }
    }
    return it->second;
  }

 private:
  struct Key {
    uint64_t module, symbol_pc, pc;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.module * 0x9e3779b97f4a7c15ull ^ k.symbol_pc ^ (k.pc << 1));
    }
  };
  std::unordered_map<Key, std::string, Hash> names_;
};

// Kernel functions by address, from /proc/kallsyms, when the recording was
// made on the running kernel (the same release) and the addresses are
// shown (root, or kptr_restrict 0); else none, and kernel frames stay
// [unknown] as perf leaves them without symbols.
class KernelSymbols {
 public:
  explicit KernelSymbols(const std::optional<std::string>& file) : file_(file) {}
  void load_if(const std::string& recorded_release) {
    if (loaded_) return;
    loaded_ = true;
    std::string path = "/proc/kallsyms";
    if (file_) {
      path = *file_;
      if (path.empty()) return;
    } else {
      struct utsname u {};
      if (recorded_release.empty() || uname(&u) != 0 || recorded_release != u.release) return;
    }
    // Read whole (5 MB on a distribution kernel), then parsed by hand:
    // fgets and sscanf over 120,000 lines cost more than the reading.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      problem_ = path + ": " + std::strerror(errno) + ": kernel frames are not named";
      return;
    }
    std::string text;
    std::vector<char> chunk(1 << 20);
    for (ssize_t n; (n = ::read(fd, chunk.data(), chunk.size())) > 0;) text.append(chunk.data(), static_cast<size_t>(n));
    ::close(fd);
    // "ffffffff81000000 T _text [module]": address, type, name.
    for (size_t pos = 0; pos < text.size();) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      const std::string_view line(text.data() + pos, end - pos);
      pos = end + 1;
      const size_t sp1 = line.find(' ');
      if (sp1 == std::string_view::npos || sp1 + 3 >= line.size()) continue;
      const char type = line[sp1 + 1];
      if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
      uint64_t address = 0;
      for (size_t i = 0; i < sp1; ++i) {
        const char c = line[i];
        address = address << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
      }
      if (address == 0) continue;  // addresses hidden (kptr_restrict)
      std::string_view name = line.substr(sp1 + 3);
      if (const size_t tab = name.find_first_of(" \t"); tab != std::string_view::npos) name = name.substr(0, tab);
      symbols_.emplace_back(address, std::string(name));
    }
    std::sort(symbols_.begin(), symbols_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  // "name+0xoff", or "[unknown]".
  std::string name(uint64_t pc) const {
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), pc,
                               [](uint64_t v, const auto& e) { return v < e.first; });
    if (it == symbols_.begin()) return "[unknown]";
    --it;
    char off[32];
    std::snprintf(off, sizeof off, "+0x%" PRIx64, pc - it->first);
    return it->second + off;
  }

  const std::string& problem() const { return problem_; }

 private:
  std::optional<std::string> file_;
  std::string problem_;
  bool loaded_ = false;
  std::vector<std::pair<uint64_t, std::string>> symbols_;
};

}  // namespace

int run_perf_report(const ReportCommandOptions& options) {
  if (options.format != "script" && options.format != "text" && options.format != "folded") {
    std::fprintf(stderr, "framewalk report: %s is a perf.data file: --format=script (the default) or folded\n",
                 options.profile.c_str());
    return 2;
  }
  const int fd = options.profile == "-" ? 0 : ::open(options.profile.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    report(options.profile, std::strerror(errno));
    return 1;
  }
  std::FILE* out = stdout;
  if (!options.output.empty()) {
    out = std::fopen(options.output.c_str(), "wb");
    if (!out) {
      report(options.output, std::strerror(errno));
      if (fd != 0) ::close(fd);
      return 1;
    }
  }
  static char buffer[1 << 16];
  std::setvbuf(out, buffer, _IOFBF, sizeof buffer);

  perf::FdSource source(fd);
  PerfUnwindOptions o;
  o.max_frames = options.max_frames;
  if (const char* home = std::getenv("HOME")) o.files.buildid_dir = std::string(home) + "/.debug";
  o.files.sysroot = options.sysroot;
  SymbolNames names;
  KernelSymbols kernel(options.kallsyms);
  const bool folded = options.format == "folded";
  std::map<std::string, uint64_t> stacks;  // folded: stack -> period
  std::string line;
  const PerfUnwindResult result = unwind_perf_samples(source, o, [&](const UnwoundSample& u) {
    if (folded) {
      line = *u.comm;
      for (size_t i = u.frames.size(); i-- > 0;) {
        const SampleFrame& f = u.frames[i];
        line += ';';
        if (f.kind == SampleFrameKind::kKernel) kernel.load_if(u.file->osrelease);
        const std::string n = f.kind == SampleFrameKind::kKernel ? kernel.name(f.frame.pc) : names.name(f.frame);
        const size_t plus = n.rfind("+0x");
        line.append(n, 0, plus == std::string::npos ? n.size() : plus);
        if (f.kind == SampleFrameKind::kKernel) line += "_[k]";
      }
      stacks[line] += u.period ? u.period : 1;
      return true;
    }
    // perf script's shape: comm tid [cpu] time: period event:
    std::fprintf(out, "%s %5u ", u.comm->empty() ? ":-1" : u.comm->c_str(), u.tid);
    if (u.sample->sample_type & perf::sample::kCpu) std::fprintf(out, "[%03u] ", u.cpu);
    if (u.sample->sample_type & perf::sample::kTime)
      std::fprintf(out, "%5" PRIu64 ".%06" PRIu64 ": ", u.time / 1000000000, u.time % 1000000000 / 1000);
    if (u.sample->sample_type & perf::sample::kPeriod) std::fprintf(out, "%10" PRIu64 " ", u.period);
    std::fprintf(out, "%s: \n", u.event->name.c_str());
    for (const SampleFrame& f : u.frames) {
      const char* module = f.kind == SampleFrameKind::kKernel ? "[kernel.kallsyms]"
                           : f.frame.module                   ? f.frame.module->name.c_str()
                                                              : "[unknown]";
      // As perf prints them: a return address less one (inside the call), or
      // with --link-addresses its module's link-time address (perf 6.1's).
      uint64_t address = f.frame.pc;
      if (f.kind == SampleFrameKind::kUser && !f.frame.activation) address -= 1;
      if (options.link_addresses && f.frame.module) address -= f.frame.module->bias;
      if (f.kind == SampleFrameKind::kKernel) {
        kernel.load_if(u.file->osrelease);
        std::fprintf(out, "\t%16" PRIx64 " %s (%s)\n", address, kernel.name(address).c_str(), module);
      } else {
        std::fprintf(out, "\t%16" PRIx64 " %s (%s)\n", address, names.name(f.frame).c_str(), module);
      }
    }
    if (options.verbose) {
      if (u.walked) std::fprintf(out, "\t# %s\n", stop_text(u.walk).c_str());
      else if (u.walk_error) std::fprintf(out, "\t# not walked: %s\n", to_string(u.walk_error->code));
      else std::fprintf(out, "\t# from the callchain\n");
    }
    std::fputc('\n', out);
    return true;
  });
  for (const auto& [stack, value] : stacks) std::fprintf(out, "%s %" PRIu64 "\n", stack.c_str(), value);
  const bool write_failed = std::fflush(out) != 0 || std::ferror(out);
  if (out != stdout) std::fclose(out);
  if (fd != 0) ::close(fd);
  for (const std::string& w : result.warnings) report(options.profile, w);
  if (!kernel.problem().empty()) report(options.profile, kernel.problem());
  if (options.stats) {
    const PerfUnwindStats& s = result.stats;
    std::string reasons;
    for (size_t i = 0; i < kStopReasonCount; ++i)
      if (s.by_reason[i])
        reasons += std::string(reasons.empty() ? "" : ", ") + to_string(static_cast<StopReason>(i)) + " " +
                   std::to_string(s.by_reason[i]);
    std::fprintf(stderr,
                 "framewalk: %s: %" PRIu64 " records, %" PRIu64 " samples: %" PRIu64 " walked (%s), %" PRIu64
                 " from the callchain, %" PRIu64 " IP only; %" PRIu64 " frames; %" PRIu64 " samples lost (%" PRIu64
                 " records), %" PRIu64 " throttled\n",
                 options.profile.c_str(), result.read.records, s.samples, s.walked, reasons.c_str(), s.from_callchain,
                 s.ip_only, s.frames, s.lost_samples, s.lost_records, s.throttled);
  } else if (result.stats.lost_samples) {
    report(options.profile, std::to_string(result.stats.lost_samples) + " samples lost");
  }
  if (write_failed) {
    report(options.output.empty() ? "stdout" : options.output, "write failed");
    return 1;
  }
  if (result.read.error) {
    report(options.profile, perf::describe(*result.read.error) + " (" + std::to_string(result.read.records) +
                                " records before it were reported)");
    return 1;
  }
  return 0;
}

}  // namespace framewalk::tools
