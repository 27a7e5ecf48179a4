/* syscall-probe: where a guest syscall's time goes, one step at a time.
 *
 * A bare 64-bit guest (paging, a GDT/IDT/TSS like jinx's agent sets up, no jinx code)
 * runs one tiny loop per probe; the host times KVM_RUN calls. Probes that exit on every
 * iteration report microseconds per exit; probes whose loop stays in the guest run
 * BATCH iterations per exit (an MMIO read ends each batch) and report microseconds per
 * iteration, the batch's one exit spread over BATCH iterations (negligible).
 *
 *   r0-out        ring 0 `out` (the raw exit: the floor)
 *   r0-mmio       ring 0 read of an unbacked page (MMIO exit)
 *   u-mmio        the same read from user mode
 *   u-out-iopl    `out` from user mode with IOPL 3 (a user-mode port hypercall)
 *   u-loop        user-mode `dec; jnz`, no event (check: ~0)
 *   u-syscall     user SYSCALL into an entry that returns at once (no exit)
 *   u-sys-mmio    user SYSCALL, entry does the MMIO read (jinx's agent today)
 *   u-sys-out     user SYSCALL, entry does `out` (IOPL 3)
 *   u-sys-mmio-sync  u-sys-mmio with kvm_valid_regs = REGS|SREGS (as jinx-vmm sets)
 *   u-pf-iret     user page fault, ring-0 handler skips the load and returns by iretq
 *   u-pf-out      user page fault, handler `out`s, the host resumes user mode by
 *                 KVM_SET_SREGS + regs (jinx's exception path today)
 *   u-int-iret    user `int $0x20` (DPL-3 gate), ring-0 handler iretq, no exit
 *   u-int3-iret   the same with int3 (vector 3); u-ud2-iret: ud2 (#UD, vector 6)
 *   u-int3-out    int3, the handler `out`s first (one exit, back by iretq)
 *   u-sys-int3-out, u-sys-ud2-out  user SYSCALL, entry raises int3 / ud2, ring-0 `out`,
 *                 iretq, back by rcx: a syscall hypercall from ring 0 under PVM (under
 *                 VMX/SVM the entry already is ring 0: `out; sysretq`)
 *   u-sys-then-mmio  user SYSCALL that returns at once, then the MMIO read in the
 *                 program's own code: is it the read's place, or the SYSCALL before it?
 *   u-pf-out-iret the same exit, but the handler returns by its own iretq (no ioctl)
 *   u-step-iret   a memory cue point handled wholly in the guest: a user load from a
 *                 trapped 4 KiB page faults, the #PF handler maps it (PTE write) and sets
 *                 TF, iretq; the load runs; the #DB handler traps the page again (PTE
 *                 write + invlpg), clears TF, iretq. No exit (jinx today: the #PF exits,
 *                 the #DB part is handled in the agent)
 *   u-step-cr2    u-step-iret whose #PF handler also reads CR2 (the fault address the
 *                 guest-agent's in-guest cue point needs)
 *   u-step-int3   u-step-iret with the step ended by an int3 instead of TF: the #PF
 *                 handler maps the page and writes 0xCC over the instruction after the
 *                 load; the #BP handler puts the byte back, backs rip up, traps the page
 *                 again (PTE write + invlpg)
 *   u-pf-tf-iret  the same two events without touching a page table: the #PF handler
 *                 skips the load and sets TF, the #DB after the next instruction clears
 *                 it (the events' own cost; u-step-iret minus this = the PTE writes)
 *   r0-cr3        ring 0 CR3 reload (mov cr3, same value)
 *   r0-cr3-switch ring 0 CR3 load alternating between two different roots (A and B)
 *   u-step-cr3-int3  a memory cue point without PTE writes: U_STEP's page is absent in
 *                 root A and present in root B; the #PF handler loads root B and writes
 *                 an int3 after the load (as u-step-int3), iretq; the #BP handler puts
 *                 the byte back, backs rip up, loads root A, iretq
 *   u-step-cr3-tf the same with the step ended by TF: #PF loads B and sets TF, the #DB
 *                 loads A and clears it
 *   r0-invlpg     ring 0 invlpg of one page
 *
 * usage: syscall-probe [--json] [--exits N] [--batch N] [--repeat R] [PROBE...]
 * (default: every probe, 20000 exits or 201 batches of 10000, 5 rounds; r0-out always
 * runs, as the reference). Each figure is the median of R rounds taken round robin.
 * A probe the hypervisor cannot run (say iretq under PVM) is reported as failed with the
 * exit it gave, the others go on. Exit status 2 on bad usage or when /dev/kvm fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MEM_SIZE (4u << 20)
#define KBASE 0xFFFF800000000000ULL
#define G_GDT 0x1000
#define G_IDT 0x2000
#define G_PML4 0x3000
#define G_PDPT_U 0x4000
#define G_PD_U 0x5000
#define G_PDPT_K 0x6000
#define G_PD_K 0x7000
#define G_TSS 0x8000
#define G_PD_K2 0xB000           /* kernel PD of 3..4 GiB (the MMIO page) */
#define G_PT_U 0xC000            /* user PT of 10..12 MiB: U_STEP's 4 KiB page */
#define G_PML4_B 0x11000         /* root B: as G_PML4, but U_STEP's page present */
#define G_PDPT_U_B 0x12000
#define G_PD_U_B 0x13000
#define G_PT_U_B 0x14000
#define G_STACK_TOP 0xA000       /* IST1 / RSP0 (kernel view) */
#define G_KCODE 0x10000          /* ring-0 code, run at KBASE + G_KCODE */
#define G_UCODE 0x20000          /* user code */
#define G_USTACK 0x100000
#define U_MMIO 0x600000ULL       /* user VA of the unbacked page */
#define G_MMIO 0xF0000000ULL     /* its guest physical address */
#define U_HOLE 0x800000ULL       /* not present: a load there faults */
#define U_STEP 0xA00000ULL       /* a 4 KiB page, trapped (P clear) until mapped (u-step-iret) */
#define PF_INSN_LEN 3            /* mov (%rsi),%rax */

