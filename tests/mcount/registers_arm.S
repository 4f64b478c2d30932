// Register preservation around __gnu_mcount_nc on 32-bit ARM
// (registers_main.c), assembled as ARM or as Thumb-2 code (-marm, -mthumb):
// fw_registers_run(hook) loads r0-r11, the flags (N Z C V Q and GE) and
// d0-d15 from fw_expect, calls an "instrumented function" that starts as
// gcc -pg code does, `push {lr}; bl __gnu_mcount_nc`, and stores them into
// fw_after in the same layout (words 0-11: r0-r11; 12: the flags, masked to
// the bits a program can set; 13-44: d0-d15; 45: sp and 46: lr inside the
// instrumented function, before the push and after the call). Only ip may
// change.
        .syntax unified
        .arch   armv7-a
        .fpu    vfpv3-d16
        .data
        .globl  fw_expect, fw_after, fw_words, fw_hooks, fw_runtime_words
        .p2align 3
fw_expect: .zero 47 * 4
fw_after:  .zero 47 * 4
fw_words:  .long 47
fw_hooks:  .long 1
fw_runtime_words: .long 45, 46, -1

#ifdef __thumb__
#define FUNCTION(name) .type name, %function; .thumb_func; name:
#else
#define FUNCTION(name) .type name, %function; name:
#endif

        .text
        .globl  fw_registers_run
        .p2align 2
FUNCTION(fw_registers_run)
        push    {r4, r5, r6, r7, r8, r9, r10, r11, lr}
        vpush   {d8-d15}
        sub     sp, sp, #4
        ldr     r0, =fw_expect
        ldr     r1, [r0, #48]
        ldr     r2, =0xf80f0000     // N Z C V Q, GE[3:0]
        and     r1, r1, r2
        str     r1, [r0, #48]       // the flags pattern, as far as it can be set
        add     r1, r0, #52
        vldmia  r1, {d0-d15}
        ldr     r1, [r0, #48]
        msr     APSR_nzcvqg, r1     // last but the loads, which leave the flags alone
        ldm     r0, {r0-r11}
        bl      fw_instrumented
        ldr     ip, =fw_after
        stm     ip, {r0-r11}
        mrs     r0, APSR
        ldr     r1, =0xf80f0000
        and     r0, r0, r1
        str     r0, [ip, #48]
        add     r1, ip, #52
        vstmia  r1, {d0-d15}
        add     sp, sp, #4
        vpop    {d8-d15}
        pop     {r4, r5, r6, r7, r8, r9, r10, r11, pc}
        .ltorg
        .size   fw_registers_run, .-fw_registers_run

        .p2align 2
FUNCTION(fw_instrumented)
        ldr     ip, =fw_expect
        str     sp, [ip, #180]
        str     lr, [ip, #184]
        push    {lr}                // gcc -pg: ARM state encodes it as str lr, [sp, #-4]!
        bl      __gnu_mcount_nc
        ldr     ip, =fw_after
        str     sp, [ip, #180]
        str     lr, [ip, #184]
        bx      lr
        .ltorg
        .size   fw_instrumented, .-fw_instrumented

        .section .note.GNU-stack,"",%progbits
