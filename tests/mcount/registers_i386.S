// Register preservation around mcount and __fentry__ (registers_main.c):
// fw_registers_run(hook) loads every general register but esp from
// fw_expect, calls an "instrumented function" that calls the hook exactly
// as gcc -pg / -pg -mfentry code does, and stores every register into
// fw_after in the same layout (words 0-6: eax ebx ecx edx esi edi ebp; 7:
// esp and 8: ebp inside the instrumented function, before the hook's call in
// fw_expect, after it in fw_after). Built into a program linked -no-pie:
// the non-PIC calls go through the PLT without ebx, and the data is
// addressed absolutely, without a base register.
//   hook 0: push %ebp; mov %esp,%ebp; push %ebx; (GOT in ebx); call *mcount@GOT(%ebx)   (PIC)
//   hook 1: push %ebp; mov %esp,%ebp; sub $8,%esp; call mcount    (another stack alignment)
//   hook 2: push %ebp; mov %esp,%ebp; call mcount                 (-fno-pie)
//   hook 3: call __fentry__ as the first instruction              (-pg -mfentry -fno-pie)
        .data
        .globl  fw_expect, fw_after, fw_words, fw_hooks
        .p2align 4
fw_expect: .zero 9 * 4
fw_after:  .zero 9 * 4
fw_words:  .long 9
fw_hooks:  .long 4
        .globl  fw_runtime_words
        .p2align 2
fw_runtime_words: .long 7, 8, -1   // the frame words

        .text
        .globl  fw_registers_run
        .type   fw_registers_run, @function
fw_registers_run:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %eax            // hook
        pushl   .Lhooks(,%eax,4)          // the instrumented function to call
        movl    fw_expect+4, %ebx
        movl    fw_expect+8, %ecx
        movl    fw_expect+12, %edx
        movl    fw_expect+16, %esi
        movl    fw_expect+20, %edi
        movl    fw_expect+24, %ebp
        movl    fw_expect+0, %eax
        call    *(%esp)
        movl    %eax, fw_after+0
        movl    %ebx, fw_after+4
        movl    %ecx, fw_after+8
        movl    %edx, fw_after+12
        movl    %esi, fw_after+16
        movl    %edi, fw_after+20
        movl    %ebp, fw_after+24
        addl    $4, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
        .size   fw_registers_run, .-fw_registers_run

        .section .rodata
        .p2align 2
.Lhooks:
        .long   fw_instrumented_got, fw_instrumented_odd, fw_instrumented_direct, fw_instrumented_fentry

        .text
.macro STORE_FRAME where
        movl    %esp, \where+28
        movl    %ebp, \where+32
.endm

        .type   fw_instrumented_got, @function
fw_instrumented_got:
        pushl   %ebp
        movl    %esp, %ebp
        pushl   %ebx
        call    1f
1:      popl    %ebx
        addl    $_GLOBAL_OFFSET_TABLE_+[.-1b], %ebx
        STORE_FRAME fw_expect
        call    *mcount@GOT(%ebx)
        STORE_FRAME fw_after
        popl    %ebx
        popl    %ebp
        ret

        .type   fw_instrumented_odd, @function
fw_instrumented_odd:
        pushl   %ebp
        movl    %esp, %ebp
        subl    $8, %esp
        STORE_FRAME fw_expect
        call    mcount
        STORE_FRAME fw_after
        leave
        ret

        .type   fw_instrumented_direct, @function
fw_instrumented_direct:
        pushl   %ebp
        movl    %esp, %ebp
        STORE_FRAME fw_expect
        call    mcount
        STORE_FRAME fw_after
        popl    %ebp
        ret

        .type   fw_instrumented_fentry, @function
fw_instrumented_fentry:
        STORE_FRAME fw_expect            // stores only: the registers are as at the function's entry
        call    __fentry__
        STORE_FRAME fw_after
        ret

        .section .note.GNU-stack,"",@progbits
