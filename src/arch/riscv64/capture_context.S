// void framewalk_capture(uint64_t out[34])
// Stores the caller's registers by DWARF number (x0..x31 in words 0..31)
// and the PC, which the psABI leaves unnumbered (framewalk's 64), in the
// last word (arch/capture.hpp's captured_word): s0-s11, gp and tp as they
// are, ra and the PC as our return address, sp as the caller's (a call does
// not move it). The temporaries and arguments are zeroed: the unwinder
// never needs them to step out of the caller (arch/riscv64/frames.hpp's
// from_capture marks only the others known).
        .text
        .globl  framewalk_capture
        .hidden framewalk_capture
        .type   framewalk_capture, %function
        .p2align 1
framewalk_capture:
        .cfi_startproc
        sd      zero, 0(a0)
        sd      ra, 8(a0)
        sd      sp, 16(a0)
        sd      gp, 24(a0)
        sd      tp, 32(a0)
        sd      zero, 40(a0)        // t0-t2
        sd      zero, 48(a0)
        sd      zero, 56(a0)
        sd      s0, 64(a0)
        sd      s1, 72(a0)
        sd      zero, 80(a0)        // a0-a7
        sd      zero, 88(a0)
        sd      zero, 96(a0)
        sd      zero, 104(a0)
        sd      zero, 112(a0)
        sd      zero, 120(a0)
        sd      zero, 128(a0)
        sd      zero, 136(a0)
        sd      s2, 144(a0)
        sd      s3, 152(a0)
        sd      s4, 160(a0)
        sd      s5, 168(a0)
        sd      s6, 176(a0)
        sd      s7, 184(a0)
        sd      s8, 192(a0)
        sd      s9, 200(a0)
        sd      s10, 208(a0)
        sd      s11, 216(a0)
        sd      zero, 224(a0)       // t3-t6
        sd      zero, 232(a0)
        sd      zero, 240(a0)
        sd      zero, 248(a0)
        sd      zero, 256(a0)       // word 32: unused
        sd      ra, 264(a0)         // the PC
        ret
        .cfi_endproc
        .size   framewalk_capture, .-framewalk_capture

        .section .note.GNU-stack,"",%progbits
