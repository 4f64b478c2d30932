#!/usr/bin/env bash
# The mcount runtime (libframewalk_mcount) on AArch64, 32-bit ARM, i386, riscv64, s390x and ppc64le:
# cross-builds the runtime and the programs of tests/mcount/ (in the build
# directory tests/cross/inprocess.sh uses, with its options) and runs them
# under qemu-user (i386 natively): exact call counts in gmon.out, in gprof's call graph (the
# cross binutils' gprof) and in the runtime's own arcs, with 8 threads
# (ARM: Thumb-2 and ARM-state programs; i386: -mfentry and non-PIE ones); a fork and a dump on request; more
# arcs than a thread's first table holds; the histogram's samples against a
# known CPU time (CPU-time timers work under qemu-user), in the function
# that spends it and in threads that call no hook (preloaded, and static
# with the runtime's --wrap options); -finstrument-functions' exact times,
# a shared library's functions among them (preloaded and static); the
# registers around the hook (ARM: called from Thumb-2 and from ARM code).
# Not here: framewalk profile --mcount (the cross build has no framewalk
# command, and it runs programs of its own machine only).
#
#   tests/cross/mcount.sh [aarch64|arm|i386|riscv64|s390x|ppc64le] [BUILD_DIR]   (default aarch64, build-MACHINE)
#
# i386 runs the exact counts, fork, many arcs and the registers only: the
# histograms' CPU time and the hooks' times are the C side's, as on x86-64,
# and would add seconds to CI. riscv64 and ppc64le run the same and the
# histograms at 100 Hz (the interrupted PC read from the machine's ucontext;
# about 2 s), s390x one histogram (busy at 1000 Hz: the interrupted PC from
# the ucontext's PSW is the machine's part). Exit 77 (skipped) without the
# cross compiler or qemu.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
machine=${1:-aarch64}
build=$(realpath -m "${2:-$src/build-$machine}")  # absolute: the register test runs from its own directory
hist_rates="100 1000" hist_modes="busy thread" static_modes="thread threads" times=yes
case $machine in
  aarch64) variants="pg cyg linked static" registers="native" ;;
  arm) variants="pg arm cyg linked static" registers="thumb arm" ;;
  i386) variants="pg fentry nopie cyg linked static" registers="native" hist_rates= times= ;;
  riscv64|ppc64le) variants="pg cyg linked static" registers="native" hist_rates=100 times= ;;
  s390x) variants="pg cyg linked static" registers="native" hist_rates=1000 hist_modes=busy static_modes= times= ;;
esac
. "$src/tests/cross/cross_build.sh"
cross_configure "$machine" gprof nm
command -v python3 > /dev/null || { echo "skip: no python3"; exit 77; }
ninja -C "$build" -j1 mcount_tests
bin=$build/tests/mcount
check=$src/tests/mcount/check_gmon.py
tools=(--nm "$triplet-nm" --gprof "$triplet-gprof" --qemu "$run")
lib=$build/libframewalk_mcount.so
for variant in $variants; do
  echo "== $machine: mcount_exact_$variant"
  if [ "$variant" = linked ]; then
    python3 "$check" exact --exe "$bin/mcount_exact_$variant" --counted --work "$bin/work/$variant" "${tools[@]}"
  elif [ "$variant" = static ]; then
    python3 "$check" exact --exe "$bin/mcount_exact_$variant" --work "$bin/work/$variant" "${tools[@]}"
  else
    python3 "$check" exact --exe "$bin/mcount_exact_$variant" --preload "$lib" --work "$bin/work/$variant" "${tools[@]}"
  fi
done
echo "== $machine: mcount_fork_calls"
python3 "$check" fork --exe "$bin/mcount_fork_calls" --preload "$lib" --work "$bin/work/fork" "${tools[@]}"
echo "== $machine: mcount_many_arcs"
mkdir -p "$bin/work/many_arcs"
(cd "$bin/work/many_arcs" && $run "$bin/mcount_many_arcs")
for hz in $hist_rates; do
  for mode in $hist_modes; do
    echo "== $machine: mcount_cpu_time $mode at $hz Hz"
    python3 "$check" histogram --exe "$bin/mcount_cpu_time" --preload "$lib" --run $mode --hz $hz \
      --work "$bin/work/histogram_${mode}_$hz" "${tools[@]}"
  done
  for mode in $static_modes; do
    echo "== $machine: mcount_cpu_time_static $mode at $hz Hz"
    python3 "$check" histogram --exe "$bin/mcount_cpu_time_static" --run $mode --hz $hz \
      --work "$bin/work/histogram_static_${mode}_$hz" "${tools[@]}"
  done
done
if [ -n "$times" ]; then
  echo "== $machine: mcount_timed_calls"
  python3 "$check" times --exe "$bin/mcount_timed_calls" --preload "$lib" --work "$bin/work/times" "${tools[@]}"
  echo "== $machine: mcount_timed_calls_static"
  python3 "$check" times --exe "$bin/mcount_timed_calls_static" --work "$bin/work/times_static" "${tools[@]}"
fi
for variant in $registers; do
  echo "== $machine: mcount_registers_$variant"
  mkdir -p "$bin/work/registers"
  (cd "$bin/work/registers" && $run "$bin/mcount_registers_$variant")
done
