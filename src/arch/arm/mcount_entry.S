// The mcount runtime's entry point on 32-bit ARM (src/mcount/runtime.cpp).
//
// gcc -pg starts each function (ARM and Thumb code alike) with
//     push {lr}            (ARM state: str lr, [sp, #-4]!)
//     bl   __gnu_mcount_nc
// so at entry lr is a PC inside the instrumented function (self_pc; bit 0
// set in Thumb code) and [sp] is the word the caller pushed, the
// instrumented function's own return address (from_pc). The stub must leave
// every register as it was but ip (r12): r0-r3 (arguments), r4-r11, the
// flags (the condition flags, Q and GE), the VFP registers; it pops the
// pushed word back into lr and returns to the instrumented function through
// ip, in its instruction set (bx). The C side is built with
// -mgeneral-regs-only and keeps r4-r11 by the AAPCS; the stub saves r0-r3,
// the flags and, around framewalk_mcount_slow (a thread's first call, which
// calls into the C library), d0-d7 (the VFP argument registers) and the
// FPSCR. Seven words pushed on top of the caller's one keep the stack
// 8-byte aligned for C.
        .syntax unified
        .arch   armv7-a
        .fpu    vfpv3-d16
        .arm
        .text
        .globl  __gnu_mcount_nc
        .type   __gnu_mcount_nc, %function
        .p2align 2
__gnu_mcount_nc:
        .cfi_startproc
        // The instrumented function's frame starts at the entry sp (its rows
        // already count the pushed word); the return into it is in lr.
        push    {r0, r1, r2, r3, r4, r5, lr}
        .cfi_def_cfa_offset 28
        .cfi_offset lr, -4
        mrs     r4, APSR
        ldr     r0, [sp, #28]       // from_pc: the word the caller pushed
        bic     r0, r0, #1
        bic     r1, lr, #1          // self_pc
        bl      framewalk_mcount_fast
        cmp     r0, #0
        bne     .Lmcount_slow
.Lmcount_restore:
        msr     APSR_nzcvqg, r4
        pop     {r0, r1, r2, r3, r4, r5, ip}   // ip: the return into the instrumented function
        pop     {lr}                            // the caller's lr
        bx      ip
.Lmcount_slow:
        vpush   {d0-d7}
        vmrs    r5, fpscr
        ldr     r0, [sp, #92]       // from_pc (28 + 64)
        bic     r0, r0, #1
        ldr     r1, [sp, #88]       // self_pc: lr at entry (24 + 64)
        bic     r1, r1, #1
        bl      framewalk_mcount_slow
        vmsr    fpscr, r5
        vpop    {d0-d7}
        b       .Lmcount_restore
        .cfi_endproc
        .size   __gnu_mcount_nc, .-__gnu_mcount_nc

        .section .note.GNU-stack,"",%progbits
