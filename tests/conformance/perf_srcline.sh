#!/usr/bin/env bash
# framewalk addr2line as a drop-in for binutils addr2line where perf spawns
# it: Debian's perf (built without libbfd) runs `addr2line -e DSO -i -f`
# and talks to it through pipes, one address at a time, ending each answer
# with a sentinel address. A profile of framewalk symbolizing its own
# binary is reported by `perf report --sort srcline --inline` twice, once
# with binutils' addr2line and once with a PATH whose `addr2line` runs
# framewalk's: the reports must be the same, byte for byte, and name source
# lines. Whatever samples the profile holds, the verdict is the same.
#
#   tests/conformance/perf_srcline.sh FRAMEWALK WORK_DIR
# Exit 77 (skipped) without perf, addr2line or a perf event to record with.
set -euo pipefail
fw=$(realpath "$1") work=$2
for tool in perf addr2line nm; do
  command -v "$tool" > /dev/null || { echo "skip: no $tool"; exit 77; }
done
rm -rf "$work"
mkdir -p "$work/bin"
cd "$work"
printf '#!/bin/sh\nexec %q addr2line "$@"\n' "$fw" > bin/addr2line
chmod +x bin/addr2line
# A few thousand addresses of framewalk's functions to symbolize: the recorded work.
nm --defined-only "$fw" | awk '$2 ~ /^[tT]$/ {print "0x" $1}' > functions
head -4000 functions > addrs
if ! perf record -q --no-buildid-cache -e cpu-clock -F 2000 -g -o perf.data \
    "$fw" addr2line -f -i -e "$fw" < addrs > /dev/null 2> record.err; then
  echo "skip: perf record failed: $(head -c 300 record.err)"
  exit 77
fi
report() { HOME=$work perf report -i perf.data --stdio --no-children --sort srcline --inline 2> /dev/null | grep -v '^#'; }
report > binutils.txt
PATH=$work/bin:$PATH report > framewalk.txt
lines=$(grep -cE '^ +[0-9.]+% +[^ ]+:[0-9]+' framewalk.txt || true)
if ! cmp -s binutils.txt framewalk.txt; then
  echo "perf report --sort srcline --inline: different with framewalk addr2line"
  diff binutils.txt framewalk.txt | head -40
  exit 1
fi
if [ "$lines" -lt 5 ]; then
  echo "perf report names only $lines source lines: nothing was compared"
  exit 1
fi
echo "perf report --sort srcline --inline: $(wc -l < framewalk.txt) lines, $lines source lines: the same with framewalk addr2line as with binutils'"
