/* The round driver's state and what round.c shares with batch.c (one round's
 * simulations). Private to rounds/. */
#ifndef JINX_ROUND_DRIVER_H
#define JINX_ROUND_DRIVER_H
#include "explorer/explorer.h"
#include "kvm/snapshot.h"
#include "kvm/vm.h"
#include "rounds/round.h"
#include "rounds/round_config.h"
#include "rounds/simulation.h"
#include "rounds/worker.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct round_driver {
    struct vm *vm;
    pthread_t thread;
    pthread_mutex_t mu;         /* guards cfg, st, attached, quit, busy */
    pthread_cond_t cv;
    bool attached, quit, busy;
    struct round_config cfg;
    struct round_stats st;
    uint64_t attach_ns, last_progress_ns;
    struct snapshot snap;
    bool snap_ready;
    bool serial_ready;
    struct ex_coverage cov;
    struct worker *workers[WORKER_MAX]; /* created at the first round that wants them */
    /* Sparse simulations' change points, learnt from every recording of a sparse round
     * (round.c, "Sparse rounds"): sites and racy variables stay where they were, counts
     * are lower bounds. sparse_from: the first sparse round (0: none yet). */
    struct ex_sparse_model sparse_model;
    uint64_t sparse_from;
    bool have_retired;          /* a retired bug ended the program: `retired` holds it */
    struct round_retired retired;
};

static inline bool vm_over(struct vm *vm) { return atomic_load(&vm->stopping); }

/* A notable event: a line on stderr and an event to vm->event_sink (round.c). */
void round_notable(struct round_driver *d, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "crashed (SIGSEGV in thread 2)", "deadlocked (3 threads blocked)" or "ended"
 * (round_retired.c). */
void round_describe_outcome(const struct sim_result *r, char *buf, size_t len);
/* The retired simulation's live replay ended the program with its bug: keeps what the
 * crash dump needs in d->retired (round_retired.c). in_tail: the bug came in the tail. */
void round_keep_retired(struct round_driver *d, const struct round_config *cfg,
                        uint64_t round_no, int best, int nsim, const struct ex_schedule *sched,
                        const struct ex_trace *recorded, const struct sim_result *live,
                        const struct sim_result *w, uint64_t limit, bool in_tail);

/* A round's sparse simulations: n of them (after the strategy's schedules, within K),
 * planned from model with the round's seed, each with a budget of wall ns. */
struct round_sparse {
    int n;
    const struct ex_sparse_model *model;
    uint64_t seed, wall;
};

/* Runs the round's schedules sp (ss->v, k at most) from the snapshot: in the program's
 * VM and on the workers at once when there are any (worker.h), else one after the other
 * here. Returns the simulations run (results in res[1..]); *ok goes false if the
 * program's VM failed (batch.c). */
int round_simulate(struct round_driver *d, const struct round_config *cfg,
                   const struct ex_schedule_set *ss, int k, const struct round_sparse *sparse,
                   uint64_t want, uint64_t vtime, struct sim_result *res, uint64_t *ns_sync,
                   bool *ok);

#endif
