/* The "lanes" portfolio: additive slots (online.h, "lanes").
 *
 * In "portfolio" every strategy learns from every run, so a sweep slot inserted
 * before a flip changes what the flip learnt (the pages it pre-shares, the
 * variables it knows): atom-pair's third schedule became its 13th-23rd. Here
 * each learning strategy runs in a LANE: flip learns from run 0 and its own
 * runs only, sweep from its own runs only (a history of their own, pages
 * included; the sweep's lane begins with its own run 0), and their
 * schedule is the one they would make alone at that lane index. So the lane's
 * k-th schedule is its k-th schedule alone, at a known index of the portfolio,
 * and the portfolio's schedules to bug follow from the per-strategy columns
 * (scripts/bench/lanes-predict.py picks the slot pattern from them). The cycle
 * (pct, random, pos, window, rf; nest once a lock chain is known) learns from
 * every run, as in "portfolio". */
#include "online_impl.h"
#include <stdlib.h>
#include <string.h>

/* Which lane each index runs (C cycle, F flip, S sweep): EX_LANES_PREFIX for
 * the first indexes, then EX_LANES_PERIOD over and over. Index 0 is the
 * cycle's (pct): run 0, which every lane learns. Chosen with
 * scripts/bench/lanes-predict.py over the per-strategy columns (docs/explore.md). */
#define EX_LANES_PREFIX "CSSSFFFS"
#define EX_LANES_PERIOD "FSFC"

enum { LANE_CYCLE = 0, LANE_FLIP = 1, LANE_SWEEP = 2, LANE_NEST = 3 };

/* A sweep lane gives its slots back after this many passes over its targets. */
#define EX_LANES_SWEEP_PASSES 2u

static char slot_at(uint64_t index)
{
    const uint64_t np = sizeof EX_LANES_PREFIX - 1, nq = sizeof EX_LANES_PERIOD - 1;
    return index < np ? EX_LANES_PREFIX[index] : EX_LANES_PERIOD[(index - np) % nq];
}

/* Whether the sweep lane is spent: it went EX_LANES_SWEEP_PASSES times through its
 * targets (online_sweep.c: every DATA variable twice and the n-th windows), or
 * its runs showed no DATA variable at all. */
static bool sweep_spent(const struct ex_history *lane)
{
    /* Its schedules since the first that knew a DATA variable. Knowing none after
     * its first run, it has no window to preempt at (dl-abba: three sweeps "not
     * reached" before the flips that led to the deadlock). */
    uint64_t first = ex_online_sweep_first(lane);
    if (first == UINT64_MAX)
        return lane->runs >= 1;
    return lane->runs > first &&
           lane->runs - first >= EX_LANES_SWEEP_PASSES * ex_online_sweep_targets(lane);
}

/* The lane schedule `index` runs in (online.h): a flip slot while the flip lane
 * has an untried flip, a sweep slot until the sweep is spent (nest once a lock
 * chain is known, and the first schedule after it), else the cycle. */
static int lane_of(const struct ex_history *h, uint64_t index)
{
    if (!h)
        return LANE_CYCLE;
    if (h->nest_chain && index == h->nest_chain_from && index > 0)
        return LANE_NEST;
    char c = slot_at(index);
    if (c == 'S' && h->nest_chain)
        return LANE_NEST;
    if (c == 'S' && h->lane[LANE_SWEEP - 1] && !sweep_spent(h->lane[LANE_SWEEP - 1]))
        return LANE_SWEEP;
    if (c == 'F' && h->lane[LANE_FLIP - 1] && ex_flips_next(&h->lane[LANE_FLIP - 1]->flips) >= 0)
        return LANE_FLIP;
    return LANE_CYCLE;
}

