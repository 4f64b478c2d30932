// s390x twin of reload_target.S, built twice, FRAME_BYTES 160 and 192 (a
// frame holds at least the 160-byte register save area of its callee): the
// return address into fw_reload_call lies at the same offset in both (`lay`
// has the same length for either), with another rule (CFA = r15 + 160 +
// FRAME_BYTES; r14 and r15 in the caller's save area).
        .text
        .globl  fw_reload_call
        .type   fw_reload_call, @function
        .p2align 3
// int fw_reload_call(int (*fn)(void*), void* arg): returns fn(arg).
fw_reload_call:
        .cfi_startproc
        stmg    %r14,%r15,112(%r15)
        .cfi_offset %r14, -48
        .cfi_offset %r15, -40
        lay     %r15,-FRAME_BYTES(%r15)
        .cfi_adjust_cfa_offset FRAME_BYTES
        lgr     %r1,%r2
        lgr     %r2,%r3
        basr    %r14,%r1
        lmg     %r14,%r15,FRAME_BYTES+112(%r15)
        .cfi_restore %r14
        .cfi_restore %r15
        .cfi_def_cfa_offset 160
        br      %r14
        .cfi_endproc
        .size   fw_reload_call, .-fw_reload_call

        .section .note.GNU-stack,"",@progbits
