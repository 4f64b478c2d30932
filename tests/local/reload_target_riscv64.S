// riscv64 twin of reload_target.S, built twice, FRAME_BYTES 16 and 48: the
// return address into fw_reload_call lies at the same offset in both (no
// compressed instructions, so that both have the same length), with
// another rule (CFA = sp + FRAME_BYTES, ra at its bottom).
        .option norvc
        .text
        .globl  fw_reload_call
        .type   fw_reload_call, %function
// int fw_reload_call(int (*fn)(void*), void* arg): returns fn(arg).
fw_reload_call:
        .cfi_startproc
        addi    sp, sp, -FRAME_BYTES
        .cfi_def_cfa_offset FRAME_BYTES
        sd      ra, 0(sp)
        .cfi_offset ra, -FRAME_BYTES
        mv      t0, a0
        mv      a0, a1
        jalr    t0
        ld      ra, 0(sp)
        .cfi_restore ra
        addi    sp, sp, FRAME_BYTES
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        .size   fw_reload_call, .-fw_reload_call

        .section .note.GNU-stack,"",%progbits
