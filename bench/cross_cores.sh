#!/usr/bin/env bash
# Dumping cores of other machines against dumping the x86-64 core of the same
# program shape, in the same run: bench/deep_threads.c with THREADS threads
# (128) each blocked 33 frames deep, built natively (the kernel writes its
# core) and with each machine's cross compiler (run under qemu-user, which
# writes the guest core), all with 256 KiB thread stacks. Times `framewalk
# stack --core` and eu-stack on each core (medians over RUNS) and reports the
# ratios; checks that framewalk walked every thread to its natural end.
# qemu-user writes no riscv64 or sparc64 core: theirs are made from a
# snapshot saved through qemu's gdb stub (tests/cross/stub_snapshots.py
# --program, tests/cross/snapshot_core.py), as a kernel would write them.
#
#   bench/cross_cores.sh FRAMEWALK [THREADS] [RUNS] [MACHINE...]
# MACHINE: aarch64, arm, ppc, ppc64le, s390x, riscv64, sparc64 (default: those
# whose cross compiler and qemu are installed; gdb-multiarch for the last two).
set -eu
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"
fw=$(realpath "${1:?usage: cross_cores.sh FRAMEWALK [THREADS] [RUNS] [MACHINE...]}")
threads=${2:-128}
runs=${3:-5}
shift $(($# < 3 ? $# : 3))
src=$(cd "$(dirname "$0")" && pwd)/deep_threads.c
tests=$(cd "$(dirname "$0")/../tests/cross" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
ulimit -c unlimited
[[ $(cat /proc/sys/kernel/core_pattern) == core* ]] || { echo "kernel cores must go to files (core_pattern)" >&2; exit 77; }

triplet_of() {
  case $1 in
    aarch64) echo aarch64-linux-gnu ;;
    arm) echo arm-linux-gnueabihf ;;
    ppc) echo powerpc-linux-gnu ;;
    ppc64le) echo powerpc64le-linux-gnu ;;
    s390x) echo s390x-linux-gnu ;;
    riscv64) echo riscv64-linux-gnu ;;
    sparc64) echo sparc64-linux-gnu ;;
    *) echo "unknown machine $1" >&2; exit 2 ;;
  esac
}
machines=("$@")
if [ ${#machines[@]} -eq 0 ]; then
  for m in aarch64 arm ppc ppc64le s390x riscv64 sparc64; do
    command -v "$(triplet_of $m)-gcc" "qemu-$m" > /dev/null && machines+=("$m")
  done
fi
[ ${#machines[@]} -gt 0 ] || { echo "no cross compiler with its qemu-user" >&2; exit 77; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a/b}'; }

check() {  # check CORE ARGS...: every thread to its natural end
  local out
  out=$("$fw" stack --core "$@" --format=json 2> /dev/null) || { echo "framewalk stopped early on $1" >&2; exit 1; }
  python3 -c 'import json,sys; d=json.load(sys.stdin); t=d["threads"]; print(len(t), sum(len(x["frames"]) for x in t))' <<< "$out"
}

mkdir x86-64
gcc -O2 -fomit-frame-pointer -pthread "$src" -o x86-64/deep_threads
(cd x86-64 && ./deep_threads "$threads" 33 abort 256 > /dev/null 2>&1 || true) 2> /dev/null
declare -A core sysroot
core[x86-64]=$(ls x86-64/core* | head -n 1)
sysroot[x86-64]=
for m in "${machines[@]}"; do
  t=$(triplet_of "$m")
  mkdir "$m"
  "$t-gcc" -O2 -fomit-frame-pointer -no-pie -pthread "$src" -o "$m/deep_threads"
  if [ "$m" = riscv64 ] || [ "$m" = sparc64 ]; then
    core[$m]=$(python3 "$tests/stub_snapshots.py" --machine "$m" --framewalk "$fw" --work "$m/snapshot" \
      --timeout 600 --program "$PWD/$m/deep_threads" "$threads" 33 abort 256)
  else
    (cd "$m" && echo 0 > /proc/self/coredump_filter &&
      "qemu-$m" -L "/usr/$t" ./deep_threads "$threads" 33 abort 256 > /dev/null 2>&1 || true) 2> /dev/null
    core[$m]=$(ls "$m"/qemu_*.core | head -n 1)
  fi
  sysroot[$m]=/usr/$t
  rm -f "$m"/core*  # the host qemu process's own
done

all=(x86-64 "${machines[@]}")
for m in "${all[@]}"; do
  args=("${core[$m]}")
  [ -n "${sysroot[$m]}" ] && args+=(--sysroot "${sysroot[$m]}")
  read -r n_threads n_frames <<< "$(check "${args[@]}")"
  echo "$m core: $n_threads threads, $n_frames frames ($(du -h "${core[$m]}" | cut -f1))"
done

printf '%-10s %14s %14s %18s %16s %14s\n' core framewalk_ms eu-stack_ms eu-stack/framewalk eu-stack_frames vs_x86-64
declare -A t_fw
for m in "${all[@]}"; do
  args=("${core[$m]}")
  [ -n "${sysroot[$m]}" ] && args+=(--sysroot "${sysroot[$m]}")
  t_fw[$m]=$(median_ms "$fw" stack --core "${args[@]}")
  if command -v eu-stack > /dev/null; then
    # eu-stack has no sysroot: on a qemu core it finds no libc and stops
    # early (or reads nothing); its frame count says how far it got.
    t_eu=$(median_ms eu-stack --core "${core[$m]}" -e "$m/deep_threads")
    eu_frames=$(eu-stack --core "${core[$m]}" -e "$m/deep_threads" 2> /dev/null | grep -c '^#' || true)
    printf '%-10s %14s %14s %18s %16s %14s\n' "$m" "${t_fw[$m]}" "$t_eu" "$(ratio "$t_eu" "${t_fw[$m]}")" \
      "$eu_frames" "$(ratio "${t_fw[$m]}" "${t_fw[x86-64]}")"
  else
    printf '%-10s %14s %14s %18s %16s %14s\n' "$m" "${t_fw[$m]}" - - - "$(ratio "${t_fw[$m]}" "${t_fw[x86-64]}")"
  fi
done
