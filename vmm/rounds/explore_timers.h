/* Whole-run exploration's timers that end early (explorer/timers.h, sched/timers.h): at
 * each pick of a traced or sparse run, the run's plan may end a timer (the VMM moves time
 * and wakes the thread), and the thread whose timer ended keeps the turn for a while; the
 * strategy then chooses among that thread alone. --timers strict plans nothing: the runs
 * are those of before. docs/timers.md. */
#ifndef JINX_EXPLORE_TIMERS_H
#define JINX_EXPLORE_TIMERS_H
#include "explorer/explorer.h"
#include <stdbool.h>
#include <stdio.h>

struct vm;

/* One exploration's: the plan of the current run and what the traced and the sparse runs
 * showed (their cue points differ, so do their timed steps). */
struct explore_timers {
    bool strict;
    struct ex_timers_run run;
    struct ex_timers_hist hist[2];      /* [0] traced runs, [1] sparse runs */
    bool sparse;                        /* the current run is sparse */
};

void explore_timers_init(struct explore_timers *t, bool strict);
/* Plans run `index` (sparse or traced) of the exploration seeded seed. */
void explore_timers_begin(struct explore_timers *t, bool sparse, uint64_t seed, uint64_t index);
/* At a pick (vm->lock held): may end a timer, then returns the set the strategy chooses
 * from: *enabled, or {the thread that keeps the turn} in *buf (*forced true: avoid no
 * longer applies). follow: the thread a flip or rf schedule wants next while it follows
 * its parent (ex_online_following; 0: none): blocked on a timer, it had its timer end
 * early in the parent, so it ends here too (beside the plan; no turn kept). */
const struct ex_tidset *explore_timers_pick(struct explore_timers *t, struct vm *vm,
                                            const struct ex_tidset *enabled,
                                            const struct ex_tidset *avoid, struct ex_tidset *buf,
                                            bool *forced, uint32_t follow);
/* After the run (the serializer still holds its endings): learns its timed steps.
 * Returns how many timers it ended early, also added to *total. */
uint32_t explore_timers_after(struct explore_timers *t, const struct vm *vm, uint64_t *total);
/* Each of the run's endings in words, a line each (--verbose-explore). */
void explore_timers_print(struct vm *vm, FILE *f);
/* Adds the run's endings to its schedule (the bug's). 0, or -1 (a bad or full list). */
int explore_timers_to_schedule(struct vm *vm, struct ex_schedule *s);

#endif
