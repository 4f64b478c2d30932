// void framewalk_capture(uint64_t out[34])
// Stores the caller's registers in DWARF order (x0..x30, sp, pc): x19-x29 as
// they are, x30 and pc as our return address, sp as the caller's (a call
// does not move it). x0-x18 are zeroed: the unwinder never needs them to
// step out of the caller (arch/aarch64/frames.hpp's from_capture marks only
// the others known).
        .text
        .globl  framewalk_capture
        .hidden framewalk_capture
        .type   framewalk_capture, %function
framewalk_capture:
        .cfi_startproc
        stp     xzr, xzr, [x0, #0]
        stp     xzr, xzr, [x0, #16]
        stp     xzr, xzr, [x0, #32]
        stp     xzr, xzr, [x0, #48]
        stp     xzr, xzr, [x0, #64]
        stp     xzr, xzr, [x0, #80]
        stp     xzr, xzr, [x0, #96]
        stp     xzr, xzr, [x0, #112]
        stp     xzr, xzr, [x0, #128]
        str     xzr, [x0, #144]
        stp     x19, x20, [x0, #152]
        stp     x21, x22, [x0, #168]
        stp     x23, x24, [x0, #184]
        stp     x25, x26, [x0, #200]
        stp     x27, x28, [x0, #216]
        stp     x29, x30, [x0, #232]
        mov     x1, sp
        str     x1, [x0, #248]
        str     x30, [x0, #256]
        ret
        .cfi_endproc
        .size   framewalk_capture, .-framewalk_capture

        .section .note.GNU-stack,"",%progbits
