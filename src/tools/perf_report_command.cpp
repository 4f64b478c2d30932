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
#include "perf/perf_data.hpp"
#include "profile/sample_profile.hpp"
#include "profile/sample_reports.hpp"
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


// The unwound samples as a sampled profile (what framewalk record's .fwprof
// holds), for the reports of every other format: modules with their
// build-ids, frames named once each with their inline frames and lines.
class ProfileBuilder {
 public:
  ProfileBuilder(KernelSymbols& kernel) : kernel_(kernel) {}
  profile::SampleProfile& profile() { return profile_; }

  void add(const UnwoundSample& u) {
    if (!first_time_) first_time_ = u.time;
    last_time_ = std::max(last_time_, u.time);
    if (u.event && !event_set_) {
      event_set_ = true;
      profile::RecordingInfo& info = profile_.info();
      info.event = profile_.intern(u.event->name);
      if (u.event->freq()) info.frequency = u.event->sample_period;
      else info.period = u.event->sample_period;
      // The software clocks count nanoseconds.
      info.weight_unit = profile_.intern(u.event->type == 1 && u.event->config <= 1 ? "nanoseconds" : "events");
      for (const std::string& a : u.file->cmdline) info.command_line.push_back(profile_.intern(a));
      info.hostname = profile_.intern(u.file->hostname);
    }
    if (auto [it, added] = thread_names_.try_emplace(u.tid, *u.comm); added || it->second != *u.comm) {
      it->second = *u.comm;
      profile_.add_thread(u.pid, u.tid, *u.comm);
    }
    frames_.clear();
    for (const SampleFrame& f : u.frames) frames_.push_back(frame(f, u));
    const uint32_t stack = profile_.push_stack(frames_);
    profile_.add_sample(stack, u.time - *first_time_, u.tid, static_cast<uint16_t>(u.cpu), u.period ? u.period : 1);
    if (u.walked) profile_.add_stop_reason(to_string(u.walk.reason));
  }
  void finish(const PerfUnwindResult& result) {
    profile_.add_lost_samples(result.stats.lost_samples);
    profile_.info().duration_ns = first_time_ ? last_time_ - *first_time_ : 0;
  }

 private:
  uint32_t module(const Module* m) {
    auto [it, added] = modules_.try_emplace(m ? m->id : 0, profile::kNoModule);
    if (!added) return it->second;
    if (!m) return it->second = profile_.add_module("[kernel.kallsyms]", "", 0, 0, 0, 0);
    std::string build_id;
    uint64_t file_offset = 0;
    if (m->data) {
      if (auto id = m->data->elf().build_id()) build_id = elf::build_id_hex(*id);
      if (auto off = file_offset_of(*m)) file_offset = *off;
    }
    return it->second = profile_.add_module(m->name, build_id, m->start, m->end, file_offset, m->bias);
  }
  static std::optional<uint64_t> file_offset_of(const Module& m) {
    const uint64_t link = m.start - m.bias;
    for (const elf::Segment& seg : m.data->elf().segments())
      if (seg.type == elf::kPtLoad && link >= seg.vaddr && link < seg.vaddr + seg.memsz) return seg.offset + (link - seg.vaddr);
    return std::nullopt;
  }
  uint32_t frame(const SampleFrame& f, const UnwoundSample& u) {
    const bool kernel = f.kind == SampleFrameKind::kKernel;
    const Module* m = kernel ? nullptr : f.frame.module;
    const uint32_t mod = kernel ? module(nullptr) : m ? module(m) : profile::kNoModule;
    const uint64_t address = kernel ? f.frame.pc : m ? f.frame.lookup_pc - m->bias : f.frame.lookup_pc;
    const uint32_t id = profile_.intern_frame(mod, address);
    if (id >= named_.size()) named_.resize(id + 1, false);
    if (named_[id]) return id;
    named_[id] = true;
    lines_.clear();
    if (kernel) {
      kernel_.load_if(u.file->osrelease);
      std::string n = kernel_.name(f.frame.pc);
      if (const size_t plus = n.rfind("+0x"); plus != std::string::npos) n.resize(plus);
      if (n != "[unknown]") lines_.push_back({profile_.intern(n), 0, 0, 0});
    } else if (m && m->data) {
      const FrameSymbol symbol = symbolize(f.frame);
      for (const SourceFrame& sf : source_frames(f.frame, true)) {
        const std::string& name = sf.function.empty() ? symbol.function : sf.function;
        lines_.push_back({name.empty() ? 0 : profile_.intern(name), sf.file.empty() ? 0 : profile_.intern(sf.file), sf.line,
                          sf.column});
      }
      if (lines_.size() == 1 && lines_[0].function == 0 && lines_[0].file == 0) lines_.clear();
    }
    if (!lines_.empty()) profile_.set_frame_lines(id, lines_);
    return id;
  }

  KernelSymbols& kernel_;
  profile::SampleProfile profile_;
  std::unordered_map<uint64_t, uint32_t> modules_;  // Module id (0: the kernel) -> profile module
  std::unordered_map<uint32_t, std::string> thread_names_;
  std::vector<bool> named_;
  std::vector<uint32_t> frames_;
  std::vector<profile::SourceLine> lines_;
  std::optional<uint64_t> first_time_;
  uint64_t last_time_ = 0;
  bool event_set_ = false;
};

}  // namespace

int run_perf_report(const ReportCommandOptions& options) {
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
  KernelSymbols kernel(options.kallsyms);
  ProfileBuilder builder(kernel);
  const PerfUnwindResult result = unwind_perf_samples(source, o, [&](const UnwoundSample& u) {
    if (!script) {
      builder.add(u);
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
  if (!script) {
    builder.finish(result);
    const profile::SampleProfile& p = builder.profile();
    profile::SampleReportOptions r;
    r.profile_path = options.profile;
    r.tid = options.thread;
    r.per_thread = options.per_thread;
    r.tree = options.tree;
    r.function = options.function;
    r.top = options.top;
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
