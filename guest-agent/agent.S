/* The guest-agent: the only ring-0 code in the guest. It is deliberately tiny: every
 * decision is taken by the VMM, which sees each syscall and exception as an I/O exit
 * on a port (see vmm/kvm/layout.h). `out imm8, %al` leaves every register intact, so the
 * VMM reads the user's registers exactly as the syscall/exception left them. */
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

/* LSTAR targets. This page is also mapped user-executable at UVA_AGENT. A syscall is
 * one MMIO read: the VMM sees the exit with the user's registers intact (rax = number,
 * rdi..r9 = arguments, rcx = return address, r11 = flags) and answers the read with the
 * result, which lands in rax. Nothing here touches the stack, so the user's red zone is
 * safe.
 * - VMX/SVM: SYSCALL entered ring 0 without switching stacks; sysretq goes back.
 * - PVM (KVM without hardware virtualization): SYSCALL jumps to LSTAR but stays in user
 *   mode, so the return is a plain jump to the saved rip. */
    .balign 16
syscall_ring0:
mmio_ring0:
    movabs UVA_MMIO, %rax
    sysretq

    .balign 16
syscall_user:
    movabs UVA_MMIO, %rax
    jmp *%rcx

/* Exception stubs, one per vector, 16 bytes apart, all on IST1. The VMM reads the frame
 * and either ends the thread (fatal) or resumes it in user mode by setting the vCPU
 * state itself; the iretq is kept for hypervisors that can run it. */
    .balign 16
exc_stubs:
    .irp vec, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    .balign 16
    outb %al, $(PORT_EXC_BASE + \vec)
    .if (\vec == 8) || (\vec == 10) || (\vec == 11) || (\vec == 12) || (\vec == 13) || (\vec == 14) || (\vec == 17) || (\vec == 21) || (\vec == 29) || (\vec == 30)
    addq $8, %rsp
    .endif
    iretq
    .endr
    .balign 16
agent_end:
