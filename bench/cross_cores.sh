#!/usr/bin/env bash
# Dumping an AArch64 core against dumping the x86-64 core of the same program
# shape, in the same run: bench/deep_threads.c with THREADS threads (128) each
# blocked 33 frames deep, built natively (the kernel writes its core) and
# with aarch64-linux-gnu-gcc (run under qemu-aarch64, which writes the guest
# core), both with 256 KiB thread stacks. Times `framewalk stack --core` and
# eu-stack on each core (medians over RUNS) and reports the ratios; checks
# that framewalk walked every thread to its natural end.
set -eu
fw=$(realpath "${1:?usage: cross_cores.sh FRAMEWALK [THREADS] [RUNS]}")
threads=${2:-128}
runs=${3:-5}
src=$(cd "$(dirname "$0")" && pwd)/deep_threads.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
ulimit -c unlimited
[[ $(cat /proc/sys/kernel/core_pattern) == core* ]] || { echo "kernel cores must go to files (core_pattern)" >&2; exit 77; }
command -v aarch64-linux-gnu-gcc qemu-aarch64 > /dev/null || { echo "no aarch64-linux-gnu-gcc or qemu-aarch64" >&2; exit 77; }

median_ms() {
  local times=()
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" > /dev/null 2>&1 || true
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a/b}'; }

mkdir x86 a64
gcc -O2 -fomit-frame-pointer -pthread "$src" -o x86/deep_threads
aarch64-linux-gnu-gcc -O2 -fomit-frame-pointer -no-pie -pthread "$src" -o a64/deep_threads
(cd x86 && ./deep_threads "$threads" 33 abort 256 > /dev/null 2>&1 || true)
x86_core=$(ls x86/core* | head -n 1)
(cd a64 && echo 0 > /proc/self/coredump_filter &&
  qemu-aarch64 -L /usr/aarch64-linux-gnu ./deep_threads "$threads" 33 abort 256 > /dev/null 2>&1 || true)
a64_core=$(ls a64/qemu_*.core | head -n 1)
rm -f a64/core*  # the host qemu process's own

check() {  # check CORE ARGS...: every thread to its natural end
  local out
  out=$("$fw" stack --core "$@" --format=json 2> /dev/null) || { echo "framewalk stopped early on $1" >&2; exit 1; }
  python3 -c 'import json,sys; d=json.load(sys.stdin); t=d["threads"]; print(len(t), sum(len(x["frames"]) for x in t))' <<< "$out"
}
read -r x86_threads x86_frames <<< "$(check "$x86_core")"
read -r a64_threads a64_frames <<< "$(check "$a64_core" --sysroot /usr/aarch64-linux-gnu)"
echo "x86-64 core: $x86_threads threads, $x86_frames frames ($(du -h "$x86_core" | cut -f1))"
echo "AArch64 core: $a64_threads threads, $a64_frames frames ($(du -h "$a64_core" | cut -f1))"

t_x86=$(median_ms "$fw" stack --core "$x86_core")
t_a64=$(median_ms "$fw" stack --core "$a64_core" --sysroot /usr/aarch64-linux-gnu)
printf '%-10s %14s %14s %16s %16s\n' core framewalk_ms eu-stack_ms eu-stack/framewalk eu-stack_frames
if command -v eu-stack > /dev/null; then
  # eu-stack has no sysroot: on the AArch64 core it finds no libc and stops
  # early; its frame count says how far it got.
  eu_frames() { eu-stack --core "$1" -e "$2" 2> /dev/null | grep -c '^#'; }
  t_eu_x86=$(median_ms eu-stack --core "$x86_core" -e x86/deep_threads)
  t_eu_a64=$(median_ms eu-stack --core "$a64_core" -e a64/deep_threads)
  printf '%-10s %14s %14s %16s %16s\n' x86-64 "$t_x86" "$t_eu_x86" "$(ratio "$t_eu_x86" "$t_x86")" \
    "$(eu_frames "$x86_core" x86/deep_threads)"
  printf '%-10s %14s %14s %16s %16s\n' AArch64 "$t_a64" "$t_eu_a64" "$(ratio "$t_eu_a64" "$t_a64")" \
    "$(eu_frames "$a64_core" a64/deep_threads)"
else
  printf '%-10s %14s\n%-10s %14s\n' x86-64 "$t_x86" AArch64 "$t_a64"
fi
echo "AArch64/x86-64 framewalk time: $(ratio "$t_a64" "$t_x86")"
