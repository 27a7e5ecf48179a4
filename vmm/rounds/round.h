/* Simulation rounds (`jinxctl attach`, `jinx-vmm run --attach`): a driver thread that,
 * at the configured rate, stops the VM, snapshots it, records a serialized fragment,
 * asks the explorer for K alternative schedules, simulates each from the snapshot,
 * scores them and retires the winner by replaying its schedule on the live VM, then
 * lets the program run free again.
 *
 * The control socket (control.h) and the command line call round_attach / round_detach
 * / round_status; the round driver reports notable events through control_event(). */
#ifndef JINX_ROUND_H
#define JINX_ROUND_H
#include "explorer/explorer.h"
#include "rounds/round_progress.h"
#include <stdbool.h>
#include <stdint.h>

struct vm;

#define ROUND_MAX_SIMS 64

/* What a round's simulations are (docs/rounds.md, "Sparse simulations"). */
enum round_sim_kind {
    ROUND_SIMS_AUTO,            /* sparse when the recording shows costly cue points */
    ROUND_SIMS_TRACED,          /* every shared access a cue point (the strategy's schedules) */
    ROUND_SIMS_SPARSE,          /* decisions only: PCT over syscalls and learnt sites */
};

struct round_config {
    double rate;                /* rounds per second, > 0 (at most 1000) */
    enum ex_strategy strategy;  /* default EX_STRAT_PORTFOLIO */
    struct ex_params params;    /* params.max_schedules = K simulations per round */
    uint64_t fragment_ns;       /* virtual time per fragment, default 1 ms */
    uint64_t tail_ns;           /* after retiring a suspicious schedule, the program goes on
                                   serialized for this much more virtual time (at most
                                   tail_wall_ns of wall time), so that a crash there
                                   is replayable from the round's snapshot (0: none) */
    uint64_t tail_wall_ns;      /* most wall time a tail may take (default 200 ms) */
    uint64_t fragment_wall_ns;  /* most wall time a fragment may take (default 50 ms): a
                                   thread computing privately has no cue point to stop at */
    uint64_t seed;              /* every random choice of the rounds derives from it */
    uint64_t first_ns;          /* free execution before the first round: from a quarter
                                   to twice this, by seed (default 1 ms: short test
                                   programs get a round too) */
    int max_duty_pct;           /* most of the wall time rounds may take (default 50) */
    uint32_t record_quantum;    /* the recording's schedule: roundrobin, this many cue
                                   points per turn (default 16) */
    bool verbose;               /* a line per round, not only notable ones */
    int workers;                /* worker VMs for simulations (worker.h): -1 the default,
                                   0 none (one after the other in the program's VM) */
    bool check_workers;         /* re-run every simulation in the other VM and compare */
    enum round_sim_kind sim_kind;
};

void round_config_default(struct round_config *c);
/* "5/s", "5", "0.5/s", "20/s" -> rounds per second. Returns 0 or -1. */
int round_parse_rate(const char *s, double *rate);

/* Statistics, for `jinxctl status` and the benchmarks. Times in ns. */
struct round_stats {
    bool attached;
    struct round_config cfg;
    uint64_t rounds;             /* rounds completed */
    uint64_t simulations;        /* simulations run, all rounds */
    uint64_t cues_total;         /* cue points recorded, all rounds */
    uint64_t sim_bugs;           /* simulations that ended in a bug */
    uint64_t retired;            /* rounds whose winner was not the recording */
    uint64_t divergences;        /* retirements whose replay differed from the simulation */
    uint64_t tail_cues;          /* cue points run serialized after retirements (tails) */
    uint64_t tail_crashes;       /* crashes met in a tail: replayable dumps */
    uint64_t best_rank;          /* best score rank seen so far */
    uint64_t last_cues, last_sims;
    /* The last round's phases, and the sums over all rounds. */
    uint64_t ns_stop, ns_snapshot, ns_record, ns_explore, ns_simulate, ns_score, ns_retire,
        ns_resume, ns_round;
    uint64_t sum_stop, sum_snapshot, sum_record, sum_explore, sum_simulate, sum_score,
        sum_retire, sum_resume, sum_round;
    uint64_t free_ns;            /* wall time the program ran free since attach */
    uint64_t attached_ns;        /* wall time since attach */
    uint64_t last_bug_round;     /* round of the last simulated bug (0: none) */
    char last_event[200];        /* the last notable line */
    /* Worker VMs (worker.h). */
    int workers;                 /* used in the last round */
    uint64_t worker_sims;        /* simulations that ran on a worker */
    uint64_t worker_checked, worker_mismatches; /* --check-workers comparisons */
    uint64_t worker_builds, worker_syncs, worker_pages;
    uint64_t ns_worker_sync, sum_worker_sync;
    struct round_progress prog;  /* rounds with and without simulations, medians */
    /* Cue points of every simulation, and the sparse simulations among them with the
     * change points that fired in them (their decisions besides syscalls). */
    uint64_t sim_cues;
    uint64_t sparse_sims, sparse_fired;
};

/* What the round that retired a bug knew, for the crash dump (dumpround.h): set when a
 * retired simulation's live replay ended the program with a bug, and kept until
 * round_shutdown. */
struct snapshot;
struct round_retired {
    const struct snapshot *snap;   /* the snapshot the fragment started from (borrowed) */
    struct ex_schedule sched;      /* the retired schedule */
    struct ex_trace recorded;      /* the recording the explorer started from */
    struct ex_trace retired;       /* the live replay of the winner, up to the bug */
    struct ex_score score;         /* the winner's score */
    uint64_t round;                /* round number, from 1 */
    int sim, nsim;                 /* the winner (0: the recording itself) of nsim */
    uint64_t cue_limit;            /* the replay's cue-point limit */
    uint64_t cues_sim, cues_live;  /* cue points of the simulation and of the live replay */
    char strategy[32];
    char why[200];                 /* why it won, one line */
};
/* The retired bug of this VM's rounds, or NULL (no rounds, or the program's end was not
 * a retired simulation's). Valid until round_shutdown; call it after vm_run returned (it
 * waits for the round in progress to finish). */
const struct round_retired *round_retired(struct vm *vm);

/* Starts (or reconfigures) rounds on a running VM. Returns 0, or -1 with a message. */
int round_attach(struct vm *vm, const struct round_config *cfg, char *err, size_t errlen);
/* Stops rounds after the one in progress; returns when the driver is idle. */
void round_detach(struct vm *vm);
void round_status(struct vm *vm, struct round_stats *out);
/* Ends the driver thread and frees it (after vm_run returned). */
void round_shutdown(struct vm *vm);
/* Writes the status as one JSON object (no newline). Returns 0 or -1 if len is short. */
int round_status_json(const struct round_stats *st, char *buf, size_t len);

#endif
