#!/usr/bin/env bash
# How long `perf report --sort srcline --inline` takes with binutils'
# addr2line and with framewalk's in its place (perf, built without libbfd as
# Debian's is, spawns `addr2line` from PATH), on one profile, in the same
# run: a perf record of framewalk symbolizing N addresses of its own binary.
# Medians over RUNS and the ratio; the two reports are checked equal.
#
#   bench/perf_srcline.sh FRAMEWALK [N] [RUNS]
set -eu
fw=$(realpath "${1:?usage: perf_srcline.sh FRAMEWALK [N] [RUNS]}")
count=${2:-20000}
runs=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"
mkdir "$tmp/bin"
printf '#!/bin/sh\nexec %q addr2line "$@"\n' "$fw" > "$tmp/bin/addr2line"
chmod +x "$tmp/bin/addr2line"
nm --defined-only "$fw" | awk '$2 ~ /^[tT]$/ {print "0x" $1}' > "$tmp/functions"
head -"$count" "$tmp/functions" > "$tmp/addrs"
perf record -q --no-buildid-cache -e cpu-clock -F 1000 -g -o "$tmp/perf.data" \
  "$fw" addr2line -f -i -e "$fw" < "$tmp/addrs" > /dev/null
report() { HOME=$tmp perf report -i "$tmp/perf.data" --stdio --no-children --sort srcline --inline 2> /dev/null; }
export -f report
export tmp
t_binutils=$(median_ms bash -c report)
t_fw=$(median_ms env PATH="$tmp/bin:$PATH" bash -c report)
same=different
cmp -s <(report) <(PATH=$tmp/bin:$PATH report) && same=same
echo "perf report --sort srcline --inline, $(perf version), profile of $count addresses symbolized:"
echo "  binutils addr2line: $t_binutils ms; framewalk addr2line: $t_fw ms;" \
  "$(awk -v a="$t_binutils" -v b="$t_fw" 'BEGIN {printf "%.1fx", a/b}'); reports $same"
