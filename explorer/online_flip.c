/* Online flip: replay a parent run up to a racing access, hold its thread until
 * another thread made the access it races with, then pos (online.h, flip.h).
 *
 * Needs: a traced run that records each step's event (the parent's, to follow
 * it; this run's, to learn its races); from the history, its next untried flip
 * and that flip's parent run. Receives: nothing but (seed, index): which flip is
 * the history's choice (ex_flips_next). */
#include "online_impl.h"
#include <stdlib.h>
#include <string.h>

/* Hold at most this many steps (or the parent's length, if longer): a thread
 * held while the others only spin must go on some time. */
#define EX_FLIP_HOLD 1000u
/* Extra steps of one thread in a row while following the parent (extra_pick). */
#define EX_FLIP_EXTRA 1000u

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
    const struct ex_step *ps = h->flips.parents[fl->parent].steps;
    if (fl->from == 0)
        ps = NULL; /* run 0 had no pre-shared pages: its steps by index, as they come */
    size_t pn = h->flips.parents[fl->parent].n;
    if (!pc || fl->step >= pn)
        return 0;
    /* One block (online.c frees the prefix): the choices, their events, and
     * per step the same thread's next step. */
    size_t al = _Alignof(struct ex_step), off = (pn * sizeof *pc + al - 1) / al * al;
    size_t per = sizeof *pc + sizeof *ps + sizeof *o->flip.pnext;
    if (pn > (SIZE_MAX - al) / per)
        return -1;
    o->flip.prefix = malloc(off + (ps ? pn * (sizeof *ps + sizeof *o->flip.pnext) : 0));
    if (!o->flip.prefix)
        return -1;
    memcpy(o->flip.prefix, pc, pn * sizeof *pc);
    if (ps) {
        o->flip.psteps = (struct ex_step *)(void *)((char *)o->flip.prefix + off);
        memcpy(o->flip.psteps, ps, pn * sizeof *ps);
        o->flip.pnext = (uint64_t *)(void *)(o->flip.psteps + pn);
        uint64_t last[EX_MAX_TID + 1];
        for (size_t t = 0; t <= EX_MAX_TID; t++)
            last[t] = pn;
        for (size_t j = pn; j-- > 0;) {
            uint32_t t = pc[j] <= EX_MAX_TID ? pc[j] : 0;
            o->flip.pnext[j] = last[t];
            last[t] = j;
        }
    }
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

static bool an_access(uint8_t kind)
{
    return kind == EX_READ || kind == EX_WRITE || kind == EX_RMW;
}

/* Whether t's pending event is the one the parent's thread made at step j: the
 * same access (kind, variable, code), or both no memory access (a system call's
 * cue point, which the VMM shows as unknown: one in every run). */
static bool made_there(const struct ex_online *o, uint64_t j, const ex_pending_table *pend,
                       uint32_t t)
{
    const struct ex_step *w = &o->flip.psteps[j];
    bool acc = ex_tidset_has(&pend->listed, t) && pend->ev[t]->known &&
               an_access(pend->ev[t]->kind);
    if (!acc || !an_access(w->kind))
        return !acc && !an_access(w->kind);
    const struct ex_pending *e = pend->ev[t];
    return e->kind == w->kind && e->addr == w->addr && (!e->rip || !w->rip || e->rip == w->rip);
}

/* Whether u, due to make the parent's step j, must first run an extra step: its
 * pending event is not the one it made there. */
static bool extra_due(const struct ex_online *o, uint64_t j, const struct ex_tidset *can,
                      const ex_pending_table *pend, uint32_t u)
{
    return o->flip.psteps && j < o->flip.nprefix && ex_tidset_has(can, u) &&
           o->flip.extra < EX_FLIP_EXTRA && o->flip.extras < o->flip.limit &&
           !made_there(o, j, pend, u) && !ex_online_spinning(o, pend, u);
}

/* Following the parent up to its step j (prefix[j] next): a flip run meets cue
 * points the parent did not have (pages pre-shared since), which the parent's
 * thread ran through within one step. First those of the thread that made the
 * last step followed, right away (its next event is not yet the one the parent
 * showed next for it): in the parent nobody else ran before it reached that
 * event, and a page it alone had touched may be read by the next thread. Then
 * those of prefix[j] before its event at j (a thread's first cue points). At
 * most EX_FLIP_EXTRA in a row and never a spin's re-read: past that the run went
 * elsewhere. Returns the thread to run, or 0 when step j itself is next. */
