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
 * lives in this page, which the program can read but not write. In free execution on PVM
 * the time syscalls are answered here too, from the TSC (clock_dispatch, below;
 * vmm/kvm/vclock.h).
 *
 * The other paths that never leave the guest: the #DB ending a single step the VMM armed
 * (debug_entry, below; vmm/sched/guest_step.h), and with --guest-cue-points a memory cue
 * point the VMM gave a budget for (pf_entry, below; vmm/sched/guest_cue.h). */
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
    .long clock - agent_start
    .long clock_probe - agent_start
    .long clock_compute - agent_start
    .long clock_store - agent_start
    .long clock_end - agent_start

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
    cmpq $0, clock(%rip)              /* struct agent_clock: on */
    jne clock_dispatch
mmio_user:
    movabs UVA_MMIO, %rax
    jmp *%rcx
    .irp i, 0, 1, 2, 3, 4, 5, 6, 7
hit_user_\i:
    movq (answers + 8 * (ANSWER_SLOTS + \i))(%rip), %rax
    jmp *%rcx
    .endr

/* The guest's clock (struct agent_clock, layout.h; vmm/kvm/vclock.h): in free execution
 * on PVM, where the program's own rdtsc reads the host's TSC, clock_gettime (REALTIME,
 * MONOTONIC and their COARSE, RAW and BOOTTIME kinds), gettimeofday and time are answered
 * here with the VMM's formula: ns = ns_base + ((rdtsc - tsc_base) * mult >> 32), REALTIME
 * + epoch. The VMM writes the block while no vCPU runs and clears `on` whenever time is
 * not the host's (serialized execution). Anything unusual takes the exit (mmio_user)
 * with the registers intact: another clock, a NULL or misaligned pointer, a TSC before
 * tsc_base. No stack: rdx is kept in r11 (which a syscall may destroy, x86-64 ABI A.2.1).
 * Three stretches, known to the VMM by the header (vclock_fixup):
 * - clock_probe: the user's pointer is written with `lock orb $0` at both ends, which
 *   changes no byte but faults where the answer's write would; the registers are the
 *   syscall's, and the VMM turns such a fault into the exit (EFAULT or a watched page);
 * - clock_compute: the arithmetic, which cannot fault;
 * - clock_store: the answer's writes (a fault here needs another thread to unmap the
 *   memory meanwhile): the VMM restores rdx from r11 and returns -EFAULT.
 * A vCPU kicked out of KVM_RUN in the look-ups before mmio_user or between clock_probe and
 * clock_end while the block is on is let run on until it leaves (vclock_mid_answer):
 * nobody may change the block under a half-done answer. */
/* The answer's buffer at reg (non-NULL: checked before) must be 8-aligned and writable
 * from its byte 0 to its byte last, else the exit; then on to answer. */
.macro PROBE_OUT reg, last, answer
    testq $7, \reg
    jnz mmio_user
    lock orb $0, (\reg)
    lock orb $0, \last(\reg)
    jmp \answer
.endm
clock_dispatch:
clock_probe:                          /* (the dispatch cannot fault: in the stretch anyway) */
    cmpq $228, %rax                   /* clock_gettime */
    je cg_probe
    cmpq $96, %rax                    /* gettimeofday */
    je tod_probe
    cmpq $201, %rax                   /* time */
    jne mmio_user
time_probe:
    testq %rdi, %rdi
    jz time_now
    PROBE_OUT %rdi, 7, time_now
cg_probe:
    cmpq $1, %rdi                     /* REALTIME, MONOTONIC */
    jbe 1f
    cmpq $4, %rdi                     /* PROCESS/THREAD_CPUTIME: exit */
    jb mmio_user
    cmpq $7, %rdi                     /* MONOTONIC_RAW, REALTIME_COARSE, MONOTONIC_COARSE, BOOTTIME */
    ja mmio_user
1:  testq %rsi, %rsi
    jz mmio_user
    PROBE_OUT %rsi, 15, cg_now
tod_probe:
    testq %rdi, %rdi
    jz mmio_user
    PROBE_OUT %rdi, 15, tod_now
clock_compute:
clock_zero:
    movq %r11, %rdx
    xorl %eax, %eax
    jmp *%rcx
/* rax = the virtual time in ns (the VMM's vm_vtime); rdx is free (kept in r11). A TSC
 * before tsc_base (never on a sane host) restores rdx and takes the exit for syscall nr. */
.macro CLOCK_NS nr
    movq %rdx, %r11
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    subq (clock + 8)(%rip), %rax      /* tsc_base */
    jae 8f
    movq %r11, %rdx
    movl $\nr, %eax
    jmp mmio_user
