// One self-contained HTML file (no network): an interactive flame graph of
// the profile, drawn as positioned <div>s (callers above callees). Click a
// frame to zoom to it (the bar of an ancestor, or Escape, zooms out); type
// in the search box to highlight the functions whose names contain the text
// (the share of the total they account for is shown); choose a thread and
// on- or off-CPU samples; the tooltip gives self and total weight.
//
// The data is one JSON object in a <script type="application/json">: the
// functions, the threads, and per kind of sample a call tree (parent and
// function of each node) with the weight of each (node, thread). The page's
// state can be given in its fragment: #kind=off-cpu&thread=TID&search=TEXT,
// and click=NAME or hover=NAME act on a function's first frame (what the
// headless-browser test, tests/profile/sample_html.sh, uses).
#include <map>

#include "base/text.hpp"
#include "profile/sample_reports.hpp"

namespace framewalk::profile {

namespace {

// A JSON string that can sit inside a <script> element.
void script_string(dump::TextWriter& out, std::string_view s) {
  out.ch('"');
  for (char c : json_escape(s)) {
    if (c == '<') out.str("\\u003c"); else if (c == '>') out.str("\\u003e"); else if (c == '&') out.str("\\u0026"); else out.ch(c);
  }
  out.ch('"');
}

void html_text(dump::TextWriter& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '<': out.str("&lt;"); break;
      case '>': out.str("&gt;"); break;
      case '&': out.str("&amp;"); break;
      case '"': out.str("&quot;"); break;
      default: out.ch(c);
    }
  }
}

constexpr std::string_view kStyle = R"CSS(
body { font: 13px sans-serif; margin: 8px; }
#bar { display: flex; gap: 12px; align-items: center; margin-bottom: 6px; flex-wrap: wrap; }
#graph { position: relative; width: 100%; overflow-x: hidden; }
.frame { position: absolute; height: 16px; line-height: 16px; font: 11px monospace; overflow: hidden;
         white-space: nowrap; box-sizing: border-box; border: 1px solid #fff; padding-left: 2px; cursor: pointer; }
.frame.inlined { font-style: italic; }
.frame.match { background: #e040e0 !important; }
.frame.ancestor { opacity: 0.6; }
#tip { position: fixed; display: none; background: #ffe; border: 1px solid #888; padding: 4px; font: 12px monospace;
       pointer-events: none; white-space: pre; z-index: 10; }
#status { margin: 4px 0; font: 12px monospace; }
)CSS";

