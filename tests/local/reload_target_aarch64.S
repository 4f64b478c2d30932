// AArch64 twin of reload_target.S, built twice, FRAME_BYTES 16 and 48: the
// return address into fw_reload_call lies at the same offset in both, with
// another rule (CFA = sp + FRAME_BYTES, x29 and x30 at its bottom).
        .text
        .globl  fw_reload_call
        .type   fw_reload_call, %function
// int fw_reload_call(int (*fn)(void*), void* arg): returns fn(arg).
fw_reload_call:
        .cfi_startproc
        stp     x29, x30, [sp, #-FRAME_BYTES]!
        .cfi_def_cfa_offset FRAME_BYTES
        .cfi_offset x29, -FRAME_BYTES
        .cfi_offset x30, -FRAME_BYTES+8
        mov     x29, sp
        mov     x16, x0
        mov     x0, x1
        blr     x16
        ldp     x29, x30, [sp], #FRAME_BYTES
        .cfi_restore x29
        .cfi_restore x30
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        .size   fw_reload_call, .-fw_reload_call

        .section .note.GNU-stack,"",%progbits
