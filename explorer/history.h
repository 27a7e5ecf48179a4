/* What the whole-run strategies (online.h) learn across the runs of one snapshot.
 *
 * After every whole run from the snapshot the VMM calls ex_history_add_run()
 * with the run's choices (ex_online_choices), its trace of events and its
 * outcome. The history keeps:
 *
 *  - the step count of the runs (cue points chosen): PCT draws its change
 *    points over [1, k] with k = the longest run so far (Burckhardt et al. use
 *    the maximum number of steps);
 *  - the set of PAIRS seen in any run, of two kinds, both between different
 *    threads and both keyed by code location (rip), not by address or time:
 *      reads-from:    writer rip -> reader rip: a read (or RMW) and the last
 *                     write (or RMW) before it to the same 8-byte word, if
 *                     another thread made it; writer rip 0 when no write to
 *                     that word came before it in the run (the value from
 *                     before the snapshot);
 *      interleaving:  rip -> rip of a write (or RMW) and the access just
 *                     before it to the same 8-byte word, if another thread
 *                     made it (read->write and write->write orders; the
 *                     write->read order is the reads-from pair);
 *    an access is grouped by the word of its first byte (ex_word_of);
 *  - the CONFLICT variables (conflict.h: DATA, the variables of data races;
 *    SYNC, those two threads wrote atomically), accumulated over the runs,
 *    and each run's RACY accesses (conflict.h; all, and at DATA variables
 *    only): their mean estimates the racy steps the strategies count
 *    (online.h: PCT draws its change points over them);
 *  - a CORPUS of the runs that produced a pair not seen before, with their
 *    choice sequences and the number of new pairs as their weight: the rf
 *    strategy mutates them (greybox fuzzing with reads-from feedback, in the
 *    spirit of Wolff et al., ASPLOS 2024). At most EX_HISTORY_MAX_CORPUS
 *    entries: past that, a new entry replaces the one of least weight (the
 *    oldest of those), so the corpus keeps the runs that taught the most.
 *
 * Deterministic: the same runs added in the same order give the same history.
 * Pure data, no KVM; the trace is only read (any content is safe). */
#ifndef EXPLORER_HISTORY_H
#define EXPLORER_HISTORY_H
#include "conflict.h"
#include "flip.h"
#include "score.h"
#include "trace.h"
#include "u64map.h"

#define EX_HISTORY_MAX_CORPUS 256
#define EX_HISTORY_LANES 2

enum ex_pair_kind { EX_PAIR_RF = 1, EX_PAIR_INTERLEAVING = 2 };

struct ex_corpus_entry {
    uint32_t *choices;      /* thread chosen at each cue point of that run */
    size_t n;
    uint32_t weight;        /* new pairs that run found (>= 1) */
    uint64_t run;           /* its number among the runs added (0-based) */
    uint64_t racy;          /* its racy accesses (ex_history_add_run) */
};

struct ex_history {
    uint64_t runs;          /* runs added */
    uint64_t max_steps;     /* most choices in one run */
    uint64_t total_steps;   /* sum over the runs (for the average) */
    uint64_t bugs;          /* runs whose outcome was a bug (ex_outcome_is_bug) */
    uint64_t rf_pairs;      /* distinct pairs seen, per kind */
    uint64_t interleaving_pairs;
    struct ex_u64map pairs; /* keys ex_history_pair_key() */
    struct ex_corpus_entry *corpus;
    size_t ncorpus;
    struct ex_u64map conflict; /* address -> EX_CONFLICT_* bits (ATOMIC-only ones too) */
    uint64_t max_racy;      /* most racy accesses in one run */
    uint64_t max_racy_data; /* most racy accesses to DATA variables in one run */
    uint64_t total_racy, total_racy_data;   /* sums over the traced runs */
    uint64_t total_windows; /* the windows among them (conflict.h), summed */
    uint64_t traced;        /* runs added with a trace */
    struct ex_flips flips;  /* races to flip (flip.h; ex_history_learn_flips) */
    uint64_t last_racy, last_racy_data, last_windows; /* the last traced run's counts */
    bool nest_chain;        /* some run showed a lock chain (online.h, "portfolio") */
    uint64_t nest_chain_from; /* the first schedule index that knew it (runs added then) */
    bool woke;              /* some run woke a thread other than the first (online_wake.c;
                             * mutex contention too: no gate) */
    uint64_t woke_from;     /* the first schedule index that knew it (runs added then) */
    bool cond_waits;        /* some run's trace showed a condition wait (condwait.h):
                             * the portfolio's wake slots (online.h) */
    uint64_t cond_from;     /* the first schedule index that knew it */
    bool cond_older;        /* some run had one whose waker was an older thread */
    uint64_t cond_older_from; /* the first schedule index that knew it */
    bool split_updates;     /* some run's trace showed a split update of a DATA variable
                             * (splitrmw.h): the portfolio's early slot (online.h) */
    uint64_t split_from;    /* the first schedule index that knew it */
    uint64_t split_var;     /* the first such variable of that run */
    bool dchecks;           /* some run's trace showed a double check of a DATA variable
                             * (dcheck.h): the early slot too, without condition waits */
    uint64_t dcheck_from;   /* the first schedule index that knew it */
    uint64_t dcheck_var;    /* the first such variable of that run */
    struct ex_u64map pages; /* pages some run shared (ex_history_add_page): pre-shared next */
    /* The "lanes" portfolio (online.h, online_lanes.c): per learning strategy (flip,
     * sweep) the history of run 0 and of its own runs alone (NULL until run 0 was
     * learnt), and the runs each lane made (cycle, flip, sweep, nest). */
    struct ex_history *lane[EX_HISTORY_LANES];
    uint64_t lane_runs[EX_HISTORY_LANES + 2];
};

