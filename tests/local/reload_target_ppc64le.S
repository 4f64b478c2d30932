// ppc64le twin of reload_target.S, built twice, FRAME_BYTES 32 and 64: the
// return address into fw_reload_call lies at the same offset in both, with
// another rule (CFA = r1 + FRAME_BYTES, LR in the caller's frame at CFA + 16).
        .abiversion 2
        .text
        .globl  fw_reload_call
        .type   fw_reload_call, @function
// int fw_reload_call(int (*fn)(void*), void* arg): returns fn(arg). It
// needs no TOC (no global entry point); the callee gets its address in
// r12, as an indirect call must give it, and r2 is saved around the call.
fw_reload_call:
        .cfi_startproc
        mflr    %r0
        std     %r0, 16(%r1)
        stdu    %r1, -FRAME_BYTES(%r1)
        .cfi_def_cfa_offset FRAME_BYTES
        .cfi_offset 65, 16
        std     %r2, 24(%r1)
        mr      %r12, %r3
        mtctr   %r12
        mr      %r3, %r4
        bctrl
        ld      %r2, 24(%r1)
        addi    %r1, %r1, FRAME_BYTES
        .cfi_def_cfa_offset 0
        ld      %r0, 16(%r1)
        mtlr    %r0
        .cfi_restore 65
        blr
        .cfi_endproc
        .size   fw_reload_call, .-fw_reload_call

        .section .note.GNU-stack,"",@progbits
