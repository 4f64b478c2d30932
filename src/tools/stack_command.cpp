#include "tools/stack_command.hpp"

#include "base/clock.hpp"
#include "elf/debuginfod.hpp"

#include <sys/ptrace.h>
#include <time.h>


#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "arch/machine.hpp"
#include "dump/cfi_text.hpp"
#include "dump/text_writer.hpp"
#include "target/cached_memory.hpp"
#include "target/core_file.hpp"
#include "target/proc_maps.hpp"
#include "target/ptrace_snapshot.hpp"
#include "target/ptrace_target.hpp"
#include "unwind/symbolize.hpp"
#include "unwind/unwinder.hpp"
#include "tools/messages.hpp"

namespace framewalk::tools {

namespace {

struct ThreadResult {
  pid_t tid = 0;
  std::string name;
  std::vector<Frame> frames;
  WalkResult walk;
  std::string error;  // the thread could not be read at all
};


SourceOrder g_sources = SourceOrder::kAuto;

// Rows found for one thread serve the others: one cache per dump.
RowCache* g_row_cache = nullptr;

void walk_thread(const Unwinder& unwinder, const arch::RegisterFile& regs, size_t max_frames, ThreadResult& out) {
  UnwindOptions o;
  o.max_frames = max_frames;
  o.sources = g_sources;
  o.row_cache = g_row_cache;
  out.walk = unwinder.walk(regs, [&](const Frame& f) {
    out.frames.push_back(f);
    return true;
  }, o);
}

std::string stop_text(const WalkResult& w) {
  std::string s = to_string(w.reason);
  switch (w.reason) {
    case StopReason::kBadMemory: s += " at " + hex(w.address); break;
    case StopReason::kNoUnwindInfo:
      s += " for " + hex(w.address);
      if (w.sframe_miss != SframeMiss::kNone) s += std::string(" (") + to_string(w.sframe_miss) + ")";
      break;
    case StopReason::kCfaDidNotAdvance: s += " (sp " + hex(w.address) + ")"; break;
    case StopReason::kBadUnwindInfo: s += " for " + hex(w.address) + ": " + to_string(w.error); break;
    case StopReason::kUnsupportedMachine: s += " (e_machine " + std::to_string(w.address) + ")"; break;
    case StopReason::kCannotUnwind: s += " at " + hex(w.address) + " (EXIDX_CANTUNWIND)"; break;
    default: break;
  }
  return s;
}

// An undefined return address, or a function the tables declare cannot be
// unwound (a thread's start on ARM): the stack's end as its code declares it.
bool natural_end(const ThreadResult& t) {
  return t.error.empty() &&
         (t.walk.reason == StopReason::kOutermost || t.walk.reason == StopReason::kCannotUnwind);
}

// `pc_digits`: the hex digits of an address of the target's machine (8 on 32-bit ones).
void print_text(dump::TextWriter& w, pid_t pid, const std::string& process_name,
                const std::vector<ThreadResult>& threads, const StackCommandOptions& options, unsigned pc_digits) {
  w.str("PID ").dec(pid).str(" - ").str(process_name.empty() ? "process" : process_name).ch('\n');
  for (const ThreadResult& t : threads) {
    w.str("TID ").dec(t.tid);
    if (options.verbose && !t.name.empty()) w.str(" \"").str(t.name).ch('"');
    w.str(":\n");
    if (!t.error.empty()) {
      w.str("  (").str(t.error).str(")\n");
      continue;
    }
    size_t number_of_frame = 0;
    auto frame_number = [&] {
      const size_t number = w.mark();
      w.ch('#').udec(number_of_frame++).pad_from(number, 3);
    };
    auto source_line = [&](const SourceFrame& sf) {
      if (!options.source_lines || sf.file.empty()) return;
      w.str("    ").str(sf.file).ch(':').udec(sf.line);
      if (sf.column) w.ch(':').udec(sf.column);
      w.ch('\n');
    };
    // A physical frame, or (`tailcall`) one a tail call left off the stack.
    auto print_frame = [&](const Frame& f, bool tailcall) {
      std::vector<SourceFrame> sources;
      if (options.source_lines || options.inlines) sources = source_frames(f, options.inlines);
      for (size_t k = 0; k + 1 < sources.size(); ++k) {  // inlined calls, innermost first
        frame_number();
        w.str(" 0x").hex(f.pc, pc_digits).ch(' ').str(sources[k].function.empty() ? "??" : sources[k].function);
        w.str(" [inline]\n");
        source_line(sources[k]);
      }
      frame_number();
      w.str(" 0x").hex(f.pc, pc_digits);
      const FrameSymbol s = symbolize(f);
      if (s.found) {
        w.ch(' ').str(s.function);
        if (s.offset) w.str("+0x").hex(s.offset);
      } else {
        w.str(" ??");
      }
      if (options.modules && f.module) w.str(" - ").str(f.module->name);
      if (tailcall) {
        w.str(" [tailcall]");
      } else if (options.verbose) {
        w.str(" [").str(to_string(f.source));
        if (f.sframe_miss != SframeMiss::kNone) w.str(": ").str(to_string(f.sframe_miss));
        w.ch(']');
      }
      w.ch('\n');
      if (!sources.empty()) source_line(sources.back());
    };
    for (size_t i = 0; i < t.frames.size(); ++i) {
      print_frame(t.frames[i], false);
      if ((options.source_lines || options.inlines) && i + 1 < t.frames.size())
        for (const Frame& tail : tail_call_frames(t.frames[i], t.frames[i + 1])) print_frame(tail, true);
    }
    if (options.verbose || !natural_end(t)) w.str("  stop: ").str(stop_text(t.walk)).ch('\n');
  }
}

void json_source(dump::TextWriter& w, const SourceFrame& sf) {
  if (sf.file.empty()) return;
  w.str(",\"file\":\"").str(dump::json_escape(sf.file)).str("\",\"line\":").udec(sf.line);
  if (sf.column) w.str(",\"column\":").udec(sf.column);
}

void print_json(dump::TextWriter& w, pid_t pid, const std::vector<ThreadResult>& threads, uint64_t pause_ns,
                const StackCommandOptions& options) {
  w.str("{\"pid\":").dec(pid);
  if (pause_ns) w.str(",\"pause_us\":").udec(pause_ns / 1000);
  w.str(",\"threads\":[");
  for (size_t ti = 0; ti < threads.size(); ++ti) {
    const ThreadResult& t = threads[ti];
    if (ti) w.ch(',');
    w.str("\n{\"tid\":").dec(t.tid).str(",\"name\":\"").str(dump::json_escape(t.name)).str("\",\"frames\":[");
    bool first = true;
    // A physical frame, or (`tailcall`) one a tail call left off the stack.
    auto print_frame = [&](const Frame& f, bool tailcall) {
      std::vector<SourceFrame> sources;
      if (options.source_lines || options.inlines) sources = source_frames(f, options.inlines);
      for (size_t k = 0; k + 1 < sources.size(); ++k) {  // inlined calls, innermost first
        if (!first) w.ch(',');
        first = false;
        w.str("\n  {\"pc\":\"0x").hex(f.pc).str("\",\"function\":");
        if (sources[k].function.empty()) w.str("null");
        else w.ch('"').str(dump::json_escape(sources[k].function)).ch('"');
        w.str(",\"inline\":true,\"module\":");
        if (f.module) w.ch('"').str(dump::json_escape(f.module->name)).ch('"'); else w.str("null");
        if (options.source_lines) json_source(w, sources[k]);
        w.ch('}');
      }
      if (!first) w.ch(',');
      first = false;
      const FrameSymbol s = symbolize(f);
      w.str("\n  {\"pc\":\"0x").hex(f.pc).str("\",\"function\":");
      if (s.found) w.ch('"').str(dump::json_escape(s.function)).ch('"'); else w.str("null");
      w.str(",\"offset\":").udec(s.offset).str(",\"module\":");
      if (f.module) w.ch('"').str(dump::json_escape(f.module->name)).ch('"'); else w.str("null");
      if (tailcall) {
        w.str(",\"tailcall\":true");
      } else {
        w.str(",\"source\":\"").str(to_string(f.source)).ch('"');
        if (f.sframe_miss != SframeMiss::kNone) w.str(",\"sframe_miss\":\"").str(to_string(f.sframe_miss)).ch('"');
        w.str(",\"activation\":").str(f.activation ? "true" : "false")
            .str(",\"sp\":\"0x").hex(f.sp).ch('"');
      }
      if (options.source_lines && !sources.empty()) json_source(w, sources.back());
      w.ch('}');
    };
    for (size_t i = 0; i < t.frames.size(); ++i) {
      print_frame(t.frames[i], false);
      if ((options.source_lines || options.inlines) && i + 1 < t.frames.size())
        for (const Frame& tail : tail_call_frames(t.frames[i], t.frames[i + 1])) print_frame(tail, true);
    }
    w.str("],\"stop\":\"");
    if (!t.error.empty()) w.str("unreadable\",\"error\":\"").str(dump::json_escape(t.error)).ch('"');
    else w.str(to_string(t.walk.reason)).str("\",\"stop_detail\":\"").str(dump::json_escape(stop_text(t.walk))).ch('"');
    w.ch('}');
  }
  w.str("]}\n");
}

std::string attach_error_text(const ThreadStop& s) {
  switch (s.error) {
    case AttachError::kNotPermitted:
      return "ptrace not permitted (" + std::string(std::strerror(s.error_number)) +
             "; see /proc/sys/kernel/yama/ptrace_scope, or run as the process's owner or root)";
    case AttachError::kGone: return "thread exited";
    case AttachError::kNoSuchProcess: return "no such process";
    default: return std::strerror(s.error_number);
  }
}

int finish(const StackCommandOptions& options, pid_t pid, const std::string& name,
           const std::vector<ThreadResult>& threads, uint64_t pause_ns, unsigned pc_digits = 16) {
  dump::TextWriter w(stdout);
  if (options.format == "json") print_json(w, pid, threads, pause_ns, options);
  else print_text(w, pid, name, threads, options, pc_digits);
  if (options.verbose && pause_ns && options.format != "json")
    w.str("process stopped for ").udec(pause_ns / 1000).str(" us in total\n");
  w.flush();
  bool all_natural = true;
  for (const auto& t : threads) all_natural &= natural_end(t);
  return all_natural ? 0 : 1;
}

int run_live(const StackCommandOptions& options) {
  std::string why;
  if (!process_exists(options.pid, &why)) {
    std::fprintf(stderr, "framewalk: %d: %s\n", options.pid, why.c_str());
    return 2;
  }
  install_detach_on_signals();
  PtraceSession session(options.pid);
  CachedMemory memory(session.memory());
  ModuleCache cache;
  std::vector<pid_t> tids = options.tid ? std::vector<pid_t>{options.tid} : session.threads();
  std::vector<ThreadResult> results(tids.size());
  std::vector<arch::RegisterFile> regs(tids.size());
  std::vector<bool> have(tids.size(), false);
  uint64_t pause_ns = 0;
  // Frames point into the module map: it lives until the output is written.
  ModuleMap modules;
  std::unique_ptr<PtraceSnapshot> snapshot;
  std::unique_ptr<Memory> snapshot_memory;
  std::unique_ptr<CachedMemory> snapshot_cached;

  const bool timing = std::getenv("FRAMEWALK_TIMING") != nullptr;
  uint64_t t_last = monotonic_ns();
  auto phase = [&](const char* name, const char* note = "") {
    if (!timing) return;
    const uint64_t t = monotonic_ns();
    std::fprintf(stderr, "framewalk: timing: %-14s %8.3f ms%s\n", name, static_cast<double>(t - t_last) / 1e6, note);
    t_last = t;
  };
  for (size_t i = 0; i < tids.size(); ++i) {
    results[i].tid = tids[i];
    results[i].name = thread_name(options.pid, tids[i]);
  }
  // A process's pointer authentication mask, from the first thread whose
  // registers are read (AArch64; the machine's default otherwise).
  std::optional<uint64_t> pointer_auth_mask;
  auto live_unwinder = [&](Memory& from) {
    Unwinder unwinder(modules, from, arch::host_machine().elf_machine());
    if (pointer_auth_mask) unwinder.set_pointer_auth_mask(*pointer_auth_mask);
    return unwinder;
  };
  auto read_registers = [&](size_t i, const ThreadStop& s) {
    if (s.error != AttachError::kNone) {
      results[i].error = attach_error_text(s);
      return;
    }
    int err = 0;
    if (!session.registers(tids[i], &regs[i], &err)) {
      results[i].error = std::string("cannot read registers: ") + std::strerror(err);
      return;
    }
    have[i] = true;
    if (!pointer_auth_mask) pointer_auth_mask = session.pointer_auth_mask(tids[i]);
  };
  // The mappings are read before anything is stopped: they rarely change, and
  // reading them costs more than anything else in the pause.
  const auto maps = read_proc_maps(options.pid);
  phase("maps");
  // Debug files that a debuginfod server has to send are fetched before
  // anything is stopped: a download must not lengthen the pause.
  if (elf::debuginfod_enabled() && std::getenv("DEBUGINFOD_URLS")) {
    const ModuleMap early = modules_from_maps(options.pid, maps, cache, memory);
    for (const Module& m : early.modules())
      if (m.data) m.data->cfi();
    phase("debuginfod");
  }

  if (options.freeze == "thread") {
    // Least disturbance: each thread is stopped only while it is unwound.
    modules = modules_from_maps(options.pid, maps, cache, memory);
    for (size_t i = 0; i < tids.size(); ++i) {
      const uint64_t t0 = monotonic_ns();
      read_registers(i, session.stop(tids[i]));
      if (have[i]) {
        memory.invalidate();
        walk_thread(live_unwinder(memory), regs[i], options.max_frames, results[i]);
      }
      session.detach(tids[i]);
      pause_ns += monotonic_ns() - t0;
    }
  } else if (options.freeze == "copy") {
    // Stop every thread at once, copy registers and each stack's live part,
    // let the process go, then unwind the copies.
    snapshot = std::make_unique<PtraceSnapshot>(PtraceSnapshot::take(options.pid, tids, maps));
    pause_ns = snapshot->pause_ns();
    const auto& parts = snapshot->phases();
    phase("snapshot", (" (stopped " + std::to_string(pause_ns / 1000) + " us: stop " + std::to_string(parts.stop_ns / 1000) +
                       ", copy " + std::to_string(parts.copy_ns / 1000) + ", release " +
                       std::to_string(parts.release_ns / 1000) + ")").c_str());
    for (size_t i = 0; i < tids.size(); ++i) {
      const SnapshotThread& t = snapshot->threads()[i];
      if (t.error != AttachError::kNone) {
        ThreadStop s;
        s.tid = t.tid;
        s.error = t.error;
        s.error_number = t.error_number;
        results[i].error = attach_error_text(s);
        continue;
      }
      regs[i] = t.registers;
      have[i] = true;
    }
    snapshot_memory = snapshot->memory(session.memory());
    snapshot_cached = std::make_unique<CachedMemory>(*snapshot_memory);
    modules = modules_from_maps(options.pid, maps, cache, *snapshot_cached);
    phase("modules");
    {
      const Unwinder unwinder = live_unwinder(*snapshot_cached);
      for (size_t i = 0; i < tids.size(); ++i)
        if (have[i]) walk_thread(unwinder, regs[i], options.max_frames, results[i]);
    }
    // Threads started meanwhile were not in the snapshot: each is stopped and
    // unwound on its own.
    if (!options.tid) {
      const Unwinder unwinder = live_unwinder(memory);
      for (pid_t t : session.threads()) {
        if (std::find(tids.begin(), tids.end(), t) != tids.end()) continue;
        tids.push_back(t);
        results.emplace_back();
        results.back().tid = t;
        results.back().name = thread_name(options.pid, t);
        regs.emplace_back();
        have.push_back(false);
        read_registers(tids.size() - 1, session.stop(t));
        if (have.back()) {
          memory.invalidate();
          walk_thread(unwinder, regs.back(), options.max_frames, results.back());
        }
        session.detach(t);
      }
    }
    phase("unwind");
  } else {
    // A consistent snapshot: every thread stays stopped until all are unwound.
    // Seizing does not stop a thread: the pause starts with the interrupts.
    auto stops = session.seize_all(tids);
    phase("seize");
    const uint64_t t0 = monotonic_ns();
    session.interrupt_all(stops);
    for (size_t i = 0; i < tids.size(); ++i) read_registers(i, stops[i]);
    // Threads started while we were stopping the others.
    if (!options.tid) {
      std::vector<pid_t> late;
      for (pid_t t : session.threads())
        if (std::find(tids.begin(), tids.end(), t) == tids.end()) late.push_back(t);
      const auto late_stops = session.stop_all(late);
      for (size_t k = 0; k < late.size(); ++k) {
        tids.push_back(late[k]);
        results.emplace_back();
        results.back().tid = late[k];
        results.back().name = thread_name(options.pid, late[k]);
        regs.emplace_back();
        have.push_back(false);
        read_registers(tids.size() - 1, late_stops[k]);
      }
    }
    phase("stop");
    modules = modules_from_maps(options.pid, maps, cache, memory);
    phase("modules");
    const Unwinder unwinder = live_unwinder(memory);
    for (size_t i = 0; i < tids.size(); ++i)
      if (have[i]) walk_thread(unwinder, regs[i], options.max_frames, results[i]);
    phase("unwind");
    session.detach_all();
    pause_ns = monotonic_ns() - t0;
    phase("detach");
  }
  bool any = false;
  for (auto& r : results) any |= r.error.empty();
  if (!any && !results.empty() && results[0].error.find("not permitted") != std::string::npos) {
    std::fprintf(stderr, "framewalk: %d: %s\n", options.pid, results[0].error.c_str());
    return 2;
  }
  std::string comm = thread_name(options.pid, options.pid);
  return finish(options, options.pid, comm, results, pause_ns);
}

// A core of a machine framewalk does not unwind: which machine it is.
std::string foreign_core_text(const std::string& path, const Error& e) {
  std::string machine = "e_machine " + std::to_string(e.offset);
  if (auto f = elf::ElfFile::open(path)) machine = elf::machine_name((*f)->machine(), (*f)->is_64(), (*f)->endian());
  return "a core file of " + machine + ": framewalk cannot unwind " + machine + " yet (it unwinds " +
         arch::supported_machine_names() + ")";
}

int run_core(const StackCommandOptions& options) {
  CoreOptions co;
  co.exe = options.exe;
  co.sysroot = options.sysroot;
  auto core = CoreFile::open(options.core, co);
  if (!core) {
    const Error e = core.error();
    std::string what = to_string(e.code);
    if (e.code == ErrorCode::kIoError) what = std::strerror(static_cast<int>(e.offset));
    else if (e.code == ErrorCode::kUnsupportedElf || e.code == ErrorCode::kBadElf) what = "not a core file";
    else if (e.code == ErrorCode::kUnsupportedMachine) what = foreign_core_text(options.core, e);
    else if (e.code == ErrorCode::kNotFound) what = "no threads (NT_PRSTATUS) in the core";
    else what += " at offset " + hex(e.offset);
    std::fprintf(stderr, "framewalk: %s: %s\n", options.core.c_str(), what.c_str());
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
  ModuleCache cache;
  std::vector<std::string> warnings;
  CachedMemory memory((*core)->memory());  // frames point into `modules`: both live to the end
  const ModuleMap modules = (*core)->modules(cache, &warnings);
  for (const auto& w : warnings) std::fprintf(stderr, "framewalk: %s\n", w.c_str());
  Unwinder unwinder(modules, memory, (*core)->machine());
  if (auto mask = (*core)->pointer_auth_mask()) unwinder.set_pointer_auth_mask(*mask);
  std::vector<ThreadResult> results;
  for (const CoreThread& t : (*core)->threads()) {
    if (options.tid && t.tid != options.tid) continue;
    ThreadResult r;
    r.tid = t.tid;
    r.name = (*core)->process_name();
    walk_thread(unwinder, t.registers, options.max_frames, r);
    results.push_back(std::move(r));
  }
  const arch::Machine* machine = arch::machine_for((*core)->machine());
  return finish(options, (*core)->pid(), (*core)->process_name(), results, 0,
                machine ? 2u * machine->address_size() : 16u);
}

}  // namespace

int run_stack_command(const StackCommandOptions& options) {
  g_sources = options.source == "sframe" ? SourceOrder::kSframe
              : options.source == "cfi"  ? SourceOrder::kCfi
                                         : SourceOrder::kAuto;
  // Missing debug files from debuginfod, as eu-stack does (only when
  // DEBUGINFOD_URLS names a server).
  elf::enable_debuginfod(options.debuginfod);
  RowCache rows;  // keyed by the modules of this one dump
  g_row_cache = &rows;
  const int status = options.core.empty() ? run_live(options) : run_core(options);
  g_row_cache = nullptr;
  return status;
}

}  // namespace framewalk::tools
