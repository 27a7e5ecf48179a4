/* Page-ownership recording for serialized execution (CREW: concurrent read, exclusive
 * write), the source of memory cue points.
 *
 * Every writable user page is watched. A watched page that the running thread does not
 * own is *trapped*: its PTE keeps the frame but has P clear and PTE_TRAP set, so any
 * access to it is a guest #PF (vector 14), which the guest-agent hands to the VMM. The
 * first thread to touch a page gets it: its PTE is present again while that thread runs,
 * and trapped again when another thread runs. A page touched by a second thread becomes
 * shared: from then on every access to it traps, so spin loops and fine-grained
 * interleavings are all visible.
 *
 * Each trapped access is a cue point: the scheduler decides who runs before the access
 * happens. When the faulting thread's turn comes, the page is mapped for it and the
 * instruction runs for real, on the CPU, whatever it is (SSE/AVX stores, rep movs,
 * xsave, cmpxchg16b...): nothing is emulated. For a shared page the instruction is
 * single-stepped (RFLAGS.TF, a #DB that the agent hands to the VMM, or handles itself when
 * the VMM armed it: guest_step.h) and the page is trapped again right after it. A rep string instruction would trap after every
 * iteration; from its second iteration on, an int3 written over the next instruction
 * ends its step instead (PVM guests get no hardware breakpoints). The byte is undone as
 * soon as the thread is back in the VMM for any reason, so no one else ever meets it. A page the thread now owns simply stays mapped until
 * another thread runs. An instruction that touches several watched pages faults once per
 * page; each is its own cue point, and the pages it was given stay given (across other
 * threads' turns) until the step ends, so it always completes.
 *
 * Turn claims (rounds and their replays turn them on, serializer.turn_claims): a page
 * the running thread claims keeps trapping for the rest of that thread's turn, and is
 * mapped for it only from its next turn on. Without them, a thread whose turn lasts
 * (a recording's quantum, the `continue` policy) claims every page it touches while the
 * others wait, and then loops over them making no cue point at all: throughput's
 * workers, lock, counters and all, ran 250 ms on 4 cue points. With them a turn always
 * ends by cue points, the others get to touch the pages they share, and a page only one
 * thread uses is mapped for it from its second turn on. A page near the claimant's own
 * stack pointer (CREW_STACK_BELOW under it to CREW_STACK_ABOVE over it) is its own at
 * once: otherwise a thread's first turn in a fragment spent its cue points on its pushes
 * and pops (race-o1o2's recordings: most of their 30-80 cue points). Deterministic: it
 * depends only on the cue points, the schedule and the registers at the fault.
 *
 * Recorded per cue point: the address (the operand's effective address, or the fault
 * address where an access crosses into the page), size, direction and atomicity from
 * capstone, and the value a read will see (for spin detection).
 *
 * Translations: a trapped -> present change needs no flush (a not-present entry is never
 * cached); present -> trapped drops the frame's translations (gm_invalidate_frames). */
#ifndef JINX_CREW_H
#define JINX_CREW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "explorer/explorer.h"
#include "kvm/layout.h"

/* Turn claims' stack window around the faulting thread's rsp (see above). */
#define CREW_STACK_BELOW 4096u
#define CREW_STACK_ABOVE 65536u
/* An access in [rsp - CREW_STACK_RED_ZONE, rsp + CREW_STACK_FRAMES) is flagged EX_F_STACK
 * (the x86-64 red zone below the stack pointer; the frames above it). */
#define CREW_STACK_RED_ZONE 128u
#define CREW_STACK_FRAMES 65536u

struct vm;
struct vcpu;
struct kvm_regs;
struct kvm_sregs;

struct crew_page {
    uint64_t va;
    uint64_t frame;
    uint64_t flags;     /* the PTE's bits other than the address, when present */
    int owner;          /* tid, 0 = nobody yet */
    bool shared;
    bool handed;        /* a new thread's stack top, given it at its clone (crew_hand_stack) */
    uint64_t claim_turn; /* crew.turn when the owner claimed it (turn claims, below) */
    bool sample_ro;     /* mapped read-only for the running thread by a sampled read
                         * (crew_sample.h): its first write in the turn is sampled too */
};


/* A trapped access, decided on at the fault and performed when its thread's turn
 * comes (struct crew holds one per vCPU). */
struct crew_access {
    int slot;
    uint64_t addr, rip;
    uint16_t size;
    uint8_t kind, flags;    /* enum ex_kind, EX_F_* */
    bool rep, pushf;        /* what a step of it must know (struct crew_step) */
    uint8_t len;            /* instruction length */
    uint8_t esz;            /* element size of a string instruction (0: unknown) */
    bool near_sp;           /* the page is near the thread's stack pointer (turn claims) */
    char insn[EX_INSN_LEN];
};

