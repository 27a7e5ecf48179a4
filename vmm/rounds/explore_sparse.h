/* Sparse runs in whole-run exploration (explore.h; the runs themselves: sched/sparse.h,
 * the strategy: explorer/sparse.h).
 *
 * A traced run pays a cue point for every shared access; a program whose threads compute
 * on shared pages makes 10^5 of them and gets a schedule every few seconds, or its runs
 * are cut. Sparse runs join the exploration
 *   - when the first traced run, a learning prefix stopped at EXPLORE_SPARSE_PREFIX cue
 *     points (about 1 s of CPU here; explore_sparse_prefix_cues), does not end there, one
 *     sparse run with no point (the probe: PCT over the syscalls alone, what a sparse run
 *     of the program costs) ends with EXPLORE_SPARSE_PREFIX_GAIN times fewer cue points
 *     than the prefix (its threads compute on shared pages), or fewer than the prefix made
 *     at syscalls alone (the traced run spun through sched_yield loops: a spin barrier,
 *     a pipeline; a sparse run hands over at every yield), within the prefix's CPU time
 *     (a program whose runs are long because it has 200 threads makes hundreds of
 *     syscall cue points in a sparse run, more than its prefix made, and its traced
 *     runs, stretched, find its bugs: the corpus's 150- and 200-thread programs), and a
 *     second traced prefix, traced run 1's schedule, reaches
 *     the cap too (a first run that PCT made long is no sign: the g++ test binary's first
 *     run is cut at 20 000 cue points, the others end at 4 400). The prefixes are traced
 *     runs 0 and 1 of the traced sequence, cut at their cap as the first runs were cut
 *     by their 2 s CPU budget before (10-12k cue points here, more on an idle host): the
 *     decision costs half of that, and the same on a loaded host as on an idle one;
 *   - when traced runs give up (the first ones all cut): the rest of the budget, unless
 *     the probe was cut too (a long-running program: rounds then take over, as before);
 *   - when EXPLORE_SPARSE_LONG traced runs have each made EXPLORE_SPARSE_CUES cue points
 *     or more without finding anything;
 *   - after EXPLORE_SPARSE_RUNTIME_RUNS traced runs of EXPLORE_SPARSE_RUNTIME_MIN memory
 *     cue points or more, at least half of them made by a sanitizer runtime's code (the
 *     code sparse runs skip): its bookkeeping, not the program, makes the traced runs
 *     long (an ASan build's allocator and thread registry, TSan's per-thread state:
 *     docs/sanitizers.md). Two, not one: one run shows one order of the threads, the
 *     second (a flip) the other, and points drawn from the first alone missed the second
 *     thread's sites (san_dfree_asan: ~350 sparse runs to the bug, against 3-20).
 * Their points are drawn over what the traced runs showed (the learnt racy sites), and
 * they cost their decisions only. The two kinds then share the
 * work by cost, counted in cue points (and counted breakpoint hits, an exit pair each),
 * not in time, so that a seed's sequence of runs does not depend on the host's load: the
 * next run is sparse while the sparse runs have cost no more than EXPLORE_SPARSE_SHARE
 * times the traced ones while no traced run has ended (the program is out of reach of
 * traced runs), as much as them once one has (traced runs find bugs in it too: the
 * corpus's 150-thread programs). A traced run that long costs 150-200 us of CPU a cue point
 * here, a sparse run ~3 ms: EXPLORE_SPARSE_RUN_COST cue points, and a counted hit about
 * half of one). When
 * traced runs would give up (the first ones all cut), the rest of the budget is sparse.
 *
 * A sparse run that does not end within its budget is cut, never a bug (a thread
 * spinning without a syscall on what a lowered thread holds, or a long program). When it
 * was stopped with no cue point at all, the instruction its running thread was at becomes
 * a yield point of every later sparse run (up to EX_MAX_YIELDS; sched/sparse.h): a spin
 * loop that makes no syscall then hands over there, deterministically. When the first
 * EXPLORE_SPARSE_FIRST_CUTS sparse runs are all cut, sparse runs stop (the traced runs,
 * or rounds, go on as before). */
#ifndef JINX_EXPLORE_SPARSE_H
#define JINX_EXPLORE_SPARSE_H
#include "explorer/explorer.h"
#include <stdbool.h>
#include <stdint.h>

struct vm;

