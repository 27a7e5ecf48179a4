/* The wake strategy: start orders and wakes (online.h, "wake").
 *
 * Needs: the enabled threads at each cue point (who was woken, who created whom;
 * pending reads only keep spinners from running first), nothing from the
 * history: its decisions are at thread starts and wakes, not at accesses.
 * Receives: its ordinal, the variant. Teaches the history h->woke.
 *
 * The condition-variable bugs (a bounded buffer that waits with `if`, one
 * condition variable for two predicates, a signal to the wrong waiter) need no
 * preemption at a data access. They need the waiters to wait before the
 * wakers run (a START ORDER), then at a wake one of two things: the woken
 * thread is overtaken (another thread takes the lock, the item, the slot
 * before it runs again) or the waker is preempted right after its wake (the
 * woken thread runs, finds its predicate false and waits again before the
 * waker's next wake). PCT's random ranks meet the start order in 1 of 3-6
 * runs and the wake rule by luck; here both are chosen per schedule:
 *
 *   start order: the creator (the lowest tid at the first cue point: main, at
 *   the snapshot) keeps the highest rank, so a test that creates its threads
 *   and then joins them creates them all before any runs; the children rank
 *   in creation order, except that when the creator first blocks the first d
 *   of them drop below every rank (a rotation of the creation order: the
 *   threads created first are often the producers and setters, which must
 *   come after the waiters);
 *
 *   wake rule: a thread WOKEN at this cue point (seen before, not enabled at
 *   the last cue point, enabled now: its futex wait returned) drops below
 *   every rank; or, on the other schedules, the WAKER (the thread chosen at
 *   the last cue point, if still enabled) does.
 *
 * Schedule j (its ordinal) takes variant j mod (EX_WAKE_VARIANTS + 1) of the
 * list below; the last one ranks the children at random (PCT's uniform
 * insertion) with a coin for the rule. Nothing else is random: the list is
 * walked once per cycle. */
#include "online_impl.h"
#include <inttypes.h>
#include <stdio.h>

/* The variants, in the order schedules take them: which children start last
 * (none; the older half, ceil(n/2) of n; the oldest one; all but the newest),
 * and the rule. Creation order with the waker lowered and the older half last
 * with the woken lowered come first: they are the two shapes of a waiter that
 * must wait before its waker (a setter created after the waiters; producers
 * created before the consumers). */
static const struct {
    uint8_t defer;  /* EX_WAKE_DEFER_* (online.h) */
    bool waker;
} variants[EX_WAKE_VARIANTS] = {
    { EX_WAKE_DEFER_NONE, true },  { EX_WAKE_DEFER_HALF, false },
    { EX_WAKE_DEFER_NONE, false }, { EX_WAKE_DEFER_HALF, true },
    { EX_WAKE_DEFER_ONE, false },  { EX_WAKE_DEFER_ONE, true },
    { EX_WAKE_DEFER_ALL_BUT_ONE, false }, { EX_WAKE_DEFER_ALL_BUT_ONE, true },
};

static const char *const defer_names[] = { "creation", "older-half-last", "oldest-last",
                                           "newest-first" };

void ex_online_wake_begin(struct ex_online *o, const struct ex_history *h, uint64_t ordinal)
{
    (void)h;
    uint32_t v = (uint32_t)(ordinal % (EX_WAKE_VARIANTS + 1));
    o->wake.variant = v;
    if (v < EX_WAKE_VARIANTS) {
        o->wake.defer = variants[v].defer;
        o->wake.waker = variants[v].waker;
    } else {
        o->wake.waker = ex_rng_below(&o->rng, 2) != 0;
    }
    o->racy_classes = EX_CONFLICT_DATA | EX_CONFLICT_SYNC;
}

/* New threads in ascending tid order (creation order): the creator on top,
 * the children below it in creation order (at random ranks below the creator
 * in the random variant). */
static void rank_fresh(struct ex_online *o, const struct ex_tidset *fresh)
{
    struct ex_tidset it = *fresh;
    for (uint32_t t; (t = ex_tidset_pop(&it)) != 0;) {
        if (o->pct.nthreads > EX_MAX_TID)
            return;
        if (t == o->wake.creator) {
            ex_online_pct_insert(o, 0, t);
            o->pct.nhigh++;
            continue;
        }
        if (o->wake.children < EX_WAKE_CHILDREN)
            o->wake.child[o->wake.children] = t;
        o->wake.children++;
        uint32_t pos = o->pct.nhigh;
        if (o->wake.variant >= EX_WAKE_VARIANTS) {
            uint32_t top = o->pct.nhigh > 0 && o->pct.order[0] == o->wake.creator ? 1 : 0;
            pos = top + (uint32_t)ex_rng_below(&o->rng, o->pct.nhigh - top + 1);
        }
        ex_online_pct_insert(o, pos, t);
        o->pct.nhigh++;
    }
}

