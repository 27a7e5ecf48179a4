/* Guest physical and virtual memory layout, segment selectors and hypercall ports.
 * Shared by the VMM and the guest-agent (guest-agent/agent.S includes it: constants it
 * uses carry their C suffix through JX_ULL, C-only parts sit under
 * #ifndef __ASSEMBLER__). The VMM owns every page table: the guest program never sees them,
 * since the kernel half is supervisor-only. */
#ifndef JINX_LAYOUT_H
#define JINX_LAYOUT_H

#ifdef __ASSEMBLER__
#define JX_ULL(x) x
#else
#define JX_ULL(x) x##ULL
#endif

#define PAGE_SIZE 4096ULL
#define RFLAGS_TF JX_ULL(0x100) /* the trap flag: a #DB after the next instruction */
#define PAGE_MASK (~(PAGE_SIZE - 1))

/* Guest physical layout (low 4 MiB reserved for the agent and its tables). */
#define GPA_GDT        0x1000ULL
#define GPA_IDT        0x2000ULL
#define GPA_PML4       0x3000ULL
#define GPA_KPDPT      0x4000ULL   /* direct map PDPT */
#define GPA_KPD        0x5000ULL   /* 4 PDs of 2 MiB pages: direct map of the first 4 GiB */
#define GPA_AGENT      0x10000ULL  /* guest-agent code, up to 64 KiB */
#define AGENT_MAX_SIZE 0x10000ULL
#define GPA_PERCPU     0x20000ULL  /* per-vCPU TSS + exception stack */
#define PERCPU_SIZE    0x2000ULL
#define MAX_VCPUS      254
#define GPA_POOL       0x400000ULL /* page allocator pool starts here */
#define MAX_GUEST_MEM  (3ULL << 30)
/* Unbacked guest physical page: a read from it is an MMIO exit straight to the VMM. */
#define GPA_MMIO_SYSCALL 0xF0000000ULL

/* Kernel virtual addresses: a supervisor-only direct map of guest physical memory. */
#define KBASE          0xFFFF800000000000ULL
#define KVA(gpa)       (KBASE + (gpa))

/* User virtual layout (lower half). Above USER_TOP sit two pages the program may see
 * but not change: the agent's syscall entry (user-executable, so that it also runs under
 * PVM, where a user SYSCALL does not leave user mode) and the syscall MMIO page. Keeping
 * USER_TOP below the last page also means sysret can never return to a non-canonical
 * address. */
#define USER_TOP       0x00007FFFFFFFC000ULL
#define UVA_MMIO       JX_ULL(0x00007FFFFFFFC000)
#define UVA_AGENT      0x00007FFFFFFFD000ULL
#ifndef __ASSEMBLER__
/* Whether a user address lies in the agent's user-executable image: a thread there is in
 * jinx's syscall entry, not in the program's code. */
static inline int uva_in_agent(unsigned long long va)
{
    return va >= UVA_AGENT && va - UVA_AGENT < AGENT_MAX_SIZE;
}
#endif
#define STACK_TOP      0x00007FFFFFF00000ULL
#define STACK_SIZE     (8ULL << 20)
#define MMAP_TOP       0x00007F0000000000ULL
#define PIE_BASE       0x0000555555554000ULL
#define USER_MIN       0x10000ULL

/* GDT selectors. STAR makes syscall use 0x08/0x10 and sysret 0x23/0x1b. */
#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_UDATA 0x1b
#define SEL_UCODE 0x23
#define SEL_TSS   0x28

/* Exception hypercalls: the agent executes `out %al, $port` (2 bytes) in ring 0. */
#define PORT_EXC_BASE 0x40  /* + vector 0..31 */
#define HC_INSN_LEN   2

