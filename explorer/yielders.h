/* Yielders: a thread that yields (sched_yield, a sleep) lets the others run.
 *
 * A traced run's strategies (PCT, flip, ...) choose among the enabled threads at every cue
 * point; a thread that polls with sched_yield stays enabled, and a high-priority one that
 * spins so (a pipeline stage on an empty ring, a barrier's waiter) kept the turn: the
 * first traced run of a three-stage pipeline made 4 998 yields of one spinner among its
 * 5 000 cue points and learnt nothing of the program. Spin detection (spin.h) sees only
 * identical reads, and a yield loop whose page is not shared makes none.
 *
 * So a thread that yields (its last EX_YIELD_STREAK cue points were all yields:
 * EX_SYNC_OTHER that is no sparse point) is left out of the choice while another thread
 * can run, until EX_YIELD_PATIENCE cue points of the others have passed since its last
 * yield (the thread it waits for may need it after all; a sparse run lowers it below
 * everyone instead: sparse.h). A cue point of its own that is no yield ends that. The
 * explorer applies it to learning prefixes and to the traced runs of a program whose
 * prefix was cut (vmm/rounds/explore.c): a short test's flips follow their parent's
 * choices, and one yield left out made order-done-flag's flip diverge and miss. A streak
 * of 8 instead of 1 kept them, but its traced prefixes then spun 8 yields a hand-over and
 * pipe-publish's and wsq-last's finds went from 4 and 2 of 5 seeds to 3 and 0 of 4
 * (most of them stress runs', not replayable).
 * A pure function of the cue points in trace order: a run stays deterministic, and its
 * choices, recorded, replay it. Pure C, no KVM. */
#ifndef EXPLORER_YIELDERS_H
#define EXPLORER_YIELDERS_H
#include "trace.h"
#include <stdbool.h>
#include <stdint.h>

#define EX_YIELD_PATIENCE 64u
#define EX_YIELD_STREAK 1u

struct ex_yielders {
    uint64_t at[EX_MAX_TID + 1];   /* 1 + seq of the thread's last yield, 0: none pending */
    uint32_t streak[EX_MAX_TID + 1]; /* its cue points in a row that were yields */
    uint64_t seen;                 /* 1 + seq of the last cue point observed */
};

void ex_yielders_init(struct ex_yielders *y);
/* The cue point just made (NULL: none yet); the same one twice counts once. */
void ex_yielders_observe(struct ex_yielders *y, const struct ex_event *last);
/* The threads to leave out of the next choice (cleared first): the threads yielding in a
 * loop whose patience is not used up. */
void ex_yielders_avoid(const struct ex_yielders *y, struct ex_tidset *out);

#endif
