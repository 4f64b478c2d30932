// The outermost frame of tests/cross/chain32.c on 32-bit SPARC, which
// installs the signal handler first when asked (argc 2: a signal_frame,
// argc 3: an rt_signal_frame, both returning to this file's trampolines):
// the trap's SIGILL is then delivered to chain_handler, whose own trap
// ends the run. With argc 4 it is instead the main thread waiting in a
// join (chain_entry(1)), on a stack 1 MiB below, clear of the crashing
// thread's when core.py puts both threads in one core. Its %fp of 0 and
// its undefined %o7 end the chain.
        .text
        .globl _start
        .type _start, @function
_start:
        .cfi_startproc
        .cfi_undefined %o7
        mov %g0, %fp
        ld [%sp + 64], %o0              ! argc
        sub %sp, 128, %sp               ! the callees' save area, args, and act at 96
        .cfi_def_cfa_offset 128
        cmp %o0, 4
        be 3f
         cmp %o0, 1
        be 2f
         nop
        set chain_handler, %o1
        st %o1, [%sp + 96]              ! sa_handler
        st %g0, [%sp + 104]             ! the rest (sa_restorer unused, sa_mask)
        st %g0, [%sp + 108]
        st %g0, [%sp + 112]
        set __restore - 8, %o3          ! the kernel has the handler return to %i7 + 8
        cmp %o0, 2
        be 1f
         mov 0, %o2
        set __restore_rt - 8, %o3
        set 0x200, %o2                  ! SA_SIGINFO: an rt_signal_frame
1:      st %o2, [%sp + 100]             ! sa_flags
        mov 4, %o0                      ! SIGILL
        add %sp, 96, %o1
        mov 0, %o2
        mov 8, %o4                      ! sizeof(sigset_t)
        mov 102, %g1                    ! rt_sigaction(sig, act, oact, restorer, size)
        ta 0x10
2:      call chain_entry
         mov 0, %o0                     ! the crashing chain (chain32.c)
4:      mov 1, %g1                      ! exit: not `unimp`, which after a call's delay
        ta 0x10                         ! slot marks one returning a struct (gdb resumes past it)
3:      set 0x100000, %g2
        sub %sp, %g2, %sp
        call chain_entry
         mov 1, %o0                     ! the main thread in a join (chain32.c)
        ba 4b
         nop
        .cfi_endproc
        .size _start, .-_start

// The signal-return trampolines (as glibc's sparc32 __sigreturn_stub and
// __rt_sigreturn_stub): sigreturn is 216 on 32-bit SPARC, rt_sigreturn
// 101. No CFI: the unwinder knows them by their code.
        .globl __restore
        .type __restore, @function
        nop
__restore:
        mov 216, %g1
        ta 0x10
        .size __restore, .-__restore

        .globl __restore_rt
        .type __restore_rt, @function
        nop
__restore_rt:
        mov 101, %g1
        ta 0x10
        .size __restore_rt, .-__restore_rt
        .section .note.GNU-stack,"",@progbits
