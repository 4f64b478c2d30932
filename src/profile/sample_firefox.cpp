// The Firefox Profiler's processed profile format, as samply writes it with
// fxprof-processed-profile: meta.version 24 and preprocessedProfileVersion 41
// (kFirefoxGeckoVersion, kFirefoxProcessedVersion), each thread with its own
// stringArray, stackTable, frameTable, funcTable, resourceTable,
// nativeSymbols and samples (weightType "tracing-ms" for time, "samples"
// otherwise); profile.libs from the modules. One profiler thread per thread
// and kind of sample: off-CPU samples are a thread of their own, named
// "NAME (off-CPU)". The profiler upgrades older versions on load.
#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "base/text.hpp"
#include "profile/sample_reports.hpp"

namespace framewalk::profile {

namespace {

void json_string(dump::TextWriter& out, std::string_view s) { out.ch('"').str(json_escape(s)).ch('"'); }

std::string ms(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

template <typename T, typename F>
void column(dump::TextWriter& out, const char* name, const std::vector<T>& v, F each) {
  out.str(",\"").str(name).str("\":[");
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out.ch(',');
    each(v[i]);
  }
  out.ch(']');
}

struct Strings {
  std::vector<std::string> list;
  std::unordered_map<std::string, uint32_t> ids;
  uint32_t id(const std::string& s) {
    auto [it, added] = ids.try_emplace(s, static_cast<uint32_t>(list.size()));
    if (added) list.push_back(s);
    return it->second;
  }
};

}  // namespace

void write_sample_firefox(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out) {
  const FunctionIndex index(p);
  const bool ns = weight_unit(p) == "nanoseconds";
  const RecordingInfo& in = p.info();
  // Libraries: the modules, one per file name (resources name them by it).
  std::unordered_map<std::string, uint32_t> lib_of_name;
  std::vector<const SampleModule*> libs;
  for (const SampleModule& m : p.modules()) {
    std::string_view path = p.string(m.path);
    std::string_view base = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
    if (lib_of_name.try_emplace(std::string(base), static_cast<uint32_t>(libs.size())).second) libs.push_back(&m);
  }
  out.str("{\"meta\":{\"version\":").dec(kFirefoxGeckoVersion).str(",\"preprocessedProfileVersion\":")
      .dec(kFirefoxProcessedVersion).str(",\"interval\":")
      .str(ms(in.frequency ? 1000.0 / static_cast<double>(in.frequency) : 1.0))
      .str(",\"startTime\":").str(ms(static_cast<double>(in.start_time_ns) / 1e6))
      .str(",\"processType\":0,\"product\":");
  std::string product = "framewalk";
  if (!in.command_line.empty()) product = std::string(p.string(in.command_line[0]));
  json_string(out, product);
  out.str(",\"symbolicated\":true,\"debug\":false,\"pausedRanges\":[],\"markerSchema\":[],"
          "\"extensions\":{\"length\":0,\"baseURL\":[],\"id\":[],\"name\":[]},"
          "\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
          "{\"name\":\"Off-CPU\",\"color\":\"blue\",\"subcategories\":[\"Other\"]}]},\"libs\":[");
  for (size_t i = 0; i < libs.size(); ++i) {
    const std::string_view path = p.string(libs[i]->path);
    const std::string base(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
    out.str(i ? ",{\"name\":" : "{\"name\":");
    json_string(out, base);
    out.str(",\"path\":");
    json_string(out, path);
    out.str(",\"debugName\":");
    json_string(out, base);
    out.str(",\"debugPath\":");
    json_string(out, path);
    out.str(",\"breakpadId\":");
    json_string(out, p.string(libs[i]->build_id));
    out.str(",\"codeId\":");
    json_string(out, p.string(libs[i]->build_id));
    out.str(",\"arch\":null}");
  }
  out.str("],\"counters\":[],\"threads\":[");
  bool first_thread = true;
  for (SampleKind kind : {SampleKind::kOnCpu, SampleKind::kOffCpu}) {
    const CallTree tree(p, index, SampleFilter{kind, std::nullopt});
    const uint32_t category = kind == SampleKind::kOffCpu ? 1 : 0;
    for (const uint32_t tid : sample_tids(p)) {
      if (o.tid && tid != *o.tid) continue;
      std::vector<const Sample*> samples;
      for (const Sample& s : p.samples())
        if (s.kind == kind && s.tid == tid) samples.push_back(&s);
      if (samples.empty()) continue;
      std::stable_sort(samples.begin(), samples.end(),
                       [](const Sample* a, const Sample* b) { return a->time_ns < b->time_ns; });
      // The thread's tables: a stack per call-tree node on the way to its
      // samples, a frame per (function, inlined), a func per function.
      Strings strings;
      std::unordered_map<uint32_t, int64_t> stack_of_node{{0, -1}};
      std::vector<int64_t> stack_prefix;
      std::vector<uint32_t> stack_frame;
      std::unordered_map<uint64_t, uint32_t> frame_of;
      std::vector<uint32_t> frame_func, frame_inline;
      std::unordered_map<uint32_t, uint32_t> func_of;
      std::vector<uint32_t> func_fn;
      std::unordered_map<uint32_t, uint32_t> resource_of_lib;
      std::vector<uint32_t> resource_lib;
      std::vector<int64_t> sample_stack;
      std::vector<uint32_t> path;
      const auto stack_for = [&](uint32_t node) -> int64_t {
        path.clear();
        for (uint32_t n = node; !stack_of_node.count(n); n = tree.nodes()[n].parent) path.push_back(n);
        for (size_t k = path.size(); k-- > 0;) {
          const CallNode& c = tree.nodes()[path[k]];
          auto [fi, fadded] = func_of.try_emplace(c.function, static_cast<uint32_t>(func_fn.size()));
          if (fadded) func_fn.push_back(c.function);
          const uint64_t fkey = uint64_t{fi->second} << 1 | (c.inlined ? 1 : 0);
          auto [fr, radded] = frame_of.try_emplace(fkey, static_cast<uint32_t>(frame_func.size()));
          if (radded) {
            frame_func.push_back(fi->second);
            frame_inline.push_back(c.inlined ? 1 : 0);
          }
          const int64_t id = static_cast<int64_t>(stack_prefix.size());
          stack_prefix.push_back(stack_of_node[c.parent]);
          stack_frame.push_back(fr->second);
          stack_of_node[path[k]] = id;
        }
        return stack_of_node[node];
      };
      for (const Sample* s : samples) sample_stack.push_back(stack_for(tree.node_of_stack(s->stack)));
      const SampleThread* t = p.thread(tid);
      std::string name = t && t->name ? std::string(p.string(t->name)) : "thread " + std::to_string(tid);
      if (kind == SampleKind::kOffCpu) name += " (off-CPU)";
      out.str(first_thread ? "{" : ",{");
      first_thread = false;
      out.str("\"name\":");
      json_string(out, name);
      out.str(",\"processType\":\"default\",\"processName\":");
      json_string(out, product);
      out.str(",\"isMainThread\":").str(t && t->pid == tid ? "true" : "false");
      out.str(",\"pid\":\"").udec(t ? t->pid : 0).str("\",\"tid\":").udec(tid);
      out.str(",\"processStartupTime\":0,\"processShutdownTime\":null,\"registerTime\":0,"
              "\"unregisterTime\":null,\"pausedRanges\":[],");
      out.str("\"markers\":{\"length\":0,\"category\":[],\"data\":[],\"endTime\":[],\"name\":[],\"phase\":[],"
              "\"startTime\":[]}");
      // samples
      out.str(",\"samples\":{\"length\":").udec(samples.size()).str(",\"weightType\":\"")
          .str(ns ? "tracing-ms" : "samples").ch('"');
      column(out, "stack", sample_stack, [&](int64_t v) { out.dec(v); });
      column(out, "time", samples,
             [&](const Sample* s) { out.str(ms(static_cast<double>(s->time_ns) / 1e6)); });
      column(out, "weight", samples, [&](const Sample* s) {
        if (ns) out.str(ms(static_cast<double>(s->weight) / 1e6)); else out.udec(s->weight);
      });
      out.ch('}');
      // stackTable
      out.str(",\"stackTable\":{\"length\":").udec(stack_prefix.size());
      column(out, "prefix", stack_prefix, [&](int64_t v) { if (v < 0) out.str("null"); else out.dec(v); });
      column(out, "frame", stack_frame, [&](uint32_t v) { out.udec(v); });
      column(out, "category", stack_frame, [&](uint32_t) { out.udec(category); });
      column(out, "subcategory", stack_frame, [&](uint32_t) { out.ch('0'); });
      out.ch('}');
      // frameTable
      out.str(",\"frameTable\":{\"length\":").udec(frame_func.size());
      column(out, "address", frame_func, [&](uint32_t) { out.str("-1"); });
      column(out, "inlineDepth", frame_inline, [&](uint32_t v) { out.udec(v); });
      column(out, "category", frame_func, [&](uint32_t) { out.udec(category); });
      column(out, "subcategory", frame_func, [&](uint32_t) { out.ch('0'); });
      column(out, "func", frame_func, [&](uint32_t v) { out.udec(v); });
      column(out, "nativeSymbol", frame_func, [&](uint32_t) { out.str("null"); });
      column(out, "innerWindowID", frame_func, [&](uint32_t) { out.str("null"); });
      column(out, "implementation", frame_func, [&](uint32_t) { out.str("null"); });
      column(out, "line", frame_func, [&](uint32_t) { out.str("null"); });
      column(out, "column", frame_func, [&](uint32_t) { out.str("null"); });
      out.ch('}');
      // funcTable and resourceTable
      std::vector<int64_t> func_resource;
      for (uint32_t fn : func_fn) {
        const ReportFunction& f = index.functions()[fn];
        auto lib = lib_of_name.find(f.module);
        if (lib == lib_of_name.end()) {
          func_resource.push_back(-1);
          continue;
        }
        auto [r, added] = resource_of_lib.try_emplace(lib->second, static_cast<uint32_t>(resource_lib.size()));
        if (added) resource_lib.push_back(lib->second);
        func_resource.push_back(r->second);
      }
      out.str(",\"funcTable\":{\"length\":").udec(func_fn.size());
      column(out, "name", func_fn, [&](uint32_t fn) { out.udec(strings.id(index.functions()[fn].name)); });
      column(out, "isJS", func_fn, [&](uint32_t) { out.str("false"); });
      column(out, "relevantForJS", func_fn, [&](uint32_t) { out.str("false"); });
      column(out, "resource", func_resource, [&](int64_t v) { out.dec(v); });
      column(out, "fileName", func_fn, [&](uint32_t fn) {
        const ReportFunction& f = index.functions()[fn];
        if (f.file.empty()) out.str("null"); else out.udec(strings.id(f.file));
      });
      column(out, "lineNumber", func_fn, [&](uint32_t fn) {
        const ReportFunction& f = index.functions()[fn];
        if (!f.line) out.str("null"); else out.udec(f.line);
      });
      column(out, "columnNumber", func_fn, [&](uint32_t) { out.str("null"); });
      out.ch('}');
      out.str(",\"resourceTable\":{\"length\":").udec(resource_lib.size());
      column(out, "lib", resource_lib, [&](uint32_t v) { out.udec(v); });
      column(out, "name", resource_lib, [&](uint32_t v) {
        const std::string_view path = p.string(libs[v]->path);
        out.udec(strings.id(std::string(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1))));
      });
      column(out, "host", resource_lib, [&](uint32_t) { out.str("null"); });
      column(out, "type", resource_lib, [&](uint32_t) { out.ch('1'); });
      out.ch('}');
      out.str(",\"nativeSymbols\":{\"length\":0,\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[]}");
      out.str(",\"stringArray\":[");
      for (size_t i = 0; i < strings.list.size(); ++i) {
        if (i) out.ch(',');
        json_string(out, strings.list[i]);
      }
      out.str("]}");
    }
  }
  out.str("],\"pages\":[]}\n");
}

}  // namespace framewalk::profile
