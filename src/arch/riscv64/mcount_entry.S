// The mcount runtime's entry point on riscv64 (src/mcount/runtime.cpp).
//
// gcc -pg calls _mcount after the prologue has saved ra:
//     mv a0, ra; call _mcount
// so a0 is the instrumented function's return address (from_pc, in its
// caller) and ra at entry is a PC inside the instrumented function
// (self_pc). The call is an ordinary psABI call and gcc has moved live
// arguments out of a0-a7 and fa0-fa7 already; the stub still keeps them as
// they were. riscv has no -mgeneral-regs-only, and -ffixed-f<n> does not
// keep gcc off the argument registers: the C side is ordinary LP64D code,
// so the stub saves fa0-fa7 around both paths, not only around
// framewalk_mcount_slow (a thread's first call, which calls into the C
// library).
        .text
        .globl  _mcount
        .type   _mcount, %function
        .p2align 2
_mcount:
        .cfi_startproc
        addi    sp, sp, -144        // 18 words: the psABI keeps sp 16-byte aligned
        .cfi_def_cfa_offset 144
        sd      ra, 136(sp)
        .cfi_offset ra, -8
        sd      a0, 0(sp)           // from_pc, kept for the slow path too
        sd      a1, 8(sp)
        sd      a2, 16(sp)
        sd      a3, 24(sp)
        sd      a4, 32(sp)
        sd      a5, 40(sp)
        sd      a6, 48(sp)
        sd      a7, 56(sp)
        fsd     fa0, 64(sp)
        fsd     fa1, 72(sp)
        fsd     fa2, 80(sp)
        fsd     fa3, 88(sp)
        fsd     fa4, 96(sp)
        fsd     fa5, 104(sp)
        fsd     fa6, 112(sp)
        fsd     fa7, 120(sp)
        mv      a1, ra              // self_pc
        call    framewalk_mcount_fast
        bnez    a0, .Lmcount_slow
.Lmcount_restore:
        ld      a0, 0(sp)
        ld      a1, 8(sp)
        ld      a2, 16(sp)
        ld      a3, 24(sp)
        ld      a4, 32(sp)
        ld      a5, 40(sp)
        ld      a6, 48(sp)
        ld      a7, 56(sp)
        fld     fa0, 64(sp)
        fld     fa1, 72(sp)
        fld     fa2, 80(sp)
        fld     fa3, 88(sp)
        fld     fa4, 96(sp)
        fld     fa5, 104(sp)
        fld     fa6, 112(sp)
        fld     fa7, 120(sp)
        ld      ra, 136(sp)
        .cfi_remember_state
        .cfi_restore ra
        addi    sp, sp, 144
        .cfi_def_cfa_offset 0
        ret
        .cfi_restore_state
.Lmcount_slow:
        ld      a0, 0(sp)           // from_pc
        ld      a1, 136(sp)         // self_pc (ra at entry)
        call    framewalk_mcount_slow
        j       .Lmcount_restore
        .cfi_endproc
        .size   _mcount, .-_mcount

        .section .note.GNU-stack,"",%progbits
