// The mcount runtime's entry point on AArch64 (src/mcount/runtime.cpp).
//
// gcc -pg calls _mcount after the frame record is stored:
//     hint #7 (xpaclri); mov x0, x30; bl _mcount
// so x0 is the instrumented function's return address (from_pc, in its
// caller; xpaclri has stripped a PAC signature, and the stub strips again in
// case other code signed it) and x30 at entry is a PC inside the
// instrumented function (self_pc). The call is an ordinary AAPCS64 call and
// gcc has moved live arguments out of x0-x7 already; the stub still keeps
// x0-x8 (the argument and indirect-result registers) as they were, and
// around framewalk_mcount_slow (a thread's first call, which calls into the
// C library) q0-q7 too. The C side is built with -mgeneral-regs-only.
        .text
        .globl  _mcount
        .type   _mcount, %function
        .p2align 2
_mcount:
        .cfi_startproc
        hint    #34                 // bti c: _mcount may be reached through a PLT's br
        stp     x29, x30, [sp, #-96]!
        .cfi_def_cfa_offset 96
        .cfi_offset x29, -96
        .cfi_offset x30, -88
        mov     x29, sp
        stp     x0, x1, [sp, #16]
        stp     x2, x3, [sp, #32]
        stp     x4, x5, [sp, #48]
        stp     x6, x7, [sp, #64]
        str     x8, [sp, #80]
        mov     x1, x30             // self_pc
        mov     x30, x0
        hint    #7                  // xpaclri: strip a PAC from x30 (a NOP without pointer authentication)
        mov     x0, x30             // from_pc
        str     x0, [sp, #88]       // kept for the slow path
        bl      framewalk_mcount_fast
        cbnz    w0, .Lmcount_slow
.Lmcount_restore:
        ldp     x0, x1, [sp, #16]
        ldp     x2, x3, [sp, #32]
        ldp     x4, x5, [sp, #48]
        ldp     x6, x7, [sp, #64]
        ldr     x8, [sp, #80]
        ldp     x29, x30, [sp], #96
        .cfi_remember_state
        .cfi_restore x29
        .cfi_restore x30
        .cfi_def_cfa_offset 0
        ret
        .cfi_restore_state
.Lmcount_slow:
        sub     sp, sp, #128
        stp     q0, q1, [sp, #0]
        stp     q2, q3, [sp, #32]
        stp     q4, q5, [sp, #64]
        stp     q6, q7, [sp, #96]
        ldr     x0, [x29, #88]      // from_pc
        ldr     x1, [x29, #8]       // self_pc (x30 at entry)
        bl      framewalk_mcount_slow
        ldp     q0, q1, [sp, #0]
        ldp     q2, q3, [sp, #32]
        ldp     q4, q5, [sp, #64]
        ldp     q6, q7, [sp, #96]
        add     sp, sp, #128
        b       .Lmcount_restore
        .cfi_endproc
        .size   _mcount, .-_mcount

        .section .note.GNU-stack,"",%progbits
