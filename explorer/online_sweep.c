/* The window sweep: one preemption at a chosen window (online.h, "sweep").
 *
 * Most one-preemption bugs need one thread stopped right after its racy access
 * to a data variable (check then act, read then write, publish then fill) while
 * the others run: a window step (online.c, ex_online_window). Instead of
 * drawing where to preempt, as "window" does (d-1 random change points, the
 * second of which can undo the first by lowering the thread that had to run
 * next), the sweep walks the history's DATA variables, newest first (the
 * program's own variables race later than libc's: their pages are shared from
 * the second run on), and its schedule j preempts the thread that opens the
 * first window at one of them: after a read on even j, after a write on odd
 * ones. After every variable had both, it preempts at the n-th window of the
 * run, n = 1, 2, ... up to the mean windows per run, then starts over. Each
 * schedule has fresh random priorities; the preempted thread drops below every
 * priority, so it stays inside its window until every other thread blocked or
 * ended. */
#include "online_impl.h"
#include <stdlib.h>

static int cmp_target(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y; /* {born, addr}: newest first, then by address */
    if (a[0] != b[0])
        return a[0] < b[0] ? 1 : -1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* The history's DATA variables, newest first, at most EX_SWEEP_VARS: out[i] =
 * {born, addr}. Returns how many. */
static size_t sweep_vars(const struct ex_history *h, uint64_t out[][2])
{
    uint64_t all[4 * EX_SWEEP_VARS][2];
    size_t n = 0;
    for (size_t i = 0; h && i < h->conflict.cap; i++) {
        if (!h->conflict.used[i] || !(h->conflict.vals[i] & EX_CONFLICT_DATA))
            continue;
        const uint64_t *born = ex_u64map_get(&h->flips.born, h->conflict.keys[i]);
        uint64_t e[2] = { born ? *born : 0, h->conflict.keys[i] };
        if (n == sizeof all / sizeof all[0]) { /* full: keep the newest */
            qsort(all, n, sizeof all[0], cmp_target);
            if (cmp_target(e, all[n - 1]) >= 0)
                continue;
            n--;
        }
        all[n][0] = e[0], all[n][1] = e[1];
        n++;
    }
    qsort(all, n, sizeof all[0], cmp_target);
    if (n > EX_SWEEP_VARS)
        n = EX_SWEEP_VARS;
    for (size_t i = 0; i < n; i++)
        out[i][0] = all[i][0], out[i][1] = all[i][1];
    return n;
}

uint64_t ex_online_sweep_first(const struct ex_history *h)
{
    uint64_t oldest = UINT64_MAX;
    for (size_t i = 0; h && i < h->conflict.cap; i++) {
        if (!h->conflict.used[i] || !(h->conflict.vals[i] & EX_CONFLICT_DATA))
            continue;
        const uint64_t *born = ex_u64map_get(&h->flips.born, h->conflict.keys[i]);
        uint64_t b = born ? *born : 0;
        oldest = b < oldest ? b : oldest;
    }
    return oldest == UINT64_MAX ? oldest : oldest + 1;
}

/* The slots the portfolio gives the sweep (online.h): index 2 and every 8th
 * from 6 on, once a DATA variable is known; and, once a lock chain is known,
 * the first schedule after it (a nest: a lock-order deadlock is then near). */
static bool sweep_slot(const struct ex_history *h, uint64_t first, uint64_t index)
{
    if (h && h->nest_chain && index == h->nest_chain_from && index > 0)
        return true;
    return index >= first && (index == 2 || index % 8 == 6);
}

bool ex_online_portfolio_sweeps(const struct ex_history *h, uint64_t index)
{
    return sweep_slot(h, ex_online_sweep_first(h), index);
}

uint64_t ex_online_portfolio_sweeps_before(const struct ex_history *h, uint64_t index)
{
    uint64_t first = ex_online_sweep_first(h), n = 0;
    for (uint64_t i = 0; i < index; i++)
        n += sweep_slot(h, first, i);
    return n;
}

void ex_online_sweep_begin(struct ex_online *o, const struct ex_history *h, uint64_t ordinal)
{
    uint64_t v[EX_SWEEP_VARS][2];
    size_t n = sweep_vars(h, v);
    uint64_t k = ex_history_window_estimate(h, 1);
    if (k > EX_SWEEP_MAX_K)
        k = EX_SWEEP_MAX_K;
    o->pct.windows = true;
    o->pct.data_only = true;
    o->racy_classes = EX_CONFLICT_DATA;
    o->pct.k = k;
    o->pct.nchange = 1;
    uint64_t j = ordinal % (2 * n + k);
    o->sweep.any = j >= 2 * n;
    o->pct.change[0] = o->sweep.any ? j - 2 * n + 1 : 1;
    if (!o->sweep.any) {
        o->sweep.var = v[j / 2][1];
        o->sweep.write = (j & 1) != 0;
    }
}

bool ex_online_sweep_fires(const struct ex_online *o, const ex_pending_table *pend,
                           const struct ex_tidset *enabled, uint32_t t)
{
    if (o->pct.nfired >= o->pct.nchange || !ex_online_window(o, pend, enabled, t))
        return false;
    if (o->sweep.any)
        return o->pct.change[0] == o->windows + 1;
    return o->sweep.open_var[t] == o->sweep.var && o->sweep.open_write[t] == o->sweep.write;
}