constexpr std::string_view kScript = R"JS(
'use strict';
const D = JSON.parse(document.getElementById('data').textContent);
const graph = document.getElementById('graph'), tip = document.getElementById('tip');
const kindSel = document.getElementById('kind'), threadSel = document.getElementById('thread');
const search = document.getElementById('search'), status = document.getElementById('status');
const matched = document.getElementById('matched');
let cur = null, zoom = 0;
function fmt(w) {
  if (D.unit !== 'nanoseconds') return String(w);
  return w >= 1e10 ? (w / 1e9).toFixed(3) + 's' : (w / 1e6).toFixed(3) + 'ms';
}
function pct(x, t) { return t ? (100 * x / t).toFixed(2) : '0.00'; }
function compute() {
  const t = D.trees[kindSel.value === 'off-cpu' ? 1 : 0];
  const n = t.parent.length, self = new Float64Array(n), total = new Float64Array(n);
  const th = threadSel.value === 'all' ? -1 : Number(threadSel.value);
  for (const [node, thread, w] of t.weights) if (th < 0 || thread === th) self[node] += w;
  total.set(self);
  for (let i = n - 1; i > 0; --i) total[t.parent[i]] += total[i];
  const kids = Array.from({length: n}, () => []);
  for (let i = 1; i < n; ++i) if (total[i] > 0) kids[t.parent[i]].push(i);
  for (const k of kids) k.sort((a, b) => total[b] - total[a] || D.fns[t.fn[a]][0].localeCompare(D.fns[t.fn[b]][0]));
  cur = {t, self, total, kids};
}
function name(i) { const f = D.fns[cur.t.fn[i]]; return f[0]; }
function render() {
  graph.textContent = '';
  const {t, self, total, kids} = cur;
  const grand = total[0];
  if (!(zoom < t.parent.length) || total[zoom] === 0) zoom = 0;
  const W = graph.clientWidth || 1200, H = 17;
  const chain = [];
  for (let a = zoom; a; a = t.parent[a]) chain.unshift(a);
  let row = 0;
  const frames = [];
  const add = (i, x, w, depth, ancestor) => {
    const d = document.createElement('div');
    d.className = 'frame' + (t.inl[i] ? ' inlined' : '') + (ancestor ? ' ancestor' : '');
    d.style.left = x + 'px'; d.style.width = w + 'px'; d.style.top = depth * H + 'px';
    const f = D.fns[t.fn[i]];
    let h = 0; for (const c of f[0]) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    d.style.background = kindSel.value === 'off-cpu' ? `hsl(${200 + h % 40},70%,${65 + h % 15}%)`
                                                    : `hsl(${h % 50},${75 + h % 20}%,${55 + h % 15}%)`;
    d.textContent = f[0] + (t.inl[i] ? ' [inlined]' : '');
    d.dataset.node = i; d.dataset.name = f[0]; d.dataset.self = self[i]; d.dataset.total = total[i];
    d.dataset.totalPercent = pct(total[i], grand); d.dataset.selfPercent = pct(self[i], grand);
    d.title = `${f[0]}${f[1] ? ' (' + f[1] + ')' : ''}\nself ${fmt(self[i])} (${pct(self[i], grand)}%)\ntotal ${fmt(total[i])} (${pct(total[i], grand)}%)`;
    graph.appendChild(d);
    frames.push(d);
  };
  for (const a of chain.slice(0, -1)) add(a, 0, W, row++, true);
  const scale = W / (zoom ? total[zoom] : grand || 1);
  const stack = [];
  if (zoom) stack.push([zoom, 0, row]);
  else { let x = 0; for (const k of kids[0]) { stack.push([k, x, row]); x += total[k] * scale; } }
  let maxDepth = row;
  while (stack.length) {
    const [i, x, depth] = stack.pop();
    const w = total[i] * scale;
    if (w < 0.5) continue;
    add(i, x, w, depth, false);
    maxDepth = Math.max(maxDepth, depth);
    let cx = x;
    for (const k of kids[i]) { stack.push([k, cx, depth + 1]); cx += total[k] * scale; }
  }
  graph.style.height = (maxDepth + 1) * H + 'px';
  status.textContent = `${kindSel.value}, ${threadSel.options[threadSel.selectedIndex].text}: total ${fmt(grand)}` +
                       (zoom ? `; zoomed to ${name(zoom)} (${pct(total[zoom], grand)}%)` : '');
  highlight();
}
function highlight() {
  const q = search.value.toLowerCase();
  const {t, total} = cur;
  let sum = 0;
  if (q) {
    // The total of the matching nodes that have no matching ancestor.
    const n = t.parent.length, under = new Uint8Array(n);
    for (let i = 1; i < n; ++i) {
      const m = D.fns[t.fn[i]][0].toLowerCase().includes(q);
      under[i] = under[t.parent[i]] || m;
      if (m && !under[t.parent[i]]) sum += total[i];
    }
  }
  for (const d of graph.children) d.classList.toggle('match', !!q && d.dataset.name.toLowerCase().includes(q));
  matched.textContent = q ? `matched ${pct(sum, total[0])}% (${fmt(sum)})` : '';
}
graph.addEventListener('click', e => {
  const d = e.target.closest('.frame');
  if (!d) return;
  zoom = d.classList.contains('ancestor') || Number(d.dataset.node) === zoom ? cur.t.parent[Number(d.dataset.node)] : Number(d.dataset.node);
  render();
});
graph.addEventListener('mousemove', e => {
  const d = e.target.closest('.frame');
  if (!d) { tip.style.display = 'none'; return; }
  tip.textContent = d.title;
  tip.style.display = 'block'; tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px';
});
graph.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
document.addEventListener('keydown', e => { if (e.key === 'Escape') { zoom = 0; render(); } });
kindSel.addEventListener('change', () => { zoom = 0; compute(); render(); });
threadSel.addEventListener('change', () => { zoom = 0; compute(); render(); });
search.addEventListener('input', highlight);
for (const [i, [tid, nm]] of D.threads.entries()) {
  const o = document.createElement('option'); o.value = i; o.textContent = `${nm} (${tid})`; threadSel.appendChild(o);
}
const hash = new URLSearchParams(location.hash.slice(1));
if (hash.get('kind')) kindSel.value = hash.get('kind');
if (hash.get('thread')) { const i = D.threads.findIndex(t => String(t[0]) === hash.get('thread')); if (i >= 0) threadSel.value = String(i); }
if (hash.get('search')) search.value = hash.get('search');
compute(); render();
// Test hooks (the headless-browser test): a click or a hover on the first
// frame of a function, through the same handlers as the mouse's.
const target = n => [...graph.children].find(e => e.dataset.name === n && !e.classList.contains('ancestor'));
if (hash.get('click') && target(hash.get('click'))) target(hash.get('click')).dispatchEvent(new MouseEvent('click', {bubbles: true}));
if (hash.get('hover') && target(hash.get('hover'))) {
  const r = target(hash.get('hover')).getBoundingClientRect();
  target(hash.get('hover')).dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + 1, clientY: r.top + 1}));
}
)JS";

}  // namespace

