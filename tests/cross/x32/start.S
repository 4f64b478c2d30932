// The outermost frame of tests/cross/chain32.c: the return address is
// undefined (CFI) and rbp is 0 (the frame-pointer chain's end). rdi, as
// make_core.c enters it, is passed on to chain_entry.
        .text
        .globl _start
        .type _start, @function
_start:
        .cfi_startproc
        .cfi_undefined rip
        xorl %ebp, %ebp
        call chain_entry
        ud2
        .cfi_endproc
        .size _start, .-_start

// The signal-return trampoline an x32 glibc installs (SA_RESTORER),
// rt_sigreturn with the x32 system-call bit, under glibc's name (gdb knows
// a trampoline by it): `mov $0x40000201,%rax` as glibc has it, or with
// -DSHORT_TRAMPOLINE the shorter `mov $0x40000201,%eax`. No CFI: the
// unwinder knows it by its code.
        .text
        .globl __restore_rt
        .type __restore_rt, @function
        nop
__restore_rt:
#ifdef SHORT_TRAMPOLINE
        movl $0x40000201, %eax
#else
        movq $0x40000201, %rax
#endif
        syscall
        .size __restore_rt, .-__restore_rt
        .section .note.GNU-stack,"",@progbits
