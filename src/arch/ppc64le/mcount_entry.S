// The mcount runtime's entry point on ppc64le (src/mcount/runtime.cpp).
//
// gcc -pg calls _mcount once the prologue has built the frame:
//     mflr r0; ...; std r0,16(r1); stdu r1,-N(r1); bl _mcount; nop
// so LR at entry is a PC inside the instrumented function (self_pc), and
// the function's return address (from_pc, in its caller) is where its
// prologue saved it: the LR save word of its caller's frame, 16 bytes
// above the back chain's target. r0 held it too, but not always still:
// a frame over 32 KiB is built with `lis r0; ori r0; stdux r1,r1,r0`.
// The call is an ordinary ELFv2 call and gcc has moved live arguments out
// of r3-r10 and f1-f13 already; the stub still keeps r3-r10 as they were,
// and around framewalk_mcount_slow (a thread's first call, which calls
// into the C library) f1-f13 and v2-v13 too. The C side is built with
// -msoft-float -mno-altivec -mno-vsx.
//
// Reached through a PLT call stub (a preloaded or linked runtime), r12 is
// _mcount and the global entry sets up this module's TOC pointer, which
// the C side needs; the stub saved the caller's r2, and the `nop` after
// the call restores it. A static link calls the local entry.
        .abiversion 2
        .text
        .globl  _mcount
        .type   _mcount, @function
        .p2align 2
// The frame: the ELFv2 header (32 bytes), r3-r10, from_pc, then f1-f13 and
// v2-v13 (16-byte aligned) for the slow path.
        .set    GPRS, 32
        .set    FROM_PC, GPRS + 8 * 8
        .set    FPRS, FROM_PC + 8
        .set    VRS, FPRS + 13 * 8
        .set    FRAME, VRS + 12 * 16
        .if     VRS % 16 || FRAME % 16
        .error  "stvx needs v2-v13's slots, and ELFv2 the frame, 16-byte aligned"
        .endif
// Stores (fop, vop: stfd, stvx) or loads (lfd, lvx) f1-f13 and v2-v13 in
// their slots (r0 is the vectors' index).
.macro SLOW_PATH_REGISTERS fop, vop
        .irp    n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
        \fop    %f\n, FPRS + 8 * (\n - 1)(%r1)
        .endr
        .irp    n, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
        li      %r0, VRS + 16 * (\n - 2)
        \vop    %v\n, %r1, %r0
        .endr
.endm
_mcount:
        .cfi_startproc
0:      addis   %r2, %r12, .TOC.-0b@ha
        addi    %r2, %r2, .TOC.-0b@l
        .localentry _mcount, .-_mcount
        mflr    %r0
        std     %r0, 16(%r1)        // self_pc, in the caller's LR save word as for any callee
        stdu    %r1, -FRAME(%r1)
        .cfi_def_cfa_offset FRAME
        .cfi_offset 65, 16
        .irp    n, 3, 4, 5, 6, 7, 8, 9, 10
        std     %r\n, GPRS + 8 * (\n - 3)(%r1)
        .endr
        ld      %r11, FRAME(%r1)    // the instrumented function's back chain: its caller's r1
        ld      %r3, 16(%r11)       // from_pc
        std     %r3, FROM_PC(%r1)   // kept for the slow path
        mr      %r4, %r0            // self_pc
        bl      framewalk_mcount_fast
        nop
        cmpwi   %r3, 0
        bne     .Lmcount_slow
.Lmcount_restore:
        .irp    n, 3, 4, 5, 6, 7, 8, 9, 10
        ld      %r\n, GPRS + 8 * (\n - 3)(%r1)
        .endr
        addi    %r1, %r1, FRAME
        .cfi_remember_state
        .cfi_def_cfa_offset 0
        ld      %r0, 16(%r1)
        mtlr    %r0
        .cfi_restore 65
        blr
        .cfi_restore_state
.Lmcount_slow:
        SLOW_PATH_REGISTERS stfd, stvx
        ld      %r3, FROM_PC(%r1)
        ld      %r4, FRAME + 16(%r1)  // self_pc (LR at entry)
        bl      framewalk_mcount_slow
        nop
        SLOW_PATH_REGISTERS lfd, lvx
        b       .Lmcount_restore
        .cfi_endproc
        .size   _mcount, .-_mcount

        .section .note.GNU-stack,"",@progbits
