/* Code a jit publishes through the GDB JIT interface (tests/jit/gdb_jit.c):
 * linked alone at a fixed address into an ELF object whose .eh_frame
 * describes it. gdbjit_outer(fn) -> gdbjit_inner(fn) -> fn(). Neither keeps
 * a frame pointer, and gdbjit_outer sets the frame-pointer register to 0:
 * only the object's CFI walks through them. */
        .text
        .globl gdbjit_outer
        .type gdbjit_outer, %function
        .globl gdbjit_inner
        .type gdbjit_inner, %function
#if defined(__x86_64__)
gdbjit_outer:
        .cfi_startproc
        push %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_offset %rbp, -16
        xor %ebp, %ebp
        sub $16, %rsp
        .cfi_adjust_cfa_offset 16
        call gdbjit_inner
        add $16, %rsp
        .cfi_adjust_cfa_offset -16
        pop %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbp
        ret
        .cfi_endproc
        .size gdbjit_outer, . - gdbjit_outer
gdbjit_inner:
        .cfi_startproc
        push %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_offset %rbx, -16
        call *%rdi
        pop %rbx
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbx
        ret
        .cfi_endproc
        .size gdbjit_inner, . - gdbjit_inner
#elif defined(__aarch64__)
gdbjit_outer:
        .cfi_startproc
        sub sp, sp, #32
        .cfi_def_cfa_offset 32
        stp x29, x30, [sp, #16]
        .cfi_offset 29, -16
        .cfi_offset 30, -8
        mov x29, #0
        bl gdbjit_inner
        ldp x29, x30, [sp, #16]
        .cfi_restore 29
        .cfi_restore 30
        add sp, sp, #32
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        .size gdbjit_outer, . - gdbjit_outer
gdbjit_inner:
        .cfi_startproc
        sub sp, sp, #48
        .cfi_def_cfa_offset 48
        str x30, [sp, #40]
        .cfi_offset 30, -8
        blr x0
        ldr x30, [sp, #40]
        .cfi_restore 30
        add sp, sp, #48
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        .size gdbjit_inner, . - gdbjit_inner
#elif defined(__arm__)
        .syntax unified
        .arm
        .cfi_sections .eh_frame  /* DWARF CFI, not EHABI tables */
gdbjit_outer:
        .cfi_startproc
        push {r11, lr}
        .cfi_adjust_cfa_offset 8
        .cfi_offset r11, -8
        .cfi_offset lr, -4
        mov r11, #0
        sub sp, sp, #8
        .cfi_adjust_cfa_offset 8
        bl gdbjit_inner
        add sp, sp, #8
        .cfi_adjust_cfa_offset -8
        pop {r11, pc}
        .cfi_endproc
        .size gdbjit_outer, . - gdbjit_outer
gdbjit_inner:
        .cfi_startproc
        push {r4, lr}
        .cfi_adjust_cfa_offset 8
        .cfi_offset r4, -8
        .cfi_offset lr, -4
        blx r0
        pop {r4, pc}
        .cfi_endproc
        .size gdbjit_inner, . - gdbjit_inner
#elif defined(__s390x__)
/* The CIE's CFA is r15 + 160; stmg saves into the caller's register save area. */
gdbjit_outer:
        .cfi_startproc
        stmg %r11,%r15,88(%r15)
        .cfi_offset %r11, -72
        .cfi_offset %r14, -48
        .cfi_offset %r15, -40
        lghi %r11,0
        aghi %r15,-176
        .cfi_adjust_cfa_offset 176
        brasl %r14,gdbjit_inner
        lmg %r11,%r15,264(%r15)
        .cfi_restore %r11
        .cfi_restore %r14
        .cfi_restore %r15
        .cfi_def_cfa_offset 160
        br %r14
        .cfi_endproc
        .size gdbjit_outer, . - gdbjit_outer
gdbjit_inner:
        .cfi_startproc
        stmg %r14,%r15,112(%r15)
        .cfi_offset %r14, -48
        .cfi_offset %r15, -40
        aghi %r15,-160
        .cfi_adjust_cfa_offset 160
        basr %r14,%r2
        lmg %r14,%r15,272(%r15)
        .cfi_restore %r14
        .cfi_restore %r15
        .cfi_def_cfa_offset 160
        br %r14
        .cfi_endproc
        .size gdbjit_inner, . - gdbjit_inner
#else
#error "gdb_jit_code.S: x86-64, AArch64, 32-bit ARM and s390x only"
#endif
        .section .note.GNU-stack, "", %progbits
