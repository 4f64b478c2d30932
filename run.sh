#!/usr/bin/env bash
# One command for a newcomer: install dependencies, build, and run framewalk's
# main job on a built-in example.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
fw=build/framewalk
set +o pipefail  # the demo shows the head of long outputs

# The main job: start a demo process with a few threads whose stacks are worth
# seeing (recursion, signal handlers on the normal and an alternate stack,
# condition waits), and print every thread's stack.
demo_out=$(mktemp)
build/demo_target >"$demo_out" &
demo=$!
trap 'kill "$demo" 2>/dev/null; rm -f "$demo_out"' EXIT
for _ in $(seq 100); do grep -q ready "$demo_out" && break; sleep 0.05; done
echo
echo "== framewalk stack -p $demo -v   (the demo process: examples/demo_target.c)"
"$fw" stack -p "$demo" -v

libc=$(gcc -print-file-name=libc.so.6)
libc=$(readlink -f "$libc")
malloc_addr=$(nm -D --defined-only "$libc" | awk '$3 == "malloc" || $3 == "malloc@@GLIBC_2.2.5" {print $1; exit}')
at=$(printf '0x%x' $((16#$malloc_addr + 9)))
echo
echo "== framewalk cfi --pc $at $libc   (the unwind row in force 9 bytes into malloc)"
"$fw" cfi --pc "$at" "$libc"
echo
echo "== framewalk cfi --format=readelf $libc | head   (identical to readelf --debug-dump=frames-interp)"
"$fw" cfi --format=readelf "$libc" | head -n 10
