// Register preservation around _mcount on s390x (registers_main.c):
// fw_registers_run(hook) loads r0, r2-r13, f0/f2/f4/f6 and f8-f15 from
// fw_expect, calls an "instrumented function" with gcc -pg's sequence and
// stores them into fw_after in the same layout (word 0: r0; 1-12: r2-r13;
// 13-16: f0, f2, f4, f6; 17-24: f8-f15; 25: r15 inside the instrumented
// function). r0 may be a nested function's static chain and r2-r6,
// f0/f2/f4/f6 its arguments; r14 is gcc's to reload (from 8(%r15), which
// the stub must leave alone: the function returns through it). r1 is the
// PLT's (the call reaches _mcount through one, which may use it), and f1,
// f3, f5 and f7 are free for _mcount by the ABI, as for any call.
//   hook 0: stg %r14,8(%r15); brasl %r14,_mcount@PLT; lg %r14,8(%r15)
        .data
        .globl  fw_expect, fw_after, fw_words, fw_hooks, fw_runtime_words
        .p2align 4
fw_expect: .zero 26 * 8
fw_after:  .zero 26 * 8
fw_words:  .long 26
fw_hooks:  .long 1
fw_runtime_words: .long 25, -1

        .text
        .globl  fw_registers_run
        .type   fw_registers_run, @function
        .p2align 3
fw_registers_run:
        stmg    %r6,%r15,48(%r15)
        aghi    %r15,-224
        std     %f8,160(%r15)
        std     %f9,168(%r15)
        std     %f10,176(%r15)
        std     %f11,184(%r15)
        std     %f12,192(%r15)
        std     %f13,200(%r15)
        std     %f14,208(%r15)
        std     %f15,216(%r15)
        larl    %r14,.Lhooks
        sllg    %r2,%r2,3
        lg      %r14,0(%r2,%r14)
        larl    %r1,fw_expect
        ld      %f0,104(%r1)
        ld      %f2,112(%r1)
        ld      %f4,120(%r1)
        ld      %f6,128(%r1)
        ld      %f8,136(%r1)
        ld      %f9,144(%r1)
        ld      %f10,152(%r1)
        ld      %f11,160(%r1)
        ld      %f12,168(%r1)
        ld      %f13,176(%r1)
        ld      %f14,184(%r1)
        ld      %f15,192(%r1)
        lg      %r0,0(%r1)
        lmg     %r2,%r13,8(%r1)
        basr    %r14,%r14           // the branch address is taken before the link is stored
        ld      %f8,160(%r15)
        ld      %f9,168(%r15)
        ld      %f10,176(%r15)
        ld      %f11,184(%r15)
        ld      %f12,192(%r15)
        ld      %f13,200(%r15)
        ld      %f14,208(%r15)
        ld      %f15,216(%r15)
        lmg     %r6,%r15,224+48(%r15)
        br      %r14
        .size   fw_registers_run, .-fw_registers_run

// gcc -pg's sequence, then every register stored (through r14, which the
// function reloads from 8(%r15) to return).
        .type   fw_instrumented, @function
        .p2align 3
fw_instrumented:
        stg     %r14,8(%r15)
        larl    %r14,fw_expect
        stg     %r15,200(%r14)
        brasl   %r14,_mcount@PLT
        larl    %r14,fw_after
        stg     %r0,0(%r14)
        stmg    %r2,%r13,8(%r14)
        std     %f0,104(%r14)
        std     %f2,112(%r14)
        std     %f4,120(%r14)
        std     %f6,128(%r14)
        std     %f8,136(%r14)
        std     %f9,144(%r14)
        std     %f10,152(%r14)
        std     %f11,160(%r14)
        std     %f12,168(%r14)
        std     %f13,176(%r14)
        std     %f14,184(%r14)
        std     %f15,192(%r14)
        stg     %r15,200(%r14)
        lg      %r14,8(%r15)
        br      %r14
        .size   fw_instrumented, .-fw_instrumented

        .section .data.rel.ro,"aw"
        .p2align 3
.Lhooks:
        .quad   fw_instrumented

        .section .note.GNU-stack,"",@progbits
