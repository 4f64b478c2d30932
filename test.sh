#!/usr/bin/env bash
# The whole test suite: unit tests, conformance against readelf on every
# library of the machine and on fixtures, CLI bad-input tests, cores of
# other machines made by qemu-user, the in-process unwinder's tests (every
# unit test on 32-bit ARM) and the mcount runtime's tests cross-built for
# AArch64, 32-bit ARM, riscv64, s390x and ppc64le and run under qemu-user,
# and for i386 natively, and a deterministic libFuzzer run of every parser under
# ASan+UBSan (fixed seed and run counts, fuzz/run.sh; FUZZ=0 skips it).
set -euo pipefail
cd "$(dirname "$0")"
# Each stage's start, in seconds since this script began: CI's budget is 30 minutes.
stage() { echo "== test.sh [$SECONDS s] $*"; }
stage install
scripts/install-deps.sh
stage build
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
# The tests' caches (framewalk addr2line's inflated sections) in the build
# tree, not the user's ~/.cache.
stage ctest
XDG_CACHE_HOME="$PWD/build/test-cache" ctest --test-dir build --output-on-failure -j "$(nproc)"
# The in-process unwinders cross-built for AArch64, 32-bit ARM, riscv64,
# s390x and ppc64le, run under qemu-user, and i386, natively (status 77:
# skipped, the cross tools are missing).
stage cross in-process
tests/cross/inprocess.sh aarch64 build-aarch64 || [ $? = 77 ]
tests/cross/inprocess.sh arm build-arm || [ $? = 77 ]
# i386 natively (32-bit programs run on this kernel), its in-process tests alone.
tests/cross/inprocess.sh i386 build-i386 || [ $? = 77 ]
# riscv64, s390x and ppc64le under qemu-user, their in-process tests alone.
tests/cross/inprocess.sh riscv64 build-riscv64 || [ $? = 77 ]
tests/cross/inprocess.sh s390x build-s390x || [ $? = 77 ]
tests/cross/inprocess.sh ppc64le build-ppc64le || [ $? = 77 ]
# The mcount runtime cross-built in the same directories: exact call counts,
# fork, registers around the hook, under qemu-user (77: skipped).
stage cross mcount
tests/cross/mcount.sh aarch64 build-aarch64 || [ $? = 77 ]
tests/cross/mcount.sh arm build-arm || [ $? = 77 ]
tests/cross/mcount.sh i386 build-i386 || [ $? = 77 ]
tests/cross/mcount.sh riscv64 build-riscv64 || [ $? = 77 ]
tests/cross/mcount.sh s390x build-s390x || [ $? = 77 ]
tests/cross/mcount.sh ppc64le build-ppc64le || [ $? = 77 ]
# Two C API contexts in two threads at once, under ThreadSanitizer (77: no clang).
stage tsan
tests/capi/tsan.sh build-tsan || [ $? = 77 ]
if [ "${FUZZ:-1}" != 0 ]; then
  stage fuzz
  fuzz/run.sh
fi
stage done
