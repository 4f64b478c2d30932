#!/usr/bin/env bash
# Two contexts in two threads at once under ThreadSanitizer: the library and
# tests/capi/contexts_check.c built with -fsanitize=thread (clang), walking a
# core of tests/capi/backtrace_child.c 25 times in each thread. Any report
# fails. Exit 77 (skipped) without clang.
#   tests/capi/tsan.sh [BUILD-DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-tsan}
command -v clang >/dev/null && command -v gcore >/dev/null || { echo "skip: clang or gcore missing"; exit 77; }
cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DFRAMEWALK_SANITIZE_THREAD=ON -DFRAMEWALK_BENCH=OFF \
  -DFRAMEWALK_PPROF=OFF -DFRAMEWALK_MCOUNT=OFF >/dev/null
cmake --build "$build" --target capi_contexts_check capi_backtrace_child
work=$(mktemp -d)
"$build/tests/capi/capi_backtrace_child" >"$work/pid" &
pid=$!
trap 'kill -CONT $pid 2>/dev/null; kill -KILL $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 200); do [ "$(awk '{print $3}' /proc/$pid/stat)" = T ] && break; sleep 0.02; done
gcore -o "$work/core" "$pid" >/dev/null 2>&1
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$build/tests/capi/capi_contexts_check" threads "$work/core.$pid" \
  "$build/tests/capi/capi_backtrace_child"
