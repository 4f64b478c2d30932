// void framewalk_capture(uint64_t out[34])
// Stores the caller's registers in DWARF order (r0..r15), one 64-bit word
// each (zero-extended), and the CPSR slot (arm::kCpsr, word 16) with the T
// bit of the caller's state: r4-r11 as they are, sp as the caller's (a call
// does not move it), lr and pc as our return address (pc without its Thumb
// bit). r0-r3 and r12 are zeroed: the unwinder never needs them to step out
// of the caller (arch/arm/frames.hpp's from_capture marks only the others
// known).
        .syntax unified
        .arm
        .text
        .globl  framewalk_capture
        .hidden framewalk_capture
        .type   framewalk_capture, %function
framewalk_capture:
        .fnstart
        mov     r2, #0
        mov     r3, #0
        strd    r2, r3, [r0, #0]      // r0
        strd    r2, r3, [r0, #8]      // r1
        strd    r2, r3, [r0, #16]     // r2
        strd    r2, r3, [r0, #24]     // r3
        str     r4, [r0, #32]
        str     r3, [r0, #36]
        str     r5, [r0, #40]
        str     r3, [r0, #44]
        str     r6, [r0, #48]
        str     r3, [r0, #52]
        str     r7, [r0, #56]
        str     r3, [r0, #60]
        str     r8, [r0, #64]
        str     r3, [r0, #68]
        str     r9, [r0, #72]
        str     r3, [r0, #76]
        str     r10, [r0, #80]
        str     r3, [r0, #84]
        str     r11, [r0, #88]
        str     r3, [r0, #92]
        strd    r2, r3, [r0, #96]     // r12
        str     sp, [r0, #104]
        str     r3, [r0, #108]
        str     lr, [r0, #112]
        str     r3, [r0, #116]
        bic     r1, lr, #1
        str     r1, [r0, #120]        // pc
        str     r3, [r0, #124]
        and     r1, lr, #1
        lsl     r1, r1, #5            // the CPSR's T bit: the caller is Thumb code
        str     r1, [r0, #128]
        str     r3, [r0, #132]
        bx      lr
        .cantunwind
        .fnend
        .size   framewalk_capture, .-framewalk_capture

        .section .note.GNU-stack,"",%progbits
