/* Online POS and random walk (online.h).
 *
 * Needs: a traced run (pos redraws the priorities of the threads whose pending
 * access races with the one just made; the walk switches at racy steps only);
 * from the history, the walk only: its conflict variables. Receives: nothing
 * but (seed, index). */
#include "online_impl.h"

void ex_online_pos_fresh(struct ex_online *o, const struct ex_tidset *fresh)
{
    struct ex_tidset it = *fresh;
    for (uint32_t t; (t = ex_tidset_pop(&it)) != 0;)
        o->pos.prio[t] = ex_rng_next(&o->rng);
}

uint32_t ex_online_pos_pick(struct ex_online *o, const struct ex_tidset *enabled)
{
    struct ex_tidset it = *enabled;
    uint32_t best = 0;
    for (uint32_t t; (t = ex_tidset_pop(&it)) != 0;)
        if (!best || o->pos.prio[t] > o->pos.prio[best])
            best = t;
    return best;
}

void ex_online_pos_after(struct ex_online *o, const ex_pending_table *pend, uint32_t t)
{
    if (ex_tidset_has(&pend->listed, t) && pend->ev[t]->known) {
        const struct ex_pending *e = pend->ev[t];
        /* A thread not seen yet gets its priority when it is. */
        struct ex_tidset it = pend->listed;
        for (int i = 0; i < 4; i++)
            it.w[i] &= o->seen.w[i];
        ex_tidset_del(&it, t);
        for (uint32_t u; (u = ex_tidset_pop(&it)) != 0;)
            if (ex_pending_races(e, pend->ev[u])) {
                o->pos.prio[u] = ex_rng_next(&o->rng);
                o->pos.redraws++;
            }
    }
    o->pos.prio[t] = ex_rng_next(&o->rng); /* t's next event is a new one */
}

uint32_t ex_online_random_pick(struct ex_online *o, const struct ex_tidset *enabled,
                               const ex_pending_table *pend)
{
    uint32_t last = o->walk.last;
    /* The same thread goes on until its next step is racy: a switch anywhere
     * else reorders nothing. */
    if (last && ex_tidset_has(enabled, last) && !ex_online_spinning(o, pend, last) &&
        !ex_online_racy(o, pend, enabled, last))
        return last;
    /* A spinning thread (re-reading what it read last) gives way: its read
     * sees nothing new until someone else runs. */
    struct ex_tidset it = *enabled, awake = *enabled, scan = *enabled;
    for (uint32_t t; (t = ex_tidset_pop(&scan)) != 0;)
        if (ex_online_spinning(o, pend, t))
            ex_tidset_del(&awake, t);
    if (!ex_tidset_empty(&awake))
        it = awake;
    uint64_t i = ex_rng_below(&o->rng, ex_tidset_count(&it));
    for (uint32_t t; (t = ex_tidset_pop(&it)) != 0;)
        if (i-- == 0)
            return o->walk.last = t;
    return 0;
}