/* Per thread: the instruction being single-stepped and the shared pages it was given. */
struct crew_step {
    bool on;
    bool rep;               /* rep string: steps until rip moves on */
    bool bp;                /* ... ended by an int3 patched over the next instruction */
    bool pushf;             /* pushed RFLAGS: TF must not show in the copy */
    uint8_t len, esz, bp_saved;
    uint64_t bp_addr;
    uint64_t rip;
    int *slot;
    size_t n, cap;
    bool armed;             /* the agent may end it in the guest (sched/guest_step.h) */
};

/* Per vCPU: what the VMM allowed the agent (guest_cue.h), kept host-side to check the
 * block against when it is read back. */
struct crew_cue {
    bool armed;
    uint32_t budget, npages;
    int slot[AGENT_CUE_PAGES];
    uint64_t va[AGENT_CUE_PAGES], pte[AGENT_CUE_PAGES];
    uint64_t keep_pte;      /* while the run is read back: the PTE of a pending step */
};

struct crew {
    bool on;
    bool sample;            /* a sampled sparse fragment (crew_sample.h): first touches per
                             * turn are recorded, never cue points */
    uint64_t sample_at;     /* the next re-trap (mono_ns; 0: not yet set) */
    uint64_t sample_n;      /* accesses sampled in this fragment */
    bool sample_full;       /* ... CREW_SAMPLE_MAX of them: no more (pages stay mapped) */
    struct crew_page *page; /* indexed by slot */
    size_t npage, cappage;
    int *owned;             /* slots mapped for the running thread (revoked on a switch);
                             * room for cappage, so granting never needs memory */
    size_t nowned;
    uint64_t accesses, shared_pages, steps, step_traps;
    uint64_t guest_steps;   /* steps whose end the agent handled in the guest */
    uint64_t guest_busy;    /* kicks that found a vCPU inside that handler (run on; atomic) */
    uint64_t guest_cues;    /* memory cue points the agent took in the guest (guest_cue.h) */
    uint64_t guest_cue_runs; /* KVM_RUNs with cue points allowed in the guest */
    struct crew_cue cue[MAX_VCPUS];
    size_t watched;         /* slots made in all, over every fragment (the summary's count) */
    /* Turn claims (serializer.turn_claims): a page claimed during the running thread's
     * turn keeps trapping (each access a cue point, stepped like a shared page) until
     * the turn passes to another thread; `turn` counts the switches. */
    uint64_t turn;
    uint64_t fresh_accesses; /* accesses to pages claimed in the current turn */
    uint64_t lazy_grants;   /* own pages mapped at their first touch in a turn (crew_fault) */
    struct ex_u64map slot_of_va;
    /* Pages shared from their first touch on (crew_preshare); kept across crew_stop. */
    struct ex_u64map preshared;
    /* Per vCPU (vcpu->index): its trapped access waiting for its turn (vcpu->acc_pending
     * says whether there is one) and the instruction it is single-stepping. */
    struct crew_access acc[MAX_VCPUS];
    struct crew_step step[MAX_VCPUS];
};

enum crew_verdict {
    CREW_NOT_WATCHED,   /* not a trapped page: a real fault */
    CREW_GO,            /* the thread goes on now: return to it */
    CREW_GO_STEP,       /* the same, single-stepping the instruction (set RFLAGS.TF) */
    CREW_WAIT,          /* another thread was chosen: return to it, it waits its turn */
};

/* Starts watching every writable user page. Caller holds no locks. */
int crew_start(struct vm *vm);
/* Stops watching on a paused VM: every trapped page is present again, ownership is
 * forgotten, waiting accesses and steps are dropped (the instruction simply runs again).
 * Caller holds no locks. */
void crew_stop(struct vm *vm);
/* Watches writable pages that appeared in [start,end) (after mmap/mprotect/brk). */
void crew_watch_range(struct vm *vm, uint64_t start, uint64_t end);
/* A not-present #PF from user mode on thread v at cr2, instruction at rip; regs are the
 * user's general registers (rip and rsp taken from the exception frame). */
enum crew_verdict crew_fault(struct vm *vm, struct vcpu *v, uint64_t cr2, uint64_t errcode,
                             uint64_t rip, const struct kvm_regs *regs,
                             const struct kvm_sregs *sregs);
/* Performs v's waiting access (its turn came): sets TF in v's registers if it must be
 * stepped. Caller holds vm->lock. */
void crew_perform_pending_locked(struct vm *vm, struct vcpu *v);
/* A #DB from user mode on thread v, rip after the instruction, rsp the user's. Returns
 * false if v was not single-stepping (a real SIGTRAP); else *keep_tf says whether the
 * step goes on (a rep string instruction with iterations left); regs are the user's,
 * rip and rsp from the frame. */
