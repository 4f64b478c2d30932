// The mcount runtime's entry points on i386 (src/mcount/runtime.cpp).
//
// gcc -pg calls mcount after the prologue `push %ebp; mov %esp,%ebp` (and
// the pushes of the registers the function saves): `call *mcount@GOT(%ebx)`
// in PIC code, `call mcount` otherwise. -pg forces the frame pointer, so the
// instrumented function's return address (from_pc, in its caller) is
// 4(%ebp) and mcount's own return address is self_pc. gcc -pg -mfentry (not
// with -fpic on i386) calls __fentry__ as the function's first instruction:
// self_pc at 0(%esp), from_pc at 4(%esp). Either way the function's
// register arguments may be live (regparm, fastcall and gcc's local calling
// conventions: eax, edx, ecx); the stub saves them, and ebx, esi, edi and
// ebp are kept by the C side as by any cdecl function. The C side is built
// with -mgeneral-regs-only; the x87 stack is empty at a call and no
// argument is in a vector register in the i386 ABI, so nothing else is
// saved, around framewalk_mcount_slow (a thread's first call, which calls
// into the C library) too. gcc gives mcount no stack alignment (a call
// comes before the function aligns its own frame): the stub aligns it to
// 16 bytes for C, in a frame of its own at ebp. Every call goes through the
// C side, under the thread's guard (no first probe: mcount_context.hpp).
        .text

// A frame of our own at ebp (its return address at 4(%ebp)), eax, ecx and
// edx saved at -4, -8 and -12(%ebp), the stack aligned to 16 bytes with four
// words free for two calls' arguments.
.macro MCOUNT_SAVE
        pushl   %ebp
        .cfi_def_cfa_offset 8
        .cfi_offset %ebp, -8
        movl    %esp, %ebp
        .cfi_def_cfa_register %ebp
        pushl   %eax
        pushl   %ecx
        pushl   %edx
        andl    $-16, %esp
        subl    $16, %esp
.endm

        .globl  mcount
        .type   mcount, @function
        .globl  _mcount
        .type   _mcount, @function
        .p2align 4
mcount:
_mcount:
        .cfi_startproc
        MCOUNT_SAVE
        movl    0(%ebp), %eax    // the instrumented function's frame pointer
        movl    4(%eax), %eax    // from_pc: its return address
        jmp     .Lmcount_common
        .cfi_endproc
        .size   mcount, .-mcount
        .size   _mcount, .-_mcount

        .globl  __fentry__
        .type   __fentry__, @function
        .p2align 4
__fentry__:
        .cfi_startproc
        MCOUNT_SAVE
        movl    8(%ebp), %eax    // from_pc: the instrumented function's return address
.Lmcount_common:
        movl    4(%ebp), %edx    // self_pc: our return address
        movl    %eax, 0(%esp)
        movl    %edx, 4(%esp)
        movl    %eax, 8(%esp)    // kept for the slow path (a callee owns its argument words)
        movl    %edx, 12(%esp)
        call    framewalk_mcount_fast
        testl   %eax, %eax
        jnz     .Lmcount_slow
.Lmcount_restore:
        movl    -4(%ebp), %eax
        movl    -8(%ebp), %ecx
        movl    -12(%ebp), %edx
        leave
        .cfi_def_cfa %esp, 4
        ret
        .cfi_def_cfa %ebp, 8
.Lmcount_slow:
        // A thread's first call.
        movl    8(%esp), %eax
        movl    12(%esp), %edx
        movl    %eax, 0(%esp)
        movl    %edx, 4(%esp)
        call    framewalk_mcount_slow
        jmp     .Lmcount_restore
        .cfi_endproc
        .size   __fentry__, .-__fentry__

        .section .note.GNU-stack,"",@progbits
