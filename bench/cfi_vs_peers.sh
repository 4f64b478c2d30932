#!/usr/bin/env bash
# Side by side, in one run: the readelf-format dump of framewalk against
# `readelf --debug-dump=frames-interp` and `llvm-dwarfdump --eh-frame` on one
# file (default: the largest library of the machine). Reports medians of N
# runs and ratios, and checks that framewalk's output equals readelf's.
set -eu
fw=${1:?usage: cfi_vs_peers.sh FRAMEWALK [FILE] [RUNS]}
file=${2:-/usr/lib/x86_64-linux-gnu/libLLVM-16.so.1}
runs=${3:-7}
dwarfdump=$(command -v llvm-dwarfdump || command -v llvm-dwarfdump-16 || command -v llvm-dwarfdump-14 || true)

. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"

max_rss_kb() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1; }

echo "file: $file ($(stat -c %s "$file") bytes)"
readelf -S -W "$file" | sed 's/^ *\[ *[0-9]*\] *//' | while read -r name _ _ _ size _; do case $name in .eh_frame|.eh_frame_hdr) echo "  $name: $((16#$size)) bytes";; esac; done
if ! cmp -s <("$fw" cfi --format=readelf "$file") <(readelf --debug-dump=frames-interp "$file"); then
  echo "framewalk output differs from readelf's" >&2
  exit 1
fi
echo "framewalk cfi --format=readelf output is identical to readelf's"
t_fw=$(median_ms "$fw" cfi --format=readelf "$file")
t_re=$(median_ms readelf --debug-dump=frames-interp "$file")
echo "median of $runs runs:"
echo "  framewalk cfi --format=readelf        ${t_fw} ms  (max RSS $(max_rss_kb "$fw" cfi --format=readelf "$file") KB)"
echo "  readelf --debug-dump=frames-interp     ${t_re} ms  (max RSS $(max_rss_kb readelf --debug-dump=frames-interp "$file") KB)"
awk -v a="$t_re" -v b="$t_fw" 'BEGIN {printf "  ratio readelf / framewalk: %.1fx\n", a/b}'
if [ -n "$dwarfdump" ]; then
  t_ld=$(median_ms "$dwarfdump" --eh-frame "$file")
  echo "  $(basename "$dwarfdump") --eh-frame     ${t_ld} ms"
  awk -v a="$t_ld" -v b="$t_fw" 'BEGIN {printf "  ratio llvm-dwarfdump / framewalk: %.1fx\n", a/b}'
fi
