/* The guest-agent: the only ring-0 code in the guest. It is deliberately tiny: every
 * decision is taken by the VMM, which sees each syscall as an MMIO exit and each
 * exception as an I/O exit on a port (see vmm/kvm/layout.h). `out imm8, %al` leaves
 * every register intact, so the VMM reads the user's registers exactly as the
 * syscall/exception left them.
 *
 * One path never leaves the guest: the answers table (below), which the VMM fills with
 * syscalls whose answer is a constant of the run (getpid, getppid, ...: policy in
 * vmm/kvm/answers.c). A syscall found there is answered here, without an exit (~2 us on
 * PVM against ~50-75 us for the MMIO exit: docs/benchmarks.md "Syscall cost"). The table
 * lives in this page, which the program can read but not write.
 *
 * The other path that never leaves the guest: the #DB ending a single step the VMM armed
 * (debug_entry, below; vmm/sched/guest_step.h). */
#include "kvm/layout.h"

    .code64
    .text
    .globl agent_start
agent_start:
header:
    .quad AGENT_MAGIC                 /* "JINXAGNT" */
    .long syscall_ring0 - agent_start
    .long syscall_user - agent_start
    .long mmio_ring0 - agent_start
    .long exc_stubs - agent_start
    .long mmio_user - agent_start
    .long answers - agent_start
    .long debug_entry - agent_start
    .long debug_end - agent_start

/* LSTAR targets. This page is also mapped user-executable at UVA_AGENT. A syscall is
 * one MMIO read: the VMM sees the exit with the user's registers intact (rax = number,
 * rdi..r9 = arguments, rcx = return address, r11 = flags) and answers the read with the
 * result, which lands in rax. Nothing here touches the stack, so the user's red zone is
 * safe.
 * - VMX/SVM: SYSCALL entered ring 0 without switching stacks; sysretq goes back.
 * - PVM (KVM without hardware virtualization): SYSCALL jumps to LSTAR but stays in user
 *   mode, so the return is a plain jump to the saved rip.
 * Before the read, ANSWER_LOOKUP looks rax up in the answers table: a hit returns the
 * table's value in rax with no exit. Only rax and the arithmetic flags change (a syscall
 * clobbers rax; compilers assume any asm clobbers the flags on x86, and sysretq restores
 * them from r11 anyway). */
#define ANSWER_SLOTS 8   /* = AGENT_ANSWER_SLOTS in vmm/kvm/layout.h */
.macro ANSWER_LOOKUP hit
    cmpq $0, answers_on(%rip)
    je 9f
    .irp i, 0, 1, 2, 3, 4, 5, 6, 7
    cmpq (answers + 8 * \i)(%rip), %rax
    je \hit\i
    .endr
9:
.endm

    .balign 16
syscall_ring0:
    ANSWER_LOOKUP hit_ring0_
mmio_ring0:
    movabs UVA_MMIO, %rax
    sysretq
    .irp i, 0, 1, 2, 3, 4, 5, 6, 7
hit_ring0_\i:
    movq (answers + 8 * (ANSWER_SLOTS + \i))(%rip), %rax
    sysretq
    .endr

    .balign 16
syscall_user:
    ANSWER_LOOKUP hit_user_
mmio_user:
    movabs UVA_MMIO, %rax
    jmp *%rcx
    .irp i, 0, 1, 2, 3, 4, 5, 6, 7
hit_user_\i:
    movq (answers + 8 * (ANSWER_SLOTS + \i))(%rip), %rax
    jmp *%rcx
    .endr

/* The answers table, written by the VMM at boot (struct agent_answers, layout.h): when
 * answers_on is 0 every syscall exits. Slot i answers syscall number nr[i] with
 * value[i]; the VMM fills unused slots with copies of a used one. */
    .balign 8
answers_on:
    .quad 0
answers:
    .fill 2 * ANSWER_SLOTS, 8, 0

/* Exception stubs, one per vector, 16 bytes apart, all on IST1. The VMM reads the frame
 * and either ends the thread (fatal) or resumes it in user mode by setting the vCPU
 * state itself; the iretq is kept for hypervisors that can run it. */
    .balign 16
exc_stubs:
    .irp vec, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    .balign 16
    .if \vec == 1
    jmp debug_entry
    .endif
    outb %al, $(PORT_EXC_BASE + \vec)
    .if (\vec == 8) || (\vec == 10) || (\vec == 11) || (\vec == 12) || (\vec == 13) || (\vec == 14) || (\vec == 17) || (\vec == 21) || (\vec == 29) || (\vec == 30)
    addq $8, %rsp
    .endif
    iretq
    .endr

/* #DB: the end of a single step the VMM armed (struct agent_step, layout.h) is handled
 * here, without an exit: a step of an access to a shared page ends by trapping the page
 * again (the PTE values and pages are the VMM's, written before this KVM_RUN; a write of
 * the PTE and an invlpg of the page are what the VMM's revoke does), clearing TF in the
 * frame and marking the block DONE, which the VMM reads back after KVM_RUN to do its own
 * bookkeeping (vmm/sched/guest_step.c). Anything else - no armed step, a #DB from ring 0,
 * TF not set, a bad count - is the stub's exit, exactly as before. On PVM this costs
 * about one raw exit's worth (an exception delivered to the agent and its iretq) against
 * 4-6 for an exit from the handler (docs/benchmarks.md "Syscall cost"). A vCPU kicked out
 * of KVM_RUN between debug_entry and debug_end is let run on until it leaves (guest_step.c):
 * nobody may change the step under a half-done handler. */
    .balign 16
debug_entry:
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    /* The frame: rip at 40(%rsp), cs 48, rflags 56. */
    movq %rsp, %rdi
    movabs $AGENT_PERCPU_MASK, %rax
    andq %rax, %rdi
    addq $AGENT_STEP_OFF, %rdi
    movabs $AGENT_STEP_ARMED, %rax
    cmpq %rax, (%rdi)
    jne debug_exit
    testb $3, 48(%rsp)
    jz debug_exit
    testq $0x100, 56(%rsp)
    jz debug_exit
    movq AGENT_STEP_N(%rdi), %rcx
    cmpq $AGENT_STEP_MAX, %rcx
    ja debug_exit
    leaq AGENT_STEP_E(%rdi), %rdx
1:  testq %rcx, %rcx
    jz 2f
    movq (%rdx), %rsi
    movq 8(%rdx), %rax
    movq %rax, (%rsi)
    movq 16(%rdx), %rax
    invlpg (%rax)
    addq $AGENT_STEP_ESIZE, %rdx
    decq %rcx
    jmp 1b
2:  andq $~0x100, 56(%rsp)
    movabs $AGENT_STEP_DONE, %rax
    movq %rax, (%rdi)
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    iretq
debug_exit:
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    outb %al, $(PORT_EXC_BASE + 1)
    iretq
debug_end:
    .balign 16
agent_end:
