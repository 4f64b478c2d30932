// void framewalk_capture(uint64_t out[34])
// Stores the caller's registers: words 0-15 r0..r15, the last word (33)
// the PC (the PSW address, DWARF 65, past the words: arch/capture.hpp's
// captured_word). r6-r15 as they are (a call moves no stack
// pointer: r15 is the caller's), the PC as r14, our return address into
// the caller. r0-r5 are zeroed: the unwinder never needs them to step out
// of the caller (from_capture marks only the others known).
        .text
        .globl  framewalk_capture
        .hidden framewalk_capture
        .type   framewalk_capture, @function
        .p2align 3
framewalk_capture:
        .cfi_startproc
        xc      0(48,%r2),0(%r2)
        stmg    %r6,%r15,48(%r2)
        stg     %r14,264(%r2)
        br      %r14
        .cfi_endproc
        .size   framewalk_capture, .-framewalk_capture

        .section .note.GNU-stack,"",@progbits
