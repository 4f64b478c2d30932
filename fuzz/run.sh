#!/usr/bin/env bash
# Builds the libFuzzer targets with clang under ASan+UBSan (in build-fuzz/, or
# $FUZZ_BUILD_DIR) and runs each one for a bounded time. Any crash, timeout,
# out-of-memory or leak input is copied to fuzz/regressions/<target>/, where
# tests/fuzz/replay_test.cpp replays it in the ordinary test suite. Exits
# non-zero if any target found one.
#
#   fuzz/run.sh                   # every target, 30 s each
#   FUZZ_SECONDS=300 fuzz/run.sh fuzz_cfi
#
# Environment: FUZZ_SECONDS (per target, default 30), FUZZ_BUILD_DIR,
# FUZZ_JOBS (build parallelism, default 1), FUZZ_CC / FUZZ_CXX (default
# clang / clang++), FUZZ_ARGS (extra libFuzzer flags). New inputs are kept in
# fuzz/corpus-work/<target>/ (not committed); fuzz/corpus/<target>/ is read only.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
seconds=${FUZZ_SECONDS:-30}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-1}
cc=${FUZZ_CC:-clang}
cxx=${FUZZ_CXX:-clang++}

all_targets=(fuzz_elf fuzz_cfi fuzz_expression fuzz_eh_frame_hdr fuzz_sframe fuzz_sframe_roundtrip fuzz_sframe_generate
             fuzz_core fuzz_unwind fuzz_archive)
if [[ $# -gt 0 ]]; then targets=("$@"); else targets=("${all_targets[@]}"); fi

# Longest input per target: whole small ELF files; CFI sections of a few dozen
# records; one expression; a header with a modest table; SFrame sections of a
# few dozen functions; .eh_frame for a few dozen functions, each generated and
# checked PC by PC; archives of a few small objects.
max_len() {
  case "$1" in
    fuzz_elf) echo 65536 ;;
    fuzz_cfi) echo 16384 ;;
    fuzz_expression) echo 1024 ;;
    fuzz_eh_frame_hdr) echo 4096 ;;
    fuzz_sframe) echo 4096 ;;
    fuzz_sframe_roundtrip) echo 4096 ;;
    fuzz_sframe_generate) echo 8192 ;;
    fuzz_core) echo 16384 ;;
    fuzz_unwind) echo 4096 ;;
    fuzz_archive) echo 65536 ;;
    *) echo "unknown fuzz target: $1" >&2; exit 2 ;;
  esac
}
for t in "${targets[@]}"; do max_len "$t" > /dev/null; done

for tool in cmake "$cc" "$cxx"; do
  command -v "$tool" > /dev/null || { echo "fuzz/run.sh: $tool not found" >&2; exit 2; }
done
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi

echo "== configuring $build"
mkdir -p "$build"
CC=$cc CXX=$cxx cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFRAMEWALK_FUZZ=ON -DFRAMEWALK_SANITIZE=ON \
  -DFRAMEWALK_TESTS=OFF -DFRAMEWALK_BENCH=OFF > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log" >&2; exit 2; }
echo "== building ${targets[*]}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

found=()
for t in "${targets[@]}"; do
  work=$root/fuzz/corpus-work/$t
  artifacts=$build/artifacts/$t
  seeds=$root/fuzz/corpus/$t
  regressions=$root/fuzz/regressions/$t
  mkdir -p "$work" "$seeds"
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  echo "== $t: ${seconds}s, -max_len=$(max_len "$t")"
  status=0
  # shellcheck disable=SC2086
  "$build/fuzz/$t" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$artifacts/" -print_final_stats=1 ${FUZZ_ARGS:-} \
    "$work" "$seeds" > "$build/$t.log" 2>&1 || status=$?
  grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$build/$t.log" || true
  shopt -s nullglob
  hits=("$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/oom-* "$artifacts"/leak-*)
  shopt -u nullglob
  if [[ $status -ne 0 || ${#hits[@]} -gt 0 ]]; then
    echo "!! $t failed (exit status $status); log: $build/$t.log" >&2
    grep -E -m 20 '(ERROR|WARNING|SUMMARY|runtime error|FUZZ_CHECK|==[0-9]+==)' "$build/$t.log" >&2 || true
    mkdir -p "$regressions"
    for h in "${hits[@]}"; do
      cp "$h" "$regressions/"
      echo "!! saved $regressions/$(basename "$h")" >&2
    done
    found+=("$t")
  fi
done

if [[ ${#found[@]} -gt 0 ]]; then
  echo "fuzz/run.sh: problems found by: ${found[*]} (inputs in fuzz/regressions/)" >&2
  exit 1
fi
echo "fuzz/run.sh: no problems found in ${targets[*]}"
