/* Serialized execution (`jinx-vmm run --serial`): exactly one guest thread runs at a
 * time, and at every cue point the explorer's cursor (a schedule from --schedule, then
 * its default policy) picks the thread that runs next. Virtual time advances by a fixed
 * step per cue point and by skipped sleeps only, so the same program, seed and schedule
 * give the same execution every time.
 *
 * Cue points are the synchronization syscalls (futex wait and wake, clone, thread exit,
 * sched_yield and sleeps) and, unless --no-memory-cues, memory accesses found by page
 * ownership (crew.h). Every cue point is recorded in a trace (explorer/trace.h) and fed
 * to spin detection (explorer/spin.h): a thread re-reading an unchanged location is
 * deprioritised, so that a spin loop on a shared flag does not livelock the `continue`
 * policy. (A spin on a page nobody else has touched yet makes no cue points at all.) */
#ifndef JINX_SERIALIZE_H
#define JINX_SERIALIZE_H
#include "explorer/explorer.h"
#include "sched/sparse.h"
#include <stdbool.h>
#include <stdint.h>

struct vm;
struct vcpu;

#define SERIALIZE_CUE_NS 1000 /* virtual time per cue point */
/* The wall-time guard of a fragment run without a budget (--record, --simulate, replays):
 * a thread spinning on a page it owns makes no cue point, and the fragment is then
 * stopped where it is. Measured: the correct image's --simulate could meet that in each
 * of its 20 simulations, 30 s each with the earlier 30 s guard. */
#define SERIALIZE_WALL_GUARD_NS 5000000000ULL

struct serializer {
    bool on;
    int current;            /* the tid allowed to run; 0 = nobody chosen yet */
    struct ex_schedule sched;
    struct ex_cursor cursor;
    struct ex_trace trace;
    struct ex_spin spin;    /* spinners found so far (deprioritised at cue points) */
    uint32_t spin_threshold;
    uint64_t cues;
    uint64_t base_ns;       /* virtual time when serialized execution began */
    uint64_t limit;         /* stop everyone at this many cue points (0: no limit) */
    uint64_t notify_at;     /* wake serialize_fragment_run at this cue point (0: never) */
    bool cut;               /* the wall budget ended the fragment */
    bool stopped;           /* ...and no cue point came within five budgets: stopped mid-way */
    int guard_turn;         /* `current` when it was stopped (sched/guard_report.h) */
    /* Whole-run exploration (explore.h) chooses at cue points instead of the cursor
     * when set: the enabled threads and the spinners to keep away from (may be NULL).
     * Called with vm->lock held. */
    uint32_t (*pick)(void *ctx, struct vm *vm, const struct ex_tidset *enabled,
                     const struct ex_tidset *avoid);
    void *pick_ctx;
    /* Stop everyone (as at `limit`) at the first thread creation's cue point: the
     * snapshot point of whole-run exploration, the same in every run. */
    bool stop_at_clone;
    /* Pages claimed during a turn trap until the turn passes (crew.h, "Turn claims").
     * serialize_init clears it; the round driver, its workers and the replay of a
     * round's dump set it, so that they all cut the same cue points. */
    bool turn_claims;
    /* serialize_fragment_run_from's budget (wall_ns) counts the process's CPU time from
     * its start, not wall time: whole-run exploration sets it (explore.c), so that a
     * run on a loaded host is cut where it is on an idle one, and a seed's schedules do
     * not change with the load (a run starved to a tenth of a CPU took its 2 s budget
     * in 180 ms of CPU time and was cut at its 1070th of 1162 cue points, and the bug
     * that run would have met came 51 schedules later). A wall backstop of
     * SERIALIZE_CPU_BACKSTOP budgets still stops a run that spends no CPU time (a
     * vCPU halted in the host). */
    bool budget_cpu;
    /* With budget_cpu: a fragment is also cut (at its next cue point) once the wall clock
     * (mono_ns) reaches wall_deadline, and stopped wherever it is SERIALIZE_DEADLINE_GRACE
     * later; 0: none. Whole-run exploration sets it to the end of its --explore budget:
     * a run stretched to seconds of CPU time on a loaded host must not outlast the
     * user's budget (a 16 s CPU budget took 34 s of wall time where 8 s were left).
     * Only the run that meets the deadline changes, and exploration ends with it. */
    uint64_t wall_deadline;
    /* Sparse execution (sparse.h): set from the schedule at each fragment's begin. */
    struct sparse sparse;
    /* A budgeted fragment with no cue point is stopped wherever it is after this many
     * budgets (0: SERIALIZE_HARD_MULT). A round's sparse simulations set it low: their
     * threads run at native speed between syscalls, and a simulation stopped mid-way
     * is only its cue points' prefix to a replay anyway. */
    uint32_t hard_mult;
    /* Timers that end early (timers.h): the choices made in this fragment (picks that had
     * an enabled thread: a schedule's steps), the schedule's next ending to follow, its
     * endings that found no timer, and this fragment's endings in order (the run's
     * schedule carries them). timers_ended counts every ending since serialize_init. */
    /* Sampling (crew_sample.h): sample_next asks it of the next fragment, which samples
     * when it runs sparse (`sampling`); the samples are that fragment's first accesses
     * per page and turn, with its cue points, as a trace. */
    bool sample_next, sampling;
    struct ex_trace samples;
    uint64_t picks;
    uint32_t timer_next;
    uint64_t timer_diverged;
    uint32_t nended;
    struct ex_timer_end ended[EX_MAX_TIMERS];
    uint64_t timers_ended;
};