#define EXPLORE_SPARSE_CUES 5000u       /* a traced run this long is a long one */
#define EXPLORE_SPARSE_LONG 4u          /* so many long traced runs: sparse runs join */
#define EXPLORE_SPARSE_RUNTIME_MIN 1000u /* a traced run this long, mostly a runtime's, */
#define EXPLORE_SPARSE_RUNTIME_RUNS 2u  /* ... so many of them: sparse runs join */
#define EXPLORE_SPARSE_GAIN 50u         /* a probe this many times shorter: sparse runs join */
#define EXPLORE_SPARSE_PREFIX 5000u     /* a learning prefix's cue points (EXPLORE_SPARSE_CUES) */
#define EXPLORE_SPARSE_PREFIX_GAIN 25u  /* ... a probe this many times shorter than one */
#define EXPLORE_SPARSE_PROBE_DIV 10u    /* the probe's budget: the traced runs' over this, */
#define EXPLORE_SPARSE_PROBE_PREFIXES 4u /* ... or this many times the prefix's CPU time */
#define EXPLORE_SPARSE_SHARE 3u        /* sparse runs' share of the cost: 3 to traced 1 */
#define EXPLORE_SPARSE_FIRST_CUTS 3u    /* the first sparse runs all cut: no sparse runs */
#define EXPLORE_SPARSE_RUN_COST 16u     /* a sparse run's fixed cost in cue points (restore) */
#define EXPLORE_SPARSE_MIN_WALL_NS 50000000ULL /* a sparse run's budget: at least this, */
#define EXPLORE_SPARSE_WALL_FACTOR 10u  /* ... and this many times the first one's CPU time, */
#define EXPLORE_SPARSE_HIT_NS 500000ULL /* ... and this much per hit its points may count; */
#define EXPLORE_SPARSE_BUSY_CUES 100u   /* doubled (up to a traced run's) when a run is cut
                                         * after this many cue points: it was progressing */
#define EXPLORE_SAMPLE_FIRST 2u         /* sampled sparse runs: the first ones after the probe, */
#define EXPLORE_SAMPLE_EVERY 8u         /* ... then one in this many */
#define EXPLORE_SAMPLE_BUDGET 4u        /* ... with this many times the budget (their faults) */

struct explore_sparse {
    struct ex_sparse_model model;
    bool skip_set;              /* the sanitizer runtimes' code is skipped (explore_sparse.c) */
    /* ... its ranges: shared runtimes (libasan.so, ...), a runtime inside the program (by
     * its symbols: clang's, -static-libasan), the C library's */
    uint32_t skip_libs, skip_program, skip_libc;
    bool runtime_bound;         /* sparse runs joined: traced runs were mostly a runtime's */
    uint32_t runtime_runs;      /* traced runs mostly a runtime's (runtime_bound) */
    struct ex_sparse_run run;
    struct ex_schedule plan;    /* the current sparse run's points */
    bool on;                    /* sparse runs are part of the exploration */
    bool off;                   /* ... and were dropped (their first runs all cut) */
    bool probe;                 /* the next run is the probe (a traced run was cut) */
    bool probed;
    bool prefixed;              /* the first traced run was a learning prefix */
    uint64_t traced_runs;       /* traced runs learnt (prefixes included) */
    bool candidate;             /* the probe succeeded: the next traced run decides */
    uint64_t probe_ref;         /* the cut traced run's cue points */
    uint64_t probe_cpu_ref;     /* the prefix's CPU time (0: the probe followed a cut run) */
    uint64_t probe_sync_ref;    /* the prefix's cue points that were no memory access */
    bool only;                  /* traced runs gave up: sparse runs only */
    bool long_alone;            /* the probe was cut while one thread lived (below) */
    bool sized;                 /* wall_ns set from an ended run */
    bool traced_ended;          /* a traced run ended (sparse runs then get an equal share) */
    uint32_t long_runs;         /* traced runs of EXPLORE_SPARSE_CUES or more that ended */
    uint64_t wall_ns;           /* a sparse run's budget (CPU time, as traced runs') */
    uint64_t traced_wall_ns;    /* ... never more than a traced run's */
    uint64_t runs, ended, index;
    uint64_t cost_traced, cost_sparse;
    uint64_t cues, decisions, hits, points; /* over all sparse runs */
    uint64_t yield[EX_MAX_YIELDS];  /* learnt spin instructions: yield points of every run */
    uint32_t nyield;
    bool sample;                /* the planned run is sampled (below) */
    uint64_t sampled, sampled_accesses; /* sampled runs learnt, their accesses */
};

