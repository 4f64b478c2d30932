#!/usr/bin/env bash
# The call sequences of gcc's profiling hooks, from gcc's own output: what
# the entry stubs (src/arch/*/mcount_entry.S) and registers_*.S assume.
# A function is compiled with each hook and its first instructions are
# disassembled with their relocations:
#   x86-64 -pg (PIE, -O0 and -O2): push %rbp; mov %rsp,%rbp; [sub $n,%rsp;] call *mcount@GOTPCREL(%rip)
#   x86-64 -pg -fno-pie: push %rbp; mov %rsp,%rbp; call mcount (through the PLT)
#   x86-64 -pg -mfentry: call *__fentry__@GOTPCREL(%rip), the first instruction
#   AArch64 -pg: stp x29, x30, ...; ... xpaclri; ... mov x0, x30; bl _mcount
#   ARM -pg, Thumb-2: push {lr} (0xb500); bl __gnu_mcount_nc
#   ARM -pg, ARM state: push {lr} encoded as str lr, [sp, #-4]! (0xe52de004); bl __gnu_mcount_nc
#   s390x -pg: stg %r14,8(%r15); brasl %r14,_mcount@PLT; lg %r14,8(%r15), before the prologue
# The cross compilers' cases are skipped when they are missing; exit 77 when
# there is no gcc at all.
set -euo pipefail
command -v gcc > /dev/null || { echo "skip: no gcc"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'int g(int);\nint f(int x) { return g(x) + 1; }\n' > "$work/f.c"
failures=0
checked=0

# sequence PREFIX FLAGS... : f's first instructions and relocations, one line, `;` between them.
sequence() {
  local prefix=$1
  shift
  "${prefix}gcc" "$@" -c "$work/f.c" -o "$work/f.o"
  "${prefix}objdump" -dr "$work/f.o" | sed -n '/<f>:/,$p' | sed 1d | head -n 12 |
    sed -E -e 's/^ +[0-9a-f]+:\t//' -e 's/^\t+[0-9a-f]+: //' -e 's/ +# [0-9a-f]+ <[^>]*>$//' -e 's/\t+/ /g' -e 's/ +/ /g' |
    tr '\n' ';'
}

# expect NAME REGEX PREFIX FLAGS...
expect() {
  local name=$1 regex=$2 prefix=$3
  shift 3
  if ! command -v "${prefix}gcc" > /dev/null; then
    echo "skip: $name (no ${prefix}gcc)"
    return
  fi
  local got
  got=$(sequence "$prefix" "$@")
  checked=$((checked + 1))
  if [[ $got =~ $regex ]]; then
    echo "ok: $name"
  else
    echo "FAIL: $name: $got"
    echo "  expected: $regex"
    failures=$((failures + 1))
  fi
}

x='[0-9a-f]+'
expect "x86-64 -pg PIE -O2" "^55 push %rbp;48 89 e5 mov %rsp,%rbp;ff 15 00 00 00 00 call \*0x0\(%rip\);R_X86_64_GOTPCRELX mcount-0x4;" "" -O2 -pg
expect "x86-64 -pg PIE -O0" "^55 push %rbp;48 89 e5 mov %rsp,%rbp;48 83 ec $x sub \\\$0x$x,%rsp;ff 15 00 00 00 00 call \*0x0\(%rip\);R_X86_64_GOTPCRELX mcount-0x4;" "" -O0 -pg
expect "x86-64 -pg -fno-pie" "^55 push %rbp;48 89 e5 mov %rsp,%rbp;e8 00 00 00 00 call $x <f\+0x$x>;R_X86_64_PLT32 mcount-0x4;" "" -O2 -pg -fno-pie
expect "x86-64 -pg -mfentry" "^ff 15 00 00 00 00 call \*0x0\(%rip\);R_X86_64_GOTPCRELX __fentry__-0x4;" "" -O2 -pg -mfentry
expect "AArch64 -pg -O2" "^$x stp x29, x30, \[sp, #-$x\]!;$x mov x29, sp;.*d50320ff xpaclri;($x mov w19, w0;)?aa1e03e0 mov x0, x30;94000000 bl 0 <_mcount>;R_AARCH64_CALL26 _mcount;" aarch64-linux-gnu- -O2 -pg
expect "AArch64 -pg pac-ret" "^d503233f paciasp;.*d50320ff xpaclri;.*aa1e03e0 mov x0, x30;94000000 bl 0 <_mcount>;R_AARCH64_CALL26 _mcount;" aarch64-linux-gnu- -O2 -pg -mbranch-protection=pac-ret
expect "ARM -pg Thumb-2" "b500 push \{lr\};f7ff fffe bl 0 <__gnu_mcount_nc>;R_ARM_THM_CALL __gnu_mcount_nc;" arm-linux-gnueabihf- -O2 -pg -mthumb
expect "ARM -pg ARM state" "e52de004 push \{lr\}.*;ebfffffe bl 0 <__gnu_mcount_nc>;R_ARM_CALL __gnu_mcount_nc;" arm-linux-gnueabihf- -O2 -pg -marm
expect "ARM -pg ARM state -O0" "e52de004 push \{lr\}.*;ebfffffe bl 0 <__gnu_mcount_nc>;R_ARM_CALL __gnu_mcount_nc;" arm-linux-gnueabihf- -O0 -pg -marm
expect "s390x -pg -O2" "^e3 e0 f0 08 00 24 stg %r14,8\(%r15\);c0 e5 00 00 00 00 brasl %r14,$x <f\+0x$x>;R_390_PLT32DBL _mcount\+0x2;e3 e0 f0 08 00 04 lg %r14,8\(%r15\);" s390x-linux-gnu- -O2 -pg
echo "$checked sequences checked, $failures wrong"
[ "$failures" = 0 ]
