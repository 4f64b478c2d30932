// void framewalk_capture(uint64_t out[34])
// Stores the caller's registers by DWARF number (r0..r31 in words 0..31),
// the link register (65) in word 32 and the PC, which the psABI leaves
// unnumbered (framewalk's 114), in word 33 (f0's and f1's numbers, which
// are not captured: arch/capture.hpp's captured_word). r14-r31, the TOC
// pointer r2 and the thread pointer r13 as they are, LR and the PC as our
// return address, r1 as the caller's (a call does not move it; this leaf
// keeps no frame). The volatile registers are zeroed: the unwinder never
// needs them to step out of the caller (arch/ppc64le/frames.hpp's
// from_capture marks only the others known).
        .abiversion 2
        .text
        .globl  framewalk_capture
        .hidden framewalk_capture
        .type   framewalk_capture, @function
        .p2align 2
framewalk_capture:
        .cfi_startproc
        li      %r0, 0
        std     %r0, 0(%r3)
        std     %r1, 8(%r3)
        std     %r2, 16(%r3)
        std     %r0, 24(%r3)          // r3-r12
        std     %r0, 32(%r3)
        std     %r0, 40(%r3)
        std     %r0, 48(%r3)
        std     %r0, 56(%r3)
        std     %r0, 64(%r3)
        std     %r0, 72(%r3)
        std     %r0, 80(%r3)
        std     %r0, 88(%r3)
        std     %r0, 96(%r3)
        std     %r13, 104(%r3)
        std     %r14, 112(%r3)
        std     %r15, 120(%r3)
        std     %r16, 128(%r3)
        std     %r17, 136(%r3)
        std     %r18, 144(%r3)
        std     %r19, 152(%r3)
        std     %r20, 160(%r3)
        std     %r21, 168(%r3)
        std     %r22, 176(%r3)
        std     %r23, 184(%r3)
        std     %r24, 192(%r3)
        std     %r25, 200(%r3)
        std     %r26, 208(%r3)
        std     %r27, 216(%r3)
        std     %r28, 224(%r3)
        std     %r29, 232(%r3)
        std     %r30, 240(%r3)
        std     %r31, 248(%r3)
        mflr    %r0
        std     %r0, 256(%r3)         // LR
        std     %r0, 264(%r3)         // the PC
        blr
        .cfi_endproc
        .size   framewalk_capture, .-framewalk_capture

        .section .note.GNU-stack,"",@progbits
