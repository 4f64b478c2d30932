#!/usr/bin/env bash
# The in-process unwinders on AArch64: cross-builds the library and its unit
# tests with Debian's cross compiler (g++-aarch64-linux-gnu; GoogleTest from
# Debian's sources in /usr/src/googletest; without zlib/zstd/xz, which have
# no AArch64 build here) and runs them under qemu-aarch64. There the
# in-process path is the portable one (src/local/portable_backtrace.cpp:
# every frame through the step loop, rows through _dl_find_object), and
# framewalk_backtrace must give the frames the full local unwinder gives,
# allocate nothing, and work in signal handlers on small stacks and in a
# SIGPROF storm with dlopen/dlclose.
#
#   tests/cross/inprocess.sh [BUILD_DIR]      (default build-aarch64)
#
# Left out, each for its reason:
#  - tests that run the framewalk command (the cross build has none: it
#    would be an AArch64 program) or host tools (objdump, as): ArchiveCli,
#    BadInput, ExidxCli*, GenerateCli, CheckGas, SframeObjdumpTest,
#    SframeVectors.CommandRawMatches, CoreFile.StackCommand*,
#    Build.CommandLineToolIsBuilt, LocalBacktrace.NeverAllocates* (its
#    library gets SFrame from the command);
#  - ptrace (qemu-user implements none): Ptrace*;
#  - the seccomp probes (qemu-user does not apply a guest's seccomp filter
#    to its system calls);
#  - GenerateElf (it generates SFrame for the test program itself).
# Exit 77 (skipped) without the cross compiler, qemu-aarch64 or the sources.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build-aarch64}
for tool in aarch64-linux-gnu-g++ qemu-aarch64 cmake ninja; do
  command -v "$tool" > /dev/null || { echo "skip: no $tool"; exit 77; }
done
[ -d /usr/src/googletest ] || { echo "skip: no /usr/src/googletest (googletest)"; exit 77; }
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DFRAMEWALK_COMPRESSION=OFF -DFRAMEWALK_CLI=OFF -DFRAMEWALK_BENCH=OFF > /dev/null
ninja -C "$build" framewalk_tests fw_dlopen_target
left_out='ArchiveCli.*:BadInput.*:ExidxCli.*:ExidxCliArm.*:GenerateCli.*:CheckGas.*:SframeObjdumpTest.*'
left_out+=':SframeVectors.CommandRawMatches:CoreFile.StackCommand*:Build.CommandLineToolIsBuilt'
left_out+=':LocalBacktrace.NeverAllocates*:*Ptrace*:FastBacktrace.StacksAreProbedWhereSeccomp*:GenerateElf.*'
cd "$build"
qemu-aarch64 -L /usr/aarch64-linux-gnu tests/framewalk_tests --gtest_filter="-$left_out" --gtest_brief=1
