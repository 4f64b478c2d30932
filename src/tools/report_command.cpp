#include "tools/report_command.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <unistd.h>
#include <vector>

#include "base/mapped_file.hpp"
#include "dump/text_writer.hpp"
#include "elf/debug_file.hpp"
#include "elf/elf_file.hpp"
#include "elf/symbols.hpp"
#include "profile/call_graph.hpp"
#include "profile/functions.hpp"
#include "profile/function_times.hpp"
#include "profile/gmon.hpp"
#include "profile/profile_file.hpp"
#include "profile/sample_reports.hpp"
#include "profile/reports.hpp"
#include "symbol/inline_symbolizer.hpp"
#include "unwind/symbolize.hpp"
#include "tools/messages.hpp"
#include "tools/perf_report_command.hpp"
#if FRAMEWALK_PPROF
#include "profile/pprof_report.hpp"
#endif

namespace framewalk::tools {

namespace {

// The executable's lowest and highest loaded addresses, and the file offset
// of its first executable segment (for pprof's mapping).
struct LoadRange {
  uint64_t low = ~uint64_t{0};
  uint64_t high = 0;
  uint64_t text_start = 0, text_limit = 0, text_offset = 0;
};

LoadRange load_range(const elf::ElfFile& exe) {
  LoadRange r;
  for (const elf::Segment& s : exe.segments()) {
    if (s.type != elf::kPtLoad) continue;
    r.low = std::min(r.low, s.vaddr);
    r.high = std::max(r.high, s.vaddr + s.memsz);
    if ((s.flags & 1) && r.text_limit == 0) {  // PF_X
      r.text_start = s.vaddr;
      r.text_limit = s.vaddr + s.memsz;
      r.text_offset = s.offset;
    }
  }
  if (r.low > r.high) r.low = r.high = 0;
  return r;
}

// glibc writes a PIE's link-time addresses (it subtracts the load address);
// other runtimes may write the addresses the process ran at. Those are told
// by the histogram: its low_pc is the start of the executable rounded down
// to 4 bytes, so outside the file's range it gives the load address.
uint64_t find_bias(const profile::GmonFile& gmon, const elf::ElfFile& exe, const LoadRange& range) {
  if (exe.type() != elf::kEtDyn || gmon.histograms.empty()) return 0;
  const uint64_t low = gmon.histograms.front().low_pc;
  if (low >= (range.low & ~uint64_t{3}) && low < range.high) return 0;
  const uint64_t bias = low - (range.low & ~uint64_t{3});
  return bias % 4096 == 0 ? bias : 0;
}

std::string build_id_hex(const elf::ElfFile& exe) {
  auto id = exe.build_id();
  return id ? elf::build_id_hex(*id) : std::string();
}

bool has_dwarf(const symbol::InlineSymbolizer* dwarf) {
  return dwarf && (dwarf->has_debug_info() || dwarf->lines().has_rows());
}

// A .fwprof recording: read what it holds (a recording cut short is
// reported, and what came before the damage shown), then write the format.
}  // namespace

profile::SampleReportOptions sample_report_options(const ReportCommandOptions& options) {
  profile::SampleReportOptions o;
  o.profile_path = options.profile;
  o.tid = options.thread;
  o.per_thread = options.per_thread;
  o.tree = options.tree;
  o.function = options.function;
  o.top = options.top;
  o.kind = options.kind == "off-cpu" ? profile::SampleKind::kOffCpu : profile::SampleKind::kOnCpu;
  return o;
}

namespace {

int run_sample_report(const ReportCommandOptions& options, Bytes bytes) {
  profile::ProfileFileResult file = profile::read_profile_file(bytes);
  if (!file.read) {
    report(options.profile, profile::describe(file.error));
    return 1;
  }
  profile::ProfileFileRead& read = *file.read;
  profile::SampleReportOptions o = sample_report_options(options);
  o.complete = read.complete;
  if (read.damage) {
    o.damage = profile::describe(*read.damage);
    report(options.profile, o.damage + ": the report shows the " + std::to_string(read.chunks) +
                                " chunks before it (" + std::to_string(read.profile.samples().size()) + " samples)");
  } else if (!read.complete) {
    report(options.profile, "no end chunk (a recording cut short?): the report shows the " +
                                std::to_string(read.profile.samples().size()) + " samples it holds");
  }
  if (options.thread && !read.profile.thread(*options.thread) &&
      std::none_of(read.profile.samples().begin(), read.profile.samples().end(),
                   [&](const profile::Sample& s) { return s.tid == *options.thread; }))
    report(options.profile, "no sample of thread " + std::to_string(*options.thread));
  std::FILE* out = stdout;
  if (!options.output.empty()) {
    out = std::fopen(options.output.c_str(), "wb");
    if (!out) {
      report(options.output, std::strerror(errno));
      return 1;
    }
  }
  if (options.format == "pprof") {
#if FRAMEWALK_PPROF
    const std::string pb = profile::write_sample_pprof(read.profile, o);
    std::fwrite(pb.data(), 1, pb.size(), out);
#endif
  } else {
    dump::TextWriter w(out);
    if (options.format == "json") profile::write_sample_json(read.profile, o, w);
    else if (options.format == "folded") profile::write_sample_folded(read.profile, o, w);
    else if (options.format == "speedscope") profile::write_sample_speedscope(read.profile, o, w);
    else if (options.format == "firefox") profile::write_sample_firefox(read.profile, o, w);
    else if (options.format == "html") profile::write_sample_html(read.profile, o, w);
    else profile::write_sample_text(read.profile, o, w);
  }
  const bool write_failed = std::fflush(out) != 0 || std::ferror(out);
  if (out != stdout) std::fclose(out);
  if (write_failed) {
    report(options.output.empty() ? "stdout" : options.output, "write failed");
    return 1;
  }
  return 0;
}

}  // namespace

int run_report_command(const ReportCommandOptions& options) {
  if (options.profile == "-" || is_perf_data_file(options.profile)) return run_perf_report(options);
  if (options.format == "script") {
    std::fprintf(stderr, "framewalk report: --format=script is for perf.data files; %s is not one\n",
                 options.profile.c_str());
    return 2;
  }
#if !FRAMEWALK_PPROF
  if (options.format == "pprof") {
    std::fprintf(stderr, "framewalk report: this build has no pprof writer (configured with FRAMEWALK_PPROF=OFF)\n");
    return 2;
  }
#endif
  {
    // A framewalk recording is told by its magic; anything else is a gmon.out.
    auto image = FileImage::map(options.profile);
    if (image && profile::is_profile_file((*image)->bytes())) return run_sample_report(options, (*image)->bytes());
  }
  if (options.format == "speedscope" || options.format == "firefox" || options.format == "html") {
    std::fprintf(stderr, "framewalk report: --format=%s is for a recording of framewalk record (.fwprof), not a gmon.out\n",
                 options.format.c_str());
    return 2;
  }
  auto exe = elf::ElfFile::open(options.exe);
  if (!exe) {
    report(options.exe, open_error_text(exe.error()));
    return 1;
  }
  auto image = FileImage::map(options.profile);
  if (!image) {
    report(options.profile, open_error_text(image.error()));
    return 1;
  }
  const elf::ElfFile& elf = **exe;
  auto gmon = profile::read_gmon((*image)->bytes(), profile::GmonLayout{elf.address_size(), elf.endian()});
  if (!gmon) {
    report(options.profile, profile::describe(gmon.error()));
    return 1;
  }
  const LoadRange range = load_range(elf);
  const uint64_t bias = options.load_bias ? *options.load_bias : find_bias(*gmon, elf, range);
  const elf::SymbolTable symbols = elf::SymbolTable::load(*exe);
  if (symbols.size() == 0) {
    report(options.exe, "no function symbols (a stripped file?): nothing to name the profile's addresses by");
    return 1;
  }
  const profile::FunctionTable functions = profile::FunctionTable::from_symbols(symbols);
  profile::CallGraph graph = profile::build_call_graph(*gmon, functions, bias);
  // The exact times the runtime writes beside gmon.out for -finstrument-functions code.
  const std::string times_path = options.times ? *options.times : options.profile + ".times";
  if (!times_path.empty() && (options.times || access(times_path.c_str(), F_OK) == 0)) {
    auto times_image = FileImage::map(times_path);
    if (!times_image) {
      report(times_path, open_error_text(times_image.error()));
      return 1;
    }
    const Bytes bytes = (*times_image)->bytes();
    profile::FunctionTimesError error;
    auto times = profile::read_function_times(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), &error);
    if (!times) {
      report(times_path, "line " + std::to_string(error.line) + ": " + error.what);
      return 1;
    }
    if (const size_t unmatched = profile::attach_function_times(*times, functions, bias, &graph))
      report(times_path, std::to_string(unmatched) + " of its " + std::to_string(times->functions.size()) +
                             " functions start at no function of " + options.exe + "'s (another program's file?)");
    // The shared libraries' functions, named from each library's symbols
    // (read once each, from the path the process loaded it by).
    std::map<std::string, std::optional<profile::FunctionTable>> libraries;
    const auto library_table = [&](const std::string& path) -> const profile::FunctionTable* {
      auto [it, added] = libraries.try_emplace(path);
      if (added) {
        auto file = elf::ElfFile::open(path);
        if (file) {
          it->second = profile::FunctionTable::from_symbols(elf::SymbolTable::load(*file));
        } else {
          report(path, open_error_text(file.error()) + ": its functions in " + times_path + " are named by address");
        }
      }
      return it->second ? &*it->second : nullptr;
    };
    profile::attach_module_times(*times, library_table, &graph);
  }
  if (!gmon->arcs.empty() && graph.dropped_arcs == gmon->arcs.size())
    report(options.profile, "no arc falls in " + options.exe +
                                "'s functions: another program's profile, or addresses of a process loaded elsewhere "
                                "(--load-bias)");

