#!/usr/bin/env bash
# The in-process unwinders on AArch64, 32-bit ARM, i386, riscv64, s390x and
# ppc64le, cross-built with Debian's cross compiler (g++-aarch64-linux-gnu,
# g++-arm-linux-gnueabihf, g++-i686-linux-gnu, g++-riscv64-linux-gnu,
# g++-s390x-linux-gnu or g++-powerpc64le-linux-gnu; GoogleTest from Debian's
# sources in /usr/src/googletest; without zlib/zstd/xz, which have no build
# for those machines here):
#  - on ARM the whole unit-test suite, under qemu-user: every parser in
#    32-bit words (size_t, pointer casts);
#  - on AArch64, riscv64, s390x, ppc64le (under qemu-user) and i386
#    (natively) the in-process tests alone (framewalk_inprocess_tests), which
#    is what differs there from the host's run: CI's budget has no room for
#    another whole suite.
# There the in-process path is the rule-cache fast path of x86-64
# (src/local/fast_unwinder.cpp: on ARM with Thumb's r7 and ARM state's r11
# both tracked), with every other frame through the step loop and rows
# through _dl_find_object: .eh_frame_hdr on AArch64, i386, riscv64, s390x
# and ppc64le, PT_ARM_EXIDX on ARM; framewalk_backtrace must give the frames
# the full local unwinder gives, allocate nothing, and work in signal
# handlers on small stacks and in a SIGPROF storm with dlopen/dlclose.
#
#   tests/cross/inprocess.sh [aarch64|arm|i386|riscv64|s390x|ppc64le] [BUILD_DIR]   (default aarch64, build-MACHINE)
#
# Left out, each for its reason:
#  - tests that run the framewalk command (the cross build has none: it
#    would be a program of the other machine) or host tools (objdump, as):
#    ArchiveCli, BadInput, ReportCli, PerfReportCli, Addr2lineCli, ExidxCli*, GenerateCli, CheckGas, SframeObjdumpTest,
#    SframeVectors.Command*, CoreFile.StackCommand*,
#    Build.CommandLineToolIsBuilt, LocalBacktrace.NeverAllocates* (its
#    library gets SFrame from the command);
#  - ptrace (qemu-user implements none): Ptrace*;
#  - the seccomp probes under qemu-user (it does not apply a guest's seccomp
#    filter to its system calls);
#  - on ARM, GenerateElf (SFrame has no ABI for 32-bit ARM);
#  - on s390x, FastBacktrace.CodeWithFramePointersOnlyIsWalkedThrough skips
#    itself: r11 makes no frame chain there (as on ARM, the function's
#    start would be needed).
# Then bench/backtrace_per_frame prints framewalk_backtrace's cost per frame
# beside glibc's backtrace() and, on AArch64, i386, riscv64, s390x and
# ppc64le, a frame-pointer walk (on s390x the back chain of a recursion built
# with -mbackchain, on ppc64le its back chain; it fails if one of them did
# not walk the whole recursion; on ARM gcc's Thumb frames are no
# frame-pointer chain, so there framewalk is set against glibc alone).
# Exit 77 (skipped) without the cross compiler, qemu or the sources.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
machine=${1:-aarch64}
build=${2:-$src/build-$machine}
. "$src/tests/cross/cross_build.sh"
cross_configure "$machine"
if [ "$machine" != arm ]; then
  ninja -C "$build" framewalk_inprocess_tests backtrace_per_frame
  cd "$build"
  left_out='LocalBacktrace.NeverAllocates*'
  [ -n "$run" ] && left_out+=':FastBacktrace.StacksAreProbedWhereSeccomp*'
  $run tests/framewalk_inprocess_tests --gtest_filter="-$left_out" --gtest_brief=1
  $run bench/backtrace_per_frame 64 51 1
  exit 0
fi
ninja -C "$build" framewalk_tests backtrace_per_frame
left_out='ArchiveCli.*:BadInput.*:ReportCli.*:PerfReportCli.*:Addr2lineCli.*:ExidxCli.*:ExidxCliArm.*:GenerateCli.*:CheckGas.*:SframeObjdumpTest.*'
left_out+=':SframeVectors.Command*:CoreFile.StackCommand*:Build.CommandLineToolIsBuilt'
left_out+=':LocalBacktrace.NeverAllocates*:*Ptrace*:FastBacktrace.StacksAreProbedWhereSeccomp*:GenerateElf.*'
cd "$build"
$run tests/framewalk_tests --gtest_filter="-$left_out" --gtest_brief=1
# Ratios only: qemu distorts absolute times.
$run bench/backtrace_per_frame 64 51 0
