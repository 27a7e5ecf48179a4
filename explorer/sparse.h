/* Sparse schedules: PCT over decisions, with change points drawn over learnt sites.
 *
 * A sparse run (vmm/sched/sparse.h) makes cue points only at synchronization syscalls
 * and at its preemption points ("thread T before its N-th execution of the instruction
 * at RIP"); in between a thread runs with all its pages mapped. So a schedule costs its
 * decisions, not the program's shared accesses, and the strategy must know where to
 * put its few points. It learns them from traced runs (every shared access a cue point,
 * or a cut run's prefix: ex_sparse_learn):
 *
 *   - a *variable* is an accessed address; it is *racy* when two of its accesses from
 *     different threads, one a write, race in a run (race.h: unordered by
 *     happens-before), or when it was written and no run showed two threads on it
 *     without a race, while its page was shared or runs showed different threads on it
 *     (a traced run makes cue points on a page only from its second thread's first touch
 *     on, so one run may show only one thread's accesses; a thread's start-up data that
 *     its creator wrote shows both threads in one run, ordered: not racy) — but not a
 *     variable one thread alone accessed, each time near its own stack pointer
 *     (EX_F_STACK): a thread's frames on the top page of its stack, which the thread
 *     descriptor its creator wrote makes shared, were two thirds of the points drawn in
 *     a work-stealing deque's runs (wsq-last);
 *   - a *site* is (thread, rip) of an access to a racy variable, with how many times
 *     that thread executed it in the run where it did so most, and whether that count
 *     is exact (a run that ended) or a lower bound (a run cut by its budget: a prefix).
 *
 * A run's plan (ex_sparse_begin) draws each change point by *variable first*, among the
 * racy variables with a weight that grows with the log of its accesses (a variable
 * touched once by thread start-up code weighs 1, one accessed 10^5 times 17), then a site of that variable, the site's thread or (half of
 * the time) any thread the runs showed (threads often run the same code, and a traced
 * prefix shows only some of them), and a count: uniform in
 * [1, 1.5 x hits + 1] when hits is exact (a count is one schedule's: another may run
 * the site more often), log-uniform in [1, EX_SPARSE_MAX_COUNT] when it is only a
 * lower bound (nothing is known of the scale past the prefix), and never past
 * EX_SPARSE_MAX_COUNT (each counted hit costs an exit pair). A count past the thread's
 * real executions never fires: that run is PCT over syscalls alone, but it tells the
 * exact count (the hits of a point that did not fire in a run that ended), which the
 * model keeps (ex_sparse_observe): sparse runs refine what the traced prefix showed. Drawing by
 * variable is the bounding that keeps a hot statistics counter, accessed 10^5 times,
 * from absorbing every change point: it is one variable among the others. And a point
 * is an instruction: the racy variables whose first site is at one instruction share one
 * variable's weight (their weights over their number). One instruction that accesses a
 * slot per thread or per chunk (the C library's thread descriptors at thread exit, ~900
 * in a 160-thread program; partial sums; an array of accounts) gives the same points
 * whichever slot is drawn, and drawn per slot those drowned the one variable that raced
 * (a work cursor got about 1 point in 100).
 *
 * One plan in EX_SPARSE_CHAIN_DIV also gets a *chained* point (explorer/schedule.h): after
 * one of its points, drawn by the same variable's other sites, any thread, a count in
 * [1, EX_SPARSE_CHAIN_COUNT] counted from the moment that point fired. The first point
 * stops a thread between two accesses (a thief between its read of a deque's bottom and
 * its CAS of top); the chained one stops the next thread at its access to the same
 * variable (the owner between its load of top and its store), so the first goes on in
 * between: the atomicity violation two absolute counts would have to meet by chance (the
 * owner's store is its 1st execution after the thief stopped, its 700th or so since the
 * start). RaceFuzzer's pairing of racing statements, with counts that replay.
 *
 * The run itself (ex_sparse_next) is PCT: every thread gets a random priority when it
 * first shows up; at each cue point the enabled thread of highest priority runs; when a
 * change point fires (the thread's EX_F_PREEMPT cue point) that thread's priority drops
 * below every other. A thread that yields (sched_yield, a sleep: EX_SYNC_OTHER without
 * EX_F_PREEMPT) drops the same way, so spin-yield loops and barriers hand over instead
 * of spinning on forever. Spinners the VMM names (avoid) run only if nobody else can.
 *
 * Everything is a function of the seed, the run index and what the program did, so a run
 * is reproducible; the choices made are recorded for the bug's schedule. */
#ifndef EXPLORER_SPARSE_H
#define EXPLORER_SPARSE_H
#include "rng.h"
#include "schedule.h"
#include "trace.h"
#include "u64map.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EX_SPARSE_MAX_COUNT 256u  /* a point's count is drawn in [1, min(hits, this)] */
#define EX_SPARSE_MAX_SITES 65536u
#define EX_SPARSE_MAX_POINTS 3u   /* change points per run: 1..this (PCT depth 2..4) */
#define EX_SPARSE_DRAWS 8u        /* tries to draw a point at a site that can fire */
#define EX_SPARSE_ORDERED_DIV 4u  /* one point in this many is an ordered shared variable's */
#define EX_SPARSE_MAX_SKIP 32u    /* code ranges ex_sparse_skip_code keeps */
#define EX_SPARSE_WEIGHT_SCALE 4096u /* draw units per weight unit: a page-only share is >= 1 */
#define EX_SPARSE_CHAIN_DIV 2u    /* one plan in this many gets a chained point */
#define EX_SPARSE_CHAIN_COUNT 8u  /* a chained point's count: log-uniform in [1, this] */

