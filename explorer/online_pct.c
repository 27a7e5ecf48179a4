/* Online PCT: priorities as a ranked list (online.h; also window, nest, sweep
 * and wake rank threads with it).
 *
 * Needs: a traced run (each thread's pending access at every cue point: only a
 * racy step can change an order); from the history, its conflict variables and
 * the mean racy steps (or windows) per run, k. Receives: its ordinal (odd ones
 * count data races only; nest: lower at every nested step, or by a coin). */
#include "online_impl.h"
#include <stdlib.h>
#include <string.h>

void ex_online_pct_begin(struct ex_online *o, const struct ex_history *h, uint64_t nth)
{
    /* Every other PCT schedule counts the steps at data races only: most bugs
     * are there, and libc's internal locks would otherwise take most of k. */
    o->pct.windows = o->kind == EX_ONLINE_WINDOW;
    o->pct.nest = o->kind == EX_ONLINE_NEST;
    if (o->pct.nest) {
        o->pct.nest_coin = (nth & 1) != 0;
        return;
    }
    o->pct.data_only = o->pct.windows || (nth & 1) != 0;
    if (o->pct.data_only)
        o->racy_classes = EX_CONFLICT_DATA;
    uint64_t k = o->pct.windows     ? ex_history_window_estimate(h, o->p.default_steps)
                 : o->pct.data_only ? ex_history_data_racy_estimate(h, o->p.default_steps)
                                    : ex_history_racy_estimate(h, o->p.default_steps);
    uint32_t want = o->p.depth - 1;
    o->pct.k = k;
    if (want > k)
        want = (uint32_t)k;
    /* Rejection sampling of distinct points: want <= 31, so a retry is rare
     * unless k is tiny, and then it is cheap. */
    for (uint32_t i = 0; i < want;) {
        uint64_t c = 1 + ex_rng_below(&o->rng, k);
        bool dup = false;
        for (uint32_t j = 0; j < i; j++)
            dup |= o->pct.change[j] == c;
        if (!dup)
            o->pct.change[i++] = c;
    }
    o->pct.nchange = want;
    qsort(o->pct.change, want, sizeof o->pct.change[0], ex_u64_cmp);
}

void ex_online_pct_insert(struct ex_online *o, uint32_t pos, uint32_t t)
{
    uint32_t *ord = o->pct.order;
    memmove(ord + pos + 1, ord + pos, (o->pct.nthreads - pos) * sizeof *ord);
    ord[pos] = t;
    o->pct.nthreads++;
}

void ex_online_pct_lower(struct ex_online *o, uint32_t t)
{
    uint32_t *ord = o->pct.order, n = o->pct.nthreads, i = 0;
    while (i < n && ord[i] != t)
        i++;
    if (i == n)
        return;
    memmove(ord + i, ord + i + 1, (n - i - 1) * sizeof *ord);
    ord[n - 1] = t;
    if (i < o->pct.nhigh)
        o->pct.nhigh--;
}

/* The highest-priority enabled thread that is not spinning (re-reading what
 * it read last: nothing changes until another thread writes), or the highest
 * if all spin. Skipping a spin's read changes no outcome and keeps a
 * high-priority waiter from burning cue points while the holder cannot run. */
uint32_t ex_online_pct_highest(const struct ex_online *o, const struct ex_tidset *enabled,
                               const ex_pending_table *pend)
{
    uint32_t first = 0;
    for (uint32_t i = 0; i < o->pct.nthreads; i++) {
        uint32_t t = o->pct.order[i];
        if (!ex_tidset_has(enabled, t))
            continue;
        if (!ex_online_spinning(o, pend, t))
            return t;
        if (!first)
            first = t;
    }
    return first;
}

uint32_t ex_online_pct_pick(struct ex_online *o, const struct ex_tidset *enabled,
                            const struct ex_tidset *fresh, const ex_pending_table *pend)
{
    /* New threads in ascending tid order, each at a uniformly random rank
     * among the threads never lowered. */
    struct ex_tidset it = *fresh;
    for (uint32_t t; (t = ex_tidset_pop(&it)) != 0;)
        if (o->pct.nthreads <= EX_MAX_TID) {
            ex_online_pct_insert(o, (uint32_t)ex_rng_below(&o->rng, o->pct.nhigh + 1), t);
            o->pct.nhigh++;
        }
    uint32_t t = ex_online_pct_highest(o, enabled, pend);
    /* The sweep's read target: a thread about to write the variable waits (drops
     * below every priority) until the target fired, so the read it races with
     * comes first. At most once per thread and step. */
    for (uint32_t i = 0; o->kind == EX_ONLINE_SWEEP && i < o->pct.nthreads &&
                         ex_online_sweep_defers(o, pend, enabled, t); i++) {
        ex_online_pct_lower(o, t);
        t = ex_online_pct_highest(o, enabled, pend);
    }
    /* Change points count racy steps only (window steps for "window"): a
     * preemption anywhere else orders nothing differently. "nest" lowers a
     * thread at every nested lock step instead (every other schedule at each
     * with probability 1/2): a cycle of n locks needs n-1 of them, and the
     * lowered threads keep their first locks while the others take theirs. */
    bool at_change = o->kind == EX_ONLINE_SWEEP ? ex_online_sweep_fires(o, pend, enabled, t) :
                     (o->pct.nest || o->pct.nfired < o->pct.nchange) &&
                     (o->pct.nest      ? ex_online_nested(o, pend, enabled, t) &&
                                           (!o->pct.nest_coin || ex_rng_below(&o->rng, 2) == 0)
                      : o->pct.windows ? o->pct.change[o->pct.nfired] == o->windows + 1 &&
                                           ex_online_window(o, pend, enabled, t)
                                     : o->pct.change[o->pct.nfired] == o->racy + 1 &&
                                           ex_online_racy(o, pend, enabled, t));
    if (at_change) {
        if (o->pct.nfired < EX_PCT_MAX_DEPTH) {
            o->pct.fired_step[o->pct.nfired] = o->steps + 1;
            o->pct.fired_tid[o->pct.nfired] = t;
        }
        o->pct.nfired++;
        ex_online_pct_lower(o, t);
        t = ex_online_pct_highest(o, enabled, pend);
    }
    return t;
}
