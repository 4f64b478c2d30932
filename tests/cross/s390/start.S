// The outermost frame of tests/cross/chain32.c: the return address is
// undefined (CFI), and the back chain ends (0) in the frame it builds for
// its callee. r2, as make_core.c enters it, is passed on to chain_entry.
        .text
        .globl _start
        .type _start, @function
_start:
        .cfi_startproc
        .cfi_undefined %r14
        ahi %r15,-96
        .cfi_adjust_cfa_offset 96
        xc 0(4,%r15),0(%r15)
        brasl %r14,chain_entry
        .short 0
        .cfi_endproc
        .size _start, .-_start

// The signal-return trampolines of a program that installs its own
// (SA_RESTORER): sigreturn (`svc 119`) and rt_sigreturn (`svc 173`). No
// CFI: the unwinder knows them by their code.
        .globl __restore
        .type __restore, @function
        nopr %r7
__restore:
        svc 119
        .size __restore, .-__restore

        .globl __restore_rt
        .type __restore_rt, @function
        nopr %r7
__restore_rt:
        svc 173
        .size __restore_rt, .-__restore_rt
        .section .note.GNU-stack,"",@progbits
