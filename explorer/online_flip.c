/* Online flip: replay a parent run up to a racing access, hold its thread until
 * another thread made the access it races with, then pos (online.h, flip.h). */
#include "online_impl.h"
#include <stdlib.h>
#include <string.h>

/* Hold at most this many steps (or the parent's length, if longer): a thread
 * held while the others only spin must go on some time. */
#define EX_FLIP_HOLD 1000u

enum { FOLLOW = 0, HOLD, RELEASE, FREE };

int ex_online_flip_begin(struct ex_online *o, const struct ex_history *h)
{
    o->flip.cand = -1;
    o->flip.phase = FREE;
    long c = h ? ex_flips_next(&h->flips) : -1;
    if (c < 0)
        return 0;
    const struct ex_flip *fl = &h->flips.v[c];
    const uint32_t *pc = h->flips.parents[fl->parent].choices;
    size_t pn = h->flips.parents[fl->parent].n;
    if (!pc || fl->step >= pn)
        return 0;
    o->flip.prefix = malloc(pn * sizeof *o->flip.prefix);
    if (!o->flip.prefix)
        return -1;
    memcpy(o->flip.prefix, pc, pn * sizeof *pc);
    o->flip.nprefix = pn;
    o->flip.cand = c;
    o->flip.at = fl->step;
    o->flip.t1 = fl->t1;
    o->flip.e1 = (struct ex_pending){.tid = fl->t1, .kind = fl->kind, .addr = fl->addr,
                                     .size = fl->size, .known = true};
    o->flip.limit = pn > EX_FLIP_HOLD ? pn : EX_FLIP_HOLD;
    o->flip.phase = FOLLOW;
    return 0;
}

/* Hold: the parent's next choice among the enabled threads other than t1 (its
 * own order of the others' steps, so that they reach e2 as they did), pos once
 * the parent's choices run out. */
static uint32_t hold_pick(struct ex_online *o, const struct ex_tidset *others)
{
    const uint32_t *p = o->flip.prefix;
    while (o->flip.cursor < o->flip.nprefix &&
           (p[o->flip.cursor] == o->flip.t1 || !ex_tidset_has(others, p[o->flip.cursor])))
        o->flip.cursor++;
    if (o->flip.cursor < o->flip.nprefix)
        return p[o->flip.cursor++];
    return ex_online_pos_pick(o, others);
}

uint32_t ex_online_flip_pick(struct ex_online *o, const struct ex_tidset *enabled,
                             const struct ex_tidset *fresh, const ex_pending_table *pend)
{
    uint64_t step = o->steps;
    uint32_t t = 0, t1 = o->flip.t1;
    ex_online_pos_fresh(o, fresh); /* pos takes over from a consistent state */
    if (o->flip.phase == FOLLOW && step < o->flip.at) {
        uint32_t want = o->flip.prefix[step];
        if (ex_tidset_has(enabled, want))
            t = want;
        else
            o->flip.diverged = true, o->flip.phase = FREE;
    } else if (o->flip.phase == FOLLOW) {
        o->flip.phase = ex_tidset_has(enabled, t1) ? HOLD : FREE;
        o->flip.diverged = o->flip.phase == FREE;
        o->flip.cursor = step;
    }
    if (o->flip.phase == HOLD) {
        struct ex_tidset others = *enabled;
        ex_tidset_del(&others, t1);
        if (ex_tidset_empty(&others) || o->flip.held >= o->flip.limit) {
            t = t1; /* nobody else can go (or for too long): the flip failed */
            o->flip.phase = FREE;
        } else {
            t = hold_pick(o, &others);
            o->flip.held++;
            if (ex_tidset_has(&pend->listed, t) && ex_pending_races(pend->ev[t], &o->flip.e1)) {
                o->flip.reversed = true;
                o->flip.phase = RELEASE;
            }
        }
    } else if (o->flip.phase == RELEASE) {
        /* t1 right after e2: the smallest change that reverses the race. */
        o->flip.phase = FREE;
        if (ex_tidset_has(enabled, t1))
            t = t1;
    }
    if (!t)
        t = ex_online_pos_pick(o, enabled);
    ex_online_pos_after(o, pend, t);
    return t;
}

void ex_online_record_step(struct ex_online *o, const ex_pending_table *pend, uint32_t t)
{
    if (o->reclost)
        return;
    if (o->nrec == o->caprec) {
        size_t ncap = o->caprec ? o->caprec * 2 : 256;
        struct ex_step *nv =
            ncap < SIZE_MAX / sizeof *nv ? realloc(o->rec, ncap * sizeof *nv) : NULL;
        if (!nv) {
            o->reclost = true;
            return;
        }
        o->rec = nv;
        o->caprec = ncap;
    }
    struct ex_step *s = &o->rec[o->nrec++];
    memset(s, 0, sizeof *s);
    s->tid = t;
    if (ex_tidset_has(&pend->listed, t) && pend->ev[t]->known) {
        const struct ex_pending *e = pend->ev[t];
        s->addr = e->addr;
        s->rip = e->rip;
        s->size = e->size;
        s->kind = e->kind;
    }
}

long ex_history_learn_flips(struct ex_history *h, const struct ex_online *o)
{
    if (!h || !o)
        return 0;
    long used = o->kind == EX_ONLINE_FLIP ? o->flip.cand : -1;
    ex_history_learn_nested(h, o);
    if (used >= 0 && h->traced > 0 && h->total_racy >= h->last_racy &&
        h->total_racy_data >= h->last_racy_data && h->total_windows >= h->last_windows) {
        /* PCT's and window's k describe the runs they make: a flip run's hold
         * (others spinning, a thread kept off) stretched bb-shared-cond's runs
         * and doubled k. Its conflict variables and pairs are kept. */
        h->total_racy -= h->last_racy;
        h->total_racy_data -= h->last_racy_data;
        h->total_windows -= h->last_windows;
        h->traced--;
        h->last_racy = h->last_racy_data = h->last_windows = 0;
    }
    size_t n = 0;
    const uint32_t *ch = ex_online_choices(o, &n);
    bool ok = !o->reclost && ch && o->nrec == n;
    return ex_flips_learn(&h->flips, used, ok ? ch : NULL, ok ? o->rec : NULL, ok ? n : 0,
                          &h->conflict);
}

bool ex_online_portfolio_flips(const struct ex_history *h, uint64_t index)
{
    /* While untried flips remain: three in four of the first EX_FLIP_DENSE
     * schedules, every other one up to EX_FLIP_EARLY, one in EX_FLIP_LATE_EVERY
     * after. Index 1's flip is one of run 0's races, libc's own, but its run is
     * the parent of the flips that found pre3-chain's chain (a random walk
     * there instead: seed 1 not found in 60 s, after 7 schedules before). A
     * bug one race reversal away is met by the first few flips (the
     * newest variables come first; the first run's are musl's own, its pages
     * not yet pre-shared); bugs that need two or three preemptions, or a start
     * order, need the cycle's random schedules in numbers, which flips must
     * not dilute. */
    bool slot = index < EX_FLIP_DENSE   ? index % 4 != 0
                : index < EX_FLIP_EARLY ? (index & 1) != 0
                                        : index % EX_FLIP_LATE_EVERY == 1;
    return h && slot && ex_flips_next(&h->flips) >= 0;
}