static uint32_t extra_pick(struct ex_online *o, uint64_t j, const struct ex_tidset *can,
                           const ex_pending_table *pend)
{
    uint32_t u = o->flip.cur, t = 0;
    if (!o->flip.psteps)
        return 0;
    if (u && extra_due(o, o->flip.pnext[o->flip.curj], can, pend, u))
        t = u;
    else if (o->flip.cur = 0, j < o->flip.nprefix && extra_due(o, j, can, pend, o->flip.prefix[j]))
        t = o->flip.prefix[j];
    if (!t) {
        o->flip.extra = 0;
        return 0;
    }
    o->flip.extra++;
    o->flip.extras++;
    return t;
}

/* The parent's step j is made by its thread (enabled): note it for extra_pick. */
static uint32_t made(struct ex_online *o, uint64_t j)
{
    o->flip.cur = o->flip.prefix[j];
    o->flip.curj = j;
    o->flip.extra = 0;
    return o->flip.cur;
}

/* Hold: the parent's next choice among the enabled threads other than t1 (its
 * own order of the others' steps, so that they reach e2 as they did), pos once
 * the parent's choices run out. */
static uint32_t hold_pick(struct ex_online *o, const struct ex_tidset *others,
                          const ex_pending_table *pend)
{
    const uint32_t *p = o->flip.prefix;
    while (o->flip.cursor < o->flip.nprefix &&
           (p[o->flip.cursor] == o->flip.t1 || !ex_tidset_has(others, p[o->flip.cursor])))
        o->flip.cursor++;
    uint32_t t = extra_pick(o, o->flip.cursor, others, pend);
    if (t)
        return t;
    if (o->flip.cursor < o->flip.nprefix)
        return made(o, o->flip.cursor++);
    return ex_online_pos_pick(o, others);
}

uint32_t ex_online_following(const struct ex_online *o)
{
    if (o->kind == EX_ONLINE_FLIP && o->flip.cand >= 0 && o->flip.phase == FOLLOW &&
        o->flip.pj < o->flip.nprefix && o->flip.pj < o->flip.at)
        return o->flip.prefix[o->flip.pj];
    if (o->kind == EX_ONLINE_RF && o->rf.mutating && !o->rf.flipped && !o->rf.diverged &&
        o->steps < o->rf.nprefix && o->steps < o->rf.flip)
        return o->rf.prefix[o->steps];
    return 0;
}

uint32_t ex_online_flip_pick(struct ex_online *o, const struct ex_tidset *enabled,
                             const struct ex_tidset *fresh, const ex_pending_table *pend)
{
    uint32_t t = 0, t1 = o->flip.t1;
    ex_online_pos_fresh(o, fresh); /* pos takes over from a consistent state */
    if (o->flip.phase == FOLLOW) {
        uint64_t j = o->flip.pj;
        t = extra_pick(o, j, enabled, pend);
        if (t) {
            /* an extra cue point (of t1 too, before e1) */
        } else if (!ex_tidset_has(enabled, o->flip.prefix[j])) {
            o->flip.diverged = true, o->flip.phase = FREE;
        } else if (j < o->flip.at) {
            t = made(o, o->flip.pj++);
        } else {
            o->flip.phase = HOLD; /* t1 is at e1 */
            o->flip.cursor = o->flip.at;
            o->flip.cur = 0;
        }
    }
    if (o->flip.phase == HOLD) {
        struct ex_tidset others = *enabled;
        ex_tidset_del(&others, t1);
        if (ex_tidset_empty(&others) || o->flip.held >= o->flip.limit) {
            t = t1; /* nobody else can go (or for too long): the flip failed */
            o->flip.phase = FREE;
        } else {
            t = hold_pick(o, &others, pend);
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
    return ex_online_learn_flips(h, o, true);
}

long ex_online_learn_flips(struct ex_history *h, const struct ex_online *o, bool own)
{
    if (!h || !o)
        return 0;
    bool flipped = o->kind == EX_ONLINE_FLIP && o->flip.cand >= 0;
    long used = flipped && own ? o->flip.cand : -1;
    ex_history_learn_nested(h, o);
    if (flipped && h->traced > 0 && h->total_racy >= h->last_racy &&
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
    return ex_flips_learn_opened(&h->flips, used, used >= 0 && o->flip.reversed,
                                 ok ? ch : NULL, ok ? o->rec : NULL, ok ? n : 0,
                                 &h->conflict);
}