/* Guest code, assembled into the host binary (never run on the host) and copied in. */
#define SNIP(name, body) \
    __asm__(".pushsection .rodata.guest,\"a\"\n.code64\n.globl " #name "\n" #name ":\n" body \
            "\n.globl " #name "_end\n" #name "_end:\n.popsection\n"); \
    extern const uint8_t name[], name##_end[];

SNIP(g_k_out, "1: outb %al, $0x10\n jmp 1b")
SNIP(g_k_mmio, "movabs $0xFFFF8000F0000000, %rdx\n1: mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_mmio, "mov $0x600000, %edx\n1: mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_out, "1: outb %al, $0x10\n jmp 1b")
SNIP(g_u_loop, "mov $0x600000, %edx\n1: mov %r12, %rbx\n2: dec %rbx\n jnz 2b\n mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_sys_batch, "mov $0x600000, %edx\n1: mov %r12, %rbx\n2: syscall\n dec %rbx\n jnz 2b\n"
                    " mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_sys_each, "1: syscall\n jmp 1b")
SNIP(g_u_sys_then_mmio, "mov $0x600000, %edx\n1: syscall\n mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_pf_batch, "mov $0x600000, %edx\n mov $0x800000, %esi\n1: mov %r12, %rbx\n"
                   "2: mov (%rsi), %rax\n dec %rbx\n jnz 2b\n mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_pf_each, "mov $0x800000, %esi\n1: mov (%rsi), %rax\n jmp 1b")
SNIP(g_u_step_batch, "mov $0x600000, %edx\n mov $0xA00000, %esi\n1: mov %r12, %rbx\n"
                     "2: mov (%rsi), %rax\n dec %rbx\n jnz 2b\n mov (%rdx), %rax\n jmp 1b")
SNIP(g_k_cr3, "movabs $0xFFFF8000F0000000, %rdx\n1: mov %r12, %rbx\n2: mov %cr3, %rax\n"
              " mov %rax, %cr3\n dec %rbx\n jnz 2b\n mov (%rdx), %rax\n jmp 1b")
SNIP(g_k_cr3_switch, "movabs $0xFFFF8000F0000000, %rdx\n mov $0x11000, %eax\n mov $0x3000, %ecx\n"
                     "1: mov %r12, %rbx\n2: mov %rax, %cr3\n xchg %rax, %rcx\n dec %rbx\n jnz 2b\n"
                     " mov (%rdx), %rax\n mov $0x11000, %eax\n jmp 1b")
SNIP(g_k_invlpg, "movabs $0xFFFF8000F0000000, %rdx\n1: mov %r12, %rbx\n2: invlpg 0x20000\n"
                 " dec %rbx\n jnz 2b\n mov (%rdx), %rax\n jmp 1b")
/* SYSCALL entries: under PVM a user SYSCALL stays in user mode (jump back by rcx);
 * under VMX/SVM it enters ring 0 (sysretq). */
SNIP(g_s_nop_user, "jmp *%rcx")
SNIP(g_s_nop_ring0, "sysretq")
SNIP(g_s_mmio_user, "movabs 0x600000, %rax\n jmp *%rcx")
SNIP(g_s_mmio_ring0, "movabs 0xFFFF8000F0000000, %rax\n sysretq")
SNIP(g_s_out_user, "outb %al, $0x11\n jmp *%rcx")
SNIP(g_s_out_ring0, "outb %al, $0x11\n sysretq")
/* Page-fault handlers (IST1): skip the load and iretq, or hand the fault to the host. */
SNIP(g_h_pf_iret, "addq $8, %rsp\n addq $3, (%rsp)\n iretq")
SNIP(g_h_pf_out, "outb %al, $0x12\n1: jmp 1b")
/* u-step-iret's handlers: the #PF maps U_STEP's page and sets TF (frame after the
 * error code and one push: rip 8, cs 16, rflags 24); the #DB traps it again. */
SNIP(g_h_pf_map, "addq $8, %rsp\n push %rdx\n movabs $0xFFFF80000000C000, %rdx\n"
                 " movq $0x3FF007, (%rdx)\n orq $0x100, 24(%rsp)\n pop %rdx\n iretq")
/* u-step-cr2: g_h_pf_map that also reads CR2 (the guest-agent's in-guest cue point
 * needs the fault address). */
SNIP(g_h_pf_map_cr2, "addq $8, %rsp\n push %rdx\n movq %cr2, %rdx\n movabs $0xFFFF80000000C000, %rdx\n"
                     " movq $0x3FF007, (%rdx)\n orq $0x100, 24(%rsp)\n pop %rdx\n iretq")
SNIP(g_h_db_trap, "push %rdx\n movabs $0xFFFF80000000C000, %rdx\n movq $0x3FF006, (%rdx)\n"
                  " invlpg 0xA00000\n andq $~0x100, 24(%rsp)\n pop %rdx\n iretq")
SNIP(g_h_pf_bp, "addq $8, %rsp\n push %rdx\n movabs $0xFFFF80000000C000, %rdx\n"
                " movq $0x3FF007, (%rdx)\n movabs $0xFFFF800000020010, %rdx\n movb $0xCC, (%rdx)\n"
                " pop %rdx\n iretq")
SNIP(g_h_bp_trap, "push %rdx\n movabs $0xFFFF800000020010, %rdx\n movb $0x48, (%rdx)\n"
                  " decq 8(%rsp)\n movabs $0xFFFF80000000C000, %rdx\n movq $0x3FF006, (%rdx)\n"
                  " invlpg 0xA00000\n pop %rdx\n iretq")
/* u-step-cr3-*: the page is mapped by switching roots, never by writing a PTE. */
SNIP(g_h_pf_cr3_bp, "addq $8, %rsp\n push %rdx\n mov $0x11000, %edx\n mov %rdx, %cr3\n"
                    " movabs $0xFFFF800000020010, %rdx\n movb $0xCC, (%rdx)\n pop %rdx\n iretq")
SNIP(g_h_bp_cr3, "push %rdx\n movabs $0xFFFF800000020010, %rdx\n movb $0x48, (%rdx)\n"
                 " decq 8(%rsp)\n mov $0x3000, %edx\n mov %rdx, %cr3\n pop %rdx\n iretq")
SNIP(g_h_pf_cr3_tf, "addq $8, %rsp\n push %rdx\n mov $0x11000, %edx\n mov %rdx, %cr3\n"
                    " orq $0x100, 24(%rsp)\n pop %rdx\n iretq")
SNIP(g_h_db_cr3, "push %rdx\n mov $0x3000, %edx\n mov %rdx, %cr3\n andq $~0x100, 24(%rsp)\n"
                 " pop %rdx\n iretq")
SNIP(g_h_pf_tf, "addq $8, %rsp\n addq $3, (%rsp)\n orq $0x100, 16(%rsp)\n iretq")
SNIP(g_h_db_tf, "andq $~0x100, 16(%rsp)\n iretq")
SNIP(g_h_pf_out_iret, "outb %al, $0x14\n addq $8, %rsp\n addq $3, (%rsp)\n iretq")
/* Events raised on purpose from user mode: `int $0x20` (vector 32), int3 (vector 3, a
 * trap: the frame's rip is already past it), ud2 (vector 6, a fault: skip its 2 bytes).
 * Each gate is DPL 3; the handler returns at once, or `out`s first. */
SNIP(g_h_trap_iret, "iretq")
SNIP(g_h_trap_out, "outb %al, $0x13\n iretq")
SNIP(g_h_ud_iret, "addq $2, (%rsp)\n iretq")
SNIP(g_h_ud_out, "outb %al, $0x13\n addq $2, (%rsp)\n iretq")
SNIP(g_u_int_batch, "mov $0x600000, %edx\n1: mov %r12, %rbx\n2: int $0x20\n dec %rbx\n jnz 2b\n"
                    " mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_int3_batch, "mov $0x600000, %edx\n1: mov %r12, %rbx\n2: int3\n dec %rbx\n jnz 2b\n"
                     " mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_ud_batch, "mov $0x600000, %edx\n1: mov %r12, %rbx\n2: ud2\n dec %rbx\n jnz 2b\n"
                   " mov (%rdx), %rax\n jmp 1b")
SNIP(g_u_int3_each, "1: int3\n jmp 1b")
SNIP(g_s_int3_user, "int3\n jmp *%rcx")
SNIP(g_s_ud_user, "ud2\n jmp *%rcx")
/* Every other vector: port 0x40 + vector, then stop. 16 bytes apart. */
SNIP(g_h_other, ".irp v,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,"
                "26,27,28,29,30,31\n .balign 16\n outb %al, $(0x40 + \\v)\n 1: jmp 1b\n .endr")

enum kind { EACH, BATCH };
struct probe {
    const char *name, *what;
    const uint8_t *code, *code_end; /* the loop */
    bool user, iopl, sync_sregs;
    enum kind kind;
    const uint8_t *entry_user, *entry_user_end, *entry_ring0, *entry_ring0_end; /* LSTAR */
    const uint8_t *pf, *pf_end;                                               /* vector 14 */
    const uint8_t *soft, *soft_end;                                           /* soft_vec */
    uint32_t want_exit, want_port; /* what each timed KVM_RUN must return */
    int soft_vec;                  /* the vector of soft (a DPL-3 gate) */
};

#define S(n) n, n##_end
static const struct probe probes[] = {
    {"r0-out", "ring-0 out (raw exit)", S(g_k_out), false, false, false, EACH, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, KVM_EXIT_IO, 0x10, 0},
    {"r0-mmio", "ring-0 MMIO read", S(g_k_mmio), false, false, false, EACH, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-mmio", "user MMIO read", S(g_u_mmio), true, false, false, EACH, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-out-iopl", "user out, IOPL 3", S(g_u_out), true, true, false, EACH, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, KVM_EXIT_IO, 0x10, 0},
    {"u-loop", "user dec/jnz (check)", S(g_u_loop), true, false, false, BATCH, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-syscall", "user SYSCALL+return, no exit", S(g_u_sys_batch), true, false, false, BATCH,
     S(g_s_nop_user), S(g_s_nop_ring0), NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-sys-mmio", "user SYSCALL + MMIO read (agent today)", S(g_u_sys_each), true, false,
     false, EACH, S(g_s_mmio_user), S(g_s_mmio_ring0), NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-sys-out", "user SYSCALL + out (IOPL 3)", S(g_u_sys_each), true, true, false, EACH,
     S(g_s_out_user), S(g_s_out_ring0), NULL, NULL, NULL, NULL, KVM_EXIT_IO, 0x11, 0},
    {"u-sys-mmio-sync", "u-sys-mmio, sync regs+sregs", S(g_u_sys_each), true, false, true,
     EACH, S(g_s_mmio_user), S(g_s_mmio_ring0), NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-pf-iret", "user #PF, handler iretq, no exit", S(g_u_pf_batch), true, false, false,
     BATCH, NULL, NULL, NULL, NULL, S(g_h_pf_iret), NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-pf-out", "user #PF, out, host resumes (exceptions today)", S(g_u_pf_each), true, false,
     true, EACH, NULL, NULL, NULL, NULL, S(g_h_pf_out), NULL, NULL, KVM_EXIT_IO, 0x12, 0},
    {"r0-cr3", "ring-0 CR3 reload", S(g_k_cr3), false, false, false, BATCH, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"r0-invlpg", "ring-0 invlpg", S(g_k_invlpg), false, false, false, BATCH, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-int-iret", "user int $0x20, handler iretq, no exit", S(g_u_int_batch), true, false,
     false, BATCH, NULL, NULL, NULL, NULL, NULL, NULL, S(g_h_trap_iret), KVM_EXIT_MMIO, 0, 32},
    {"u-int3-iret", "user int3, handler iretq, no exit", S(g_u_int3_batch), true, false,
     false, BATCH, NULL, NULL, NULL, NULL, NULL, NULL, S(g_h_trap_iret), KVM_EXIT_MMIO, 0, 3},
    {"u-ud2-iret", "user ud2, handler iretq, no exit", S(g_u_ud_batch), true, false, false,
     BATCH, NULL, NULL, NULL, NULL, NULL, NULL, S(g_h_ud_iret), KVM_EXIT_MMIO, 0, 6},
    {"u-int3-out", "user int3, ring-0 out, iretq", S(g_u_int3_each), true, false, false,
     EACH, NULL, NULL, NULL, NULL, NULL, NULL, S(g_h_trap_out), KVM_EXIT_IO, 0x13, 3},
    {"u-sys-int3-out", "user SYSCALL, int3, ring-0 out, iretq", S(g_u_sys_each), true,
     false, false, EACH, S(g_s_int3_user), S(g_s_out_ring0), NULL, NULL, S(g_h_trap_out),
     KVM_EXIT_IO, 0x13, 3},
    {"u-sys-ud2-out", "user SYSCALL, ud2, ring-0 out, iretq", S(g_u_sys_each), true,
     false, false, EACH, S(g_s_ud_user), S(g_s_out_ring0), NULL, NULL, S(g_h_ud_out),
     KVM_EXIT_IO, 0x13, 6},
    {"u-sys-then-mmio", "user SYSCALL (returns at once), then MMIO read", S(g_u_sys_then_mmio),
     true, false, false, EACH, S(g_s_nop_user), S(g_s_nop_ring0), NULL, NULL, NULL, NULL,
     KVM_EXIT_MMIO, 0, 0},
    {"u-pf-out-iret", "user #PF, out, the handler's iretq returns", S(g_u_pf_each), true,
     false, false, EACH, NULL, NULL, NULL, NULL, S(g_h_pf_out_iret), NULL, NULL, KVM_EXIT_IO,
     0x14, 0},
    {"u-step-iret", "user #PF maps+TF, #DB traps+invlpg, no exit", S(g_u_step_batch), true,
     false, false, BATCH, NULL, NULL, NULL, NULL, S(g_h_pf_map), S(g_h_db_trap), KVM_EXIT_MMIO,
     0, 1},
    {"u-step-cr2", "u-step-iret whose #PF handler also reads CR2", S(g_u_step_batch), true,
     false, false, BATCH, NULL, NULL, NULL, NULL, S(g_h_pf_map_cr2), S(g_h_db_trap),
     KVM_EXIT_MMIO, 0, 1},
    {"u-step-int3", "user #PF maps+int3 after, #BP traps+invlpg, no exit", S(g_u_step_batch),
     true, false, false, BATCH, NULL, NULL, NULL, NULL, S(g_h_pf_bp), S(g_h_bp_trap),
     KVM_EXIT_MMIO, 0, 3},
    {"u-pf-tf-iret", "user #PF sets TF, #DB clears it, no PTE, no exit", S(g_u_pf_batch), true,
     false, false, BATCH, NULL, NULL, NULL, NULL, S(g_h_pf_tf), S(g_h_db_tf), KVM_EXIT_MMIO, 0,
     1},
    {"r0-cr3-switch", "ring-0 CR3 load, two roots alternating", S(g_k_cr3_switch), false,
     false, false, BATCH, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, KVM_EXIT_MMIO, 0, 0},
    {"u-step-cr3-int3", "user #PF loads root B+int3, #BP loads root A", S(g_u_step_batch),
     true, false, false, BATCH, NULL, NULL, NULL, NULL, S(g_h_pf_cr3_bp), S(g_h_bp_cr3),
     KVM_EXIT_MMIO, 0, 3},
    {"u-step-cr3-tf", "user #PF loads root B+TF, #DB loads root A", S(g_u_step_batch), true,
     false, false, BATCH, NULL, NULL, NULL, NULL, S(g_h_pf_cr3_tf), S(g_h_db_cr3),
     KVM_EXIT_MMIO, 0, 1},
};
#define NPROBES (sizeof probes / sizeof probes[0])

static int kvm_fd;
static volatile sig_atomic_t ticks; /* a 1 s timer: a KVM_RUN that never exits is caught */

static void on_tick(int sig)
{
    (void)sig;
    ticks++;
}
static bool pvm;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void put64(uint8_t *mem, uint64_t gpa, uint64_t v) { memcpy(mem + gpa, &v, 8); }

static void build_tables(uint8_t *mem, const struct probe *p)
{
    memset(mem, 0, MEM_SIZE);
    /* User half: 2 MiB pages, identity, user; the MMIO page; the hole stays absent. */
    put64(mem, G_PML4, G_PDPT_U | 7);
    put64(mem, G_PDPT_U, G_PD_U | 7);
    put64(mem, G_PD_U, 0x000000 | 0x87);
    put64(mem, G_PD_U + 8, 0x200000 | 0x87);
    put64(mem, G_PD_U + 3 * 8, G_MMIO | 0x87);
    put64(mem, G_PD_U + 5 * 8, G_PT_U | 7);
    put64(mem, G_PT_U, 0x3FF000 | 6); /* U_STEP: trapped */
    /* Root B: the same, except that U_STEP's page is present (u-step-cr3-*). Its own
     * PDPT, PD and PT for the user half; the kernel half is shared (set below). */
    put64(mem, G_PML4_B, G_PDPT_U_B | 7);
    put64(mem, G_PDPT_U_B, G_PD_U_B | 7);
    memcpy(mem + G_PD_U_B, mem + G_PD_U, 4096);
    put64(mem, G_PD_U_B + 5 * 8, G_PT_U_B | 7);
    put64(mem, G_PT_U_B, 0x3FF000 | 7);
    /* Kernel half (PML4 slot 256): supervisor only, low 4 MiB and the MMIO page. */
    put64(mem, G_PML4 + 256 * 8, G_PDPT_K | 3);
    put64(mem, G_PML4_B + 256 * 8, G_PDPT_K | 3);
    put64(mem, G_PDPT_K, G_PD_K | 3);
    put64(mem, G_PDPT_K + 3 * 8, G_PD_K2 | 3); /* 3 GiB..4 GiB */
    put64(mem, G_PD_K, 0x000000 | 0x83);
    put64(mem, G_PD_K + 8, 0x200000 | 0x83);
    put64(mem, G_PD_K2 + ((G_MMIO - (3ULL << 30)) >> 21) * 8, G_MMIO | 0x83);
    /* GDT: kernel code/data, user data/code (STAR layout), TSS. */
    put64(mem, G_GDT + 0x08, 0x00AF9A000000FFFFULL);
    put64(mem, G_GDT + 0x10, 0x00CF92000000FFFFULL);
    put64(mem, G_GDT + 0x18, 0x00CFF2000000FFFFULL);
    put64(mem, G_GDT + 0x20, 0x00AFFA000000FFFFULL);
    uint64_t tss = KBASE + G_TSS;
    put64(mem, G_GDT + 0x28, 0x67 | ((tss & 0xFFFFFF) << 16) | (0x89ULL << 40) |
                                 (((tss >> 24) & 0xFF) << 56));
    put64(mem, G_GDT + 0x30, tss >> 32);
    uint64_t top = KBASE + G_STACK_TOP - 16;
    put64(mem, G_TSS + 4, top);    /* RSP0 */
    put64(mem, G_TSS + 0x24, top); /* IST1 */
    uint16_t iomap = 104;
    memcpy(mem + G_TSS + 102, &iomap, 2);
    /* Code: the loop (user or kernel view of the same physical page), entries, handlers. */
    memcpy(mem + G_UCODE, p->code, (size_t)(p->code_end - p->code));
    memcpy(mem + G_UCODE + 0x1000, g_h_other, (size_t)(g_h_other_end - g_h_other));
    if (p->pf)
        memcpy(mem + G_UCODE + 0x2000, p->pf, (size_t)(p->pf_end - p->pf));
    const uint8_t *e = pvm ? p->entry_user : p->entry_ring0;
    const uint8_t *ee = pvm ? p->entry_user_end : p->entry_ring0_end;
    if (e)
        memcpy(mem + G_UCODE + 0x3000, e, (size_t)(ee - e));
    if (p->soft)
        memcpy(mem + G_UCODE + 0x4000, p->soft, (size_t)(p->soft_end - p->soft));
    for (int vec = 0; vec < 33; vec++) {
        uint64_t h = KBASE + G_UCODE + 0x1000 + (uint64_t)vec * 16, attr = 0x8E;
        if (vec == 14 && p->pf)
            h = KBASE + G_UCODE + 0x2000;
        if (p->soft && vec == p->soft_vec) {
            h = KBASE + G_UCODE + 0x4000;
            attr = 0xEE;
        }
        uint64_t g0 = (h & 0xFFFF) | (0x08ULL << 16) | (1ULL << 32) | (attr << 40) |
                      (((h >> 16) & 0xFFFF) << 48);
        put64(mem, G_IDT + (uint64_t)vec * 16, g0);
        put64(mem, G_IDT + (uint64_t)vec * 16 + 8, h >> 32);
    }
}

static void set_sregs(struct kvm_sregs *s, bool user)
{
    struct kvm_segment code = {.limit = 0xFFFFFFFF, .type = 11, .present = 1, .s = 1, .l = 1,
                               .g = 1, .selector = 0x08};
    struct kvm_segment data = {.limit = 0xFFFFFFFF, .type = 3, .present = 1, .s = 1, .db = 1,
                               .g = 1, .selector = 0x10};
    if (user) {
        code.selector = 0x23;
        code.dpl = 3;
        data.selector = 0x1b;
        data.dpl = 3;
    }
    s->cs = code;
    s->ss = s->ds = s->es = s->fs = s->gs = data;
    s->tr = (struct kvm_segment){.base = KBASE + G_TSS, .limit = 0x67, .selector = 0x28,
                                 .type = 11, .present = 1};
    s->ldt = (struct kvm_segment){.type = 2, .unusable = 1};
    s->gdt.base = KBASE + G_GDT;
    s->gdt.limit = 0x37;
    s->idt.base = KBASE + G_IDT;
    s->idt.limit = 33 * 16 - 1;
    s->cr0 = 0x80050033; /* PG WP NE ET MP PE */
    s->cr3 = G_PML4;
    s->cr4 = 0x620;      /* PAE OSFXSR OSXMMEXCPT */
    s->efer = 0xD01;     /* SCE LME LMA NXE */
}

static int set_msrs(int fd, uint64_t lstar)
{
    _Alignas(16) uint8_t buf[sizeof(struct kvm_msrs) + 4 * sizeof(struct kvm_msr_entry)];
    memset(buf, 0, sizeof buf);
    struct kvm_msrs *m = (struct kvm_msrs *)buf;
    m->nmsrs = 4;
    m->entries[0] = (struct kvm_msr_entry){.index = 0xC0000081,
                                           .data = (0x10ULL << 48) | (0x08ULL << 32)};
    m->entries[1] = (struct kvm_msr_entry){.index = 0xC0000082, .data = lstar};
    m->entries[2] = (struct kvm_msr_entry){.index = 0xC0000083, .data = lstar};
    m->entries[3] = (struct kvm_msr_entry){.index = 0xC0000084, .data = 0x44700}; /* keeps IOPL */
    return ioctl(fd, KVM_SET_MSRS, m) == 4 ? 0 : -1;
}

struct result {
    bool ok;
    double us;
    char why[160];
};

/* The host's part of u-pf-out: resume user mode past the faulting load, as jinx's
 * exception path does (frame read from guest memory, KVM_SET_SREGS, regs by sync). */
static int resume_user(int fd, struct kvm_run *run, const uint8_t *mem)
{
    struct kvm_regs *r = &run->s.regs.regs;
    uint64_t off = r->rsp - KBASE;
    if (off + 48 > MEM_SIZE)
        return -1;
    uint64_t f[6];
    memcpy(f, mem + off, sizeof f); /* err, rip, cs, rflags, rsp, ss */
    struct kvm_sregs s = run->s.regs.sregs;
    set_sregs(&s, true);
    if (ioctl(fd, KVM_SET_SREGS, &s) < 0)
        return -1;
    r->rip = f[1] + PF_INSN_LEN;
    r->rsp = f[4];
    r->rflags = f[3] | 0x2;
    run->kvm_dirty_regs = KVM_SYNC_X86_REGS;
    return 0;
}

static void describe(struct kvm_run *run, char *why, size_t n)
{
    if (run->exit_reason == KVM_EXIT_IO && run->io.port >= 0x40 && run->io.port < 0x60)
        snprintf(why, n, "guest exception vector %d", run->io.port - 0x40);
    else if (run->exit_reason == KVM_EXIT_IO)
        snprintf(why, n, "I/O exit on port 0x%x", run->io.port);
    else if (run->exit_reason == KVM_EXIT_INTERNAL_ERROR)
        snprintf(why, n, "KVM internal error (suberror %u): the hypervisor cannot run it",
                 run->internal.suberror);
    else
        snprintf(why, n, "KVM exit reason %u", run->exit_reason);
}

static struct result run_probe(const struct probe *p, int exits, long batch)
{
    struct result res = {0};
    int vm = ioctl(kvm_fd, KVM_CREATE_VM, 0);
    uint8_t *mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (vm < 0 || mem == MAP_FAILED) {
        snprintf(res.why, sizeof res.why, "KVM_CREATE_VM/mmap: %s", strerror(errno));
        return res;
    }
    struct kvm_userspace_memory_region region = {.memory_size = MEM_SIZE,
                                                 .userspace_addr = (uint64_t)mem};
    build_tables(mem, p);
    int fd = ioctl(vm, KVM_CREATE_VCPU, 0);
    int sz = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
    struct kvm_run *run = fd < 0 || sz <= 0 ? MAP_FAILED
                        : mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    struct kvm_sregs s;
    uint64_t lstar = (pvm ? 0 : KBASE) + G_UCODE + 0x3000;
    if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0 || run == MAP_FAILED ||
        ioctl(fd, KVM_GET_SREGS, &s) < 0 || set_msrs(fd, lstar) < 0) {
        snprintf(res.why, sizeof res.why, "vCPU setup: %s", strerror(errno));
        goto out;
    }
    set_sregs(&s, p->user);
    struct kvm_regs g = {.rip = (p->user ? 0 : KBASE) + G_UCODE, .rsp = G_USTACK,
                         .rflags = 0x2 | (p->iopl ? 0x3000 : 0), .r12 = (uint64_t)batch};
    if (ioctl(fd, KVM_SET_SREGS, &s) < 0 || ioctl(fd, KVM_SET_REGS, &g) < 0) {
        snprintf(res.why, sizeof res.why, "initial state: %s", strerror(errno));
        goto out;
    }
    run->kvm_valid_regs = p->sync_sregs ? KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS : 0;
    int warm = exits / 20 + 2;
    double t0 = 0;
    int seen_tick = ticks, done_at_tick = -1;
    for (int i = 0; i < warm + exits; i++) {
        if (i == warm)
            t0 = now_us();
        int rc = ioctl(fd, KVM_RUN, 0);
        run->kvm_dirty_regs = 0;
        if (rc < 0 && errno == EINTR) {
            /* Three ticks without one exit: stuck (a batch takes well under 1 s). */
            if (done_at_tick == i && ticks - seen_tick >= 2) {
                snprintf(res.why, sizeof res.why, "no exit for 3 seconds: the guest "
                         "loops (the hypervisor does not deliver this event)");
                goto out;
            }
            if (done_at_tick != i) {
                seen_tick = ticks;
                done_at_tick = i;
            }
            i--;
            continue;
        }
        if (rc < 0 || run->exit_reason != p->want_exit ||
            (p->want_exit == KVM_EXIT_IO && run->io.port != p->want_port)) {
            if (rc < 0)
                snprintf(res.why, sizeof res.why, "KVM_RUN: %s", strerror(errno));
            else
                describe(run, res.why, sizeof res.why);
            goto out;
        }
        if (p->want_port == 0x12 && resume_user(fd, run, mem) < 0) {
            snprintf(res.why, sizeof res.why, "resume to user mode failed: %s", strerror(errno));
            goto out;
        }
    }
    res.us = (now_us() - t0) / exits / (p->kind == BATCH ? (double)batch : 1.0);
    res.ok = true;
out:
    if (run != MAP_FAILED)
        munmap(run, (size_t)sz);
    if (fd >= 0)
        close(fd);
    munmap(mem, MEM_SIZE);
    close(vm);
    return res;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long parse_count(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || *end || v < 1 || v > 100000000) {
        fprintf(stderr, "syscall-probe: %s wants a count from 1 to 100000000\n", opt);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    bool json = false, want[NPROBES] = {false}, any = false;
    long exits = 20000, batch = 10000, repeat = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--exits"))
            exits = parse_count("--exits", i + 1 < argc ? argv[++i] : NULL);
        else if (!strcmp(argv[i], "--repeat")) {
            repeat = parse_count("--repeat", i + 1 < argc ? argv[++i] : NULL);
            if (repeat > 99) {
                fprintf(stderr, "syscall-probe: --repeat is at most 99\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--batch"))
            batch = parse_count("--batch", i + 1 < argc ? argv[++i] : NULL);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "syscall-probe: unknown option %s (see the comment at the top)\n",
                    argv[i]);
            return 2;
        } else {
            size_t k = 0;
            while (k < NPROBES && strcmp(probes[k].name, argv[i]))
                k++;
            if (k == NPROBES) {
                fprintf(stderr, "syscall-probe: no probe named %s\n", argv[i]);
                return 2;
            }
            want[k] = any = true;
        }
    }
    kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (kvm_fd < 0) {
        fprintf(stderr, "syscall-probe: /dev/kvm: %s\n", strerror(errno));
        return 2;
    }
    pvm = access("/sys/module/kvm_pvm", F_OK) == 0;
    struct sigaction sa = {.sa_handler = on_tick}; /* no SA_RESTART: KVM_RUN returns EINTR */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{1, 0}, {1, 0}};
    setitimer(ITIMER_REAL, &it, NULL);
    /* Round robin, REPEAT rounds, medians: the machine is shared, so a probe's figure
     * and the raw exit it is compared with come from the same minutes. */
    enum { MAXREP = 99 };
    static struct result res[MAXREP][NPROBES];
    for (long rep = 0; rep < repeat; rep++)
        for (size_t k = 0; k < NPROBES; k++) {
            const struct probe *p = &probes[k];
            if ((any && !want[k] && k != 0) || (rep > 0 && !res[0][k].ok))
                continue;
            int n = p->kind == BATCH ? (int)(exits / 100 + 1) : (int)exits;
            res[rep][k] = run_probe(p, n, batch);
        }
    double med[NPROBES];
    for (size_t k = 0; k < NPROBES; k++) {
        double v[MAXREP];
        int n = 0;
        for (long rep = 0; rep < repeat; rep++)
            if (res[rep][k].ok)
                v[n++] = res[rep][k].us;
        qsort(v, (size_t)n, sizeof v[0], cmp_double);
        med[k] = n ? v[n / 2] : 0;
    }
    double raw = res[0][0].ok ? med[0] : 0;
    if (json)
        printf("{\"hypervisor\":\"%s\",\"repeat\":%ld,\"probes\":[", pvm ? "pvm" : "hardware",
               repeat);
    else
        printf("%-16s %-44s %10s %8s\n", "probe", "what", "us", "x raw");
    int shown = 0;
    for (size_t k = 0; k < NPROBES; k++) {
        if (any && !want[k] && k != 0)
            continue;
        const struct probe *p = &probes[k];
        struct result r = res[0][k];
        r.us = med[k];
        if (json)
            printf("%s{\"probe\":\"%s\",\"ok\":%s,\"us\":%.4f,\"x_raw\":%.3f,\"per\":\"%s\"%s%s%s}",
                   shown ? "," : "", p->name, r.ok ? "true" : "false", r.us,
                   raw > 0 ? r.us / raw : 0, p->kind == BATCH ? "iteration" : "exit",
                   r.ok ? "" : ",\"why\":\"", r.ok ? "" : r.why, r.ok ? "" : "\"");
        else if (r.ok)
            printf("%-16s %-44s %10.3f %8.2f\n", p->name, p->what, r.us, raw > 0 ? r.us / raw : 0);
        else
            printf("%-16s %-44s %10s  (%s)\n", p->name, p->what, "failed", r.why);
        shown++;
    }
    if (json)
        printf("],\"raw_exit_us\":%.4f}\n", raw);
    return 0;
}