/* Agent image header (guest-agent/agent.S): offsets from GPA_AGENT. */
#define AGENT_MAGIC   JX_ULL(0x544E4741584E494A) /* "JINXAGNT" */
#ifndef __ASSEMBLER__
struct agent_header {
    unsigned long long magic;
    unsigned int syscall_ring0;  /* LSTAR where SYSCALL enters ring 0 (VMX, SVM) */
    unsigned int syscall_user;   /* LSTAR where SYSCALL stays in user mode (PVM) */
    unsigned int syscall_mmio;   /* the MMIO read of the ring-0 entry */
    unsigned int exc_stubs;      /* 32 stubs, 16 bytes apart */
    unsigned int mmio_user;      /* the MMIO read of the user-mode entry */
    unsigned int answers;        /* struct agent_answers, preceded by its 8-byte switch */
    unsigned int debug_entry;    /* the #DB handler that ends armed steps (struct agent_step) */
    unsigned int debug_end;      /* ... and its end: a vCPU stopped in between is mid-way */
    unsigned int clock;          /* struct agent_clock (kvm/vclock.h) */
    unsigned int clock_probe;    /* the clock path's checks of the user's pointers ... */
    unsigned int clock_compute;  /* ... its arithmetic (cannot fault) ... */
    unsigned int clock_store;    /* ... its writes of the answer ... */
    unsigned int clock_end;      /* ... and their end (kvm/vclock.h: vclock_fixup) */
};

/* The guest's clock (guest-agent/agent.S, vmm/kvm/vclock.h): in free execution on PVM the
 * agent answers clock_gettime, gettimeofday and time from the TSC with the VMM's own
 * formula, vtime = ns_base + ((rdtsc - tsc_base) * mult >> 32). The block sits in the
 * agent's page, which the program can read but not write. */
struct agent_clock {
    unsigned long long on;       /* 0: every time syscall exits */
    unsigned long long tsc_base;
    unsigned long long mult;     /* ns per TSC tick, 32.32 fixed point */
    unsigned long long ns_base;  /* virtual time at tsc_base (mod 2^64) */
    unsigned long long epoch;    /* CLOCK_REALTIME - CLOCK_MONOTONIC (VTIME_EPOCH_NS) */
    unsigned long long billion;  /* 1000000000: the agent divides by these */
    unsigned long long thousand; /* 1000 */
};

/* Syscalls the agent answers in the guest (guest-agent/agent.S, vmm/kvm/answers.h). */
#define AGENT_ANSWER_SLOTS 8
struct agent_answers {
    long long nr[AGENT_ANSWER_SLOTS];
    long long value[AGENT_ANSWER_SLOTS];
};
#endif

/* The single step a vCPU may end in the guest (guest-agent/agent.S, #DB; policy in
 * vmm/sched/guest_step.h): one block per vCPU at this offset of its per-vCPU area
 * (GPA_PERCPU + index * PERCPU_SIZE, supervisor-only: the program cannot reach it), between
 * the TSS (104 bytes) and the exception stack, which grows down from the area's top. The
 * agent finds it from its IST1 stack pointer (AGENT_PERCPU_MASK). The VMM arms it before
 * KVM_RUN and reads and disarms it after; the agent only turns ARMED into DONE. */
#define AGENT_PERCPU_MASK  JX_ULL(0xFFFFFFFFFFFFE000) /* ~(PERCPU_SIZE - 1) */
#define AGENT_STEP_OFF     0x100
#define AGENT_STEP_MAX     8
#define AGENT_STEP_ARMED   JX_ULL(0x444D524150455453) /* "STEPARMD" */
#define AGENT_STEP_DONE    JX_ULL(0x454E4F4450455453) /* "STEPDONE" */
#define AGENT_STEP_N       8   /* offsetof(struct agent_step, n) */
#define AGENT_STEP_E       16  /* offsetof(struct agent_step, e) */
#define AGENT_STEP_ESIZE   24  /* sizeof e[0] */
#ifndef __ASSEMBLER__
struct agent_step {
    unsigned long long state;   /* 0, AGENT_STEP_ARMED or AGENT_STEP_DONE */
    unsigned long long n;       /* entries in e, <= AGENT_STEP_MAX */
    struct {
        unsigned long long pte;     /* KVA of the PTE to write */
        unsigned long long value;   /* the trapped entry to write there */
        unsigned long long va;      /* the page, for invlpg */
    } e[AGENT_STEP_MAX];
};
#endif


