/* Timed runs in whole-run exploration (explore.h): sparse runs whose change points are
 * placed in time, not drawn over learnt sites.
 *
 * A sparse run (explore_sparse.h) costs its decisions only, but its change points need
 * sites that traced runs learnt, and the first traced prefix alone takes about a second
 * of CPU on a program that computes on shared pages; stress runs (explore_stress.h) need
 * nothing learnt, but their dumps do not replay. A timed run needs nothing learnt and
 * replays: PCT over the synchronization syscalls (every thread a random priority, the
 * enabled thread of highest priority runs, one at a time, at native speed), plus 1 to
 * EXPLORE_TIMED_MAX change points at times drawn uniformly over the length of the first
 * timed run that ended (the first run has none: it measures). When one comes, the VMM kicks the
 * thread with the turn out of the guest and preempts it where it stands, as if a point
 * fired there: its priority drops below everyone's (vmm/sched/sparse.h, "timed
 * decisions"). Where a kick lands is the host's doing (the bank-transfer check that a
 * learnt site would need a traced run to find lies wherever the time falls), so the
 * run records each decision as (thread, rip, a hash of its registers); when the run ends
 * in a bug, its schedule carries each as a point that fires at the first execution with
 * those registers (ex_preempt.match), and the live replay that confirms the bug counts
 * the executions before it: the dump holds an ordinary sparse schedule that replays.
 * (rr's chaos mode shuffles its recorded schedule in the same spirit: random time slices
 * over a serialized execution; here the recording is the schedule itself.)
 *
 * They begin as soon as a traced run could not end (cut by its budget, or a learning
 * prefix stopped at its cap: a program that computes on shared pages); a program whose
 * traced runs end keeps only those (a short test's traced runs find its bugs, and a
 * seed's finds there stay the same from one run to the next). They take
 * EXPLORE_TIMED_SHARE_PCT % of the wall time after that (on the compute corpus they met
 * more bugs than traced and sparse runs together; at 75 %, the corpus's wsq, whose bug a
 * flip or a random traced run finds, took 58 s instead of 16 s): between two controlled
 * runs, as many as bring them back to it. Their timing is the host's, so
 * they never change which traced and sparse runs a seed makes (those keep their indexes)
 * and they are counted apart. A run's budget is EXPLORE_TIMED_FACTOR times the longest
 * that ended (at least EXPLORE_TIMED_MIN_NS); when the first EXPLORE_TIMED_FIRST_CUTS are
 * all cut, the program is a long one and timed runs end. */
#ifndef JINX_EXPLORE_TIMED_H
#define JINX_EXPLORE_TIMED_H
#include "explorer/explorer.h"
#include "explorer/explorer.h"
#include <stdbool.h>
#include <stdint.h>

struct sparse;

#define EXPLORE_TIMED_MAX 4u          /* change points a timed run: 1..this */
#define EXPLORE_TIMED_SHARE_PCT 50u   /* their share of the wall time after they begin, % */
#define EXPLORE_TIMED_MIN_NS 100000000ULL /* a run's budget: at least this, */
#define EXPLORE_TIMED_FACTOR 4u       /* ... and this many times the longest that ended */
#define EXPLORE_TIMED_FIRST_CUTS 2u   /* the first ones all cut: no more */
#define EXPLORE_TIMED_INDEX (1ULL << 40) /* timers' plan index of timed run 0 (apart) */

struct explore_timed {
    bool off;
    bool always;                  /* due at every turn (--explore-strategy timed) */
    struct ex_sparse_model none;  /* no learnt site: the plan has no drawn point */
    struct ex_sparse_run run;
    struct ex_schedule plan;
    struct ex_rng rng;            /* the times */
    uint64_t at[EXPLORE_TIMED_MAX];
    uint32_t nat;                 /* the current run's times */
    uint64_t runs, ended, cut, decisions;
    uint64_t ns;                  /* wall time they took */
    uint64_t span;                /* the first that ended (wall; no change point): the
                                   * times' range (a run a change point made long, a
                                   * lowered lock holder, must not stretch it) */
    uint64_t longest;             /* the longest that ended (wall): the budget's base */
    uint64_t wall_ns;             /* a run's budget */
    uint64_t after_ns;            /* due from this much exploration on (UINT64_MAX: not yet) */
};

void explore_timed_init(struct explore_timed *t, uint64_t first_wall_ns, uint64_t seed);
void explore_timed_free(struct explore_timed *t);
/* Controlled runs are slow (or 5 s went by): timed runs are due from elapsed_ns on. */
void explore_timed_start(struct explore_timed *t, uint64_t elapsed_ns);
bool explore_timed_due(const struct explore_timed *t, uint64_t elapsed_ns);
/* Plans the next run: t->plan (PCT over syscalls and the yields given) and its times
 * (t->at, t->nat: for the VM's next sparse fragment, sched/sparse.h). 0, or -1 (no
 * memory). */
int explore_timed_begin(struct explore_timed *t, uint64_t seed, const uint64_t *yields,
                        uint32_t nyield);
uint64_t explore_timed_budget(const struct explore_timed *t);
/* After the run: ended or cut, its wall time, the decisions the VM made. */
void explore_timed_after(struct explore_timed *t, bool ended, uint64_t wall_ns,
                         uint32_t decisions);
/* The run just made, as a schedule a live replay follows: its choices, the plan's yields
 * and a matched point per timed decision (sp: the VM's sparse state, which recorded
 * them). 0, or -1 (no memory, or a decision the schedule cannot hold). */
int explore_timed_schedule(const struct explore_timed *t, const struct sparse *sp,
                           struct ex_schedule *out);
/* After a live replay of such a schedule (sp: the VM's sparse state after it): each
 * matched point gets the count at which it fired, and its match goes (the schedule
 * replays as any sparse one). 0, or -1 when one did not fire (the replay went elsewhere). */
int explore_timed_counts(const struct sparse *sp, struct ex_schedule *s);
/* Whether s has a point still to be matched. */
bool explore_timed_has_match(const struct ex_schedule *s);

#endif