/* When the creator first blocks (its children are all there in a test that
 * creates, then joins): the first children of the start order go last, in
 * creation order. */
static void defer_children(struct ex_online *o, const struct ex_tidset *enabled)
{
    if (o->wake.deferred || !o->wake.creator || ex_tidset_has(enabled, o->wake.creator))
        return;
    o->wake.deferred = true;
    uint32_t n = o->wake.children < EX_WAKE_CHILDREN ? o->wake.children : EX_WAKE_CHILDREN;
    uint32_t d = o->wake.defer == EX_WAKE_DEFER_HALF  ? (n + 1) / 2
                 : o->wake.defer == EX_WAKE_DEFER_ONE ? (n > 1)
                 : o->wake.defer == EX_WAKE_DEFER_ALL_BUT_ONE && n > 1 ? n - 1
                                                                        : 0;
    for (uint32_t i = 0; o->wake.variant < EX_WAKE_VARIANTS && i < d; i++)
        ex_online_pct_lower(o, o->wake.child[i]);
}
void ex_online_wake_note(struct ex_online *o, const struct ex_tidset *enabled,
                         const struct ex_tidset *fresh)
{
    if (!o->wake.creator) {
        struct ex_tidset f = *fresh;
        o->wake.creator = ex_tidset_pop(&f);
    }
    bool any = false;
    for (int i = 0; i < 4; i++) {
        o->wake.woken.w[i] = enabled->w[i] & ~o->wake.prev.w[i] & ~fresh->w[i];
        any |= o->wake.woken.w[i] != 0;
    }
    o->wake.prev = *enabled;
    if (any && ex_tidset_count(enabled) < 2)
        ex_tidset_clear(&o->wake.woken), any = false; /* nobody to overtake it */
    struct ex_tidset others = o->wake.woken;
    ex_tidset_del(&others, o->wake.creator);
    o->wake.child_wakes += !ex_tidset_empty(&others);
}

void ex_history_learn_wakes(struct ex_history *h, const struct ex_online *o)
{
    if (o->wake.child_wakes && !h->woke) {
        h->woke = true;
        h->woke_from = h->runs; /* the next schedule's index */
    }
}

/* The wake rule at this cue point, for the woken threads ex_online_wake_note
 * found: they drop below every rank, or the waker (the thread chosen last, if
 * still enabled and not woken itself) does. */
static void apply_wakes(struct ex_online *o, const struct ex_tidset *enabled)
{
    if (ex_tidset_empty(&o->wake.woken))
        return;
    o->wake.wakes++;
    if (o->wake.waker) {
        uint32_t w = o->nchoices ? o->choices[o->nchoices - 1] : 0;
        if (w && ex_tidset_has(enabled, w) && !ex_tidset_has(&o->wake.woken, w)) {
            ex_online_pct_lower(o, w);
            o->wake.lowered++;
        }
        return;
    }
    struct ex_tidset it = o->wake.woken;
    for (uint32_t t; (t = ex_tidset_pop(&it)) != 0;) {
        ex_online_pct_lower(o, t);
        o->wake.lowered++;
    }
}

uint32_t ex_online_wake_pick(struct ex_online *o, const struct ex_tidset *enabled,
                             const struct ex_tidset *fresh, const ex_pending_table *pend)
{
    rank_fresh(o, fresh);
    defer_children(o, enabled);
    apply_wakes(o, enabled);
    return ex_online_pct_highest(o, enabled, pend);
}

void ex_online_wake_describe(const struct ex_online *o, char *buf, size_t len)
{
    if (o->wake.variant >= EX_WAKE_VARIANTS)
        snprintf(buf, len, " start=random lower=%s wakes=%" PRIu64 " lowered=%" PRIu64,
                 o->wake.waker ? "waker" : "woken", o->wake.wakes, o->wake.lowered);
    else
        snprintf(buf, len, " start=%s lower=%s wakes=%" PRIu64 " lowered=%" PRIu64,
                 defer_names[o->wake.defer % 4], o->wake.waker ? "waker" : "woken", o->wake.wakes,
                 o->wake.lowered);
}
