// void framewalk_capture(uint64_t out[34])
// Stores the caller's registers in DWARF order (eax..edi, eip), one 64-bit
// word each (zero-extended): the callee-saved ebx, ebp, esi and edi as they
// are, esp as the caller's (past our return address), eip as our return
// address. eax, ecx and edx are zeroed: the unwinder never needs them to
// step out of the caller (arch/i386/frames.hpp's from_capture marks only the
// others known). cdecl: `out` is the word above the return address.
        .text
        .globl  framewalk_capture
        .hidden framewalk_capture
        .type   framewalk_capture, @function
framewalk_capture:
        .cfi_startproc
        movl    4(%esp), %eax
        movl    $0, 0(%eax)        // eax
        movl    $0, 4(%eax)
        movl    $0, 8(%eax)        // ecx
        movl    $0, 12(%eax)
        movl    $0, 16(%eax)       // edx
        movl    $0, 20(%eax)
        movl    %ebx, 24(%eax)
        movl    $0, 28(%eax)
        leal    4(%esp), %ecx
        movl    %ecx, 32(%eax)     // the caller's esp
        movl    $0, 36(%eax)
        movl    %ebp, 40(%eax)
        movl    $0, 44(%eax)
        movl    %esi, 48(%eax)
        movl    $0, 52(%eax)
        movl    %edi, 56(%eax)
        movl    $0, 60(%eax)
        movl    (%esp), %ecx
        movl    %ecx, 64(%eax)     // eip: our return address
        movl    $0, 68(%eax)
        ret
        .cfi_endproc
        .size   framewalk_capture, .-framewalk_capture

        .section .note.GNU-stack,"",@progbits
