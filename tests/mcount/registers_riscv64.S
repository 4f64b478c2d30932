// Register preservation around _mcount on riscv64 (registers_main.c):
// fw_registers_run(hook) loads a0-a7, s0-s11, fa0-fa7 and fs0-fs11 from
// fw_expect, calls an "instrumented function" with gcc -pg's sequence and
// stores them into fw_after in the same layout (words 0-7: a0-a7; 8-19:
// s0-s11; 20-27: fa0-fa7; 28-39: fs0-fs11; 40: sp and 41: s0 inside the
// instrumented function). a0 is gcc's argument, the function's return
// address (word 0, stored by the function itself); the temporaries t0-t6
// and ft0-ft11 are free for _mcount by the psABI, as for any call.
//   hook 0: addi sp,sp,-16; sd ra,8(sp); sd s0,0(sp); addi s0,sp,16; mv a0,ra; call _mcount
        .data
        .globl  fw_expect, fw_after, fw_words, fw_hooks, fw_runtime_words
        .p2align 4
fw_expect: .zero 42 * 8
fw_after:  .zero 42 * 8
fw_words:  .long 42
fw_hooks:  .long 1
fw_runtime_words: .long 40, 41, -1

        .text
// Loads (op, fop: ld, fld) or stores (sd, fsd) the registers of the layout
// from or to `base`.
.macro LAYOUT op, fop, base
        \op     a0, 0(\base)
        \op     a1, 8(\base)
        \op     a2, 16(\base)
        \op     a3, 24(\base)
        \op     a4, 32(\base)
        \op     a5, 40(\base)
        \op     a6, 48(\base)
        \op     a7, 56(\base)
        \op     s0, 64(\base)
        \op     s1, 72(\base)
        \op     s2, 80(\base)
        \op     s3, 88(\base)
        \op     s4, 96(\base)
        \op     s5, 104(\base)
        \op     s6, 112(\base)
        \op     s7, 120(\base)
        \op     s8, 128(\base)
        \op     s9, 136(\base)
        \op     s10, 144(\base)
        \op     s11, 152(\base)
        \fop    fa0, 160(\base)
        \fop    fa1, 168(\base)
        \fop    fa2, 176(\base)
        \fop    fa3, 184(\base)
        \fop    fa4, 192(\base)
        \fop    fa5, 200(\base)
        \fop    fa6, 208(\base)
        \fop    fa7, 216(\base)
        \fop    fs0, 224(\base)
        \fop    fs1, 232(\base)
        \fop    fs2, 240(\base)
        \fop    fs3, 248(\base)
        \fop    fs4, 256(\base)
        \fop    fs5, 264(\base)
        \fop    fs6, 272(\base)
        \fop    fs7, 280(\base)
        \fop    fs8, 288(\base)
        \fop    fs9, 296(\base)
        \fop    fs10, 304(\base)
        \fop    fs11, 312(\base)
.endm
// The callee-saved registers fw_registers_run keeps for its caller, in its
// frame: ra, s0-s11 and fs0-fs11, a word each.
.macro SAVED op, fop
        \op     ra, 0(sp)
        \op     s0, 8(sp)
        \op     s1, 16(sp)
        \op     s2, 24(sp)
        \op     s3, 32(sp)
        \op     s4, 40(sp)
        \op     s5, 48(sp)
        \op     s6, 56(sp)
        \op     s7, 64(sp)
        \op     s8, 72(sp)
        \op     s9, 80(sp)
        \op     s10, 88(sp)
        \op     s11, 96(sp)
        \fop    fs0, 104(sp)
        \fop    fs1, 112(sp)
        \fop    fs2, 120(sp)
        \fop    fs3, 128(sp)
        \fop    fs4, 136(sp)
        \fop    fs5, 144(sp)
        \fop    fs6, 152(sp)
        \fop    fs7, 160(sp)
        \fop    fs8, 168(sp)
        \fop    fs9, 176(sp)
        \fop    fs10, 184(sp)
        \fop    fs11, 192(sp)
.endm

        .globl  fw_registers_run
        .type   fw_registers_run, %function
        .p2align 2
fw_registers_run:
        addi    sp, sp, -208
        SAVED   sd, fsd
        lla     t0, .Lhooks
        slli    a0, a0, 3
        add     t0, t0, a0
        ld      t0, 0(t0)
        sd      t0, 200(sp)         // the instrumented function to call
        lla     t0, fw_expect
        LAYOUT  ld, fld, t0
        ld      t0, 200(sp)
        jalr    t0
        lla     t0, fw_after
        LAYOUT  sd, fsd, t0
        SAVED   ld, fld
        addi    sp, sp, 208
        ret
        .size   fw_registers_run, .-fw_registers_run

.macro STORE_FRAME where
        lla     t0, \where
        sd      sp, 320(t0)
        sd      s0, 328(t0)
.endm

// The body gcc -pg gives a function, after its prologue saved ra.
        .type   fw_instrumented, %function
        .p2align 2
fw_instrumented:
        addi    sp, sp, -16
        sd      ra, 8(sp)
        sd      s0, 0(sp)
        addi    s0, sp, 16
        STORE_FRAME fw_expect
        sd      ra, 0(t0)           // a0 after the call: the function's return address
        mv      a0, ra
        call    _mcount
        STORE_FRAME fw_after
        ld      ra, 8(sp)
        ld      s0, 0(sp)
        addi    sp, sp, 16
        ret
        .size   fw_instrumented, .-fw_instrumented

        .section .data.rel.ro,"aw"
        .p2align 3
.Lhooks:
        .quad   fw_instrumented

        .section .note.GNU-stack,"",%progbits
