/* Scoring simulations and selecting the one to retire.
 *
 * A score compares lexicographically:
 *   1. the outcome: a crash (fatal signal), failed assertion (SIGABRT from
 *      assert/abort) or deadlock outranks everything -- that is the bug;
 *      normal completion and timeout (the simulation ran out of its budget)
 *      are equal and carry no bonus;
 *   2. suspicion, a weighted sum of (each count capped at weights.cap):
 *        race_adjacent x  racing access pairs (static: pair of rips) that are
 *                         temporally adjacent (at most `adjacency_window`
 *                         cue points apart) in the simulation but were not
 *                         adjacent in the recording;
 *        avio          x  unserializable interleavings (static: pattern +
 *                         three rips) hit in the simulation and not in the
 *                         recording;
 *        new_writer    x  reads that observe a different writer than the same
 *                         read in the recording (a read is named by thread,
 *                         rip and occurrence number; its writer by thread and
 *                         rip of the last write to the bytes read, or "none
 *                         in this fragment");
 *        novel_pair    x  interleaved access pairs (coverage.h) seen neither
 *                         in earlier rounds (the coverage set) nor in the
 *                         recording.
 *   3. ties: uniformly at random from the selection's seeded generator.
 *
 * Default weights: race_adjacent 100, avio 40, new_writer 10, novel_pair 5,
 * adjacency_window 2, cap 64 per component: one race made adjacent outweighs
 * a handful of incidental novelties, since it is the directed strategies'
 * stated goal and the usual precursor of a failure.
 *
 * Per round: ex_baseline_build() on the recording, ex_score_simulation() for
 * each simulation, ex_select_best(), then ex_coverage_add_trace() with the
 * recording and every simulation so the next round's novelty is relative to
 * everything seen. */
#ifndef EXPLORER_SCORE_H
#define EXPLORER_SCORE_H
#include "analysis.h"
#include "coverage.h"
#include "rng.h"

enum ex_outcome {
    EX_OUTCOME_NORMAL = 0,
    EX_OUTCOME_TIMEOUT,
    EX_OUTCOME_DEADLOCK,
    EX_OUTCOME_ASSERT,
    EX_OUTCOME_CRASH,
};

struct ex_weights {
    uint32_t race_adjacent;
    uint32_t avio;
    uint32_t new_writer;
    uint32_t novel_pair;
    uint32_t adjacency_window;
    uint32_t cap;
};

struct ex_score {
    uint8_t outcome;            /* enum ex_outcome */
    bool bug;                   /* crash, assert or deadlock */
    uint32_t races_adjacent;
    uint32_t avio_new;
    uint32_t new_writers;
    uint32_t novel_pairs;
    uint64_t suspicion;         /* the weighted sum */
    uint64_t rank;              /* bug ? EX_SCORE_BUG + suspicion : suspicion */
};

#define EX_SCORE_BUG (1ULL << 62)

/* What the recording looked like, computed once per round. */
struct ex_baseline {
    const struct ex_analysis *rec;
    struct ex_weights w;
    struct ex_u64map adjacent;  /* race keys adjacent in the recording */
    struct ex_u64map avio;      /* avio keys of the recording */
    struct ex_u64map pairs;     /* interleaved pairs of the recording */
    struct ex_u64map reads;     /* read name -> writer name */
};

void ex_weights_default(struct ex_weights *w);
bool ex_outcome_is_bug(enum ex_outcome o);
const char *ex_outcome_name(enum ex_outcome o);

/* w NULL = defaults. Returns 0 or -1. */
int ex_baseline_build(struct ex_baseline *b, const struct ex_analysis *rec,
                      const struct ex_weights *w);
void ex_baseline_free(struct ex_baseline *b);

/* Scores one simulation's trace. cov may be NULL (no earlier rounds).
 * Returns EX_OK, EX_ERR_INVALID (sim is not a valid trace) or EX_ERR_NOMEM. */
int ex_score_simulation(const struct ex_baseline *b, const struct ex_trace *sim,
                        enum ex_outcome outcome, const struct ex_coverage *cov,
                        struct ex_score *sc);
/* <0, 0, >0 like strcmp, by rank. */
int ex_score_compare(const struct ex_score *x, const struct ex_score *y);
/* Index of the best score; ties broken uniformly with rng. n must be > 0. */
size_t ex_select_best(const struct ex_score *scores, size_t n, struct ex_rng *rng);

#endif
