/* The window sweep: one preemption at a chosen window (online.h, "sweep").
 *
 * Needs: a traced run (the window after a racy DATA access, and who opened it);
 * from the history, its DATA variables with the run that first showed each
 * racing, and the mean windows per run. Receives: its ordinal, the target
 * (EX_SWEEP_PAIR_OF and EX_SWEEP_SPLIT name one directly: online_impl.h).
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
 * ended. A read target also defers the writers of its variable until it fired
 * (lw-flag: the setter set `ready` first in half the runs, and the waiter's
 * check then opened no window worth preempting). */
#include "online_impl.h"
#include <stdlib.h>

/* A DATA variable in the same 8-byte word as a SYNC or atomic one is a field of
 * a lock or condition variable (musl's mutex type next to its lock word): its
 * window is libc's, and it comes after the program's own variables. */
static bool lock_field(const struct ex_history *h, uint64_t addr)
{
    for (uint64_t a = addr & ~7ull; a < (addr & ~7ull) + 8; a++) {
        const uint64_t *cls = ex_u64map_get(&h->conflict, a);
        if (cls && (*cls & (EX_CONFLICT_SYNC | EX_CONFLICT_ATOMIC)))
            return true;
    }
    return false;
}

#define EX_SWEEP_OWN (1ull << 40) /* rank bit: not a lock field */

static int cmp_target(const void *x, const void *y)
{
    /* {rank, addr}: program variables before lock fields, newest first, then by
     * address */
    const uint64_t *a = x, *b = y;
    if (a[0] != b[0])
        return a[0] < b[0] ? 1 : -1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* The history's DATA variables, lock fields last, newest first, at most
 * EX_SWEEP_VARS: out[i] = {rank, addr}. Returns how many. */
static size_t sweep_vars(const struct ex_history *h, uint64_t out[][2])
{
    uint64_t all[4 * EX_SWEEP_VARS][2];
    size_t n = 0;
    for (size_t i = 0; h && i < h->conflict.cap; i++) {
        if (!h->conflict.used[i] || !(h->conflict.vals[i] & EX_CONFLICT_DATA))
            continue;
        const uint64_t *born = ex_u64map_get(&h->flips.born, h->conflict.keys[i]);
        uint64_t key = h->conflict.keys[i];
        uint64_t e[2] = { (born ? *born & (EX_SWEEP_OWN - 1) : 0) |
                              (lock_field(h, key) ? 0 : EX_SWEEP_OWN),
                          key };
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

static uint64_t sweep_k(const struct ex_history *h)
{
    uint64_t k = ex_history_window_estimate(h, 1);
    return k > EX_SWEEP_MAX_K ? EX_SWEEP_MAX_K : k;
}

uint64_t ex_online_sweep_targets(const struct ex_history *h)
{
    uint64_t v[EX_SWEEP_VARS][2];
    return 2 * sweep_vars(h, v) + sweep_k(h);
}

void ex_online_sweep_begin(struct ex_online *o, const struct ex_history *h, uint64_t ordinal)
{
    uint64_t v[EX_SWEEP_VARS][2];
    size_t n = sweep_vars(h, v);
    uint64_t k = sweep_k(h);
    o->pct.windows = true;
    o->pct.data_only = true;
    o->racy_classes = EX_CONFLICT_DATA;
    o->pct.k = k;
    o->pct.nchange = 1;
    uint64_t j = ordinal % (EX_SWEEP_PER_VAR * n + k);
    if ((ordinal & EX_SWEEP_PAIR_OF) && n > 0) { /* the pair of the rank-th newest variable */
        uint64_t rank = ordinal & ~EX_SWEEP_PAIR_OF;
        j = (rank < n ? rank : n - 1) * EX_SWEEP_PER_VAR + EX_SWEEP_PER_VAR - 1;
    }
    if ((ordinal & EX_SWEEP_SPLIT) && h && (h->split_updates || h->dchecks)) { /* the early slot */
        o->sweep.var = (ordinal & 3) == 2 ? h->split_var : h->dcheck_var;
        o->sweep.write = (ordinal & 3) == 1;
        o->sweep.pair = (ordinal & 3) == 2;
        o->pct.nchange = o->sweep.pair ? 2 : 1;
        o->pct.change[0] = 1;
        return;
    }
    o->sweep.any = j >= EX_SWEEP_PER_VAR * n;
    o->pct.change[0] = o->sweep.any ? j - EX_SWEEP_PER_VAR * n + 1 : 1;
    if (!o->sweep.any) {
        o->sweep.var = v[j / EX_SWEEP_PER_VAR][1];
        o->sweep.write = j % EX_SWEEP_PER_VAR == 1;
        /* The pair: the read target, then the first write window of the same
         * variable by another thread (a lost increment that must also land
         * before the other's decrement: rc-uaf). */
        o->sweep.pair = j % EX_SWEEP_PER_VAR == 2;
        o->pct.nchange = o->sweep.pair ? 2 : 1;
    }
}

bool ex_online_sweep_fires(const struct ex_online *o, const ex_pending_table *pend,
                           const struct ex_tidset *enabled, uint32_t t)
{
    if (o->pct.nfired >= o->pct.nchange || !ex_online_window(o, pend, enabled, t))
        return false;
    if (o->sweep.any)
        return o->pct.change[0] == o->windows + 1;
    if (o->sweep.pair && o->pct.nfired == 1) /* the pair's second: another thread's write */
        return o->sweep.open_var[t] == o->sweep.var && o->sweep.open_write[t] &&
               t != o->pct.fired_tid[0];
    return o->sweep.open_var[t] == o->sweep.var && o->sweep.open_write[t] == o->sweep.write;
}

bool ex_online_sweep_defers(const struct ex_online *o, const ex_pending_table *pend,
                            const struct ex_tidset *enabled, uint32_t t)
{
    if (o->sweep.any || o->sweep.write || o->pct.nfired > 0 || ex_tidset_count(enabled) < 2 ||
        !ex_tidset_has(&pend->listed, t))
        return false;
    const struct ex_pending *e = pend->ev[t];
    return e->known && (e->kind == EX_WRITE || e->kind == EX_RMW) && e->addr == o->sweep.var;
}
