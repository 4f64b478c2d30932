// The mcount runtime's entry point on s390x (src/mcount/runtime.cpp).
//
// gcc -pg calls _mcount first thing in a function, before its prologue:
//     stg %r14,8(%r15); brasl %r14,_mcount@PLT; lg %r14,8(%r15)
// so the instrumented function's return address (from_pc, in its caller)
// is at 8(%r15), which must still hold it when we return, and r14 at entry
// is a PC inside the instrumented function (self_pc). The function's
// arguments are all live: r2-r6 and f0/f2/f4/f6, with r0 its static chain
// (a nested function's). The stub keeps r0-r5 (and its r14) in a frame of
// its own below r15; r6-r13 and f8-f15 are kept by the C side as by any
// function. The C side is built with -msoft-float, which keeps gcc off the
// floating-point registers; around framewalk_mcount_slow (a thread's first
// call, which calls into the C library) the stub saves f0/f2/f4/f6 too.
// Vector arguments (v24-v31, -mvx code) are not kept there, as glibc's
// _mcount keeps none. Every call goes through the C side, under the
// thread's guard (no first probe: mcount_context.hpp).
        .text

// The frame: the 160-byte register save area our callees may store into,
// then r0-r5 at 160, self_pc (r14) at 208, from_pc at 216 (kept for the
// slow path), f0/f2/f4/f6 at 224 (slow path only).
        .set    FRAME, 256

        .globl  _mcount
        .type   _mcount, @function
        .p2align 3
_mcount:
        .cfi_startproc
        aghi    %r15,-FRAME
        .cfi_adjust_cfa_offset FRAME
        stmg    %r0,%r5,160(%r15)
        stg     %r14,208(%r15)
        .cfi_offset %r14, 208-FRAME-160
        lg      %r2,FRAME+8(%r15)   // from_pc, where the instrumented function stored it
        lgr     %r3,%r14            // self_pc
        stg     %r2,216(%r15)
        brasl   %r14,framewalk_mcount_fast
        ltr     %r2,%r2
        jne     .Lmcount_slow
.Lmcount_restore:
        lmg     %r0,%r5,160(%r15)
        lg      %r14,208(%r15)
        aghi    %r15,FRAME
        .cfi_remember_state
        .cfi_restore %r14
        .cfi_adjust_cfa_offset -FRAME
        br      %r14
        .cfi_restore_state
.Lmcount_slow:
        std     %f0,224(%r15)
        std     %f2,232(%r15)
        std     %f4,240(%r15)
        std     %f6,248(%r15)
        lg      %r2,216(%r15)       // from_pc
        lg      %r3,208(%r15)       // self_pc
        brasl   %r14,framewalk_mcount_slow
        ld      %f0,224(%r15)
        ld      %f2,232(%r15)
        ld      %f4,240(%r15)
        ld      %f6,248(%r15)
        j       .Lmcount_restore
        .cfi_endproc
        .size   _mcount, .-_mcount

        .section .note.GNU-stack,"",@progbits
