/* Sparse execution (decisions only): serialized execution without memory cue points.
 *
 * A sparse schedule (explorer/schedule.h: sparse, preempt[]) runs one thread at a time
 * with every page mapped, so a thread computes at native speed between decisions. Its
 * cue points are the synchronization syscalls (as in any serialized run) and its
 * preemption points: "thread T, right before its N-th execution of the instruction at
 * RIP". A point is an int3 written over RIP while T has the turn (only T runs then, so
 * nobody else meets it); each hit counts, and a hit before the N-th steps over the
 * instruction (the byte back, RFLAGS.TF, the #DB puts nothing back: the next entry into
 * the guest plants it again). The N-th hit is a cue point (EX_SYNC_OTHER at RIP, flag
 * EX_F_PREEMPT) where the picker chooses who runs next; T later resumes at RIP with the
 * byte gone. Every point of the running thread is planted at each entry into the guest
 * and taken out whenever the turn moves (serialize_pick_locked), the VM pauses or stops,
 * so a dump and a snapshot never hold one. Counting costs an exit pair per hit of a
 * planted point (this PVM host has no hardware breakpoints): a strategy draws points with
 * small counts (explorer/sparse.h).
 *
 * Deterministic: hits depend only on what the thread executes, the points only on the
 * schedule, so a sparse schedule replays exactly (the dump's schedule carries them).
 *
 * A point of thread 0 (any thread) is planted for whichever thread runs and counts the
 * executions of all of them: the thread that makes the N-th stops (a 160-thread
 * program's work cursor is advanced by whichever worker PCT lets run first).
 *
 * A chained point (ex_preempt.chain = k) waits for point k: it is planted and counts only
 * from the moment point k fired, so "the N-th execution after that" is as deterministic
 * as point k itself.
 *
 * Yield points (schedule.yield[]): planted for whichever thread runs; every hit is a cue
 * point (EX_SYNC_OTHER at the rip, no flag: the thread yields), and the instruction is
 * stepped over when the thread runs again, so a spin loop that makes no syscall hands
 * over there (explore_sparse.h learns them where sparse runs were stopped spinning).
 *
 * A point that cannot be planted (not a read-only executable page of the program, an
 * int3 already there, or an instruction that must not be stepped: syscall, a rep string,
 * pushf) never fires; the same in every run. */
#ifndef JINX_SPARSE_H
#define JINX_SPARSE_H
#include "explorer/explorer.h"
#include "kvm/layout.h"
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

struct vm;
struct vcpu;

#define SPARSE_RECENT 64u

struct sparse_point {
    uint64_t rip;
    uint64_t match;         /* nonzero: fires at the first hit whose state hashes to it
                             * (sparse_state_hash) once the fragment made `after` cue
                             * points; count is then set to that hit */
    uint64_t after;
    uint32_t xid;           /* the explorer thread id whose executions count (0: any
                             * thread's: a yield point, or a preemption point of any) */
    bool any;               /* a preemption point counted over every thread */
    uint32_t chain;         /* nonzero k: not planted, no hit counted, until pt[k - 1]
                             * fired (a chained point: explorer/schedule.h) */
    uint32_t count, hits;
    bool done;              /* fired (hits == count), or cannot be planted */
    bool planted;
    int planted_by;         /* the vcpu->index that planted it (only it takes it out on
                             * leaving: another vCPU leaving must not pull a byte from
                             * under the thread that now has the turn) */
    uint8_t saved;          /* the byte under the int3 */
};

/* A timed decision (below): where the thread with the turn was when its slice ended. */
struct sparse_timed {
    uint32_t xid;
    uint64_t rip, hash;     /* hash: sparse_state_hash there */
    uint64_t cue;           /* the fragment's cue points before it (serializer.cues) */
};

#define SPARSE_MAX_TIMED 8u
#define SPARSE_HASH_STACK 16u /* stack words in a matched point's hash */
#define SPARSE_TIMED_RETRY_NS 200000ULL /* a kick that found no place to stop: again after */

