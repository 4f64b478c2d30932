#!/usr/bin/env bash
# `framewalk report` on a .fwprof made without the recorder
# (make_sample_profile fixture, a known time split): every format read back
# by check_sample_reports.py with the same totals; a recording cut short and
# a damaged one reported with the offset and what came before shown;
# `go tool pprof -top` where Go is installed (golang-go is not among the
# project's packages: too large for CI).
#
#   sample_reports.sh FRAMEWALK MAKE_SAMPLE_PROFILE SOURCE_DIR WORK_DIR
set -euo pipefail
cli=$1 make=$2 src=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3  # Debian's, with python3-jsonschema

"$make" fixture "$work/fixture.fwprof"
for fmt in text json folded pprof speedscope firefox html; do
  "$cli" report "$work/fixture.fwprof" --format=$fmt -o "$work/out.$fmt"
done
"$cli" report "$work/fixture.fwprof" --format=folded --kind=off-cpu -o "$work/out-off.folded"
$python "$src/tests/profile/check_sample_reports.py" "$work" "$src/tests/profile/speedscope_schema.json"

fail() { echo "FAIL: $*" >&2; exit 1; }

# One thread.
"$cli" report "$work/fixture.fwprof" --thread 101 > "$work/thread.txt"
grep -q '^on-CPU, thread 101 (worker): 100 samples, 100.000ms' "$work/thread.txt" || fail "--thread 101"
grep -q '100.00%     100.000ms 100.00%     100.000ms  recurse (demo)' "$work/thread.txt" || fail "--thread 101 rows"

# Cut short: the report shows what the whole chunks hold, and says where it stopped.
size=$(stat -c %s "$work/fixture.fwprof")
"$make" fixture "$work/cut.fwprof" --cut $((size - 40))
"$cli" report "$work/cut.fwprof" > "$work/cut.txt" 2> "$work/cut.err" || fail "a cut recording is an error"
grep -q 'framewalk: .*cut.fwprof: truncated in the samples chunk at offset 0x.*(909 samples)' "$work/cut.err" || fail "cut: $(cat "$work/cut.err")"
grep -q '(cut short: truncated' "$work/cut.txt" || fail "cut: the report does not say it"
grep -q '60.00%' "$work/cut.txt" || fail "cut: the samples before the cut"

# Damaged: not a profile past its magic.
printf 'FWPROF\0\1\x63\0\0\0\0\0\0\0\0\0' > "$work/bad.fwprof"
"$cli" report "$work/bad.fwprof" > /dev/null 2> "$work/bad.err"
grep -q 'unknown chunk type 99 at offset 0x8' "$work/bad.err" || fail "bad chunk: $(cat "$work/bad.err")"
printf 'FWPROF\0\7' > "$work/v7.fwprof"
status=0
"$cli" report "$work/v7.fwprof" 2> "$work/v7.err" || status=$?
[ $status = 1 ] && grep -q 'unsupported profile version 7 at offset 0x7' "$work/v7.err" || fail "version 7: $(cat "$work/v7.err")"
status=0
"$cli" report "$work/fixture.fwprof" --format=nope 2> /dev/null || status=$?
[ $status = 2 ] || fail "--format=nope: status $status"

if command -v go > /dev/null && go tool pprof -h > /dev/null 2>&1; then
  HOME=$work go tool pprof -top -nodecount=50 "$work/out.pprof" > "$work/pprof_top.txt" 2> /dev/null
  grep -qE '^ +600ms 60\.00% +60\.00% +600ms 60\.00% +square \(inline\)$' "$work/pprof_top.txt" ||
    fail "go tool pprof: square: $(cat "$work/pprof_top.txt")"
  grep -qE '^ +0 +0% +100% +900ms 90\.00% +main$' "$work/pprof_top.txt" || fail "go tool pprof: main"
  HOME=$work go tool pprof -top -sample_index=off_cpu "$work/out.pprof" > "$work/pprof_off.txt" 2> /dev/null
  grep -qE '^ +700ms 70\.00% .* 700ms 70\.00% +read$' "$work/pprof_off.txt" || fail "go tool pprof: off-CPU read"
  echo "go tool pprof -top: square (inline) 60%, main 90% cumulative; off_cpu: read 70%"
else
  echo "go tool pprof: not installed, skipped (the gtest reads the profile with protobuf's classes)"
fi
echo "sample_reports: ok"