int ex_online_lanes_begin(struct ex_online *o, const struct ex_online_params *params,
                          const struct ex_history *h, uint64_t seed, uint64_t index)
{
    int lane = lane_of(h, index), rc;
    if (lane == LANE_FLIP || lane == LANE_SWEEP) {
        /* Exactly the strategy alone at its lane index: its history, its seed
         * (the sweep lane's first schedule is its own run 0, lane index 0). */
        const struct ex_history *l = h->lane[lane - 1];
        rc = ex_online_begin_as(o, EX_ONLINE_LANES,
                                lane == LANE_FLIP ? EX_ONLINE_FLIP : EX_ONLINE_SWEEP, 0,
                                params, l, seed, l->runs);
        o->lane_index = l->runs;
    } else if (lane == LANE_NEST) {
        /* A lock-order cycle may be near: every nested step (cycle 0, no coin). */
        rc = ex_online_begin_as(o, EX_ONLINE_LANES, EX_ONLINE_NEST, 0, params, h, seed, index);
    } else {
        uint64_t cycle = h ? h->lane_runs[LANE_CYCLE] : 0;
        enum ex_online_kind k = ex_online_resolve(EX_ONLINE_PORTFOLIO, cycle);
        if (h && h->nest_chain && (cycle % 8 == 1 || cycle % 8 == 6))
            k = EX_ONLINE_NEST;
        rc = ex_online_begin_as(o, EX_ONLINE_LANES, k, cycle, params, h, seed, index);
    }
    o->index = index;
    o->lane = (uint8_t)lane;
    return rc;
}

static int learn_pages(struct ex_history *h, const struct ex_u64map *pages)
{
    int rc = 0;
    for (size_t i = 0; pages && i < pages->cap; i++)
        if (pages->used[i] && ex_history_add_page(h, pages->keys[i], EX_MAX_SHARED_PAGES) != 0)
            rc = -1;
    return rc;
}

/* Learns the run into one history; own: o's flip is one of h's. */
static int learn_one(struct ex_history *h, const struct ex_online *o, const struct ex_trace *trace,
                     enum ex_outcome outcome, const struct ex_u64map *pages, bool own)
{
    size_t n = 0;
    const uint32_t *ch = ex_online_choices(o, &n);
    int rc = ex_history_add_run(h, ch, n, trace, outcome, NULL);
    if (ex_online_learn_flips(h, o, own) < 0)
        rc = -1;
    return learn_pages(h, pages) != 0 ? -1 : rc;
}

int ex_online_learn(struct ex_history *h, const struct ex_online *o, const struct ex_trace *trace,
                    enum ex_outcome outcome, const struct ex_u64map *pages)
{
    if (!h || !o)
        return 0;
    bool lanes = o->asked == EX_ONLINE_LANES;
    bool in_lane = lanes && (o->lane == LANE_FLIP || o->lane == LANE_SWEEP);
    bool run0 = lanes && h->runs == 0;
    int rc = learn_one(h, o, trace, outcome, pages, !in_lane);
    if (lanes && o->lane < EX_HISTORY_LANES + 2)
        h->lane_runs[o->lane]++;
    for (int i = 0; run0 && i < EX_HISTORY_LANES; i++) {
        struct ex_history *l = malloc(sizeof *l);
        if (!l) {
            rc = -1; /* no lane: its slots go to the cycle */
            continue;
        }
        ex_history_init(l);
        h->lane[i] = l;
        /* The flip lane starts from run 0 (pct: flips of its races came 2-5
         * schedules sooner than from pos); the sweep from its own run 0, a run
         * without preemptions, whose variables made better first targets (alone:
         * aba-stack 2 2 16 against 9 6 6 after a pct run 0). */
        if (i == LANE_FLIP - 1 && learn_one(l, o, trace, outcome, pages, true) != 0)
            rc = -1;
    }
    if (in_lane && h->lane[o->lane - 1] &&
        learn_one(h->lane[o->lane - 1], o, trace, outcome, pages, true) != 0)
        rc = -1;
    return rc;
}

size_t ex_online_pages(const struct ex_online *o, const struct ex_history *h, uint64_t *out,
                       size_t max)
{
    const struct ex_history *from = h;
    if (h && o->asked == EX_ONLINE_LANES && (o->lane == LANE_FLIP || o->lane == LANE_SWEEP) &&
        h->lane[o->lane - 1])
        from = h->lane[o->lane - 1];
    return ex_history_pages(from, out, max);
}
