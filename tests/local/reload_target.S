// Built twice, FRAME_BYTES 8 and 40: two libraries whose only difference is
// the frame of fw_reload_call. Their return addresses into it lie at the same
// offset (the two `sub` instructions have the same length), so when the
// second is loaded where the first was, the same return address has another
// rule.
        .text
        .globl  fw_reload_call
        .type   fw_reload_call, @function
// int fw_reload_call(int (*fn)(void*), void* arg): returns fn(arg).
fw_reload_call:
        .cfi_startproc
        subq    $FRAME_BYTES, %rsp
        .cfi_adjust_cfa_offset FRAME_BYTES
        movq    %rdi, %rax
        movq    %rsi, %rdi
        call    *%rax
        addq    $FRAME_BYTES, %rsp
        .cfi_adjust_cfa_offset -FRAME_BYTES
        ret
        .cfi_endproc
        .size   fw_reload_call, .-fw_reload_call

        .section .note.GNU-stack,"",@progbits
