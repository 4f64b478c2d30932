#include "render/stack_text.hpp"

#include "arch/machine.hpp"
#include "base/text.hpp"
#include "dump/text_writer.hpp"
#include "unwind/symbolize.hpp"

namespace framewalk {


namespace {

// A frame's function: its module's symbols, else (jit code, or code no
// module holds) the perf map's name for it.
FrameSymbol frame_symbol(const Frame& f, const StackRenderOptions& options) { return symbolize(f, options.perf_map); }

// `pc_digits`: the hex digits of an address of the target's machine (8 on 32-bit ones).
void print_text(dump::TextWriter& w, pid_t pid, const std::string& process_name,
                const std::vector<ThreadStack>& threads, const StackRenderOptions& options, unsigned pc_digits) {
  w.str("PID ").dec(pid).str(" - ").str(process_name.empty() ? "process" : process_name).ch('\n');
  for (const ThreadStack& t : threads) {
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
      if (options.source_lines || options.inlines) sources = source_frames(f, options.inlines, options.perf_map);
      for (size_t k = 0; k + 1 < sources.size(); ++k) {  // inlined calls, innermost first
        frame_number();
        w.str(" 0x").hex(f.pc, pc_digits).ch(' ').str(sources[k].function.empty() ? "??" : sources[k].function);
        w.str(" [inline]\n");
        source_line(sources[k]);
      }
      frame_number();
      w.str(" 0x").hex(f.pc, pc_digits);
      const FrameSymbol s = frame_symbol(f, options);
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
  w.str(",\"file\":\"").str(json_escape(sf.file)).str("\",\"line\":").udec(sf.line);
  if (sf.column) w.str(",\"column\":").udec(sf.column);
}

void print_json(dump::TextWriter& w, pid_t pid, const std::vector<ThreadStack>& threads, uint64_t pause_ns,
                const StackRenderOptions& options) {
  w.str("{\"pid\":").dec(pid);
  if (pause_ns) w.str(",\"pause_us\":").udec(pause_ns / 1000);
  w.str(",\"threads\":[");
  for (size_t ti = 0; ti < threads.size(); ++ti) {
    const ThreadStack& t = threads[ti];
    if (ti) w.ch(',');
    w.str("\n{\"tid\":").dec(t.tid).str(",\"name\":\"").str(json_escape(t.name)).str("\",\"frames\":[");
    bool first = true;
    // A physical frame, or (`tailcall`) one a tail call left off the stack.
    auto print_frame = [&](const Frame& f, bool tailcall) {
      std::vector<SourceFrame> sources;
      if (options.source_lines || options.inlines) sources = source_frames(f, options.inlines, options.perf_map);
      for (size_t k = 0; k + 1 < sources.size(); ++k) {  // inlined calls, innermost first
        if (!first) w.ch(',');
        first = false;
        w.str("\n  {\"pc\":\"0x").hex(f.pc).str("\",\"function\":");
        if (sources[k].function.empty()) w.str("null");
        else w.ch('"').str(json_escape(sources[k].function)).ch('"');
        w.str(",\"inline\":true,\"module\":");
        if (f.module) w.ch('"').str(json_escape(f.module->name)).ch('"'); else w.str("null");
        if (options.source_lines) json_source(w, sources[k]);
        w.ch('}');
      }
      if (!first) w.ch(',');
      first = false;
      const FrameSymbol s = frame_symbol(f, options);
      w.str("\n  {\"pc\":\"0x").hex(f.pc).str("\",\"function\":");
      if (s.found) w.ch('"').str(json_escape(s.function)).ch('"'); else w.str("null");
      w.str(",\"offset\":").udec(s.offset).str(",\"module\":");
      if (f.module) w.ch('"').str(json_escape(f.module->name)).ch('"'); else w.str("null");
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
    if (!t.error.empty()) w.str("unreadable\",\"error\":\"").str(json_escape(t.error)).ch('"');
    else w.str(to_string(t.walk.reason)).str("\",\"stop_detail\":\"").str(json_escape(stop_text(t.walk))).ch('"');
    w.ch('}');
  }
  w.str("]}\n");
}

}  // namespace

void render_stacks(std::FILE* out, const StackDump& dump, const StackRenderOptions& options) {
  dump::TextWriter w(out);
  const arch::Machine* machine = arch::machine_for(dump.machine);
  // The hex digits of an address of the target's machine (8 on 32-bit ones).
  const unsigned pc_digits = machine ? 2u * machine->address_size() : 16u;
  if (options.json) print_json(w, dump.pid, dump.threads, dump.pause_ns, options);
  else print_text(w, dump.pid, dump.process_name, dump.threads, options, pc_digits);
  if (options.verbose && dump.pause_ns && !options.json)
    w.str("process stopped for ").udec(dump.pause_ns / 1000).str(" us in total\n");
  w.flush();
}

}  // namespace framewalk
