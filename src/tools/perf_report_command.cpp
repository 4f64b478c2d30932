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

#include "dump/text_writer.hpp"
#include "elf/debug_file.hpp"
#include "elf/section_cache.hpp"
#include "perf/perf_data.hpp"
#include "profile/sample_builder.hpp"
#include "profile/sample_profile.hpp"
#include "profile/sample_reports.hpp"
#include "symbol/kernel_symbols.hpp"
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

}  // namespace

int run_perf_report(const ReportCommandOptions& options) {
  // Compressed debug sections (a distribution's debug files) inflated once,
  // then mapped from the cache, as addr2line does (docs/addr2line.md).
  elf::set_section_cache(elf::section_cache_from_environment());
  // perf script's text unless another format is asked for.
  const bool script = options.format == "script" || !options.format_given;
#if !FRAMEWALK_PPROF
  if (options.format == "pprof") {
    std::fprintf(stderr, "framewalk report: this build has no pprof writer (configured with FRAMEWALK_PPROF=OFF)\n");
    return 2;
  }
#endif
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
  symbol::KernelSymbols kernel(options.kallsyms);
  // Frames are named on a second thread while the file is read.
  profile::SampleProfileBuilder builder(kernel, /*symbols=*/true, /*defer_names=*/true);
  if (!script) builder.start_background_naming(/*idle=*/false);
  uint64_t added = 0;
  // Off-CPU time: samples of the context-switches event timed by the
  // switch records (perf record -e context-switches -c 1 --switch-events).
  auto on_switch = [&](const ThreadSwitch& t) {
    if (!script) builder.add_switch(t);
  };
  const PerfUnwindResult result = unwind_perf_samples(source, o, [&](const UnwoundSample& u) {
    if (!script) {
      builder.add(u);
      if ((++added & 4095) == 0) builder.collect_names();  // hands the thread what came
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
  }, on_switch);
  if (!script) {
    builder.finish(result);
    builder.name_pending();
    const profile::SampleProfile& p = builder.profile();
    profile::SampleReportOptions r = sample_report_options(options);
    r.complete = !result.read.error;
    if (result.read.error) r.damage = perf::describe(*result.read.error);
    if (options.format == "pprof") {
#if FRAMEWALK_PPROF
      const std::string pb = profile::write_sample_pprof(p, r);
      std::fwrite(pb.data(), 1, pb.size(), out);
#endif
    } else {
      dump::TextWriter w(out);
      if (options.format == "json") profile::write_sample_json(p, r, w);
      else if (options.format == "folded") profile::write_sample_folded(p, r, w);
      else if (options.format == "speedscope") profile::write_sample_speedscope(p, r, w);
      else if (options.format == "firefox") profile::write_sample_firefox(p, r, w);
      else if (options.format == "html") profile::write_sample_html(p, r, w);
      else profile::write_sample_text(p, r, w);
    }
  }
  const bool write_failed = std::fflush(out) != 0 || std::ferror(out);
  if (out != stdout) std::fclose(out);
  if (fd != 0) ::close(fd);
  for (const std::string& w : result.warnings) report(options.profile, w);
  for (const std::string& w : builder.warnings()) report(options.profile, w);
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
