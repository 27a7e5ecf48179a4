/* Whole-run exploration (`jinx-vmm run --explore DUR`, what `jinx test` runs): the program
 * runs serialized from boot; at its first thread creation (the clone's cue point, the
 * same point in every run of the same image, arguments and seed) the VM is stopped and
 * snapshotted. Then, until a bug or the budget, again and again: restore the snapshot and
 * run the program to its end (exit, crash, deadlock) in a sandbox, one thread at a time,
 * the thread at each cue point chosen by a whole-run strategy (explorer/online.h: PCT,
 * POS, random walk, reads-from feedback, or their portfolio). Each run's choices are
 * kept; a run that ends in a bug is replayed live from the snapshot with exactly those
 * choices, so the program really crashes (dump) and the dump carries the snapshot and the
 * schedule for `jinx-vmm replay`.
 *
 * A run that does not end within the run budget (cue points or wall time: a long-running
 * program, or a livelock) is cut and counted, never reported. When the first run is cut
 * the program is not a short test: exploration gives up, the VM goes on in free
 * execution from the snapshot, and simulation rounds (--attach) take over if asked for.
 * When nothing is found within the budget the program also goes on free from the
 * snapshot to its own end.
 *
 * The driver is a thread of its own, like the round driver (round.h); explore_start is
 * called before vm_run, explore_shutdown after it. */
#ifndef JINX_EXPLORE_H
#define JINX_EXPLORE_H
#include "explorer/explorer.h"
#include "rounds/round.h"
#include <stdbool.h>
#include <stdint.h>

struct vm;

#define EXPLORE_RUN_CUES 200000ULL          /* cue points one whole run may take */
#define EXPLORE_RUN_WALL_NS 2000000000ULL   /* wall time one whole run may take */
#define EXPLORE_REPLAY_WALL_NS 60000000000ULL /* a bug run's live replay: at least this, */
#define EXPLORE_TIMED_REPLAY_WALL_NS 15000000000ULL /* ... a timed run's, whole (explore_bug.c) */
#define EXPLORE_STRETCH 8                   /* ... times the wall budget once an early run is cut */
#define EXPLORE_FIRST_CUTS 2                /* the first runs all cut: not a short test */

struct explore_config {
    uint64_t budget_ns;             /* wall time for all runs (the --explore DUR) */
    uint64_t max_schedules;         /* stop after this many runs (0: the budget decides) */
    uint64_t run_cues;              /* cue-point budget of one run (EXPLORE_RUN_CUES) */
    uint64_t run_wall_ns;           /* wall budget of one run (EXPLORE_RUN_WALL_NS) */
    enum ex_online_kind strategy;   /* default EX_ONLINE_PORTFOLIO */
    struct ex_online_params params;
    uint64_t seed;                  /* schedule i is drawn from (seed, i) */
    bool verbose;                   /* a line per run */
    bool no_stress;                 /* no stress runs (explore_stress.h) nor timed runs
                                     * (explore_timed.h): nothing the host's timing decides */
    bool then_rounds;               /* a cut first run hands over to rounds (round_attach) */
    bool timers_strict;             /* --timers strict: no timer ends early (explore_timers.h) */
    bool timed_only;                /* --explore-strategy timed: timed runs alone (explore_timed.h) */
    bool replayable_only;           /* --replayable-only: only runs whose bugs replay:
                                     * traced and sparse runs, no stress or timed run (jinx
                                     * test's search for a replayable dump of a bug whose
                                     * dump does not replay) */
    struct round_config rounds;     /* ... with this configuration */
};

struct explore_stats {
    bool snapshot_taken;            /* the program created a thread */
    uint64_t snapshot_cue;          /* cue points before the snapshot (the first clone) */
    uint64_t schedules;             /* whole runs done */
    uint64_t cut;                   /* ... that hit the run budget */
    uint64_t bug_at;                /* 1-based index of the run that found the bug (0: none) */
    uint64_t cues_total, cues_max;  /* cue points of all runs; the longest run */
    uint64_t ns_explore;            /* wall time from the snapshot to the end of exploring */
    bool reproduced;                /* the live replay of the bug run ended in the same bug */
    bool gave_up;                   /* first run cut: the program is not a short test */
    bool limited;                   /* the run replayed live had met a jinx limit */
    /* Sparse runs among them (explore_sparse.h): how many, cut, their cue points, the
     * preemption points that fired and the breakpoint hits counted, in all. */
    uint64_t sparse, sparse_cut, sparse_cues, sparse_fired, sparse_hits;
    /* Sampled sparse runs (sched/crew_sample.h) and the accesses they recorded. */
    uint64_t sampled, sampled_accesses;
    /* Stress runs (explore_stress.h): how many, stopped at their budget, wall time. */
    uint64_t stress, stress_cut, stress_ns;
    /* Timed runs (explore_timed.h): how many, cut, wall time, timed decisions made. */
    uint64_t timed, timed_cut, timed_ns, timed_decisions;
    /* Timers ended early (explore_timers.h): in all runs; in the bug run. */
    uint64_t timers_early, timers_bug;
    char strategy[32];              /* the strategy of the bug run (portfolio members) */
    char note[160];                 /* its description (ex_online_describe) */
    uint8_t bug_outcome;            /* the bug run's enum ex_outcome (bug_at > 0) */
    /* How the bug run's live replay went: "same"; "stopped" (cut by its wall bound or the
     * timeout, the same run up to there); "differs"; "uncounted" (it ended in the bug, a
     * timed decision's place was not counted). "" before a replay. jinx test reads it: a
     * bug met in a run whose replay stopped is the program's even without a dump. */
    char replay[12];
};

void explore_config_default(struct explore_config *c);
/* Starts the driver (before vm_run; serialized execution must be initialised and crew
 * started, as for --serial). 0, or -1 with a message. */
int explore_start(struct vm *vm, const struct explore_config *c, char *err, size_t errlen);
/* After vm_run: waits for the driver and keeps its result until explore_shutdown. */
void explore_stats(struct vm *vm, struct explore_stats *out);
/* The bug the exploration replayed live, for the dump's round records (dumpround.h), or
 * NULL. Valid until explore_shutdown. */
const struct round_retired *explore_retired(struct vm *vm);
/* One JSON object (no newline) of the stats. 0, or -1 if len is short. */
int explore_stats_json(const struct explore_stats *st, char *buf, size_t len);
void explore_shutdown(struct vm *vm);

#endif