/* Memory cue points taken in the guest (guest-agent/agent.S, #PF; policy in
 * vmm/sched/guest_cue.h): one block per vCPU at AGENT_CUE_OFF of its per-vCPU area, after
 * the step block, supervisor-only like it. Before KVM_RUN the VMM writes the shared pages
 * the agent may map (their PTE, present and trapped values), a budget of cue points the
 * running thread may take without asking (the schedule's decision is known to be "this
 * thread goes on") and ON; the agent maps the page, single-steps the access, logs the
 * cue point in the ring and re-traps the page at the #DB. After KVM_RUN the VMM turns the
 * block off and replays every entry as the cue point it would have made itself. */
#define AGENT_CUE_OFF      0x200
#define AGENT_CUE_ON       JX_ULL(0x4E4F455543584E4A) /* "JNXCUEON" */
#define AGENT_CUE_PAGES    16
#define AGENT_CUE_RING     16
#define AGENT_CUE_BUDGET   8     /* offsetof(struct agent_cue, budget) */
#define AGENT_CUE_N        16
#define AGENT_CUE_CAP      24
#define AGENT_CUE_NPAGES   32
#define AGENT_CUE_SPTE     40    /* the pending step: PTE's KVA (0: none) */
#define AGENT_CUE_SVALUE   48
#define AGENT_CUE_SVA      56
#define AGENT_CUE_SRIP     64
#define AGENT_CUE_PAGE     128   /* offsetof(struct agent_cue, page) */
#define AGENT_CUE_PSIZE    32
#define AGENT_CUE_RINGOFF  640   /* offsetof(struct agent_cue, ring) */
#define AGENT_CUE_ESIZE    192
#ifndef __ASSEMBLER__
struct agent_cue_entry {
    unsigned long long rip, cr2, err, rflags, rsp;
    /* The user's registers at the fault, in decode order: rax rcx rdx rbx rsp rbp rsi
     * rdi r8..r15 (gpr[4] is rsp again). */
    unsigned long long gpr[16];
    /* 16 bytes of the page before the access, from min(cr2 & ~7, page end - 16). */
    unsigned long long value[2];
    unsigned long long pad;
};
struct agent_cue {
    unsigned long long state;   /* 0 or AGENT_CUE_ON */
    unsigned long long budget;  /* cue points the agent may still take */
    unsigned long long n;       /* entries in ring */
    unsigned long long cap;     /* <= AGENT_CUE_RING */
    unsigned long long npages;  /* <= AGENT_CUE_PAGES */
    unsigned long long step_pte, step_value, step_va, step_rip;
    unsigned long long pml4;    /* reserved: the VMM writes 0 */
    unsigned long long pad[6];
    struct {
        unsigned long long va, pte, present, trapped; /* pte: the PTE's KVA */
    } page[AGENT_CUE_PAGES];
    struct agent_cue_entry ring[AGENT_CUE_RING];
};
_Static_assert(sizeof(struct agent_cue_entry) == AGENT_CUE_ESIZE, "agent.S entry size");
_Static_assert(__builtin_offsetof(struct agent_cue, page) == AGENT_CUE_PAGE, "agent.S");
_Static_assert(__builtin_offsetof(struct agent_cue, ring) == AGENT_CUE_RINGOFF, "agent.S");
_Static_assert(AGENT_CUE_OFF + sizeof(struct agent_cue) <= 0x1400, "room for the stack");
_Static_assert(AGENT_STEP_OFF + sizeof(struct agent_step) <= AGENT_CUE_OFF, "blocks overlap");
#endif

/* The thread's sigaltstack (vmm/linux/altstack.h), kept in its vCPU's per-vCPU area after
 * the cue block, in guest memory so that snapshots, restores, dumps and replays carry it
 * with the thread. Only the VMM reads and writes it; the agent never touches it. */
#define AGENT_ALTSTACK_OFF 0x1100
#ifndef __ASSEMBLER__
struct agent_altstack {
    unsigned long long on;      /* AGENT_ALTSTACK_ON: set; anything else: SS_DISABLE */
    unsigned long long sp, size;
};
#define AGENT_ALTSTACK_ON JX_ULL(0x4B54534C41584E4A) /* "JNXALSTK" */
_Static_assert(AGENT_CUE_OFF + sizeof(struct agent_cue) <= AGENT_ALTSTACK_OFF, "blocks overlap");
_Static_assert(AGENT_ALTSTACK_OFF + sizeof(struct agent_altstack) <= 0x1400, "room for the stack");
#endif

#endif
