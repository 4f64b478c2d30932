// 32-bit ARM twin of reload_target.S, built twice, FRAME_BYTES 8 and 40: the
// return address into fw_reload_call lies at the same offset in both, with
// another rule (CFA = sp + 8 + FRAME_BYTES, lr just below it), from the
// function's .ARM.exidx entry.
        .syntax unified
        .arm
        .text
        .globl  fw_reload_call
        .type   fw_reload_call, %function
// int fw_reload_call(int (*fn)(void*), void* arg): returns fn(arg).
fw_reload_call:
        .fnstart
        push    {r4, lr}
        .save   {r4, lr}
        sub     sp, sp, #FRAME_BYTES
        .pad    #FRAME_BYTES
        mov     r2, r0
        mov     r0, r1
        blx     r2
        add     sp, sp, #FRAME_BYTES
        pop     {r4, pc}
        .fnend
        .size   fw_reload_call, .-fw_reload_call

        .section .note.GNU-stack,"",%progbits
