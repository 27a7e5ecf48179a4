/* Online POS and random walk (online.h). */
#include "online_impl.h"

void ex_online_pos_fresh(struct ex_online *o, const struct ex_tidset *fresh)
{
    for (uint32_t t = 1; t <= EX_MAX_TID; t++)
        if (ex_tidset_has(fresh, t))
            o->pos.prio[t] = ex_rng_next(&o->rng);
}

uint32_t ex_online_pos_pick(struct ex_online *o, const struct ex_tidset *enabled)
{
    uint32_t best = 0;
    for (uint32_t t = 1; t <= EX_MAX_TID; t++)
        if (ex_tidset_has(enabled, t) && (!best || o->pos.prio[t] > o->pos.prio[best]))
            best = t;
    return best;
}

void ex_online_pos_after(struct ex_online *o, const ex_pending_table pend, uint32_t t)
{
    const struct ex_pending *e = pend[t];
    if (e && e->known) {
        for (uint32_t u = 1; u <= EX_MAX_TID; u++) {
            /* A thread not seen yet gets its priority when it is. */
            if (u == t || !pend[u] || !ex_tidset_has(&o->seen, u))
                continue;
            if (ex_pending_races(e, pend[u])) {
                o->pos.prio[u] = ex_rng_next(&o->rng);
                o->pos.redraws++;
            }
        }
    }
    o->pos.prio[t] = ex_rng_next(&o->rng); /* t's next event is a new one */
}

uint32_t ex_online_random_pick(struct ex_online *o, const struct ex_tidset *enabled)
{
    uint64_t i = ex_rng_below(&o->rng, ex_tidset_count(enabled));
    for (uint32_t t = 1; t <= EX_MAX_TID; t++)
        if (ex_tidset_has(enabled, t) && i-- == 0)
            return t;
    return 0;
}
