// Register preservation around _mcount on ppc64le (registers_main.c):
// fw_registers_run(hook) loads v2-v13, v20-v31, r3-r10, r14-r31, f1-f13 and
// f14-f31 from fw_expect, calls an "instrumented function" with gcc -pg's
// sequence and stores them into fw_after in the same layout (words 0-23:
// v2-v13; 24-47: v20-v31; 48-55: r3-r10; 56-73: r14-r31; 74-86: f1-f13;
// 87-104: f14-f31; 105: r1 and 106: the TOC pointer r2 inside the
// instrumented function, around the call). r0, r11 and r12 are free for
// _mcount by the ELFv2 ABI, as for any call; r2 is restored by the `nop`
// after the call when the call went through a PLT stub.
//   hook 0: mflr r0; std r0,16(r1); stdu r1,-32(r1); bl _mcount; nop
        .abiversion 2
        .data
        .globl  fw_expect, fw_after, fw_words, fw_hooks, fw_runtime_words
        .p2align 4
fw_expect: .zero 107 * 8
        .p2align 4
fw_after:  .zero 107 * 8
fw_words:  .long 107
fw_hooks:  .long 1
fw_runtime_words: .long 105, 106, -1

        .text
// Loads (op, fop, vop: ld, lfd, lvx) or stores (std, stfd, stvx) the
// registers of the layout from or to `base` (r0 is the vectors' index).
.macro LAYOUT op, fop, vop, base
        .irp    n, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
        li      %r0, 16 * (\n - 2)
        \vop    %v\n, \base, %r0
        .endr
        .irp    n, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
        li      %r0, 192 + 16 * (\n - 20)
        \vop    %v\n, \base, %r0
        .endr
        .irp    n, 3, 4, 5, 6, 7, 8, 9, 10
        \op     %r\n, 384 + 8 * (\n - 3)(\base)
        .endr
        .irp    n, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
        \op     %r\n, 448 + 8 * (\n - 14)(\base)
        .endr
        .irp    n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
        \fop    %f\n, 592 + 8 * (\n - 1)(\base)
        .endr
        .irp    n, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
        \fop    %f\n, 696 + 8 * (\n - 14)(\base)
        .endr
.endm
// The non-volatile registers fw_registers_run keeps for its caller, in its
// frame after the ELFv2 header and the hook's address: v20-v31, r14-r31,
// f14-f31.
        .set    HOOK, 32
        .set    SAVES, 48
        .set    FRAME, SAVES + 12 * 16 + 18 * 8 + 18 * 8
.macro SAVED op, fop, vop
        .irp    n, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
        li      %r0, SAVES + 16 * (\n - 20)
        \vop    %v\n, %r1, %r0
        .endr
        .irp    n, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
        \op     %r\n, SAVES + 192 + 8 * (\n - 14)(%r1)
        .endr
        .irp    n, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
        \fop    %f\n, SAVES + 336 + 8 * (\n - 14)(%r1)
        .endr
.endm

        .globl  fw_registers_run
        .type   fw_registers_run, @function
        .p2align 2
fw_registers_run:
0:      addis   %r2, %r12, .TOC.-0b@ha
        addi    %r2, %r2, .TOC.-0b@l
        .localentry fw_registers_run, .-fw_registers_run
        mflr    %r0
        std     %r0, 16(%r1)
        stdu    %r1, -FRAME(%r1)
        SAVED   std, stfd, stvx
        addis   %r11, %r2, .Lhooks@toc@ha
        addi    %r11, %r11, .Lhooks@toc@l
        sldi    %r3, %r3, 3
        ldx     %r12, %r11, %r3
        std     %r12, HOOK(%r1)     // the instrumented function to call
        std     %r2, 24(%r1)        // the TOC save word, for the indirect call
        addis   %r11, %r2, fw_expect@toc@ha
        addi    %r11, %r11, fw_expect@toc@l
        LAYOUT  ld, lfd, lvx, %r11
        ld      %r12, HOOK(%r1)
        mtctr   %r12
        bctrl
        ld      %r2, 24(%r1)
        addis   %r11, %r2, fw_after@toc@ha
        addi    %r11, %r11, fw_after@toc@l
        LAYOUT  std, stfd, stvx, %r11
        SAVED   ld, lfd, lvx
        addi    %r1, %r1, FRAME
        ld      %r0, 16(%r1)
        mtlr    %r0
        blr
        .size   fw_registers_run, .-fw_registers_run

.macro STORE_FRAME where
        addis   %r11, %r2, \where@toc@ha
        addi    %r11, %r11, \where@toc@l
        std     %r1, 840(%r11)
        std     %r2, 848(%r11)
.endm

// The body gcc -pg gives a function: _mcount once the frame is built.
        .type   fw_instrumented, @function
        .p2align 2
fw_instrumented:
0:      addis   %r2, %r12, .TOC.-0b@ha
        addi    %r2, %r2, .TOC.-0b@l
        .localentry fw_instrumented, .-fw_instrumented
        mflr    %r0
        std     %r0, 16(%r1)
        stdu    %r1, -32(%r1)
        STORE_FRAME fw_expect
        bl      _mcount
        nop
        STORE_FRAME fw_after
        addi    %r1, %r1, 32
        ld      %r0, 16(%r1)
        mtlr    %r0
        blr
        .size   fw_instrumented, .-fw_instrumented

        .section .data.rel.ro,"aw"
        .p2align 3
.Lhooks:
        .quad   fw_instrumented

        .section .note.GNU-stack,"",@progbits
