#!/usr/bin/env bash
# The HTML flame graph of the fixture profile (make_sample_profile fixture)
# in headless Chromium: the DOM after its script ran has the expected frames
# and totals; the search highlights; the off-CPU and thread choices; a click
# zooms, a hover shows self and total; a screenshot is made. The page's
# state comes from its fragment (sample_html.cpp). Exit 77 (skipped) when
# chromium is not installed: Debian's package is too large for CI.
#
#   sample_html.sh FRAMEWALK MAKE_SAMPLE_PROFILE SOURCE_DIR WORK_DIR
set -euo pipefail
cli=$1 make=$2 src=$3 work=$4
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium is not installed: skipped"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
"$make" fixture "$work/fixture.fwprof"
"$cli" report "$work/fixture.fwprof" --format=html -o "$work/flame.html"

run() {  # run OUT [chromium flags] URL
  local out=$1
  shift
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$work/profile-$RANDOM" \
    --window-size=1200,900 "$@" > "$out" 2> "$out.err"
}
url="file://$work/flame.html"
run "$work/all.html" --dump-dom "$url"
run "$work/search.html" --dump-dom "$url#search=square"
run "$work/off.html" --dump-dom "$url#kind=off-cpu"
run "$work/thread.html" --dump-dom "$url#thread=101"
run "$work/zoom.html" --dump-dom "$url#click=compute"
run "$work/hover.html" --dump-dom "$url#hover=memcpy"
(cd "$work" && run "$work/shot.log" --screenshot="$work/flame.png" "$url#search=parse")

python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
$python - "$work" << 'PY'
import html.parser
import sys

work = sys.argv[1]


class Frames(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.frames, self.ids, self._id = [], {}, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "frame" in a.get("class", "").split():
            self.frames.append(a)
        self._id = a.get("id")

    def handle_data(self, data):
        if self._id:
            self.ids[self._id] = self.ids.get(self._id, "") + data


def load(name):
    p = Frames()
    p.feed(open(f"{work}/{name}").read())
    return p


def first(p, name, ancestor=False):
    return next(f for f in p.frames if f["data-name"] == name and ("ancestor" in f["class"]) == ancestor)


def expect(what, got, want):
    if got != want:
        sys.exit(f"FAIL: {what}: got {got!r}, expected {want!r}")
    print(f"{what}: {got}")


a = load("all.html")
for name, total, self_ in (("main", "90.00", "0.00"), ("run", "90.00", "0.00"), ("compute", "60.00", "0.00"),
                           ("square", "60.00", "60.00"), ("memcpy", "30.00", "30.00"), ("worker", "10.00", "0.00")):
    f = first(a, name)
    expect(f"on-CPU {name} total%/self%", (f["data-total-percent"], f["data-self-percent"]), (total, self_))
expect("recurse frames (the path 300 deep)", sum(f["data-name"] == "recurse" for f in a.frames), 298)
expect("square is marked inlined", "inlined" in first(a, "square")["class"], True)
expect("status", a.ids["status"].strip(), "on-cpu, all threads: total 1000.000ms")
s = load("search.html")
expect("search: frames highlighted", sorted(f["data-name"] for f in s.frames if "match" in f["class"].split()), ["square"])
expect("search: share", s.ids["matched"].strip(), "matched 60.00% (600.000ms)")
o = load("off.html")
expect("off-CPU read total%", first(o, "read")["data-total-percent"], "70.00")
expect("off-CPU pthread_cond_wait total%", first(o, "pthread_cond_wait")["data-total-percent"], "30.00")
t = load("thread.html")
expect("thread 101: main absent", any(f["data-name"] == "main" for f in t.frames), False)
expect("thread 101: worker total%", first(t, "worker")["data-total-percent"], "100.00")
z = load("zoom.html")
expect("zoom: status", z.ids["status"].strip(), "on-cpu, all threads: total 1000.000ms; zoomed to compute (60.00%)")
expect("zoom: compute fills the width", first(z, "compute")["style"].split("width: ")[1].split("px")[0],
       first(z, "run", ancestor=True)["style"].split("width: ")[1].split("px")[0])
expect("zoom: memcpy out of view", any(f["data-name"] == "memcpy" for f in z.frames), False)
h = load("hover.html")
expect("hover: tooltip", h.ids["tip"].strip(), "memcpy (libc.so.6)\nself 300.000ms (30.00%)\ntotal 300.000ms (30.00%)")
PY
size=$(stat -c %s "$work/flame.png" 2> /dev/null || echo 0)
[ "$size" -gt 10000 ] || { echo "FAIL: no screenshot ($size bytes)" >&2; exit 1; }
echo "screenshot: $work/flame.png ($size bytes)"
echo "sample_html: ok"
