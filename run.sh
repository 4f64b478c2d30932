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

libc=$(gcc -print-file-name=libc.so.6)
libc=$(readlink -f "$libc")
echo
echo "== framewalk cfi $libc (first FDEs of the call frame table)"
"$fw" cfi "$libc" | head -n 24
malloc_addr=$(nm -D --defined-only "$libc" | awk '$3 == "malloc" || $3 == "malloc@@GLIBC_2.2.5" {print $1; exit}')
at=$(printf '0x%x' $((16#$malloc_addr + 9)))
echo
echo "== framewalk cfi --pc $at $libc (the unwind row in force 9 bytes into malloc)"
"$fw" cfi --pc "$at" "$libc"
echo
echo "== the same, as readelf --debug-dump=frames-interp prints it (first lines)"
"$fw" cfi --format=readelf "$libc" | head -n 12