void write_sample_html(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out) {
  const FunctionIndex index(p);
  const std::vector<uint32_t> tids = sample_tids(p);
  out.str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>framewalk: ");
  html_text(out, o.profile_path);
  out.str("</title>\n<style>").str(kStyle).str("</style></head>\n<body>\n<div id=\"bar\"><b>");
  html_text(out, o.profile_path);
  out.str("</b> <label>samples <select id=\"kind\"><option value=\"on-cpu\">on-CPU</option>"
          "<option value=\"off-cpu\">off-CPU</option></select></label>"
          " <label>thread <select id=\"thread\"><option value=\"all\">all threads</option></select></label>"
          " <label>search <input id=\"search\" type=\"search\"></label> <span id=\"matched\"></span></div>\n"
          "<div id=\"status\"></div>\n<div id=\"graph\"></div>\n<div id=\"tip\"></div>\n"
          "<script type=\"application/json\" id=\"data\">{\"unit\":");
  script_string(out, weight_unit(p));
  out.str(",\"fns\":[");
  for (size_t i = 0; i < index.functions().size(); ++i) {
    if (i) out.ch(',');
    out.ch('[');
    script_string(out, index.functions()[i].name);
    out.ch(',');
    script_string(out, index.functions()[i].module);
    out.ch(']');
  }
  out.str("],\"threads\":[");
  for (size_t i = 0; i < tids.size(); ++i) {
    const SampleThread* t = p.thread(tids[i]);
    out.str(i ? ",[" : "[").udec(tids[i]).ch(',');
    script_string(out, t ? p.string(t->name) : std::string_view("thread"));
    out.ch(']');
  }
  out.str("],\"trees\":[");
  for (SampleKind kind : {SampleKind::kOnCpu, SampleKind::kOffCpu}) {
    const CallTree tree(p, index, SampleFilter{kind, o.tid});
    out.str(kind == SampleKind::kOnCpu ? "{\"parent\":[" : ",{\"parent\":[");
    for (size_t i = 0; i < tree.nodes().size(); ++i) out.str(i ? "," : "").udec(tree.nodes()[i].parent);
    out.str("],\"fn\":[");
    for (size_t i = 0; i < tree.nodes().size(); ++i) out.str(i ? "," : "").udec(tree.nodes()[i].function);
    out.str("],\"inl\":[");
    for (size_t i = 0; i < tree.nodes().size(); ++i) out.str(i ? "," : "").ch(tree.nodes()[i].inlined ? '1' : '0');
    // Weights by (node, thread index).
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> w;
    std::map<uint32_t, uint32_t> thread_index;
    for (size_t i = 0; i < tids.size(); ++i) thread_index[tids[i]] = static_cast<uint32_t>(i);
    for (const Sample& s : p.samples()) {
      if (s.kind != kind || (o.tid && s.tid != *o.tid)) continue;
      w[{tree.node_of_stack(s.stack), thread_index[s.tid]}] += s.weight;
    }
    out.str("],\"weights\":[");
    bool first = true;
    for (const auto& [key, weight] : w) {
      out.str(first ? "[" : ",[").udec(key.first).ch(',').udec(key.second).ch(',').udec(weight).ch(']');
      first = false;
    }
    out.str("]}");
  }
  out.str("]}</script>\n<script>").str(kScript).str("</script>\n</body></html>\n");
}

}  // namespace framewalk::profile
