// Register preservation around mcount and __fentry__ (registers_main.c):
// fw_registers_run(hook) loads every general register but rsp and xmm0-7
// from fw_expect, calls an "instrumented function" that calls the hook
// exactly as gcc -pg / -pg -mfentry code does, and stores every register
// into fw_after in the same layout (words 0-14: rax rbx rcx rdx rsi rdi rbp
// r8-r15; 15-30: xmm0-7; 31: rsp and 32: rbp inside the instrumented
// function, before the hook's call in fw_expect, after it in fw_after).
//   hook 0: push %rbp; mov %rsp,%rbp; call *mcount@GOTPCREL(%rip)   (PIE)
//   hook 1: the same after sub $8,%rsp (the other stack alignment)
//   hook 2: push %rbp; mov %rsp,%rbp; call mcount@PLT                (-fno-pie)
//   hook 3: call *__fentry__@GOTPCREL(%rip) as the first instruction (-mfentry)
        .data
        .globl  fw_expect, fw_after, fw_words, fw_hooks
        .p2align 4
fw_expect: .zero 33 * 8
fw_after:  .zero 33 * 8
fw_words:  .long 33
fw_hooks:  .long 4
        .globl  fw_runtime_words
        .p2align 2
fw_runtime_words: .long 31, 32, -1   // the frame words

        .text
        .globl  fw_registers_run
        .type   fw_registers_run, @function
fw_registers_run:
        pushq   %rbx
        pushq   %rbp
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        leaq    .Lhooks(%rip), %rax
        movslq  %edi, %rdi
        movq    (%rax,%rdi,8), %rax
        pushq   %rax                      // the instrumented function to call
        leaq    fw_expect(%rip), %r11
        movdqu  120(%r11), %xmm0
        movdqu  136(%r11), %xmm1
        movdqu  152(%r11), %xmm2
        movdqu  168(%r11), %xmm3
        movdqu  184(%r11), %xmm4
        movdqu  200(%r11), %xmm5
        movdqu  216(%r11), %xmm6
        movdqu  232(%r11), %xmm7
        movq    0(%r11), %rax
        movq    8(%r11), %rbx
        movq    16(%r11), %rcx
        movq    24(%r11), %rdx
        movq    32(%r11), %rsi
        movq    40(%r11), %rdi
        movq    48(%r11), %rbp
        movq    56(%r11), %r8
        movq    64(%r11), %r9
        movq    72(%r11), %r10
        movq    88(%r11), %r12
        movq    96(%r11), %r13
        movq    104(%r11), %r14
        movq    112(%r11), %r15
        movq    80(%r11), %r11            // the base last
        call    *(%rsp)
        movq    %rax, fw_after+0(%rip)
        movq    %rbx, fw_after+8(%rip)
        movq    %rcx, fw_after+16(%rip)
        movq    %rdx, fw_after+24(%rip)
        movq    %rsi, fw_after+32(%rip)
        movq    %rdi, fw_after+40(%rip)
        movq    %rbp, fw_after+48(%rip)
        movq    %r8, fw_after+56(%rip)
        movq    %r9, fw_after+64(%rip)
        movq    %r10, fw_after+72(%rip)
        movq    %r11, fw_after+80(%rip)
        movq    %r12, fw_after+88(%rip)
        movq    %r13, fw_after+96(%rip)
        movq    %r14, fw_after+104(%rip)
        movq    %r15, fw_after+112(%rip)
        movdqu  %xmm0, fw_after+120(%rip)
        movdqu  %xmm1, fw_after+136(%rip)
        movdqu  %xmm2, fw_after+152(%rip)
        movdqu  %xmm3, fw_after+168(%rip)
        movdqu  %xmm4, fw_after+184(%rip)
        movdqu  %xmm5, fw_after+200(%rip)
        movdqu  %xmm6, fw_after+216(%rip)
        movdqu  %xmm7, fw_after+232(%rip)
        addq    $8, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbp
        popq    %rbx
        ret
        .size   fw_registers_run, .-fw_registers_run

        .section .data.rel.ro,"aw"
        .p2align 3
.Lhooks:
        .quad   fw_instrumented_got, fw_instrumented_odd, fw_instrumented_plt, fw_instrumented_fentry

        .text
.macro STORE_FRAME where
        movq    %rsp, \where+248(%rip)
        movq    %rbp, \where+256(%rip)
.endm

        .type   fw_instrumented_got, @function
fw_instrumented_got:
        pushq   %rbp
        movq    %rsp, %rbp
        STORE_FRAME fw_expect
        call    *mcount@GOTPCREL(%rip)
        STORE_FRAME fw_after
        popq    %rbp
        ret

        .type   fw_instrumented_odd, @function
fw_instrumented_odd:
        pushq   %rbp
        movq    %rsp, %rbp
        subq    $8, %rsp
        STORE_FRAME fw_expect
        call    *mcount@GOTPCREL(%rip)
        STORE_FRAME fw_after
        leave
        ret

        .type   fw_instrumented_plt, @function
fw_instrumented_plt:
        pushq   %rbp
        movq    %rsp, %rbp
        STORE_FRAME fw_expect
        call    mcount@PLT
        STORE_FRAME fw_after
        popq    %rbp
        ret

        .type   fw_instrumented_fentry, @function
fw_instrumented_fentry:
        STORE_FRAME fw_expect            // stores only: the registers are as at the function's entry
        call    *__fentry__@GOTPCREL(%rip)
        STORE_FRAME fw_after
        ret

        .section .note.GNU-stack,"",@progbits
