#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then build a C program with
# pkg-config and a CMake project with find_package(framewalk), and run both.
set -euo pipefail
build=${1:?usage: install_test.sh BUILD_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cat >"$tmp/prog.c" <<'C'
#include <framewalk/backtrace.h>
#include <stdio.h>
__attribute__((noinline)) static int f(void) { void* b[32]; return framewalk_backtrace(b, 32); }
int main(void) { int n = f(); printf("%d frames\n", n); return n >= 3 ? 0 : 1; }
C
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
cc "$tmp/prog.c" -o "$tmp/prog" $(pkg-config --cflags --libs framewalk)
libdir=$(pkg-config --variable=libdir framewalk)
LD_LIBRARY_PATH="$libdir" "$tmp/prog"
mkdir -p "$tmp/proj"
cp "$tmp/prog.c" "$tmp/proj/prog.c"
cat >"$tmp/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.22)
project(uses_framewalk C)
find_package(framewalk REQUIRED)
add_executable(prog prog.c)
target_link_libraries(prog PRIVATE framewalk::framewalk)
CM
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/proj/build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/proj/build/prog"
echo "install test: pkg-config and find_package(framewalk) both work"