void explore_sparse_init(struct explore_sparse *es, uint64_t traced_wall_ns);
void explore_sparse_free(struct explore_sparse *es);
/* Once, before the first learnt run: the code of the sanitizer runtimes vm loaded (ASan,
 * UBSan, TSan...) is never a change point; their bookkeeping's races (hundreds of
 * variables in an ASan build) would drown the program's own (docs/sanitizers.md). When
 * there is such a runtime, the C library's code (libc, ld.so) is skipped too. */
void explore_sparse_skip_runtimes(struct explore_sparse *es, struct vm *vm);
/* The cue-point cap of the next traced run when it is a learning prefix, else 0: the
 * first traced run, and the one that decides after a good probe (*decider set), stop at
 * EXPLORE_SPARSE_PREFIX cue points. One that ends below the cap is the run it would have
 * been; one stopped there is a prefix (explore_sparse_after_prefix), a cut run of the
 * traced sequence as one cut by its CPU budget is. */
uint64_t explore_sparse_prefix_cues(const struct explore_sparse *es, bool *decider);
/* After a traced run stopped at its prefix cap (its cue points a prefix of the run):
 * learn it (a prefix: counts are lower bounds); the first one asks for the probe, the
 * deciding one turns sparse runs on (a second schedule that long: the program's runs
 * are long, not one PCT schedule). */
void explore_sparse_after_prefix(struct explore_sparse *es, const struct ex_trace *t,
                                 uint64_t cues, uint64_t cpu_ns, const struct ex_u64map *shared);
/* The deciding run ended below its cap: traced runs are short after all, sparse runs stay
 * off. */
void explore_sparse_after_decider_ended(struct explore_sparse *es, const struct ex_trace *t,
                                        uint64_t cues, const struct ex_u64map *shared);
/* After a traced run: learn its sites, count its cost, and maybe turn sparse runs on. */
void explore_sparse_after_traced(struct explore_sparse *es, const struct ex_trace *t,
                                 bool ended, uint64_t cues, const struct ex_u64map *shared);
/* Traced runs gave up: sparse runs only, unless they were dropped (then false). */
bool explore_sparse_take_over(struct explore_sparse *es);
/* Whether the next run is sparse. */
bool explore_sparse_next_is_sparse(const struct explore_sparse *es);
/* Plans the next sparse run (es->plan). 0, or -1 (no memory: run a traced one). */
int explore_sparse_begin(struct explore_sparse *es, uint64_t seed);
/* Sampled sparse runs (sched/crew_sample.h): the planned run samples (es->sample) when it
 * is one of the first EXPLORE_SAMPLE_FIRST sparse runs after the probe, or one in
 * EXPLORE_SAMPLE_EVERY after them, with EXPLORE_SAMPLE_BUDGET times the budget. Its
 * samples (the first read and write of each page in each turn, between its cue points)
 * are learnt as a prefix is (counts are lower bounds): the sites where a program shares
 * after it computed, which no traced prefix from the snapshot reaches, become change
 * points of the next sparse runs. Which runs sample depends on the seed's sequence alone,
 * and a sampled run decides what it would unsampled: a seed's runs stay the same. */
void explore_sparse_learn_samples(struct explore_sparse *es, const struct ex_trace *samples);
/* The planned run's budget: es->wall_ns and its points' counts (an exit pair each). */
uint64_t explore_sparse_budget(const struct explore_sparse *es);
/* After a sparse run of `cues` cue points (the VM's sparse counters still hold its
 * decisions and hits); cpu_ns its CPU time. A probe cut while a single thread of the
 * program lived sets long_alone: that thread alone, at native speed, outlasted the
 * budget, so no whole run (traced runs are slower still) can end in one, and there is
 * nothing left to interleave where it was: the driver hands over to free execution and
 * rounds at once, instead of first stretching a traced run over half the budget left
 * (tests/guest/freecrash.c: 22 s of a 45 s budget before its free run began). */
void explore_sparse_after(struct explore_sparse *es, struct vm *vm, bool ended, uint64_t cues,
                          uint64_t cpu_ns);
/* The same from the run's counts (the VM's part aside: a spin learnt): stopped, the run
 * was stopped with no cue point; live, the program's threads alive at a cut; decisions, nhits: points fired, hits counted; hits[i]:
 * plan point i's hits (EX_MAX_PREEMPTS of them). */
void explore_sparse_after_counts(struct explore_sparse *es, bool ended, bool stopped, int live,
                                 uint64_t cues, uint64_t decisions, uint64_t nhits,
                                 const uint32_t *hits, uint64_t cpu_ns);

#endif
