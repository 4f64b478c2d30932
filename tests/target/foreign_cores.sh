#!/usr/bin/env bash
# Real cores of other machines: a program that aborts, cross-built for
# AArch64, 32-bit ARM, ppc64le and ppc and run under qemu-user (which writes the guest's
# core itself), and built for i386 and run natively (the kernel's core).
# For a machine framewalk unwinds, `framewalk stack --core --sysroot` must walk
# the core from abort() to _start (tests/cross compares such cores with gdb
# frame by frame); for the others it must name the machine and exit 2.
# Machines whose compiler or qemu is missing are skipped; exit 77 when none
# could be tried.
set -u
framewalk=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
printf '#include <stdlib.h>\nint main(void) { abort(); }\n' > abort.c
ulimit -c unlimited
echo 0 > /proc/self/coredump_filter 2> /dev/null  # keep the qemu process's own core tiny

tried=0 failed=0
check() {  # check MACHINE-NAME CORE SYSROOT [OUTERMOST-FUNCTION, _start by default]
  local name=$1 core=$2 sysroot=$3 outermost=${4:-_start} out status
  out=$("$framewalk" stack --core "$core" --sysroot "$sysroot" 2>&1)
  status=$?
  tried=$((tried + 1))
  if [[ $out == *"framewalk cannot unwind"* ]]; then
    local want="framewalk: $core: a core file of $name: framewalk cannot unwind $name yet (it unwinds "
    if [[ $status -ne 2 || $out != "$want"*")" ]]; then
      echo "FAIL $name: exit $status, said: $out" >&2
      failed=$((failed + 1))
    else
      echo "ok   $name (named, not unwound)"
    fi
    return
  fi
  # Unwound: frame 0 in libc, abort() and main() on the way, _start last.
  if [[ $status -ne 0 || $out != *" abort+"* || $out != *" main+"* || $(grep -c . <<< "$out") -lt 5 ||
        $(grep ' - ' <<< "$out" | tail -n 1) != *" $outermost+"* ]]; then
    echo "FAIL $name: exit $status, said: $out" >&2
    failed=$((failed + 1))
  else
    echo "ok   $name"
  fi
}

# check_qemu NAME COMPILER QEMU SYSROOT [OUTERMOST-FUNCTION]
check_qemu() {
  local name=$1 cc=$2 qemu=$3 sysroot=$4 outermost=${5:-_start}
  command -v "$cc" > /dev/null && command -v "$qemu" > /dev/null || { echo "skip $name (no $cc or $qemu)"; return; }
  "$cc" -O1 abort.c -o "prog-$name" || { echo "FAIL $name: $cc failed" >&2; failed=$((failed + 1)); return; }
  ("$qemu" -L "$sysroot" "./prog-$name"; true) 2> /dev/null
  local core
  core=$(ls qemu_prog-"$name"_*.core 2> /dev/null | head -n 1)
  [[ -n $core ]] || { echo "FAIL $name: qemu wrote no core" >&2; failed=$((failed + 1)); return; }
  check "$name" "$core" "$sysroot" "$outermost"
}
check_qemu AArch64 aarch64-linux-gnu-gcc qemu-aarch64 /usr/aarch64-linux-gnu
check_qemu ARM arm-linux-gnueabihf-gcc qemu-arm /usr/arm-linux-gnueabihf
# glibc's ppc64 _start branches to __libc_start_main without a link: the
# stack ends there (the return address it saved is 0).
check_qemu ppc64le powerpc64le-linux-gnu-gcc qemu-ppc64le /usr/powerpc64le-linux-gnu __libc_start_main
check_qemu ppc powerpc-linux-gnu-gcc qemu-ppc /usr/powerpc-linux-gnu __libc_start_main  # so does ppc32's

# i386 runs here; its core is the kernel's, when core_pattern writes a file.
if command -v i686-linux-gnu-gcc > /dev/null && [[ $(cat /proc/sys/kernel/core_pattern) == core* ]]; then
  # The kernel's usual filter (anonymous memory, the stack among it): the
  # walk reads the stack from the core.
  i686-linux-gnu-gcc -O1 abort.c -o prog-i386 && (echo 0x33 > /proc/self/coredump_filter; ./prog-i386; true) 2> /dev/null
  core=$(ls core* 2> /dev/null | head -n 1)
  if [[ -n $core ]]; then check i386 "$work/$core" /; else echo "skip i386 (no core written)"; fi
else
  echo "skip i386 (no i686-linux-gnu-gcc, or cores are not written to files)"
fi

echo "foreign cores: $tried tried, $failed failed"
[[ $failed -eq 0 ]] || exit 1
[[ $tried -gt 0 ]] || exit 77
