#include "tools/record_command.hpp"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "arch/machine.hpp"
#include "elf/section_cache.hpp"
#include "profile/recorder.hpp"
#include "record/perf_events.hpp"
#include "tools/messages.hpp"

namespace framewalk::tools {

namespace {

std::atomic<bool> g_stop{false};
void on_stop_signal(int) { g_stop.store(true); }

}  // namespace

CLI::App* add_record_command(CLI::App& app, RecordCommandOptions& o) {
  auto* cmd = app.add_subcommand(
      "record",
      "Sample a process and unwind each sample at once: the stacks, not stack copies, in a .fwprof recording "
      "(framewalk report reads it)");
  cmd->add_option("-F,--frequency", o.frequency, "samples a second of each thread's CPU time (default 999)")
      ->check(CLI::Range(1u, 100000u));
  cmd->add_option("-o,--output", o.output, "the recording to write (default framewalk.fwprof)");
  cmd->add_option("-p,--pid", o.pids, "record these running processes, PID[,PID...] (every thread, and those they create)")
      ->delimiter(',');
  cmd->add_flag("-a,--all-cpus", o.all_cpus,
                "record every process of the machine (needs root, CAP_PERFMON or perf_event_paranoid <= 0)");
  cmd->add_option("-e,--event", o.event,
                  "what to sample on (default cpu-clock): " + record::event_names() +
                      " (the last four need a hardware PMU)");
  cmd->add_option("--duration", o.duration, "stop after this many seconds (default: when the target ends, or Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--stack-size", o.stack_size,
                  "bytes of user stack copied into each sample for the unwinder (default 16384, at most 65528)")
      ->check(CLI::Range(64u, 65528u));
  cmd->add_option("--max-frames", o.max_frames, "frames a stack keeps at most (default 1024)")
      ->check(CLI::Range(1u, 100000u));
  cmd->add_option("--mmap-pages", o.ring_pages, "pages of each CPU's ring buffer (a power of two; default 1024: 4 MiB)");
  cmd->add_flag("--no-symbols", o.no_symbols, "do not put function names and lines in the file (smaller; report names nothing)");
  cmd->add_flag("--compress", o.compress, "zstd-compress the file's chunks");
  cmd->add_flag("--off-cpu", o.off_cpu,
                "also time spent blocked: a sample where each thread leaves the CPU, weighed by the time until it "
                "runs again (report --kind=off-cpu)");
  cmd->add_flag("-q,--quiet", o.quiet, "no status line");
  cmd->add_option("command", o.command, "a command to run and record (after --)");
  cmd->footer(
      "Examples:\n"
      "  framewalk record -- ./prog args        # run prog, record it and its children\n"
      "  framewalk record -p PID --duration 10  # ten seconds of a running process\n"
      "  framewalk record -a --duration 5       # five seconds of the whole machine\n"
      "  framewalk record --off-cpu -- ./server # where it runs and where it waits\n"
      "  framewalk report framewalk.fwprof      # what it spent its time on\n"
      "Needs perf_event_open: root, CAP_PERFMON, or kernel.perf_event_paranoid <= 2 for your own processes.");
  return cmd;
}

int run_record_command(const RecordCommandOptions& o) {
  // Compressed debug sections inflated once, then mapped from the cache, as
  // addr2line does (docs/addr2line.md): naming frames costs less that way.
  elf::set_section_cache(elf::section_cache_from_environment());
  if (int(!o.pids.empty()) + int(o.all_cpus) + int(!o.command.empty()) != 1) {
    std::fprintf(stderr, "framewalk record: give -p PID, -a or a command after --, one of them\n");
    return 2;
  }
  const std::optional<record::EventChoice> event = record::event_by_name(o.event);
  if (!event) {
    std::fprintf(stderr, "framewalk record: -e %s: not an event framewalk knows (%s)\n", o.event.c_str(),
                 record::event_names().c_str());
    return 2;
  }
  if (o.ring_pages == 0 || (o.ring_pages & (o.ring_pages - 1))) {
    std::fprintf(stderr, "framewalk record: --mmap-pages must be a power of two, not %u\n", o.ring_pages);
    return 2;
  }
  const arch::Machine& host = arch::host_machine();
  record::SamplingOptions so;
  so.frequency = o.frequency;
  so.stack_bytes = o.stack_size & ~7u;
  so.user_registers = host.perf_sample_register_mask();
  so.ring_pages = o.ring_pages;
  so.off_cpu = o.off_cpu;
  so.event = *event;
  so.system_wide = o.all_cpus;

  std::unique_ptr<record::Command> command;
  std::vector<pid_t> pids = o.pids;
  if (!o.command.empty()) {
    auto started = record::Command::start(o.command);
    if (!started) {
      std::fprintf(stderr, "framewalk record: %s: %s\n", o.command[0].c_str(),
                   std::strerror(static_cast<int>(started.error().offset)));
      return 1;
    }
    command = std::move(*started);
    pids = {command->pid()};
    so.enable_on_exec = true;
  }
  auto sampler = record::Sampler::open(pids, so);
  if (!sampler) {
    const std::string what = o.all_cpus ? std::string("every CPU")
                             : sampler.error().code == ErrorCode::kNoSuchProcess
                                 ? "process " + std::to_string(sampler.error().offset)
                                 : "process " + std::to_string(pids[0]);
    std::fprintf(stderr, "framewalk record: %s: %s\n", what.c_str(),
                 record::sampling_error_text(sampler.error(), event->name).c_str());
    return 1;  // a command never released is killed before its exec
  }
  const int fd = ::open(o.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    report(o.output, std::strerror(errno));
    return 1;
  }
  // Ctrl-C, TERM and HUP end the recording with a complete file; the target
  // is left as it was (a command run here gets the terminal's signals too).
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  if (command) {
    if (const int err = command->release()) {
      std::fprintf(stderr, "framewalk record: %s: %s\n", o.command[0].c_str(), std::strerror(err));
      ::close(fd);
      ::unlink(o.output.c_str());
      return 1;
    }
  }
  profile::RecordOptions ro;
  ro.max_frames = o.max_frames;
  ro.symbols = !o.no_symbols;
  ro.compress = o.compress;
  ro.event = event->name;
  ro.event_is_clock = event->clock;
  if (!o.command.empty()) {
    ro.command_line = o.command;
  } else if (o.all_cpus) {
    ro.command_line = {"-a"};
  } else {
    std::string list;
    for (pid_t p : pids) list += (list.empty() ? "" : ",") + std::to_string(p);
    ro.command_line = {"-p", list};
  }
  // What ran before the recording: its mappings and threads from /proc.
  const std::vector<pid_t> existing = o.all_cpus ? record::all_processes() : command ? std::vector<pid_t>{} : pids;
  const auto start = std::chrono::steady_clock::now();
  const bool status_line = !o.quiet && isatty(2);
  auto keep_going = [&] {
    if (g_stop.load()) return false;
    if (o.duration > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= o.duration)
      return false;
    return true;
  };
  auto on_status = [&](const profile::RecordStatus& s) {
    if (!status_line) return;
    std::fprintf(stderr, "\rframewalk record: %.1f s, %llu samples (%.0f/s), %llu lost, %llu walks complete, %llu KiB   ",
                 s.seconds, static_cast<unsigned long long>(s.samples), s.seconds > 0 ? s.samples / s.seconds : 0.0,
                 static_cast<unsigned long long>(s.lost), static_cast<unsigned long long>(s.complete),
                 static_cast<unsigned long long>(s.bytes_written / 1024));
  };
  auto recorded = profile::record_samples(**sampler, existing, ro, fd, keep_going, on_status);
  if (status_line) std::fprintf(stderr, "\n");
  (*sampler).reset();  // the events closed before the command is waited for
  ::close(fd);
  int exit_status = 0;
  if (command) {
    // The command goes on after Ctrl-C only if it ignored it: wait for it.
    const int st = command->wait();
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
      std::fprintf(stderr, "framewalk record: %s exited with status %d\n", o.command[0].c_str(), WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
      std::fprintf(stderr, "framewalk record: %s was killed by signal %d (%s)\n", o.command[0].c_str(), WTERMSIG(st),
                   strsignal(WTERMSIG(st)));
  }
  if (!recorded) {
    report(o.output, std::string("cannot write: ") + std::strerror(static_cast<int>(recorded.error().offset)));
    return 1;
  }
  const profile::RecordResult& r = *recorded;
  for (const std::string& w : r.warnings) std::fprintf(stderr, "framewalk record: %s\n", w.c_str());
  if (r.read_error) std::fprintf(stderr, "framewalk record: the sample stream: %s\n", r.read_error->c_str());
  const profile::RecordStatus& s = r.status;
  std::fprintf(stderr,
               "framewalk record: %llu samples%s in %.2f s written to %s (%llu bytes, %.1f a sample); %llu lost; "
               "walks: %llu complete, %llu stopped early",
               static_cast<unsigned long long>(s.samples),
               o.off_cpu ? (" (" + std::to_string(s.switch_samples) + " off-CPU)").c_str() : "", s.seconds,
               o.output.c_str(),
               static_cast<unsigned long long>(s.bytes_written),
               s.samples ? static_cast<double>(s.bytes_written) / static_cast<double>(s.samples) : 0.0,
               static_cast<unsigned long long>(s.lost), static_cast<unsigned long long>(s.complete),
               static_cast<unsigned long long>(s.truncated));
  if (s.truncated) {
    std::fprintf(stderr, " (");
    bool first = true;
    for (const auto& [reason, count] : r.stop_reasons) {
      if (reason == "outermost" || reason == "cannot-unwind") continue;
      std::fprintf(stderr, "%s%s %llu", first ? "" : ", ", reason.c_str(), static_cast<unsigned long long>(count));
      first = false;
    }
    std::fprintf(stderr, ")");
  }
  std::fprintf(stderr, "\n");
  // What recording cost the machine beside the program.
  std::fprintf(stderr,
               "framewalk record: its own CPU time: %.0f ms reading and unwinding (%.1f us a sample), %.0f ms naming "
               "frames meanwhile (idle priority), %.0f ms after\n",
               s.sampling_cpu_seconds * 1e3,
               s.samples ? s.sampling_cpu_seconds * 1e6 / static_cast<double>(s.samples) : 0.0,
               s.naming_cpu_seconds * 1e3, s.finishing_cpu_seconds * 1e3);
  return exit_status;
}

}  // namespace framewalk::tools
