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

int ex_online_lanes_begin(struct ex_online *o, const struct ex_online_params *params,
                          const struct ex_history *h, uint64_t seed, uint64_t index)
{
    struct ex_online_slot slot = ex_online_lanes_slot(h, index); /* online_portfolio.c */
    int lane = slot.lane, rc;
    if (lane == LANE_FLIP || lane == LANE_SWEEP) {
        /* Exactly the strategy alone at its lane index: its history, its seed
         * (the sweep lane's first schedule is its own run 0, lane index 0). */
        const struct ex_history *l = h->lane[lane - 1];
        struct ex_online_slot alone = ex_online_alone(slot.kind, l, l->runs);
        rc = ex_online_begin_as(o, EX_ONLINE_LANES, &alone, params, l, seed, l->runs);
        o->lane_index = l->runs;
    } else {
        /* The cycle at its own count of runs, or a nest slot (cycle 0: at every
         * nested step, no coin). */
        rc = ex_online_begin_as(o, EX_ONLINE_LANES, &slot, params, h, seed, index);
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
