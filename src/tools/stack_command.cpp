#include "tools/stack_command.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "arch/machine.hpp"
#include "base/clock.hpp"
#include "elf/debuginfod.hpp"
#include "render/stack_text.hpp"
#include "symbol/perf_map.hpp"
#include "target/core_target.hpp"
#include "target/live_target.hpp"
#include "target/snapshot_target.hpp"
#include "tools/messages.hpp"
#include "walk/stack_dump.hpp"

namespace framewalk::tools {

namespace {

// SIGINT, SIGTERM, SIGHUP (and SIGPIPE, a closed output) release every
// thread framewalk holds, then end it with 128+signal: a target is never
// left stopped.
void release_and_exit(int sig) {
  release_held_threads();
  _exit(128 + sig);
}

void release_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = release_and_exit;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, s);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaction(s, &sa, nullptr);
}

StackRenderOptions render_options(const StackCommandOptions& options) {
  StackRenderOptions r;
  r.json = options.format == "json";
  r.verbose = options.verbose;
  r.source_lines = options.source_lines;
  r.inlines = options.inlines;
  r.modules = options.modules;
  return r;
}

// --save-snapshot: the target's threads saved before they are walked.
bool save_snapshot(const StackCommandOptions& options, Target& target) {
  if (options.save_snapshot.empty()) return true;
  if (auto saved = write_snapshot(snapshot_of(target), options.save_snapshot); !saved) {
    report(options.save_snapshot, std::string("cannot write the snapshot: ") + open_error_text(saved.error()));
    return false;
  }
  return true;
}

// --save-snapshot: the names of the jit frames walked, kept with it.
bool save_snapshot_names(const StackCommandOptions& options, const StackDump& dump, const symbol::PerfMap* map) {
  if (options.save_snapshot.empty() || !map) return true;
  std::vector<symbol::PerfMap::Entry> names;
  for (const auto& t : dump.threads)
    for (const Frame& f : t.frames)
      if (!f.module || f.module->jit)
        if (const symbol::PerfMap::Entry* e = map->find(f.symbol_pc)) names.push_back(*e);
  if (names.empty()) return true;
  if (auto saved = save_jit_names(options.save_snapshot, std::move(names)); !saved) {
    report(snapshot_perf_map(options.save_snapshot), std::string("cannot write it: ") + open_error_text(saved.error()));
    return false;
  }
  return true;
}

// 0 when every thread was walked to its natural end, else 1. `perf_map`:
// names for code no module holds (a live process's JIT), or null.
int finish(const StackCommandOptions& options, const StackDump& dump, const symbol::PerfMap* perf_map = nullptr) {
  StackRenderOptions r = render_options(options);
  r.perf_map = perf_map;
  render_stacks(stdout, dump, r);
  bool all_natural = dump.threads_error.empty();
  for (const auto& t : dump.threads) all_natural &= natural_end(t);
  if (!dump.threads_error.empty()) report(dump.process_name.empty() ? std::to_string(dump.pid) : dump.process_name,
                                          dump.threads_error);
  return all_natural ? 0 : 1;
}

// The perf map that names jit code: --perf-map, else a live process's own
// (/tmp/perf-PID.map, where it has one); null for none. Unreadable files and
// malformed lines are reported.
std::unique_ptr<symbol::PerfMap> read_perf_map(const StackCommandOptions& options, uint32_t live_pid) {
  if (options.perf_map.empty() && live_pid == 0) return nullptr;
  auto map = std::make_unique<symbol::PerfMap>(options.perf_map.empty() ? symbol::PerfMap::path_of(live_pid)
                                                                        : options.perf_map);
  struct stat st {};
  if (!options.perf_map.empty() && ::stat(map->path().c_str(), &st) != 0)
    report(map->path(), std::string("cannot read it: ") + std::strerror(errno));
  else if (auto read = map->refresh(); !read)
    report(map->path(), std::string("cannot read it: ") + std::strerror(static_cast<int>(read.error().offset)));
  if (map->malformed()) report(map->path(), map->malformed_text());
  return map;
}

DumpOptions dump_options(const StackCommandOptions& options, RowCache* rows) {
  DumpOptions d;
  d.max_frames = options.max_frames;
  d.sources = options.source == "sframe" ? SourceOrder::kSframe
              : options.source == "cfi"  ? SourceOrder::kCfi
                                         : SourceOrder::kAuto;
  d.row_cache = rows;
  return d;
}