  std::FILE* out = stdout;
  if (!options.output.empty()) {
    out = std::fopen(options.output.c_str(), "wb");
    if (!out) {
      report(options.output, std::strerror(errno));
      return 1;
    }
  }
  const profile::ReportSource source{options.profile, options.exe, gmon->version, gmon->histogram_records,
                                     gmon->arcs.size()};
  bool complete = true;
  if (options.format == "pprof") {
#if FRAMEWALK_PPROF
    profile::pprof::ProfileBuilder builder;
    // Source lines and inline frames from the executable's DWARF (or its debug file), when it has any.
    std::unique_ptr<symbol::InlineSymbolizer> dwarf = symbol::InlineSymbolizer::load(*exe, options.exe);
    profile::SourceLookup lookup;
    if (has_dwarf(dwarf.get())) {
      lookup = [&](uint64_t address) {
        std::vector<profile::SourcePosition> out;
        for (const symbol::SourceFrame& f : dwarf->frames(address))
          out.push_back({f.linkage_name ? demangle_name(std::string(f.function)) : std::string(f.function),
                         std::string(f.file), f.line});
        return out;
      };
    }
    profile::fill_pprof(graph, source, profile::PprofImage{range.text_start, range.text_limit, range.text_offset,
                                                           build_id_hex(elf)},
                        &builder, lookup);
    const std::string bytes = builder.serialize();
    std::fwrite(bytes.data(), 1, bytes.size(), out);
#endif
  } else {
    dump::TextWriter w(out);
    if (options.format == "json") {
      profile::write_json_report(graph, source, w);
    } else if (options.format == "folded") {
      std::unique_ptr<symbol::InlineSymbolizer> dwarf;
      profile::InlinedAtCall inlined;
      if (options.inlines) {
        dwarf = symbol::InlineSymbolizer::load(*exe, options.exe);
        if (!has_dwarf(dwarf.get())) {
          report(options.exe, "no DWARF (.debug_info) here or in a separate debug file: no inline frames");
        } else if (!gmon->exact_call_sites && !gmon->arcs.empty()) {
          report(options.profile, "its call sites are not exact (glibc's runtime rounds them down): no inline frames; "
                                  "framewalk's runtime (libframewalk_mcount) writes exact ones");
        } else {
          inlined = [&](uint64_t call) {
            const std::vector<symbol::SourceFrame> frames = dwarf->frames(call);
            std::vector<std::string> out;
            for (size_t i = frames.size(); i-- > 0;)  // outermost first; the physical function is the arc's caller
              if (frames[i].inlined)
                out.push_back(frames[i].linkage_name ? demangle_name(std::string(frames[i].function))
                                                     : std::string(frames[i].function));
            return out;
          };
        }
      }
      complete = profile::write_folded(
          graph, options.folded_value == "time" ? profile::FoldedValue::kTime : profile::FoldedValue::kCalls, w, {},
          inlined);
    } else {
      profile::write_text_report(graph, w);
    }
  }
  const bool write_failed = std::fflush(out) != 0 || std::ferror(out);
  if (out != stdout) std::fclose(out);
  if (write_failed) {
    report(options.output.empty() ? "stdout" : options.output, "write failed");
    return 1;
  }
  if (!complete)
    report(options.profile, "folded paths cut short (more than 64 frames deep or 100000 lines): the output is partial");
  return 0;
}

}  // namespace framewalk::tools