bool crew_step_done(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *regs,
                    bool *keep_tf);
/* A #BP from user mode at rip (after the int3): true if it was a step's breakpoint, which
 * is then undone and the step ended; the thread resumes at rip - 1. */
bool crew_breakpoint(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *regs);
/* Undoes v's breakpoint, if any (v is back in the VMM for another reason, or stops or
 * pauses): true if there was one, and the step must go on by TF. */
bool crew_unpatch(struct vm *vm, struct vcpu *v);
/* The running thread changes to next (0: nobody): revoke what the old one was given,
 * give next what it owns. Caller holds vm->lock. */
void crew_switch_locked(struct vm *vm, int next);
void crew_free(struct vm *vm);

/* For the in-guest step end (sched/guest_step.h), on v's thread. crew_step_arm fills *d
 * with what ending v's step takes (for each page the step was given and still has, its
 * PTE's kernel address, the trapped entry and the page) and returns the count, or -1 when
 * the step must end in the VMM (none, a rep string instruction, a pushf, a breakpoint,
 * more than AGENT_STEP_MAX pages). Caller holds no lock. crew_step_ended_in_guest_locked
 * then does the VMM's part of crew_step_done for a step the agent ended: every page of
 * it trapped (again, if the agent's write is not there), the step cleared, counted.
 * Caller holds vm->lock. */
int crew_step_arm(struct vm *vm, struct vcpu *v, struct agent_step *d);
void crew_step_ended_in_guest_locked(struct vm *vm, struct vcpu *v);

/* Cue points taken in the guest (sched/guest_cue.h), on v's thread.
 * crew_cue_pages lists in d->page (and their slots in slots) up to max shared pages, the
 * pages the agent may map when trapped; caller holds vm->lock. crew_cue_page_state
 * says whether slot's page is trapped (1), present (0) or no longer the slot's (-1).
 * crew_guest_cue_locked replays one validated ring entry as crew_fault and perform_locked
 * would have made it (the pick, which must choose v, the trace entry, time, spin
 * detection); pending: the step had not ended in the guest, and is the VMM's from now on.
 * NULL, or what is wrong with the entry. Caller holds vm->lock. */
int crew_cue_pages(struct vm *vm, struct agent_cue *d, int *slots, int max);
int crew_cue_page_state(struct vm *vm, int slot);
const char *crew_guest_cue_locked(struct vm *vm, struct vcpu *v, int slot,
                                  const struct agent_cue_entry *e, bool pending);

/* Pages (page-aligned addresses) that are shared from their first touch in every fragment
 * from now on, as if a second thread had touched them already: every access to them is a
 * cue point. A whole-run exploration learns which pages its runs shared and pre-shares
 * them, so that the first toucher's accesses before a second thread came (a window between
 * two stores, a load and its store) are cue points too (rounds/explore.c); a replay sets
 * the same pages (the schedule carries them), since the cue points depend on them.
 * Replaces the previous set; n = 0 clears it. Returns 0 or -1 (no memory: the set is then
 * empty). Caller holds no locks; the VM is paused. */
int crew_preshare(struct vm *vm, const uint64_t *pages, size_t n);
/* Thread child was just created by clone with its stack pointer at rsp and its thread
 * pointer at tls (CLONE_SETTLS; 0: none): the pages from rsp's up to tls's (when tls lies
 * less than CREW_STACK_ABOVE above rsp, as glibc's and musl's thread descriptor and static
 * TLS do, right over the stack; else those of [rsp, rsp + 16), where the clone wrapper
 * stored the child's function and argument) become the child's own, not shared. The
 * parent wrote them before clone (the descriptor, TLS images, those two words), which
 * orders those writes before everything the child does, yet they made the child's hot
 * stack top shared and each of its pushes and pops a cue point: pigz -p 2 on 4 KiB made
 * 45000 cue points, 39600 its compressor's own stack; xz -T2 on 16 KiB, 29600 of 47500.
 * Not a byte past tls's page: the next page may be another mapping, another thread's
 * data (musl's descriptor is small; a heap page there, made the child's, hid sleepuaf's
 * reads of main's buffer). Another thread touching such a page later shares it again as
 * ever (a cue point there: pthread_join reading the descriptor); pre-sharing
 * (crew_preshare) skips them. Caller holds vm->lock. */
void crew_hand_stack_locked(struct vm *vm, int child, uint64_t rsp, uint64_t tls);
/* Calls fn(ctx, page) for every page shared in the current fragment (before crew_stop).
 * Caller holds no locks; the VM is paused. */
void crew_each_shared(struct vm *vm, void (*fn)(void *ctx, uint64_t page), void *ctx);

#endif
