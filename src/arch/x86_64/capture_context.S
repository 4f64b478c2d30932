// void framewalk_x86_64_capture(uint64_t out[17])
// Stores the caller's registers in DWARF order (rax..r15, rip): the
// callee-saved ones as they are, rsp as the caller's (past our return
// address), rip as our return address. Caller-saved registers are zeroed: the
// unwinder never needs them to step out of the caller.
// Also framewalk_capture (arch/capture.hpp), the name every host machine's
// capture has.
        .text
        .globl  framewalk_x86_64_capture
        .hidden framewalk_x86_64_capture
        .type   framewalk_x86_64_capture, @function
        .globl  framewalk_capture
        .hidden framewalk_capture
        .type   framewalk_capture, @function
framewalk_capture:
framewalk_x86_64_capture:
        .cfi_startproc
        movq    $0, 0(%rdi)        // rax
        movq    $0, 8(%rdi)        // rdx
        movq    $0, 16(%rdi)       // rcx
        movq    %rbx, 24(%rdi)
        movq    $0, 32(%rdi)       // rsi
        movq    $0, 40(%rdi)       // rdi
        movq    %rbp, 48(%rdi)
        leaq    8(%rsp), %rax
        movq    %rax, 56(%rdi)     // the caller's rsp
        movq    $0, 64(%rdi)       // r8
        movq    $0, 72(%rdi)
        movq    $0, 80(%rdi)
        movq    $0, 88(%rdi)       // r11
        movq    %r12, 96(%rdi)
        movq    %r13, 104(%rdi)
        movq    %r14, 112(%rdi)
        movq    %r15, 120(%rdi)
        movq    (%rsp), %rax
        movq    %rax, 128(%rdi)    // rip: our return address
        ret
        .cfi_endproc
        .size   framewalk_x86_64_capture, .-framewalk_x86_64_capture

        .section .note.GNU-stack,"",@progbits
