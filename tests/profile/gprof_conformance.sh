#!/usr/bin/env bash
# framewalk report against GNU gprof on the same gmon.out files: a -pg
# program with a known call graph (fixtures/pg_callgraph.c) built by gcc as
# PIE and as a position-dependent program, run so that glibc's own runtime
# writes gmon.out; then every arc's count and every flat-profile call count
# of `framewalk report --format=json` must equal gprof's (`gprof -b -q`,
# `gprof -b -p`), and the self times must agree within the histogram's
# resolution. The same file with the process's runtime addresses (as a
# runtime that does not subtract a PIE's load address would write them) must
# give the same report. The pprof output is decoded with protoc, and read by
# `go tool pprof` where it is installed (golang-go is not among the project's
# packages: its Go archives under /usr/lib would join the readelf
# conformance run over every archive of the machine).
#
#   tests/profile/gprof_conformance.sh FRAMEWALK SOURCE_DIR WORK_DIR
# Exit 77 (skipped) without gcc, gprof or python3.
set -euo pipefail
fw=$1 src=$2 work=$3
for tool in gcc gprof python3; do
  command -v "$tool" > /dev/null || { echo "skip: no $tool"; exit 77; }
done
here=$src/tests/profile
rm -rf "$work"
mkdir -p "$work"
cd "$work"
status=0
for variant in pie nopie; do
  flags=(-O1 -fno-inline -fno-optimize-sibling-calls -pg)
  [ "$variant" = nopie ] && flags+=(-fno-pie -no-pie)
  mkdir -p "$variant"
  gcc "${flags[@]}" "$here/fixtures/pg_callgraph.c" -o "$variant/prog"
  (cd "$variant" && ./prog 150 > /dev/null)
  gprof -b -p "$variant/prog" "$variant/gmon.out" > "$variant/flat.txt"
  gprof -b -q "$variant/prog" "$variant/gmon.out" > "$variant/graph.txt"
  "$fw" report "$variant/gmon.out" --exe "$variant/prog" --format=json -o "$variant/report.json"
  echo "== $variant"
  python3 "$here/compare_gprof.py" "$variant/report.json" "$variant/flat.txt" "$variant/graph.txt" "$variant/prog" || status=1

  # Ticks in a PLT stub, rare in a run (mcount@plt runs at every call of a
  # position-dependent -pg program): framewalk names the stub, gprof gives
  # the ticks to _init before .plt; the comparison folds the stub into it.
  if [ "$variant" = nopie ]; then
    stub=$(objdump -d -j .plt "$variant/prog" | sed -n 's/^0*\([0-9a-f]*\) <mcount@plt>:$/\1/p')
    python3 "$here/compare_gprof.py" --add-ticks "$((0x$stub + 6))" 5 "$variant/gmon.out" "$variant/plt.gmon.out"
    gprof -b -p "$variant/prog" "$variant/plt.gmon.out" > "$variant/plt_flat.txt"
    gprof -b -q "$variant/prog" "$variant/plt.gmon.out" > "$variant/plt_graph.txt"
    "$fw" report "$variant/plt.gmon.out" --exe "$variant/prog" --format=json -o "$variant/plt.json"
    echo "== $variant, 5 ticks more in mcount@plt"
    python3 "$here/compare_gprof.py" "$variant/plt.json" "$variant/plt_flat.txt" "$variant/plt_graph.txt" "$variant/prog" || status=1
    python3 - "$variant/plt.json" "$variant/report.json" <<'CHECK' || status=1