struct ex_sparse_site {
    uint64_t rip, var;
    uint32_t tid, hits;
    bool exact;                 /* hits is from a run that ended */
};

struct ex_sparse_var {
    uint64_t addr;
    uint64_t accesses;          /* over every learnt run */
    struct ex_tidset threads;   /* who accessed it */
    bool written;
    bool on_shared;             /* its page was shared in a learnt run */
    bool raced;                 /* two of its accesses raced in a learnt run */
    bool together;              /* two threads accessed it in one learnt run */
    bool off_stack;             /* an access not flagged EX_F_STACK (not near its thread's
                                 * stack pointer) */
    uint64_t run;               /* the run `seen` is about (model.runs + 1) */
    struct ex_tidset seen;      /* threads on it in that run */
    uint32_t first_site;        /* index of its first site + 1 in the site chain, 0: none */
};

struct ex_sparse_model {
    struct ex_sparse_site *site;
    uint32_t *next_site;        /* per site: next site of the same variable + 1, 0: end */
    size_t nsite, capsite;
    struct ex_sparse_var *var;
    size_t nvar, capvar;
    struct ex_u64map site_of;   /* hash(tid, rip) -> site index + 1 */
    struct ex_u64map var_of;    /* addr -> var index + 1 */
    uint64_t runs;              /* traces learnt */
    struct ex_tidset threads;   /* every thread with an access in a learnt run */
    /* Code whose accesses are not learnt (ex_sparse_skip_code): a sanitizer's runtime,
     * whose own bookkeeping would otherwise be most of the racy variables. */
    uint64_t skip[EX_SPARSE_MAX_SKIP][2];
    uint32_t nskip;
    /* Points go on the thread that showed the site, never on another that runs the same
     * code: set by rounds, whose recordings show the threads that run in a fragment and
     * whose short simulations run few of them (vmm/rounds/round.c). */
    bool own_threads;
};

void ex_sparse_model_init(struct ex_sparse_model *m);
void ex_sparse_model_free(struct ex_sparse_model *m);
/* Learns one traced run; complete: it ended (not cut by its budget); shared_pages (may be
 * NULL): the pages the run shared, as keys (page-aligned addresses). 0, or -1 out of
 * memory (what was learnt stays valid). */
int ex_sparse_learn(struct ex_sparse_model *m, const struct ex_trace *t, bool complete,
                    const struct ex_u64map *shared_pages);
/* Accesses by instructions in [lo, hi) are not learnt from now on: no change point is ever
 * drawn there. For code whose races are not the program's (a sanitizer runtime's own
 * synchronized bookkeeping: ASan's allocator, its thread registry). Past
 * EX_SPARSE_MAX_SKIP ranges, or for an empty one, nothing changes. */
void ex_sparse_skip_code(struct ex_sparse_model *m, uint64_t lo, uint64_t hi);
/* Racy variables (two threads, one writing) with at least one site. */
size_t ex_sparse_racy_vars(const struct ex_sparse_model *m);

struct ex_sparse_run {
    struct ex_rng rng;
    uint64_t prio[EX_MAX_TID + 1];  /* 0: not seen yet */
    uint64_t low;                   /* the next lowered priority (counts down: a spin
                                     * barrier or a pipeline yields 10^3-10^5 times a
                                     * run, and every yield must hand over) */
    uint32_t *choices;
    size_t nchoices, cap;
    bool lost;                      /* out of memory recording choices */
    uint64_t point_var[EX_MAX_PREEMPTS]; /* the variable each planned point was drawn for */
    uint64_t lowered;               /* priority drops: points fired and yields */
    uint64_t seen;                  /* seq + 1 of the last cue point looked at */
};

void ex_sparse_run_init(struct ex_sparse_run *r);
void ex_sparse_run_free(struct ex_sparse_run *r);
/* Starts run `index` of the exploration seeded `seed`: plans its points into *plan (a
 * sparse schedule with no segments; cleared first) from the model, and resets the
 * priorities. Points are drawn over the racy variables, and one in EX_SPARSE_ORDERED_DIV
 * over the ordered shared ones (written by one thread, accessed by another, ordered in
 * every run learnt: a seqlock's record); with neither the plan has no point (PCT over
 * syscalls alone).
 * 0, or -1 if plan could not be filled. */
int ex_sparse_begin(struct ex_sparse_run *r, const struct ex_sparse_model *m, uint64_t seed,
                    uint64_t index, struct ex_schedule *plan);
/* The thread to run at a cue point: enabled (non-empty for a choice; empty returns 0),
 * avoid may be NULL, last is the cue point just made (NULL at the start). */
uint32_t ex_sparse_next(struct ex_sparse_run *r, const struct ex_tidset *enabled,
                        const struct ex_tidset *avoid, const struct ex_event *last);
/* After a sparse run that ended, planned by r as plan: hits[i] is how often plan's point i
 * was hit; a point that did not fire (hits[i] < its count) counted every execution of its
 * site by its thread, an exact count the model keeps. 0, or -1 out of memory. */
int ex_sparse_observe(struct ex_sparse_model *m, const struct ex_sparse_run *r,
                      const struct ex_schedule *plan, const uint32_t *hits);
/* The run so far as a schedule: plan's points (preemptions and yields) and the choices,
 * default continue.
 * 0, or -1 (choices lost, or no memory). */
int ex_sparse_schedule(const struct ex_sparse_run *r, const struct ex_schedule *plan,
                       struct ex_schedule *out);

#endif
