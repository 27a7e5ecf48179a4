/* Nested lock steps: where the "nest" strategy lowers a thread (online.h).
 *
 * Needs: a traced run (RMWs and stores of SYNC words, with their code); from
 * the history, which words are SYNC. Teaches the history its lock chains (the
 * portfolio's CHAIN fact). Receives: its ordinal, as PCT (online_pct.c).
 *
 * A lock-order deadlock needs each thread of the cycle stopped while it holds
 * its first lock and is about to take the next one: w0 holds L0, w1 holds L1,
 * w2 takes L2 and waits for L0. PCT over all racy steps meets those steps
 * about (2/k)^2 of its runs (k = 30-50 racy steps, most of them libc's own).
 * Lowering a thread at its nested lock steps (2-30 a run) builds the cycle in
 * most runs: dl-cycle3 alone in 2-3 schedules instead of 25-117.
 *
 * The VMM shows no lock operations, only accesses: a lock is taken by an RMW
 * (cmpxchg) of a SYNC word (conflict.h) and released by an RMW (xchg) or a
 * store of the same word. So each thread keeps the SYNC words it touched by
 * RMW an odd number of times (taken, not yet released): an RMW or store of a
 * held word releases it, an RMW of another word takes it. A failed cmpxchg on
 * a contended lock counts as a take and its retry as a release; that only
 * moves a few preemptions, never makes a choice invalid. */
#include "online_impl.h"

static int held_at(const struct ex_online *o, uint32_t t, uint64_t addr)
{
    for (int i = 0; i < o->nest.nheld[t]; i++)
        if (o->nest.held[t][i] == addr)
            return i;
    return -1;
}

static bool sync_word(const struct ex_online *o, const struct ex_pending *e)
{
    const uint64_t *cls = ex_u64map_get(&o->conflict, e->addr);
    return cls && (*cls & EX_CONFLICT_SYNC);
}

bool ex_online_nested(const struct ex_online *o, const ex_pending_table *pend,
                      const struct ex_tidset *enabled, uint32_t t)
{
    if (t > EX_MAX_TID || !ex_tidset_has(&pend->listed, t) || o->nest.nheld[t] == 0 ||
        ex_tidset_count(enabled) < 2)
        return false;
    const struct ex_pending *e = pend->ev[t];
    return e->known && e->kind == EX_RMW && sync_word(o, e) && held_at(o, t, e->addr) < 0;
}

void ex_online_nest_note(struct ex_online *o, const ex_pending_table *pend, uint32_t t)
{
    if (t > EX_MAX_TID || !ex_tidset_has(&pend->listed, t))
        return;
    const struct ex_pending *e = pend->ev[t];
    if (!e->known || (e->kind != EX_RMW && e->kind != EX_WRITE) || !sync_word(o, e))
        return;
    uint64_t *held = o->nest.held[t];
    uint8_t *n = &o->nest.nheld[t];
    int i = held_at(o, t, e->addr);
    if (i >= 0) { /* released */
        held[i] = held[*n - 1];
        (*n)--;
    } else if (e->kind == EX_RMW) { /* taken; past EX_NEST_HELD the oldest is forgotten */
        if (*n == EX_NEST_HELD) {
            for (int k = 1; k < EX_NEST_HELD; k++)
                held[k - 1] = held[k];
            (*n)--;
        }
        held[(*n)++] = e->addr;
    }
}

void ex_online_nest_edge(struct ex_online *o, const ex_pending_table *pend, uint32_t t)
{
    uint64_t held = o->nest.held[t][o->nest.nheld[t] - 1], taken = pend->ev[t]->addr;
    uint64_t rip = pend->ev[t]->rip;
    for (uint32_t i = 0; i < o->nest.nedges; i++)
        if (o->nest.edge[i].held == held && o->nest.edge[i].taken == taken &&
            o->nest.edge[i].tid == t && o->nest.edge[i].rip == rip)
            return;
    if (o->nest.nedges < EX_NEST_EDGES) {
        o->nest.edge[o->nest.nedges].held = held;
        o->nest.edge[o->nest.nedges].taken = taken;
        o->nest.edge[o->nest.nedges].rip = rip;
        o->nest.edge[o->nest.nedges++].tid = t;
    }
}

void ex_history_learn_nested(struct ex_history *h, const struct ex_online *o)
{
    ex_history_learn_wakes(h, o); /* the wake slots' gate (online_wake.c) */
    /* A chain: one thread takes Y holding X, another takes Z holding Y, both by
     * the same instruction (the same lock function: pthread_mutex_lock's
     * cmpxchg). Every lock-order cycle of mutexes has one (Z = X for two
     * threads). libc's own nesting (pthread_create takes the thread-list lock
     * inside another, in main only) forms none; musl's condition variables
     * chain the mutex with their internal locks, taken by other code (without
     * the rip rule bb-*, lw-*, token-ring and aba-stack got nest slots and
     * lw-wrong-waiter went from 8 to 29 schedules: docs/explore.md). */
    for (uint32_t i = 0; i < o->nest.nedges && !h->nest_chain; i++)
        for (uint32_t j = 0; j < o->nest.nedges; j++)
            if (o->nest.edge[i].tid != o->nest.edge[j].tid &&
                o->nest.edge[i].taken == o->nest.edge[j].held &&
                o->nest.edge[i].rip == o->nest.edge[j].rip) {
                h->nest_chain = true;
                h->nest_chain_from = h->runs; /* the next schedule's index */
                break;
            }
}
