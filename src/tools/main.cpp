// The `framewalk` command: one binary, one subcommand per job.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "tools/addr2line_command.hpp"
#include "tools/cfi_command.hpp"
#include "tools/check_command.hpp"
#include "tools/exidx_command.hpp"
#include "tools/report_command.hpp"
#include "tools/profile_command.hpp"
#include "tools/record_command.hpp"
#include "tools/sframe_command.hpp"
#include "tools/stack_command.hpp"

namespace {

bool parse_address(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"framewalk: how did this program get here?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "framewalk 0.1.0");

  framewalk::tools::CfiCommandOptions cfi;
  std::string pc_text;
  bool no_debug_frame = false;
  auto* cfi_cmd = app.add_subcommand("cfi", "Dump DWARF call frame information (.eh_frame, .debug_frame)");
  cfi_cmd->add_option("files", cfi.files,
                      "ELF files, or static libraries (ar archives, also thin): every member is dumped")
      ->required();
  cfi_cmd->add_option("--format", cfi.format, "text (default), readelf (as readelf --debug-dump=frames-interp) or json")
      ->check(CLI::IsMember({"text", "readelf", "json"}));
  cfi_cmd->add_option("--pc", pc_text, "show only the FDE, symbol and row in force at this address (not for archives)");
  cfi_cmd->add_flag("--no-debug-frame", no_debug_frame, "ignore .debug_frame and separate debug files");

  framewalk::tools::SframeCommandOptions sframe;
  std::string sframe_address_text, sframe_pc_text;
  auto* sframe_cmd = app.add_subcommand("sframe", "Dump the SFrame section (.sframe) as objdump --sframe does");
  sframe_cmd->add_option("files", sframe.files, "ELF files (or bare .sframe sections with --raw)")->required();
  sframe_cmd->add_flag("--raw", sframe.raw, "the files are bare .sframe sections");
  sframe_cmd->add_option("--address", sframe_address_text, "--raw: the section's load address (default 0)");
  sframe_cmd->add_option("--binutils", sframe.binutils, "dump as this binutils release (2.40 .. 2.46; default: by version)");
  sframe_cmd->add_flag("--rows", sframe.rows, "print the rows (CFA and register rules) of every FDE");
  sframe_cmd->add_option("--pc", sframe_pc_text, "print only the row in force at this address");
  framewalk::tools::GenerateCommandOptions generate;
  bool sframe_generate = false;
  sframe_cmd->add_flag("--generate", sframe_generate, "write a copy of the (one) file with .sframe made from its CFI");
  sframe_cmd->add_option("-o,--output", generate.output, "--generate: the copy to write");
  sframe_cmd->add_option("--sframe-version", generate.version, "--generate: SFrame version 3 (default), 2, or 1 (for binutils 2.40)")
      ->check(CLI::IsMember({1, 2, 3}));
  sframe_cmd->add_flag("--no-segment", generate.no_segment,
                       "--generate: keep .sframe non-allocated (no new PT_LOAD and PT_GNU_SFRAME)");

  framewalk::tools::ExidxCommandOptions exidx;
  auto* exidx_cmd = app.add_subcommand("exidx", "Dump the ARM EHABI unwind tables (.ARM.exidx, .ARM.extab)");
  exidx_cmd->add_option("files", exidx.files, "32-bit ARM executables and shared libraries")->required();
  exidx_cmd->add_option("--format", exidx.format, "text (default) or readelf (as readelf -u)")
      ->check(CLI::IsMember({"text", "readelf"}));

  framewalk::tools::CheckCommandOptions check;
  std::string check_address_text;
  auto* check_cmd = app.add_subcommand("check", "Compare the CFI and SFrame rows of a file at every PC");
  check_cmd->add_option("file", check.file, "ELF file")->required();
  check_cmd->add_option("--sframe", check.sframe_file, "take SFrame from this file (ELF, or a bare section) instead of FILE's .sframe");
  check_cmd->add_option("--sframe-address", check_address_text, "--sframe: the bare section's address");
  check_cmd->add_option("--limit", check.limit, "list at most this many disagreements and holes of each kind (0: all; default 50)");
  check_cmd->add_flag("--summary", check.summary_only, "print only the summary line");

  framewalk::tools::StackCommandOptions stack;
  auto* stack_cmd = app.add_subcommand("stack", "Print the call stack of every thread of a process or core file");
  auto* pid_opt = stack_cmd->add_option("-p,--pid", stack.pid, "a live process");
  stack_cmd->add_option("-t,--tid", stack.tid, "only this thread");
  auto* core_opt = stack_cmd->add_option("--core", stack.core, "a core file");
  stack_cmd->add_option("--exe", stack.exe, "the executable of the core (when its recorded path is wrong)");
  stack_cmd->add_option("--sysroot", stack.sysroot, "directory prepended to the core's file paths");
  stack_cmd->add_option("--perf-map", stack.perf_map,
                        "names for jit code (START SIZE NAME lines; default for -p: /tmp/perf-PID.map)");
  stack_cmd->add_option("--jitdump", stack.jitdump,
                        "with --core: the process's jit-PID.dump, where the core does not name it (no NT_FILE)");
  stack_cmd->add_option("-n,--max-frames", stack.max_frames, "frame cap per thread (default 256)")->check(CLI::PositiveNumber);
  stack_cmd->add_option("--format", stack.format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
  stack_cmd->add_option("--freeze", stack.freeze,
                        "process: stop all threads for the whole dump (default); thread: stop each only while it is "
                        "unwound; copy: stop all, copy stacks, resume, then unwind")
      ->check(CLI::IsMember({"process", "thread", "copy"}));
  stack_cmd->add_option("--source", stack.source,
                        "unwind information to use: auto (.eh_frame, .debug_frame, .ARM.exidx, .sframe, then fallbacks; "
                        "default), cfi (the compilers' tables: .eh_frame, .debug_frame, .ARM.exidx), or sframe (SFrame only, then the signal-trampoline and frame-pointer fallbacks)")
      ->check(CLI::IsMember({"auto", "cfi", "sframe"}));
  stack_cmd->add_flag("-v,--verbose", stack.verbose, "show how each frame was found and why each walk stopped");
  stack_cmd->add_flag("-s,--lines", stack.source_lines,
                      "show each frame's source file and line (from its DWARF or its separate debug file), and "
                      "the frames tail calls left off the stack, rebuilt from DWARF call sites as gdb does "
                      "(marked [tailcall])");
  stack_cmd->add_flag("-i,--inlines", stack.inlines,
                      "show the inlined calls at each frame as frames of their own (and the tail-call frames, as -s)");
  bool no_debuginfod = false;
  stack_cmd->add_flag("--no-debuginfod", no_debuginfod,
                      "do not fetch missing debug files (symbols, .debug_frame) from the servers DEBUGINFOD_URLS names");
  auto* snapshot_opt = stack_cmd->add_option("--snapshot", stack.snapshot,
                                             "a snapshot directory (registers, stacks, maps; see docs/stack.md)");
  stack_cmd->add_option("--save-snapshot", stack.save_snapshot,
                        "also save the threads' registers, stacks and maps into this directory, to walk later with "
                        "--snapshot");
  pid_opt->excludes(core_opt);
  pid_opt->excludes(snapshot_opt);
  core_opt->excludes(snapshot_opt);

  framewalk::tools::ReportCommandOptions report;
  std::string report_bias_text;
  auto* report_cmd = app.add_subcommand(
      "report", "Print the flat profile and call graph of a gmon.out (gprof's input), the report of a sampled "
                "profile recorded by framewalk (.fwprof), or the samples of a perf.data unwound by framewalk as "
                "perf script prints them");
  report_cmd->add_option("profile", report.profile,
                         "the gmon.out file (default gmon.out), a .fwprof recording or a perf.data file (perf "
                         "record's; each told by its magic; - reads perf record -o - from stdin)");
  report_cmd->add_option("--exe", report.exe, "the profiled program, for its function names (default a.out)");
  auto* report_format_opt = report_cmd->add_option("--format", report.format,
                         "text (default: flat profile and call graph; for a .fwprof, top functions), json, folded or "
                         "pprof; for a .fwprof also speedscope, firefox (the Firefox Profiler) or html (an "
                         "interactive flame graph in one file); for a perf.data script (default: each sample's "
                         "frames as perf script prints them), or any of the .fwprof formats")
      ->check(CLI::IsMember({"text", "json", "folded", "pprof", "speedscope", "firefox", "html", "script"}));
  // A .fwprof recording's options (docs/report.md).
  report_cmd->add_flag("--tree", report.tree, ".fwprof, text and json: the call tree too");
  report_cmd->add_option("--thread", report.thread, ".fwprof: only this thread's samples (a TID)");
  report_cmd->add_flag("--per-thread", report.per_thread, ".fwprof, text and json: one report a thread");
  report_cmd->add_option("--function", report.function, ".fwprof, text and json: the callers and callees of this function");
  report_cmd->add_option("--top", report.top, ".fwprof, text: the functions listed (default 50; 0: all)");
  report_cmd->add_option("--kind", report.kind, ".fwprof, folded: on-cpu (default) or off-cpu samples")
      ->check(CLI::IsMember({"on-cpu", "off-cpu"}));
  report_cmd->add_option("--folded-value", report.folded_value,
                         "--format=folded: calls (default: one caller;callee line per arc, exact counts) or time "
                         "(call paths weighted by self time in microseconds)")
      ->check(CLI::IsMember({"calls", "time"}));
  report_cmd->add_flag("-i,--inlines", report.inlines,
                       "--format=folded: the calls inlined at each call site as frames of their own (NAME_[i]), from "
                       "the program's DWARF; needs the exact call sites libframewalk_mcount records (pprof output "
                       "has them always)");
  report_cmd->add_option("-o,--output", report.output, "write the report to this file (default: stdout)");
  report_cmd->add_option("--load-bias", report_bias_text,
                         "subtract this from the profile's addresses (a PIE's load address; default: from the histogram)");
  std::string report_times_text;
  auto* report_times_opt = report_cmd->add_option("--times", report_times_text,
                         "the exact per-function times libframewalk_mcount wrote for -finstrument-functions code "
                         "(default: PROFILE.times when it exists; \"\" for none)");
  report_cmd->add_flag("--stats", report.stats,
                       "perf.data: count samples, walks by stop reason and lost samples (on stderr)");
  report_cmd->add_flag("-v,--verbose", report.verbose, "perf.data: each sample's stop reason after its frames");
  report_cmd->add_flag("--link-addresses", report.link_addresses,
                       "perf.data: print each frame's address as its module's link-time address (as perf 6.1's "
                       "script does), not the run-time one");
  report_cmd->add_option("--max-frames", report.max_frames, "perf.data: frames a sample's walk stops at (default 256)");
  report_cmd->add_option("--sysroot", report.sysroot, "perf.data: read the recorded files under this directory");
  std::string report_kallsyms;
  auto* report_kallsyms_opt = report_cmd->add_option(
      "--kallsyms", report_kallsyms,
      "perf.data: name kernel frames from this copy of the recording machine's /proc/kallsyms (none: do not name them; "
      "default: /proc/kallsyms when the recording's kernel release is the running one)");
  framewalk::tools::ProfileCommandOptions profile;
  auto* profile_cmd = framewalk::tools::add_profile_command(app, profile);
  framewalk::tools::Addr2lineCommandOptions addr2line;
  auto* addr2line_cmd = framewalk::tools::add_addr2line_command(app, addr2line);
  framewalk::tools::RecordCommandOptions record;
  auto* record_cmd = framewalk::tools::add_record_command(app, record);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (cfi_cmd->parsed()) {
    if (!pc_text.empty()) {
      uint64_t pc;
      if (!parse_address(pc_text, &pc)) {
        std::fprintf(stderr, "framewalk: --pc: not an address: %s\n", pc_text.c_str());
        return 2;
      }
      cfi.pc = pc;
    }
    cfi.debug_frame = !no_debug_frame;
    return framewalk::tools::run_cfi_command(cfi);
  }
  if (sframe_cmd->parsed()) {
    for (std::string* text : {&sframe_address_text, &sframe_pc_text}) {
      uint64_t v;
      if (text->empty()) continue;
      if (!parse_address(*text, &v)) {
        std::fprintf(stderr, "framewalk sframe: not an address: %s\n", text->c_str());
        return 2;
      }
      (text == &sframe_pc_text ? sframe.pc : sframe.address) = v;
    }
    if (sframe_generate) {
      if (sframe.files.size() != 1 || generate.output.empty() || sframe.raw || sframe.rows || sframe.pc) {
        std::fprintf(stderr, "framewalk sframe: --generate takes one input file and -o OUTPUT\n");
        return 2;
      }
      generate.input = sframe.files[0];
      return framewalk::tools::run_sframe_generate(generate);
    }
    return framewalk::tools::run_sframe_command(sframe);
  }
  if (exidx_cmd->parsed()) return framewalk::tools::run_exidx_command(exidx);
  if (check_cmd->parsed()) {
    if (!check_address_text.empty()) {
      uint64_t v;
      if (!parse_address(check_address_text, &v)) {
        std::fprintf(stderr, "framewalk check: not an address: %s\n", check_address_text.c_str());
        return 2;
      }
      check.sframe_address = v;
    }
    return framewalk::tools::run_check_command(check);
  }
  if (report_cmd->parsed()) {
    if (!report_bias_text.empty()) {
      uint64_t v;
      if (!parse_address(report_bias_text, &v)) {
        std::fprintf(stderr, "framewalk report: --load-bias: not an address: %s\n", report_bias_text.c_str());
        return 2;
      }
      report.load_bias = v;
    }
    if (report_times_opt->count()) report.times = report_times_text;
    report.format_given = report_format_opt->count() > 0;
    if (report_kallsyms_opt->count()) report.kallsyms = report_kallsyms == "none" ? std::string() : report_kallsyms;
    if (report.inlines && report.format != "folded") {
      std::fprintf(stderr, "framewalk report: --inlines is for --format=folded (pprof output has inline frames always)\n");
      return 2;
    }
    return framewalk::tools::run_report_command(report);
  }
  if (profile_cmd->parsed()) return framewalk::tools::run_profile_command(profile);
  if (addr2line_cmd->parsed()) return framewalk::tools::run_addr2line_command(addr2line);
  if (record_cmd->parsed()) return framewalk::tools::run_record_command(record);
  if (stack_cmd->parsed()) {
    if (stack.pid <= 0 && stack.core.empty() && stack.snapshot.empty()) {
      std::fprintf(stderr, "framewalk stack: give -p PID, --core FILE or --snapshot DIR\n");
      return 2;
    }
    stack.debuginfod = !no_debuginfod;
    return framewalk::tools::run_stack_command(stack);
  }
  return 2;
}
