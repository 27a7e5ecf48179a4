/* Whole-run exploration's driver, shared by its parts (explore.c: the loop and the
 * run kinds; explore_bug.c: the bug run's schedule, its live replay and what the dump
 * keeps). Private to vmm/rounds/explore*.c. */
#ifndef JINX_EXPLORE_INT_H
#define JINX_EXPLORE_INT_H
#include "rounds/explore.h"
#include "rounds/explore_sparse.h"
#include "rounds/explore_stress.h"
#include "rounds/explore_timed.h"
#include "rounds/explore_timers.h"
#include "rounds/round.h"
#include "rounds/simulation.h"
#include "kvm/snapshot.h"
#include "explorer/explorer.h"
#include <pthread.h>

struct explore_driver {
    struct vm *vm;
    struct explore_config cfg;
    pthread_t thread;
    bool started;
    struct snapshot snap;
    bool have_snap;
    struct ex_online online;
    struct ex_history hist;
    struct ex_pending pend[MAX_VCPUS];
    struct explore_stats st;
    struct round_retired retired;
    bool have_retired;
    /* Pages the last run shared (crew.h), learnt by the history (ex_online_learn) and
     * pre-shared in the next runs; preshare[] is the set the current run uses (sorted: it
     * goes into the bug's schedule as it is). */
    struct ex_u64map learnt;
    uint64_t *preshare;
    size_t npreshare, cappreshare;
    uint64_t bug_ns;            /* how long the bug run took */
    struct explore_sparse sparse; /* sparse runs (explore_sparse.h) */
    struct explore_stress stress; /* stress runs (explore_stress.h) */
    struct explore_timed timed; /* timed runs (explore_timed.h) */
    bool run_sparse;            /* the current run is sparse: the picker asks its PCT */
    bool run_timed;             /* ... a timed one: the picker asks the timed run's PCT */
    struct explore_timers timers; /* timers that end early (explore_timers.h) */
    uint64_t traced;            /* traced runs done */
    bool sparse_ended;          /* a sparse run ended (whole runs fit) */
    bool prefix_run;            /* the current traced run was a learning prefix */
    struct ex_yielders yielders; /* a traced run's threads that yielded (explorer/yielders.h) */
    bool hand_over;             /* ... are left out: a learning prefix, or a long program's run */
};

#define EXPLORE_DUMP_MAX_RUNS 4096u /* the dump's bound on a bug run's index (dump/roundrec.c) */

/* A whole run's outcome: a simulation's (rounds/simulation.h), and a nonzero exit status
 * is a failure too. */
enum ex_outcome explore_run_outcome(const struct outcome *o, bool ended);
/* Run i (r) ended in a bug, or met a jinx limit (replayed live the same way): its
 * schedule (*bug_sched) and result (*bug) are what explore_reproduce replays; sp: a
 * sparse (or timed) run. False when its choices were lost (out of memory). */
bool explore_keep_bug_run(struct explore_driver *d, uint64_t i, const struct sim_result *r,
                          bool sp, uint32_t timers_ended, uint64_t t_run,
                          struct ex_schedule *bug_sched, struct sim_result *bug);
/* Replays the bug run live from the snapshot: the program really ends in the bug. */
void explore_reproduce(struct explore_driver *d, const struct ex_schedule *s,
                       const struct ex_trace *reference, const struct sim_result *sim);
/* The run met jinx limits the live program did not reach: the report still lists them. */
void explore_note_unjudged_limits(struct explore_driver *d, uint64_t run);

#endif
