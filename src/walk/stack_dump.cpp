#include "walk/stack_dump.hpp"

#include <unordered_set>

#include "base/text.hpp"

namespace framewalk {

Result<WalkResult> walk_thread(Target& target, pid_t tid, FunctionRef<bool(const Frame&)> on_frame,
                               const UnwindOptions& options) {
  arch::RegisterFile regs;
  if (auto got = target.initial_registers(tid, &regs); !got) return got.error();
  Unwinder unwinder(target.modules(), target.memory(), target.machine());
  if (auto mask = target.pointer_auth_mask()) unwinder.set_pointer_auth_mask(*mask);
  const WalkResult result = unwinder.walk(regs, on_frame, options);
  target.thread_detach(tid);
  return result;
}

StackDump dump_stacks(Target& target, const DumpOptions& options) {
  StackDump dump;
  dump.pid = target.pid();
  dump.machine = target.machine();
  UnwindOptions o;
  o.max_frames = options.max_frames;
  o.sources = options.sources;
  o.row_cache = options.row_cache;
  std::unordered_set<pid_t> seen;
  pid_t tid = 0;
  for (;;) {
    auto next = target.next_thread(tid);
    if (!next) {
      dump.threads_error = thread_error_text(next.error());
      break;
    }
    if (*next == 0) break;
    tid = *next;
    // A back-end that lists a thread twice would never end the list.
    if (!seen.insert(tid).second) {
      dump.threads_error = "thread " + std::to_string(tid) + " listed twice: the thread list ends there";
      break;
    }
    ThreadStack t;
    t.tid = tid;
    t.name = target.thread_name(tid);
    auto walked = walk_thread(
        target, tid,
        [&](const Frame& f) {
          t.frames.push_back(f);
          t.frames.back().registers = nullptr;
          return true;
        },
        o);
    if (walked) t.walk = *walked;
    else t.error = thread_error_text(walked.error());
    dump.threads.push_back(std::move(t));
  }
  target.detach();
  dump.pause_ns = target.pause_ns();
  dump.process_name = target.process_name();
  return dump;
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
    case StopReason::kBadUnwindInfo:
      s += " for " + hex(w.address) + ": " + to_string(w.error);
      if (w.register_number) s += " (register " + std::to_string(*w.register_number) + ")";
      break;
    case StopReason::kUnsupportedMachine: s += " (e_machine " + std::to_string(w.address) + ")"; break;
    case StopReason::kCannotUnwind: s += " at " + hex(w.address) + " (EXIDX_CANTUNWIND)"; break;
    default: break;
  }
  return s;
}

bool natural_end(const ThreadStack& t) {
  return t.error.empty() &&
         (t.walk.reason == StopReason::kOutermost || t.walk.reason == StopReason::kCannotUnwind);
}

}  // namespace framewalk