#define SERIALIZE_CPU_BACKSTOP 20u
#define SERIALIZE_HARD_MULT 5u
#define SERIALIZE_DEADLINE_GRACE 1000000000ULL

/* Turns serialized execution on; schedule_path may be NULL (default policy only);
 * spin_threshold as in spin.h (0: no spin detection).
 * Returns 0, or -1 with a message (bad schedule file: untrusted input). */
int serialize_init(struct vm *vm, const char *schedule_path, bool roundrobin,
                uint32_t spin_threshold, char *err, size_t errlen);
void serialize_free(struct vm *vm);
/* Plugs serialized execution into v's exit loop (vm->mode, kvm/vm.h) with its state
 * (vm->ser, vm->crew, freed by vm_destroy); serialize_init does it. 0, or -1: out of
 * memory. */
int serialize_mode_install(struct vm *vm);

/* Explorer thread ids (v->xid) are linux/threads.h's: a fragment's begin numbers the
 * threads from scratch. */

/* The threads that can run (explorer ids). Caller holds vm->lock. */
void serialize_enabled_locked(struct vm *vm, struct ex_tidset *enabled);
/* Caller holds vm->lock. */
bool serialize_may_run_locked(struct vm *vm, struct vcpu *v);
/* Records a cue point of thread v and picks who runs next. Caller holds vm->lock. */
void serialize_cue_locked(struct vm *vm, struct vcpu *v, int tid, enum ex_kind kind, uint64_t addr,
                       uint32_t arg, uint8_t flags);
/* A sparse schedule's preemption point fired: thread v stops right before the
 * instruction at rip, a cue point (EX_SYNC_OTHER, EX_F_PREEMPT) and a pick. Caller holds
 * vm->lock. */
void serialize_preempt_locked(struct vm *vm, struct vcpu *v, uint64_t rip);
/* The same for a yield point: the thread yields (EX_SYNC_OTHER, no flag) before rip. */
void serialize_yield_locked(struct vm *vm, struct vcpu *v, uint64_t rip);
/* Picks who runs after thread tid's cue point (the cursor over the enabled threads,
 * keeping its default policy away from spinners), hands pages over (crew.h) and wakes
 * the chosen one. Caller holds vm->lock. */
int serialize_pick_locked(struct vm *vm, int tid);
/* The same for a syscall thread tid just made on v (arguments from v's registers). */
void serialize_after_syscall(struct vm *vm, struct vcpu *v, int tid, uint64_t nr, int64_t ret,
                          bool blocked);
uint64_t serialize_vtime(const struct vm *vm);
/* Replaces the schedule that the next fragment follows (a copy is kept). 0 or -1. */
int serialize_set_schedule(struct vm *vm, const struct ex_schedule *src);
/* The pieces of a fragment, for the round driver (round.c), on a paused VM:
 * begin (time from start_vtime, or now if 0; the lowest runnable tid first; pages
 * watched), run (until `want` cue points, the end of the program or of a sandboxed
 * simulation, or wall_ns of wall time (0: SERIALIZE_WALL_GUARD_NS), then pauses again;
 * returns true when the wall budget cut the fragment: a thread computing privately has
 * no cue point to stop at, so it is stopped where it is and the fragment is the cue
 * points performed),
 * end (back to free execution at the same virtual time). */
void serialize_fragment_begin(struct vm *vm, uint64_t start_vtime);
bool serialize_fragment_run(struct vm *vm, uint64_t want, uint64_t wall_ns);
/* The same, but the first `exact` cue points run without a budget (only the 5 s guard)
 * and wall_ns starts counting when cue point `exact` is reached: a retirement replays a
 * simulation's cue points exactly, then goes on serialized for a bounded tail. */
bool serialize_fragment_run_from(struct vm *vm, uint64_t want, uint64_t exact, uint64_t wall_ns);
void serialize_fragment_end(struct vm *vm);
/* Back to free execution on a paused VM that is not over: serialized execution off, no
 * cue-point limit, every vCPU woken, vm_resume. */
void serialize_free_run(struct vm *vm);
/* `--after A --record R`: free-runs for A (wall), then records a serialized fragment
 * of R virtual time (R / SERIALIZE_CUE_NS cue points) with memory cue points, then lets the
 * program run free again. The trace stays in vm->ser->trace. From the VMM's main
 * thread; serialize_init must have run (it is left off until the fragment). */
int serialize_record_fragment(struct vm *vm, uint64_t after_ns, uint64_t record_ns);
/* `--after A --record R --simulate N`: free-runs for A, snapshots, then N times runs a
 * serialized fragment of R from the snapshot (following --schedule) and restores;
 * prints each simulation's trace and memory hashes. Returns how many matched the first
 * (determinism: all of them, for one schedule). */
int serialize_repeat_fragment(struct vm *vm, uint64_t after_ns, uint64_t record_ns, int n);

#endif
