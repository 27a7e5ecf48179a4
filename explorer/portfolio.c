/* The default strategy of rounds: a reproducible mix of all the others, each
 * proposing schedules over one recorded fragment's trace (analysis.h). Whole
 * runs choose online instead; their portfolio is online_portfolio.c's table.
 *
 * K schedules are shared out by fixed weights (largest remainder, ties to the
 * earlier strategy):
 *
 *     jinx 3, race 2, pct 2, pctvb 1, bounded 1, random 1
 *
 * Strategies run in the order jinx, race, pctvb, bounded, pct, random; what
 * one cannot fill (no shared location, no race, few distinct interleavings)
 * is carried over to the next, and pct and random, which can always produce
 * something new on a nontrivial trace, come last to absorb it. Each strategy
 * draws from its own generator split off the portfolio's in a fixed order, so
 * one strategy's draws never shift another's. Schedules equal to the recorded
 * order (nothing new to learn) and duplicates are dropped.
 *
 * bounded gets a window of 12 cue points (c = params' preemptions) placed
 * around a racing access or, failing that, an access to a shared location,
 * chosen at random: exhaustive search pays off only where threads interact. */
#include "strategy.h"
#include <string.h>

#define BOUNDED_WINDOW 12

static const struct {
    enum ex_strategy s;
    uint32_t weight;
} mix[] = {
    { EX_STRAT_JINX, 3 },  { EX_STRAT_RACE, 2 },    { EX_STRAT_PCTVB, 1 },
    { EX_STRAT_BOUNDED, 1 }, { EX_STRAT_PCT, 2 },   { EX_STRAT_RANDOM, 1 },
};
#define NMIX (sizeof mix / sizeof mix[0])

static uint32_t window_anchor(const struct ex_analysis *a, struct ex_rng *rng)
{
    if (a->nraces)
        return a->races[ex_rng_below(rng, a->nraces)].a;
    if (a->nlocs)
        return a->locs[ex_rng_below(rng, a->nlocs < 4 ? a->nlocs : 4)].first;
    return (uint32_t)ex_rng_below(rng, a->tr->n);
}

int ex_portfolio_generate(const struct ex_analysis *a, const struct ex_params *p,
                          struct ex_rng *rng, struct ex_schedule_set *out)
{
    uint32_t K = p->max_schedules, total = 0, quota[NMIX];
    struct ex_rng sub[NMIX];
    for (size_t i = 0; i < NMIX; i++) {
        sub[i] = ex_rng_split(rng);
        total += mix[i].weight;
    }
    /* Largest remainder apportionment. */
    uint32_t given = 0, rem[NMIX];
    for (size_t i = 0; i < NMIX; i++) {
        quota[i] = K * mix[i].weight / total;
        rem[i] = K * mix[i].weight % total;
        given += quota[i];
    }
    while (given < K) {
        size_t best = 0;
        for (size_t i = 1; i < NMIX; i++)
            if (rem[i] > rem[best])
                best = i;
        quota[best]++;
        rem[best] = 0;
        given++;
    }

    struct ex_schedule rec;
    struct ex_schedule_set tmp;
    ex_schedule_init(&rec);
    ex_schedule_set_init(&tmp);
    if (ex_recorded_schedule(a, &rec) != 0)
        goto fail;
    int made = 0;
    uint32_t carry = 0;
    for (size_t i = 0; i < NMIX; i++) {
        struct ex_params q = *p;
        q.max_schedules = quota[i] + carry;
        if (q.max_schedules == 0)
            continue;
        /* Ask for a few extra: some may turn out to be duplicates of another
         * strategy's or of the recording. */
        q.max_schedules += 2;
        if (mix[i].s == EX_STRAT_BOUNDED && q.bounded_window_len == 0) {
            uint32_t at = window_anchor(a, &sub[i]);
            q.bounded_window_start = at > BOUNDED_WINDOW / 2 ? at - BOUNDED_WINDOW / 2 : 0;
            q.bounded_window_len = BOUNDED_WINDOW;
        }
        ex_params_sanitize(&q);
        if (ex_strategy_fn_of(mix[i].s)(a, &q, &sub[i], &tmp) < 0)
            goto fail;
        uint32_t took = 0;
        for (size_t k = 0; k < tmp.n && took < quota[i] + carry; k++) {
            if (ex_schedule_equal(&tmp.v[k], &rec))
                continue;
            int rc = ex_schedule_set_add_unique(out, &tmp.v[k]);
            if (rc < 0)
                goto fail;
            took += (uint32_t)rc;
        }
        made += (int)took;
        carry = quota[i] + carry - took;
        ex_schedule_set_free(&tmp);
    }
    ex_schedule_free(&rec);
    return made;
fail:
    ex_schedule_free(&rec);
    ex_schedule_set_free(&tmp);
    return -1;
}
