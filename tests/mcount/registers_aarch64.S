// Register preservation around _mcount on AArch64 (registers_main.c):
// fw_registers_run(hook) loads x0-x8, x19-x29, q0-q7 and d8-d15 from
// fw_expect, calls an "instrumented function" with gcc -pg's sequence and
// stores them into fw_after in the same layout (words 0-8: x0-x8; 9-18:
// x19-x28; 19: x29; 20-35: q0-q7; 36-43: d8-d15; 44: sp and 45: x29 inside
// the instrumented function). x0 is gcc's argument, the function's return
// address (word 0, stored by the function itself); x9-x18 are free for
// _mcount by the AAPCS, as for any call.
//   hook 0: stp x29, x30, [sp, #-16]!; mov x29, sp; xpaclri; mov x0, x30; bl _mcount
//   hook 1: the same after paciasp (-mbranch-protection=pac-ret; a NOP without PAuth)
        .data
        .globl  fw_expect, fw_after, fw_words, fw_hooks, fw_runtime_words
        .p2align 4
fw_expect: .zero 46 * 8
fw_after:  .zero 46 * 8
fw_words:  .long 46
fw_hooks:  .long 2
fw_runtime_words: .long 0, 44, 45, -1

        .text
.macro ADDRESS reg, symbol
        adrp    \reg, \symbol
        add     \reg, \reg, :lo12:\symbol
.endm

        .globl  fw_registers_run
        .type   fw_registers_run, %function
        .p2align 2
fw_registers_run:
        stp     x29, x30, [sp, #-176]!
        mov     x29, sp
        stp     x19, x20, [sp, #16]
        stp     x21, x22, [sp, #32]
        stp     x23, x24, [sp, #48]
        stp     x25, x26, [sp, #64]
        stp     x27, x28, [sp, #80]
        stp     d8, d9, [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]
        ADDRESS x9, .Lhooks
        ldr     x10, [x9, w0, uxtw #3]
        str     x10, [sp, #160]
        ADDRESS x16, fw_expect
        ldp     q0, q1, [x16, #160]
        ldp     q2, q3, [x16, #192]
        ldp     q4, q5, [x16, #224]
        ldp     q6, q7, [x16, #256]
        ldp     d8, d9, [x16, #288]
        ldp     d10, d11, [x16, #304]
        ldp     d12, d13, [x16, #320]
        ldp     d14, d15, [x16, #336]
        ldp     x0, x1, [x16, #0]
        ldp     x2, x3, [x16, #16]
        ldp     x4, x5, [x16, #32]
        ldp     x6, x7, [x16, #48]
        ldr     x8, [x16, #64]
        ldp     x19, x20, [x16, #72]
        ldp     x21, x22, [x16, #88]
        ldp     x23, x24, [x16, #104]
        ldp     x25, x26, [x16, #120]
        ldp     x27, x28, [x16, #136]
        ldr     x29, [x16, #152]
        blr     x10
        ADDRESS x16, fw_after
        stp     x0, x1, [x16, #0]
        stp     x2, x3, [x16, #16]
        stp     x4, x5, [x16, #32]
        stp     x6, x7, [x16, #48]
        str     x8, [x16, #64]
        stp     x19, x20, [x16, #72]
        stp     x21, x22, [x16, #88]
        stp     x23, x24, [x16, #104]
        stp     x25, x26, [x16, #120]
        stp     x27, x28, [x16, #136]
        str     x29, [x16, #152]
        stp     q0, q1, [x16, #160]
        stp     q2, q3, [x16, #192]
        stp     q4, q5, [x16, #224]
        stp     q6, q7, [x16, #256]
        stp     d8, d9, [x16, #288]
        stp     d10, d11, [x16, #304]
        stp     d12, d13, [x16, #320]
        stp     d14, d15, [x16, #336]
        ldp     x19, x20, [sp, #16]
        ldp     x21, x22, [sp, #32]
        ldp     x23, x24, [sp, #48]
        ldp     x25, x26, [sp, #64]
        ldp     x27, x28, [sp, #80]
        ldp     d8, d9, [sp, #96]
        ldp     d10, d11, [sp, #112]
        ldp     d12, d13, [sp, #128]
        ldp     d14, d15, [sp, #144]
        ldp     x29, x30, [sp], #176
        ret
        .size   fw_registers_run, .-fw_registers_run

.macro STORE_FRAME where
        ADDRESS x16, \where
        mov     x17, sp
        str     x17, [x16, #352]
        str     x29, [x16, #360]
.endm

// The body gcc -pg gives a function, after its frame record is stored.
.macro CALL_MCOUNT
        STORE_FRAME fw_expect
        hint    #7                  // xpaclri
        str     x30, [x16, #0]      // x0 after the call: the function's return address
        mov     x0, x30
        bl      _mcount
        STORE_FRAME fw_after
.endm

        .type   fw_instrumented, %function
        .p2align 2
fw_instrumented:
        stp     x29, x30, [sp, #-16]!
        mov     x29, sp
        CALL_MCOUNT
        ldp     x29, x30, [sp], #16
        ret

        .type   fw_instrumented_pac, %function
        .p2align 2
fw_instrumented_pac:
        hint    #25                 // paciasp
        stp     x29, x30, [sp, #-16]!
        mov     x29, sp
        CALL_MCOUNT
        ldp     x29, x30, [sp], #16
        hint    #29                 // autiasp
        ret

        .section .data.rel.ro,"aw"
        .p2align 3
.Lhooks:
        .quad   fw_instrumented, fw_instrumented_pac

        .section .note.GNU-stack,"",%progbits
