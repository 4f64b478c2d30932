// i386 twin of reload_target.S (cdecl: the arguments on the stack), built
// twice, FRAME_BYTES 12 and 44 (the stack 16-byte aligned at the call): the
// two `sub` instructions have the same length, so the return address into
// fw_reload_call lies at the same offset in both libraries and has another
// rule in each.
        .text
        .globl  fw_reload_call
        .type   fw_reload_call, @function
// int fw_reload_call(int (*fn)(void*), void* arg): returns fn(arg).
fw_reload_call:
        .cfi_startproc
        subl    $FRAME_BYTES, %esp
        .cfi_adjust_cfa_offset FRAME_BYTES
        movl    FRAME_BYTES+8(%esp), %eax
        movl    %eax, 0(%esp)
        call    *FRAME_BYTES+4(%esp)
        addl    $FRAME_BYTES, %esp
        .cfi_adjust_cfa_offset -FRAME_BYTES
        ret
        .cfi_endproc
        .size   fw_reload_call, .-fw_reload_call

        .section .note.GNU-stack,"",@progbits
