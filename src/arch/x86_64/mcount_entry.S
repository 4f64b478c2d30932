// The mcount runtime's entry points on x86-64 (src/mcount/runtime.cpp).
//
// gcc -pg calls mcount after the prologue `push %rbp; mov %rsp,%rbp`
// (`call *mcount@GOTPCREL(%rip)` in PIE code, `call mcount` otherwise); -pg
// forces the frame pointer, so the instrumented function's return address
// (from_pc, in its caller) is 8(%rbp) and mcount's own return address is
// self_pc. gcc -pg -mfentry calls __fentry__ as the function's first
// instruction: self_pc at 0(%rsp), from_pc at 8(%rsp). Either way the
// function's arguments are live: rdi rsi rdx rcx r8 r9, rax (the vector
// register count of a varargs call), r10 (a nested function's static chain)
// and xmm0-7. The stub saves the general ones and r11; the C side is built
// with -mgeneral-regs-only and calls nothing on the hot path, so it leaves
// the vector registers alone, and the stub saves xmm0-7 itself only around
// framewalk_mcount_slow (a thread's first call), which calls into the C
// library. The stack is aligned to 16 bytes before C is called: gcc gives
// no alignment at the call (a leaf at -O0 calls mcount with rsp % 16 == 0).
//
// Before all that, the first probe (src/mcount/first_probe.h): with rax and
// rcx pushed (the only registers it uses), the thread's entry for the arc
// is looked up and, when it points to the arc's slot, the call is added
// with one instruction (no signal can split it) and the stub returns. A
// thread without state has no first probe (nullptr), and any miss goes the
// full way above.
#include "mcount/first_probe.h"

        .text

// The first probe, from_pc at `from` (an operand that stays valid with rax
// and rcx pushed), self_pc at 16(%rsp): returns on a hit, falls through on
// a miss with the stack and registers as it found them. The flags are not
// kept (no call keeps them on x86-64).
.macro FIRST_PROBE from
        movq    \from, %rcx
        movq    16(%rsp), %rax
        xorq    %rcx, %rax
        imulq   $FRAMEWALK_MCOUNT_PROBE_MULTIPLIER, %rax, %rax
        shrq    $FRAMEWALK_MCOUNT_PROBE_SHIFT, %rax
        andl    $((1 << FRAMEWALK_MCOUNT_PROBE_BITS) - 1), %eax
        movq    framewalk_mcount_probe@GOTTPOFF(%rip), %rcx
        movq    %fs:(%rcx), %rcx
        testq   %rcx, %rcx
        jz      1f
        movq    (%rcx,%rax,8), %rcx
        testq   %rcx, %rcx
        jz      1f
        movq    \from, %rax
        cmpq    %rax, FRAMEWALK_MCOUNT_SLOT_FROM_PC(%rcx)
        jne     1f
        movq    16(%rsp), %rax
        cmpq    %rax, FRAMEWALK_MCOUNT_SLOT_SELF_PC(%rcx)
        jne     1f
        cmpl    $0, framewalk_mcount_counting(%rip)
        je      2f
        addq    $1, FRAMEWALK_MCOUNT_SLOT_COUNT(%rcx)
2:
        .cfi_remember_state
        popq    %rcx
        .cfi_adjust_cfa_offset -8
        popq    %rax
        .cfi_adjust_cfa_offset -8
        ret
        .cfi_restore_state
1:
        popq    %rcx
        .cfi_adjust_cfa_offset -8
        popq    %rax
        .cfi_adjust_cfa_offset -8
.endm

.macro PROBE_SAVE
        pushq   %rax
        .cfi_adjust_cfa_offset 8
        pushq   %rcx
        .cfi_adjust_cfa_offset 8
.endm

// A frame of our own at rbp (its return address at 8(%rbp)), the stack
// aligned, the argument registers and r11 saved at 0..64(%rsp).
.macro MCOUNT_SAVE
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        andq    $-16, %rsp
        subq    $80, %rsp
        GENERAL_SAVE
.endm

// The argument and return registers and r11 at 0..64(%rsp).
.macro GENERAL_SAVE
        movq    %rax, 0(%rsp)
        movq    %rcx, 8(%rsp)
        movq    %rdx, 16(%rsp)
        movq    %rsi, 24(%rsp)
        movq    %rdi, 32(%rsp)
        movq    %r8, 40(%rsp)
        movq    %r9, 48(%rsp)
        movq    %r10, 56(%rsp)
        movq    %r11, 64(%rsp)
.endm

// xmm0-7 below the saved general registers, for C code that may call into
// the C library.
.macro VECTOR_SAVE
        subq    $128, %rsp
        movdqa  %xmm0, 0(%rsp)
        movdqa  %xmm1, 16(%rsp)
        movdqa  %xmm2, 32(%rsp)
        movdqa  %xmm3, 48(%rsp)
        movdqa  %xmm4, 64(%rsp)
        movdqa  %xmm5, 80(%rsp)
        movdqa  %xmm6, 96(%rsp)
        movdqa  %xmm7, 112(%rsp)