int run_live(const StackCommandOptions& options, RowCache* rows) {
  release_on_signals();
  LiveOptions lo;
  lo.freeze = options.freeze == "thread" ? FreezePolicy::kThread
              : options.freeze == "copy" ? FreezePolicy::kCopy
                                         : FreezePolicy::kProcess;
  lo.only_thread = options.tid;
  // Debug files that a debuginfod server has to send are fetched before
  // anything is stopped: a download must not lengthen the pause.
  lo.load_before_stop = elf::debuginfod_enabled() && std::getenv("DEBUGINFOD_URLS");
  const bool timing = std::getenv("FRAMEWALK_TIMING") != nullptr;
  uint64_t t_last = monotonic_ns();
  auto phase = [&](const char* name, const std::string& note) {
    if (!timing) return;
    const uint64_t t = monotonic_ns();
    std::fprintf(stderr, "framewalk: timing: %-14s %8.3f ms%s\n", name, static_cast<double>(t - t_last) / 1e6,
                 note.c_str());
    t_last = t;
  };
  if (timing) lo.on_step = phase;
  auto target = LiveTarget::open(options.pid, lo, nullptr);
  if (!target) {
    std::fprintf(stderr, "framewalk: %d: %s\n", options.pid, thread_error_text(target.error()).c_str());
    return 2;
  }
  if (!save_snapshot(options, **target)) return 2;
  const StackDump dump = dump_stacks(**target, dump_options(options, rows));
  phase("unwind", "");
  bool any = false;
  for (const auto& t : dump.threads) any |= t.error.empty();
  if (!any && !dump.threads.empty() && dump.threads[0].error.find("not permitted") != std::string::npos) {
    std::fprintf(stderr, "framewalk: %d: %s\n", options.pid, dump.threads[0].error.c_str());
    return 2;
  }
  for (const auto& w : (*target)->warnings()) std::fprintf(stderr, "framewalk: %s\n", w.c_str());
  // A JIT's names for its code, read after the process was let go.
  const auto perf_map = read_perf_map(options, static_cast<uint32_t>(options.pid));
  // And the names its jitdump gives (after the map's lines: they win).
  if (const JitdumpFile* jitdump = (*target)->jitdump()) perf_map->add_jitdump(jitdump->dump);
  if (!save_snapshot_names(options, dump, perf_map.get())) return 2;
  return finish(options, dump, perf_map.get());
}

int run_core(const StackCommandOptions& options, RowCache* rows) {
  CoreOptions co;
  co.exe = options.exe;
  co.sysroot = options.sysroot;
  co.jitdump = options.jitdump;
  auto core = CoreFile::open(options.core, co);
  if (!core) {
    std::fprintf(stderr, "framewalk: %s: %s\n", options.core.c_str(), core_open_error_text(options.core, core.error()).c_str());
    return 2;
  }
  if (!options.exe.empty()) {
    if (auto exe = elf::ElfFile::open(options.exe); !exe) {
      std::fprintf(stderr, "framewalk: %s: cannot open the executable\n", options.exe.c_str());
      return 2;
    }
  }
  if ((*core)->missing_bytes())
    std::fprintf(stderr, "framewalk: %s: truncated core: %llu bytes of its segments are missing\n",
                 options.core.c_str(), static_cast<unsigned long long>((*core)->missing_bytes()));
  CoreTarget target(std::move(*core), nullptr);
  for (const auto& w : target.warnings()) std::fprintf(stderr, "framewalk: %s\n", w.c_str());
  // -t TID: that thread alone.
  class OneThread final : public Target {
   public:
    OneThread(Target& inner, pid_t tid) : inner_(inner), tid_(tid) {}
    MachineKey machine() const override { return inner_.machine(); }
    pid_t pid() const override { return inner_.pid(); }
    std::string process_name() const override { return inner_.process_name(); }
    Result<pid_t> next_thread(pid_t after) override {
      for (;;) {
        FW_TRY(pid_t t, inner_.next_thread(after));
        if (t == 0 || t == tid_) return t;
        after = t;
      }
    }
    Result<void> initial_registers(pid_t tid, arch::RegisterFile* out) override {
      return inner_.initial_registers(tid, out);
    }
    Memory& memory() override { return inner_.memory(); }
    const ModuleMap& modules() override { return inner_.modules(); }
    std::optional<uint64_t> pointer_auth_mask() override { return inner_.pointer_auth_mask(); }

   private:
    Target& inner_;
    pid_t tid_;
  };
  OneThread one(target, options.tid);
  Target& walked = options.tid ? static_cast<Target&>(one) : target;
  if (!save_snapshot(options, walked)) return 2;
  auto perf_map = read_perf_map(options, 0);
  // The names its jitdump gives, where the core's process wrote one.
  if (const JitdumpFile* jitdump = target.jitdump()) {
    if (!perf_map) perf_map = std::make_unique<symbol::PerfMap>("");
    perf_map->add_jitdump(jitdump->dump);
  }
  const StackDump dump = dump_stacks(walked, dump_options(options, rows));
  if (!save_snapshot_names(options, dump, perf_map.get())) return 2;
  return finish(options, dump, perf_map.get());
}

int run_snapshot(const StackCommandOptions& options, RowCache* rows) {
  std::string problem;
  auto data = read_snapshot(options.snapshot, &problem);
  if (!data) {
    std::fprintf(stderr, "framewalk: %s\n", problem.c_str());
    return 2;
  }
  SnapshotTarget target(std::move(*data), nullptr, options.sysroot);
  for (const auto& m : target.modules().modules())
    if (!m->data && !m->jit && m->name != "[vdso]")
      std::fprintf(stderr, "framewalk: %s%s: %s (frames in it get no unwind info)\n", options.sysroot.c_str(),
                   m->name.c_str(), m->problem.c_str());
  // The names its jit code had, saved with it, unless --perf-map names others.
  StackCommandOptions named = options;
  struct stat st {};
  if (named.perf_map.empty() && ::stat(snapshot_perf_map(options.snapshot).c_str(), &st) == 0)
    named.perf_map = snapshot_perf_map(options.snapshot);
  const auto perf_map = read_perf_map(named, 0);
  return finish(options, dump_stacks(target, dump_options(options, rows)), perf_map.get());
}

}  // namespace

int run_stack_command(const StackCommandOptions& options) {
  // Missing debug files from debuginfod, as eu-stack does (only when
  // DEBUGINFOD_URLS names a server).
  elf::enable_debuginfod(options.debuginfod);
  RowCache rows;  // rows found for one thread serve the others
  if (!options.snapshot.empty()) return run_snapshot(options, &rows);
  return options.core.empty() ? run_live(options, &rows) : run_core(options, &rows);
}

}  // namespace framewalk::tools
