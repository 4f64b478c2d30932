#!/usr/bin/env bash
# The in-process unwinders on AArch64 and 32-bit ARM: cross-builds the
# library and its unit tests with Debian's cross compiler (g++-aarch64-linux-gnu
# or g++-arm-linux-gnueabihf; GoogleTest from Debian's sources in
# /usr/src/googletest; without zlib/zstd/xz, which have no build for those
# machines here) and runs them under qemu-user. There the in-process path is
# the rule-cache fast path of x86-64 (src/local/fast_unwinder.cpp: on ARM with
# Thumb's r7 and ARM state's r11 both tracked), with every other frame through
# the step loop and rows through _dl_find_object: .eh_frame_hdr on AArch64,
# PT_ARM_EXIDX on ARM; framewalk_backtrace must give the frames the full
# local unwinder gives, allocate nothing, and work in signal handlers on
# small stacks and in a SIGPROF storm with dlopen/dlclose.
#
#   tests/cross/inprocess.sh [aarch64|arm] [BUILD_DIR]   (default aarch64, build-MACHINE)
#
# Left out, each for its reason:
#  - tests that run the framewalk command (the cross build has none: it
#    would be a program of the other machine) or host tools (objdump, as):
#    ArchiveCli, BadInput, ReportCli, PerfReportCli, Addr2lineCli, ExidxCli*, GenerateCli, CheckGas, SframeObjdumpTest,
#    SframeVectors.Command*, CoreFile.StackCommand*,
#    Build.CommandLineToolIsBuilt, LocalBacktrace.NeverAllocates* (its
#    library gets SFrame from the command);
#  - ptrace (qemu-user implements none): Ptrace*;
#  - the seccomp probes (qemu-user does not apply a guest's seccomp filter
#    to its system calls);
#  - on ARM, GenerateElf (SFrame has no ABI for 32-bit ARM).
# Then bench/backtrace_per_frame prints framewalk_backtrace's cost per frame
# beside glibc's backtrace() and, on AArch64, a frame-pointer walk (it fails
# if one of them did not walk the whole recursion; on ARM gcc's Thumb frames
# are no frame-pointer chain, so there framewalk is set against glibc alone).
# Exit 77 (skipped) without the cross compiler, qemu or the sources.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
machine=${1:-aarch64}
build=${2:-$src/build-$machine}
. "$src/tests/cross/cross_build.sh"
cross_configure "$machine"
ninja -C "$build" framewalk_tests backtrace_per_frame
left_out='ArchiveCli.*:BadInput.*:ReportCli.*:PerfReportCli.*:Addr2lineCli.*:ExidxCli.*:ExidxCliArm.*:GenerateCli.*:CheckGas.*:SframeObjdumpTest.*'
left_out+=':SframeVectors.Command*:CoreFile.StackCommand*:Build.CommandLineToolIsBuilt'
left_out+=':LocalBacktrace.NeverAllocates*:*Ptrace*:FastBacktrace.StacksAreProbedWhereSeccomp*'
[ "$machine" = arm ] && left_out+=':GenerateElf.*'
cd "$build"
"$qemu" -L "/usr/$triplet" tests/framewalk_tests --gtest_filter="-$left_out" --gtest_brief=1
# framewalk_backtrace's cost per frame beside a frame-pointer walk and
# glibc's backtrace(), under qemu (ratios only: qemu distorts absolute
# times); on AArch64 the frame-pointer walk must follow the recursion too.
if [ "$machine" = aarch64 ]; then
  "$qemu" -L "/usr/$triplet" bench/backtrace_per_frame 64 51 1
else
  "$qemu" -L "/usr/$triplet" bench/backtrace_per_frame 64 51 0
fi