void ex_history_init(struct ex_history *h);
void ex_history_free(struct ex_history *h);

/* The key of a pair in h->pairs. */
uint64_t ex_history_pair_key(enum ex_pair_kind kind, uint64_t from_rip, uint64_t to_rip);
bool ex_history_seen(const struct ex_history *h, enum ex_pair_kind kind, uint64_t from_rip,
                     uint64_t to_rip);

/* Calls visit(ctx, kind, from, to) for every pair occurrence in the trace, in
 * trace order (a pair may be visited more than once). Returns 0, or -1 on no
 * memory (then some pairs may have been visited) or when visit returns non-zero. */
int ex_trace_pairs(const struct ex_trace *t,
                   int (*visit)(void *ctx, enum ex_pair_kind kind, uint64_t from, uint64_t to),
                   void *ctx);

/* Learns from one finished run: its choices (choices may be NULL when n is 0
 * or the VMM lost them; the run then cannot join the corpus), its trace (NULL:
 * only the step count is learnt) and its outcome. *new_pairs (if non-NULL) is
 * the number of pairs never seen before. A run with new pairs and choices
 * joins the corpus. Returns 0, or -1 on no memory (the history stays usable;
 * some of the run's pairs may have been recorded without it joining the
 * corpus). */
int ex_history_add_run(struct ex_history *h, const uint32_t *choices, size_t n,
                       const struct ex_trace *trace, enum ex_outcome outcome,
                       uint32_t *new_pairs);

/* k for the racy-step PCT: the mean racy accesses of the earlier runs,
 * rounded up, or dflt if none had any. The mean, not the most: the count
 * varies with the schedule (a waiter's loop, a thread that ran alone), and
 * change points past a run's last racy step never fire. */
uint64_t ex_history_racy_estimate(const struct ex_history *h, uint64_t dflt);

/* The same for the racy accesses to DATA variables (and their windows). */
uint64_t ex_history_data_racy_estimate(const struct ex_history *h, uint64_t dflt);

/* The same for the windows alone: the step right after a racy DATA access,
 * where the "window" strategy puts PCT's change points (online.h). */
uint64_t ex_history_window_estimate(const struct ex_history *h, uint64_t dflt);

/* The EX_CONFLICT_* bits (conflict.h) of the variable at addr, 0 if none. */
uint64_t ex_history_conflict_class(const struct ex_history *h, uint64_t addr);

/* Notes a page some run shared (the VMM pre-shares them in later runs: the
 * first toucher's accesses become cue points), at most max pages in all.
 * Returns 0, or -1 on no memory. */
int ex_history_add_page(struct ex_history *h, uint64_t page, size_t max);
/* The pages noted, ascending, at most max of them into out. Returns how many. */
size_t ex_history_pages(const struct ex_history *h, uint64_t *out, size_t max);

/* k for PCT: the most steps of an earlier run, or dflt if none was added (or
 * all were empty). */
uint64_t ex_history_step_estimate(const struct ex_history *h, uint64_t dflt);

#endif
