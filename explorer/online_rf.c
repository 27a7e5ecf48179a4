/* Online rf: mutate a corpus entry, then pos (online.h).
 *
 * Needs: a traced run (its flip falls at a racy step of the parent); from the
 * history, its corpus (the runs that showed new reads-from pairs). Receives:
 * nothing but (seed, index). */
#include "online_impl.h"
#include <stdlib.h>
#include <string.h>

int ex_online_rf_begin(struct ex_online *o, const struct ex_history *h)
{
    if (!h || h->ncorpus == 0 || !h->corpus)
        return 0;
    size_t pick = 0;
    if (ex_rng_below(&o->rng, 2)) {
        /* Half the time the newest entry: the frontier of what was learnt. */
        for (size_t i = 1; i < h->ncorpus; i++)
            if (h->corpus[i].run > h->corpus[pick].run)
                pick = i;
    } else {
        uint64_t total = 0;
        for (size_t i = 0; i < h->ncorpus; i++)
            total += h->corpus[i].weight;
        uint64_t r = ex_rng_below(&o->rng, total);
        while (pick + 1 < h->ncorpus && r >= h->corpus[pick].weight)
            r -= h->corpus[pick++].weight;
    }
    const struct ex_corpus_entry *e = &h->corpus[pick];
    if (e->n == 0 || !e->choices)
        return 0;
    o->rf.prefix = malloc(e->n * sizeof *o->rf.prefix);
    if (!o->rf.prefix)
        return -1;
    memcpy(o->rf.prefix, e->choices, e->n * sizeof *o->rf.prefix);
    o->rf.nprefix = e->n;
    o->rf.parent = pick;
    o->rf.parent_run = e->run;
    o->rf.flip = ex_rng_below(&o->rng, e->n);
    if (e->racy > 0) {
        /* Flip at a racy step of the parent (the last step at the latest). */
        o->rf.flip_racy = 1 + ex_rng_below(&o->rng, e->racy);
        o->rf.flip = e->n - 1;
    }
    o->rf.insert = ex_rng_below(&o->rng, 2) != 0;
    o->rf.mutating = true;
    return 0;
}

/* A uniformly random enabled thread other than avoid; 0 if there is none. */
static uint32_t other_than(struct ex_online *o, const struct ex_tidset *enabled, uint32_t avoid)
{
    struct ex_tidset s = *enabled;
    ex_tidset_del(&s, avoid);
    uint64_t i = ex_rng_below(&o->rng, ex_tidset_count(&s));
    for (uint32_t t; (t = ex_tidset_pop(&s)) != 0;)
        if (i-- == 0)
            return t;
    return 0;
}

uint32_t ex_online_rf_pick(struct ex_online *o, const struct ex_tidset *enabled,
                           const struct ex_tidset *fresh, const ex_pending_table *pend)
{
    uint64_t step = o->steps;
    uint32_t t = 0;
    /* pos keeps its priorities up to date all along, so that it takes over
     * from a consistent state wherever the mutation ends. */
    ex_online_pos_fresh(o, fresh);
    if (o->rf.mutating && !o->rf.flipped && !o->rf.diverged && step < o->rf.nprefix) {
        uint32_t want = o->rf.prefix[step];
        bool at_racy = o->rf.flip_racy && ex_online_racy(o, pend, enabled, want) &&
                       ++o->rf.racy_seen >= o->rf.flip_racy;
        if (!ex_tidset_has(enabled, want)) {
            o->rf.diverged = true;
        } else if (step < o->rf.flip && !at_racy) {
            t = want;
        } else {
            o->rf.flip = step;
            t = other_than(o, enabled, want);
            if (t) {
                o->rf.flipped = true;
                o->rf.resume = step; /* insert: the parent's choice here comes next */
            }
            else if (o->rf.flip + 1 < o->rf.nprefix)
                o->rf.flip++, t = want; /* no alternative here: flip at the next step */
            else
                t = want;
        }
    }
    if (!t && o->rf.flipped && o->rf.insert && o->rf.resume != step) {
        /* The parent's suffix, minus the choices whose thread cannot run now. */
        while (o->rf.resume < o->rf.nprefix && !ex_tidset_has(enabled, o->rf.prefix[o->rf.resume]))
            o->rf.resume++;
        if (o->rf.resume < o->rf.nprefix)
            t = o->rf.prefix[o->rf.resume++];
    }
    if (!t)
        t = ex_online_pos_pick(o, enabled);
    ex_online_pos_after(o, pend, t);
    return t;
}