.endm
.macro VECTOR_RESTORE
        movdqa  0(%rsp), %xmm0
        movdqa  16(%rsp), %xmm1
        movdqa  32(%rsp), %xmm2
        movdqa  48(%rsp), %xmm3
        movdqa  64(%rsp), %xmm4
        movdqa  80(%rsp), %xmm5
        movdqa  96(%rsp), %xmm6
        movdqa  112(%rsp), %xmm7
        addq    $128, %rsp
.endm
// The registers MCOUNT_SAVE saved, back (the stack as MCOUNT_SAVE left it).
.macro GENERAL_RESTORE
        movq    0(%rsp), %rax
        movq    8(%rsp), %rcx
        movq    16(%rsp), %rdx
        movq    24(%rsp), %rsi
        movq    32(%rsp), %rdi
        movq    40(%rsp), %r8
        movq    48(%rsp), %r9
        movq    56(%rsp), %r10
        movq    64(%rsp), %r11
.endm

        .globl  mcount
        .type   mcount, @function
        .globl  _mcount
        .type   _mcount, @function
        .p2align 4
mcount:
_mcount:
        .cfi_startproc
        PROBE_SAVE
        FIRST_PROBE 8(%rbp)      // from_pc: the instrumented function's return address
        MCOUNT_SAVE
        movq    0(%rbp), %rdi    // the instrumented function's frame pointer
        movq    8(%rdi), %rdi    // from_pc: its return address
        movq    8(%rbp), %rsi    // self_pc: our return address
        jmp     .Lmcount_common
        .cfi_endproc
        .size   mcount, .-mcount
        .size   _mcount, .-_mcount

        .globl  __fentry__
        .type   __fentry__, @function
        .p2align 4
__fentry__:
        .cfi_startproc
        cmpl    $0, framewalk_mcount_patching(%rip)
        jne     .Lfentry_patching
        PROBE_SAVE
        FIRST_PROBE 24(%rsp)     // from_pc: the instrumented function's return address
        MCOUNT_SAVE
        movq    16(%rbp), %rdi   // from_pc: the instrumented function's return address
        movq    8(%rbp), %rsi    // self_pc: our return address, its first instruction's end
.Lmcount_common:
        movq    %rdi, 72(%rsp)   // kept for the slow path (80 bytes: 9 registers and these)
        call    framewalk_mcount_fast
        testl   %eax, %eax
        jnz     .Lmcount_slow
.Lmcount_restore:
        GENERAL_RESTORE
        leave
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_def_cfa %rbp, 16
.Lmcount_slow:
        // A thread's first call: the C library may touch the vector registers.
        VECTOR_SAVE
        movq    200(%rsp), %rdi  // from_pc (72 + 128)
        movq    8(%rbp), %rsi    // self_pc
        call    framewalk_mcount_slow
        VECTOR_RESTORE
        jmp     .Lmcount_restore
        .cfi_endproc
        .size   __fentry__, .-__fentry__

// FRAMEWALK_MCOUNT_FENTRY_TIMES=1 (runtime.cpp: return-address patching):
// every __fentry__ call goes here, the whole frame saved, vector registers
// too; framewalk_mcount_fentry_patch counts the arc and may replace the
// instrumented function's return address (at 16(%rbp)) with
// framewalk_mcount_return's.
        .type   fentry_patching, @function
        .p2align 4
fentry_patching:
.Lfentry_patching:
        .cfi_startproc
        MCOUNT_SAVE
        VECTOR_SAVE
        movq    16(%rbp), %rdi   // from_pc: the instrumented function's return address
        movq    8(%rbp), %rsi    // self_pc
        leaq    16(%rbp), %rdx   // where that return address is
        call    framewalk_mcount_fentry_patch
        VECTOR_RESTORE
        GENERAL_RESTORE
        leave
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   fentry_patching, .-fentry_patching

// Where a patched function returns to: every register but the flags kept
// (its return values in rax, rdx, xmm0 and xmm1, and whatever a caller that
// knows its callee's registers may keep in the others; st0 and the other
// vector registers are left alone, as the C side is) around
// framewalk_mcount_fentry_return, which ends the activation whose return
// address was in the slot just above the stack and gives that address back,
// to return to from the slot. An unwinder stops here (no caller it could find).
        .globl  framewalk_mcount_return
        .hidden framewalk_mcount_return
        .type   framewalk_mcount_return, @function
        .p2align 4
framewalk_mcount_return:
        .cfi_startproc
        .cfi_undefined rip
        pushq   $0               // the slot again: the address to return to
        pushq   %rbp
        movq    %rsp, %rbp
        andq    $-16, %rsp
        subq    $112, %rsp
        GENERAL_SAVE
        movdqa  %xmm0, 80(%rsp)
        movdqa  %xmm1, 96(%rsp)
        leaq    8(%rbp), %rdi
        call    framewalk_mcount_fentry_return
        movq    %rax, 8(%rbp)
        movdqa  80(%rsp), %xmm0
        movdqa  96(%rsp), %xmm1
        GENERAL_RESTORE
        leave
        ret
        .cfi_endproc
        .size   framewalk_mcount_return, .-framewalk_mcount_return

        .section .note.GNU-stack,"",@progbits