8:  mulq (clock + 16)(%rip)           /* mult */
    shrdq $32, %rdx, %rax
    addq (clock + 24)(%rip), %rax     /* ns_base */
.endm
time_now:
    CLOCK_NS 201
    addq (clock + 32)(%rip), %rax     /* epoch */
    xorl %edx, %edx
    divq (clock + 40)(%rip)           /* billion */
    jmp time_store
cg_now:
    CLOCK_NS 228
    testq %rdi, %rdi                  /* REALTIME */
    je 1f
    cmpq $5, %rdi                     /* REALTIME_COARSE */
    jne 2f
1:  addq (clock + 32)(%rip), %rax
2:  xorl %edx, %edx
    divq (clock + 40)(%rip)
    jmp cg_store
tod_now:
    CLOCK_NS 96
    addq (clock + 32)(%rip), %rax
    xorl %edx, %edx
    divq (clock + 40)(%rip)
    jmp tod_store
clock_store:
cg_store:
    movq %rax, (%rsi)
    movq %rdx, 8(%rsi)
    jmp clock_zero
tod_store:
    movq %rax, (%rdi)
    movq %rdx, %rax
    xorl %edx, %edx
    divq (clock + 48)(%rip)           /* thousand */
    movq %rax, 8(%rdi)
    jmp clock_zero
time_store:
    testq %rdi, %rdi
    jz 1f
    movq %rax, (%rdi)
1:  movq %r11, %rdx
    jmp *%rcx
clock_end:

    .balign 8
clock:
    .fill 7, 8, 0                     /* struct agent_clock: written by the VMM */

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
    .if \vec == 14
    jmp pf_entry
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
    /* First the step of a cue point the agent took itself (pf_entry, below). */
    leaq (AGENT_CUE_OFF - AGENT_STEP_OFF)(%rdi), %rsi
    cmpq $0, AGENT_CUE_SPTE(%rsi)
    je 3f
    testb $3, 48(%rsp)
    jz debug_exit
    testq $0x100, 56(%rsp)
    jz debug_exit
    movq 40(%rsp), %rax
    cmpq AGENT_CUE_SRIP(%rsi), %rax
    je debug_exit                     /* no progress (a rep string): the VMM steps it */
    movq AGENT_CUE_SPTE(%rsi), %rdx
    movq AGENT_CUE_SVALUE(%rsi), %rax
    movq %rax, (%rdx)
    movq AGENT_CUE_SVA(%rsi), %rax
    invlpg (%rax)
    movq $0, AGENT_CUE_SPTE(%rsi)
    andq $~0x100, 56(%rsp)
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    iretq
3:  movabs $AGENT_STEP_ARMED, %rax
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
/* #PF: a memory cue point taken in the guest (struct agent_cue, layout.h; policy in
 * vmm/sched/guest_cue.h). When the VMM turned the block ON with a budget left, the fault
 * is a not-present user fault (not an instruction fetch) on one of the shared pages it
 * listed, whose PTE is still trapped, no step is going on and the instruction carries no
 * rep prefix and is not pushf (their steps need the VMM; its bytes are read at rip, in
 * the page the CPU just fetched them from, only when they lie within it), the agent does
 * what the VMM would: maps the page,
 * logs the cue point (registers, fault address and code, 16 bytes of the page before the
 * access) in the ring, sets TF and returns; the #DB (debug_entry) traps the page again.
 * Anything else is the stub's exit, as before. */
pf_entry:
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    /* saved r11 at 0(%rsp) ... rax at 64; the frame: error code 72, rip 80, cs 88,
     * rflags 96, rsp 104. */
    movq %rsp, %rdi
    movabs $AGENT_PERCPU_MASK, %rax
    andq %rax, %rdi
    leaq AGENT_STEP_OFF(%rdi), %r8
    addq $AGENT_CUE_OFF, %rdi
    movabs $AGENT_CUE_ON, %rax
    cmpq %rax, (%rdi)
    jne pf_exit
    testb $3, 88(%rsp)
    jz pf_exit
    testq $1, 72(%rsp)
    jnz pf_exit
    testq $0x100, 96(%rsp)
    jnz pf_exit
    movabs $AGENT_STEP_ARMED, %rax
    cmpq %rax, (%r8)
    je pf_exit
    cmpq $0, AGENT_CUE_SPTE(%rdi)
    jne pf_exit
    cmpq $0, AGENT_CUE_BUDGET(%rdi)
    je pf_exit
    movq AGENT_CUE_N(%rdi), %rcx
    cmpq AGENT_CUE_CAP(%rdi), %rcx
    jae pf_exit
    cmpq $AGENT_CUE_RING, %rcx
    jae pf_exit
    /* The page: one the VMM listed, still trapped. */
    movq %cr2, %rsi
    movq %rsi, %rax
    andq $-4096, %rax
    movq AGENT_CUE_NPAGES(%rdi), %rcx
    cmpq $AGENT_CUE_PAGES, %rcx
    ja pf_exit
    leaq AGENT_CUE_PAGE(%rdi), %rdx