import json, sys
ticks = [{f["name"]: f["self_ticks"] for f in json.load(open(p))["functions"]}.get("mcount@plt", 0) for p in sys.argv[1:]]
# Ticks a bucket shares with a neighbour are fractions: equal within rounding.
named = abs(ticks[0] - (ticks[1] + 5)) < 1e-6
print(f"mcount@plt: {ticks[0]} ticks with 5 added to {ticks[1]}: {'named' if named else 'NOT named'}")
sys.exit(not named)
CHECK
  fi

  # The same profile at runtime addresses: the load bias is found from the histogram.
  python3 "$here/compare_gprof.py" --rebase 0x555555554000 "$variant/gmon.out" "$variant/runtime.gmon.out"
  if [ "$variant" = pie ]; then
    "$fw" report "$variant/runtime.gmon.out" --exe "$variant/prog" --format=json -o "$variant/runtime.json"
    python3 "$here/compare_gprof.py" --same "$variant/report.json" "$variant/runtime.json" || status=1
  fi

  # pprof: decoded by protoc; its call counts are the arcs'.
  "$fw" report "$variant/gmon.out" --exe "$variant/prog" --format=pprof -o "$variant/profile.pb.gz"
  if command -v protoc > /dev/null; then
    gzip -dc "$variant/profile.pb.gz" | protoc --proto_path="$src/src/profile" --decode=perftools.profiles.Profile \
      "$src/src/profile/profile.proto" > "$variant/profile.txt"
    python3 "$here/compare_gprof.py" --pprof "$variant/report.json" "$variant/profile.txt" || status=1
  fi
  if command -v go > /dev/null && go tool pprof -h > /dev/null 2>&1; then
    HOME=$work go tool pprof -top -nodefraction=0 -sample_index=calls "$variant/profile.pb.gz" > "$variant/pprof_top.txt" 2> /dev/null
    python3 "$here/compare_gprof.py" --pprof-top "$variant/report.json" "$variant/pprof_top.txt" || status=1
  fi
done

# Calls made from inlined code: with the executable's DWARF, each arc's
# caller location in the pprof profile lists the calls inlined at the call
# site, innermost first; every location's lines must be llvm-symbolizer's
# inline chain at the call (function names and lines), and the arcs still
# gprof's counts.
llvm_symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
if command -v protoc > /dev/null && [ -n "$llvm_symbolizer" ]; then
  mkdir -p inline
  gcc -O2 -g -pg "$here/fixtures/pg_inline.c" -o inline/prog
  # framewalk's runtime: its gmon.out has exact call sites (glibc's rounds
  # them down to 16 bytes, two calls apart here).
  (cd inline && LD_PRELOAD="$(dirname "$fw")/libframewalk_mcount.so" ./prog 101 > /dev/null)
  "$fw" report inline/gmon.out --exe inline/prog --format=json -o inline/report.json
  "$fw" report inline/gmon.out --exe inline/prog --format=pprof -o inline/profile.pb.gz
  gzip -dc inline/profile.pb.gz | protoc --proto_path="$src/src/profile" --decode=perftools.profiles.Profile \
    "$src/src/profile/profile.proto" > inline/profile.txt
  echo "== inline"
  python3 "$here/compare_gprof.py" --pprof inline/report.json inline/profile.txt || status=1
  python3 "$here/compare_gprof.py" --pprof-lines inline/profile.txt inline/prog "$llvm_symbolizer" 2 || status=1
  # Folded stacks with inline frames: run 101 steps, each calling leaf_a and
  # (for odd v = i + 1) leaf_b from inside climb inlined into step inlined
  # into run: the counts and the chain come from the program's construction.
  "$fw" report inline/gmon.out --exe inline/prog --format=folded --inlines -o inline/folded.txt
  want=$'main;run 1\nrun;step_[i];climb_[i];leaf_a 101\nrun;step_[i];climb_[i];leaf_b 51'
  if [ "$(cat inline/folded.txt)" = "$want" ]; then
    echo "folded --inlines: 3 arcs through 2 inline frames: as the program makes them"
  else
    echo "folded --inlines: got"; cat inline/folded.txt; echo "want"; echo "$want"; status=1
  fi
  # glibc's gmon.out rounds call sites: no inline frames, and a note saying so.
  (cd inline && ./prog 101 > /dev/null)
  "$fw" report inline/gmon.out --exe inline/prog --format=folded --inlines > inline/glibc_folded.txt 2> inline/glibc_note.txt
  if grep -q '_\[i\]' inline/glibc_folded.txt || ! grep -q "not exact" inline/glibc_note.txt; then
    echo "folded --inlines on glibc's gmon.out: inline frames from inexact call sites, or no note"; status=1
  fi
fi
exit $status
