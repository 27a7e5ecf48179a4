/* What rounds achieve, for `jinxctl status` and scripts/bench/rounds-progress.sh: how
 * many rounds ran simulations, why the others ran none, how each recording ended, and
 * the medians over the last ROUND_PROGRESS_RING rounds of the cue points a fragment
 * recorded, the simulations a round ran and the cue points a simulation reached. Plain
 * data (round_stats holds one, copied under the driver's lock); no locking here. */
#ifndef JINX_ROUND_PROGRESS_H
#define JINX_ROUND_PROGRESS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROUND_PROGRESS_RING 256
#define ROUND_PROGRESS_HIST 65      /* simulations per round: 0..64 (ROUND_MAX_SIMS) */

/* Why a round ran no simulation (the first that applies). */
enum round_nosim {
    ROUND_NOSIM_ENDED,      /* the recording ended the fragment (the program's end or a
                               bug), or the program ended during the round (a timeout) */
    ROUND_NOSIM_UNUSABLE,   /* the recorded trace was not usable (analysis refused it) */
    ROUND_NOSIM_NONE,       /* the strategy proposed no schedule (nothing to reorder) */
    ROUND_NOSIM_OTHER,      /* the snapshot could not be restored, or the program ended */
    ROUND_NOSIM_KINDS
};

/* One round, as round.c saw it. */
struct round_progress_round {
    bool unrecorded;        /* a sparse round that made no recording (round.c): its 0 cue
                               points are not a sample of the medians */
    uint64_t rec_cues;      /* cue points the recording made */
    bool rec_cut;           /* its wall budget ran out: cut at the next cue point */
    bool rec_stopped;       /* no cue point within five budgets: a thread stopped mid-way */
    unsigned sims;          /* simulations run */
    uint64_t sim_cues;      /* the median cue points a simulation reached (0: none) */
    enum round_nosim why;   /* when sims == 0 */
};

struct round_progress {
    uint64_t rounds, with_sims;
    uint64_t nosim[ROUND_NOSIM_KINDS];
    uint64_t rec_cut, rec_stopped;
    uint64_t hist[ROUND_PROGRESS_HIST];         /* rounds by simulations run */
    uint64_t ring_cues[ROUND_PROGRESS_RING];    /* the last rounds, oldest overwritten
                                                 * (UINT64_MAX: no recording) */
    uint32_t ring_sims[ROUND_PROGRESS_RING];
    uint64_t ring_sim_cues[ROUND_PROGRESS_RING];
};

void round_progress_add(struct round_progress *p, const struct round_progress_round *r);
/* The median (lower of the two middle values) of v[0..n), 0 for n == 0; v is not
 * changed. */
uint64_t round_progress_median(const uint64_t *v, size_t n);
/* Medians over the ring: cue points per recording, simulations per round, cue points
 * per simulation (over rounds that ran any). */
void round_progress_medians(const struct round_progress *p, uint64_t *cues, uint64_t *sims,
                            uint64_t *sim_cues);
/* `"progress":{...}` (with its leading comma) into buf at *used; false when short. */
bool round_progress_json(const struct round_progress *p, char *buf, size_t len, size_t *used);
const char *round_nosim_name(enum round_nosim w);

#endif