struct sparse {
    bool on;                /* this fragment runs sparse (read without the lock) */
    /* Timed decisions: at these wall-clock offsets from the fragment's start (ascending;
     * set by the driver with sparse_set_timed_locked), the thread with the turn is kicked
     * out of the guest and, where it stands in the program's code at an instruction a
     * point could carry, preempted there as if a point fired (kicked again after
     * SPARSE_TIMED_RETRY_NS while it is elsewhere: jinx's syscall entry, a rep string).
     * Where it stopped depends on the host, so the run cannot be replayed from the times;
     * it is recorded (timed[]) and a live replay matches each by its registers (a point
     * with `match`). */
    uint64_t timed_at[SPARSE_MAX_TIMED], pending_at[SPARSE_MAX_TIMED];
    uint32_t ntimed_at, npending_at, timed_next;
    bool timed_due;
    uint64_t timed_kick;    /* when the due one was last kicked (mono_ns) */
    struct sparse_timed timed[SPARSE_MAX_TIMED];
    uint32_t ntimed;
    uint32_t n;
    struct sparse_point pt[EX_MAX_PREEMPTS + EX_MAX_YIELDS];
    uint64_t decisions;     /* preemption points fired in this fragment */
    uint64_t yields;        /* yield points hit */
    uint64_t hits;          /* counted hits in this fragment (an exit pair each) */
    bool stepping[MAX_VCPUS]; /* by vcpu->index: stepping over a point's instruction */
    /* Where points were planted, in any fragment (the last SPARSE_RECENT places): an
     * int3 met there that is gone when its #BP arrives was jinx's, even after a restore
     * or the next fragment's begin (the #BP was on its way, sparse_breakpoint). */
    uint64_t recent[SPARSE_RECENT];
    uint32_t nrecent;
};

/* A fragment begins (serialize_fragment_begin) with schedule s: sparse or not, its
 * points with no hits. Caller holds vm->lock; nothing is planted yet. */
void sparse_begin_locked(struct vm *vm, const struct ex_schedule *s);
/* A fragment ends on a paused VM (serialize_fragment_end): a vCPU stepping over a
 * point's instruction (its byte is back, TF in its flags) just runs it, untrapped, so
 * that no TF outlives the fragment into free execution or the next round's snapshot
 * (where a restore would bring it back with no step to end: a SIGTRAP). Caller holds
 * vm->lock. */
void sparse_end_steps_locked(struct vm *vm);
/* The VM was restored to a snapshot (its registers carry no step of a point): no vCPU
 * is stepping any more. Caller holds vm->lock. */
void sparse_forget_steps_locked(struct vm *vm);
/* Takes out every planted byte: the turn moves, the fragment ends. Caller holds vm->lock. */
void sparse_unplant_all_locked(struct vm *vm);
/* Before v enters the guest (the mode's guest_enter): plants v's pending points if v has
 * the turn. Caller holds no lock. */
void sparse_enter(struct vm *vm, struct vcpu *v);
/* v is back in the VMM and may not run on (a pause, a stop, another turn): the bytes it
 * planted go. */
void sparse_unpatch(struct vm *vm, struct vcpu *v);
/* What a matched point compares (struct sparse_point.match): every general register, the
 * arithmetic and direction flags and the SPARSE_HASH_STACK words at the top of the user
 * stack (a function called the same way from two iterations of its caller's loop differs
 * there); rip is compared apart. Never 0. */
uint64_t sparse_state_hash(struct vm *vm, const struct kvm_regs *u);
/* The timed decisions of the next sparse fragment only (n <= SPARSE_MAX_TIMED offsets in
 * ns, ascending): its sparse_begin_locked takes them, and any fragment after has none
 * (a replay never makes one). Caller holds vm->lock. */
void sparse_set_timed_locked(struct vm *vm, const uint64_t *at_ns, uint32_t n);
/* The fragment's wait loop (serialize_fragment_run_from), elapsed_ns after its start:
 * kicks the thread with the turn when a timed decision is due. Returns when to look
 * again (mono_ns; UINT64_MAX: never). Caller holds vm->lock. */
uint64_t sparse_timed_tick_locked(struct vm *vm, uint64_t start_ns, uint64_t now_ns);
/* v left the guest (vm_mode_ops.guest_left), interrupted: if a timed decision is due and v
 * has the turn at a place a point could be, v is preempted there. No lock held. */
void sparse_timed_left(struct vm *vm, struct vcpu *v, bool interrupted);
/* A #BP from user mode, rip after the int3: true if it was a point of v's. Then either
 * the hit is counted and the instruction is to be stepped over (*step), or it was the
 * point's N-th hit: a cue point was made and the picker chose (v resumes at rip - 1
 * when its turn comes). Caller holds no lock. */
bool sparse_breakpoint(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *u,
                       bool *step);
/* A #DB from user mode: true if it ended v's step over a point (TF then goes), also
 * after the fragment ended (the step was under way when it was stopped). */
bool sparse_step_done(struct vm *vm, struct vcpu *v);

/* Whether an instruction starting with these bytes may carry a point (not syscall,
 * sysenter, int3, int n, pushf, nor a rep/repne string instruction): stepping over it
 * must take exactly one #DB and leave the program's flags alone. */
bool sparse_insn_ok(const uint8_t *b, size_t n);

#endif