1:  testq %rcx, %rcx
    jz pf_exit
    cmpq (%rdx), %rax
    je 2f
    addq $AGENT_CUE_PSIZE, %rdx
    decq %rcx
    jmp 1b
2:  movq 8(%rdx), %r9
    movq (%r9), %rax
    cmpq 24(%rdx), %rax
    jne pf_exit
    /* The instruction's bytes, read where the CPU just fetched them (not a fetch fault:
     * the code page is present; the 15 bytes stay in that page). */
    testq $0x10, 72(%rsp)
    jnz pf_exit
    movq 80(%rsp), %r8
    movq %r8, %rcx
    andq $0xFFF, %rcx
    cmpq $0xFF0, %rcx
    ja pf_exit
    xorl %ecx, %ecx
3:  movzbl (%r8,%rcx), %eax
    cmpb $0xF2, %al
    je pf_exit
    cmpb $0xF3, %al
    je pf_exit
    cmpb $0x9C, %al
    je pf_exit
    movl %eax, %r10d
    andl $0xF0, %r10d
    cmpl $0x40, %r10d
    je 4f
    .irp pfx, 0x66, 0x67, 0xF0, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65
    cmpb $\pfx, %al
    je 4f
    .endr
    jmp 5f
4:  incl %ecx
    cmpl $15, %ecx
    jb 3b
    jmp pf_exit
5:  /* Taken: the page mapped, its re-trap pending for the #DB. */
    movq 16(%rdx), %rax
    movq %rax, (%r9)
    movq %r9, AGENT_CUE_SPTE(%rdi)
    movq 24(%rdx), %rcx
    movq %rcx, AGENT_CUE_SVALUE(%rdi)
    movq (%rdx), %rcx
    movq %rcx, AGENT_CUE_SVA(%rdi)
    movq 80(%rsp), %rcx
    movq %rcx, AGENT_CUE_SRIP(%rdi)
    /* The entry. */
    movq AGENT_CUE_N(%rdi), %rcx
    imulq $AGENT_CUE_ESIZE, %rcx
    leaq AGENT_CUE_RINGOFF(%rdi,%rcx), %rcx
    movq 80(%rsp), %r8
    movq %r8, 0(%rcx)
    movq %rsi, 8(%rcx)
    movq 72(%rsp), %r8
    movq %r8, 16(%rcx)
    movq 96(%rsp), %r8
    movq %r8, 24(%rcx)
    movq 104(%rsp), %r8
    movq %r8, 32(%rcx)
    movq %r8, 72(%rcx)               /* gpr[4]: rsp */
    .irp i, 0, 1, 2, 6, 7, 8, 9, 10, 11
    .if \i == 0
    movq 64(%rsp), %r8
    .elseif \i == 1
    movq 56(%rsp), %r8
    .elseif \i == 2
    movq 48(%rsp), %r8
    .elseif \i == 6
    movq 40(%rsp), %r8
    .elseif \i == 7
    movq 32(%rsp), %r8
    .else
    movq (88 - 8 * \i)(%rsp), %r8     /* r8 at 24 ... r11 at 0 */
    .endif
    movq %r8, (40 + 8 * \i)(%rcx)
    .endr
    movq %rbx, 64(%rcx)
    movq %rbp, 80(%rcx)
    movq %r12, 136(%rcx)
    movq %r13, 144(%rcx)
    movq %r14, 152(%rcx)
    movq %r15, 160(%rcx)
    /* 16 bytes of the page from min(cr2 & ~7, page end - 16), mapped now. */
    movq (%rdx), %rax
    movq %rsi, %r8
    andq $0xFF8, %r8
    cmpq $0xFF0, %r8
    jbe 6f
    movq $0xFF0, %r8
6:  addq %r8, %rax
    movq (%rax), %r8
    movq %r8, 168(%rcx)
    movq 8(%rax), %r8
    movq %r8, 176(%rcx)
    incq AGENT_CUE_N(%rdi)
    decq AGENT_CUE_BUDGET(%rdi)
    /* TF, and IF as the VMM's return to user mode sets it (PVM's frame may not have it:
     * the program's pushf would see the difference). */
    orq $0x300, 96(%rsp)
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    addq $8, %rsp
    iretq
pf_exit:
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    outb %al, $(PORT_EXC_BASE + 14)
    addq $8, %rsp
    iretq
debug_end:
    .balign 16
agent_end:
