#include "online_impl.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[EX_ONLINE_NKINDS] = {
    [EX_ONLINE_PCT] = "pct",
    [EX_ONLINE_POS] = "pos",
    [EX_ONLINE_RANDOM] = "random",
    [EX_ONLINE_RF] = "rf",
    [EX_ONLINE_WINDOW] = "window",
    [EX_ONLINE_FLIP] = "flip",
    [EX_ONLINE_PORTFOLIO] = "portfolio",
    [EX_ONLINE_NEST] = "nest",
    [EX_ONLINE_SWEEP] = "sweep",
    [EX_ONLINE_WAKE] = "wake",
    [EX_ONLINE_LANES] = "lanes",
};

const char *ex_online_name(enum ex_online_kind k)
{
    return (unsigned)k < EX_ONLINE_NKINDS ? kind_names[k] : "?";
}

int ex_online_from_name(const char *name, enum ex_online_kind *out)
{
    for (unsigned k = 0; name && k < EX_ONLINE_NKINDS; k++)
        if (strcmp(name, kind_names[k]) == 0) {
            *out = (enum ex_online_kind)k;
            return 0;
        }
    return -1;
}

void ex_online_params_default(struct ex_online_params *p)
{
    p->depth = 3;
    p->default_steps = EX_ONLINE_DEFAULT_STEPS;
}

void ex_online_params_sanitize(struct ex_online_params *p)
{
    if (p->depth < 1)
        p->depth = 1;
    if (p->depth > EX_PCT_MAX_DEPTH)
        p->depth = EX_PCT_MAX_DEPTH;
    if (p->default_steps < 1)
        p->default_steps = 1;
    if (p->default_steps > EX_ONLINE_MAX_STEPS_ESTIMATE)
        p->default_steps = EX_ONLINE_MAX_STEPS_ESTIMATE;
}

/* The byte range a pending event touches and whether it writes; false if it
 * touches none. */
static bool footprint(const struct ex_pending *e, uint64_t *lo, uint64_t *len, bool *writes)
{
    if (!e->known)
        return false;
    switch (e->kind) {
    case EX_READ:
    case EX_WRITE:
    case EX_RMW:
        *len = e->size ? e->size : 1;
        *writes = e->kind != EX_READ;
        break;
    case EX_FUTEX_WAIT:
    case EX_FUTEX_WAKE:
    case EX_THREAD_EXIT:
        if (e->kind == EX_THREAD_EXIT && e->addr == 0)
            return false;
        *len = 4;
        *writes = true;
        break;
    default:
        return false;
    }
    *lo = e->addr;
    return true;
}

bool ex_pending_races(const struct ex_pending *a, const struct ex_pending *b)
{
    uint64_t alo, alen, blo, blen;
    bool aw, bw;
    if (a->tid == b->tid || !footprint(a, &alo, &alen, &aw) || !footprint(b, &blo, &blen, &bw))
        return false;
    if (!aw && !bw)
        return false;
    /* Each starts before the other's end; an end past the top of the
     * address space is the top (addresses do not wrap around). */
    uint64_t aend = alo + alen < alo ? UINT64_MAX : alo + alen;
    uint64_t bend = blo + blen < blo ? UINT64_MAX : blo + blen;
    return alo < bend && blo < aend;
}

void ex_online_init(struct ex_online *o)
{
    memset(o, 0, sizeof *o);
    ex_u64map_init(&o->conflict);
    ex_u64map_init(&o->lastacc);
    ex_u64map_init(&o->lastrip);
}

#define LAST_READ (1ull << 32)
#define EPOCH_SHIFT 33 /* lastacc: the reader's count of other events (31 bits) */
#define EPOCH_MASK 0x7fffffffull

static bool is_access(const struct ex_pending *e)
{
    return e->kind == EX_READ || e->kind == EX_WRITE || e->kind == EX_RMW;
}

/* Remembers t's pending access as its variable's last one. */
static void note_access(struct ex_online *o, const ex_pending_table *pend, uint32_t t)
{
    if (t > EX_MAX_TID)
        return;
    bool access = ex_tidset_has(&pend->listed, t) && pend->ev[t]->known &&
                  is_access(pend->ev[t]);
    if (!access || pend->ev[t]->kind != EX_READ)
        o->wrote[t]++; /* a write or a sync event: t's later re-reads are no spin */
    if (!access)
        return;
    const struct ex_pending *e = pend->ev[t];
    if (e->kind == EX_READ) {
        uint64_t *r = ex_u64map_put(&o->lastrip, e->addr, 0, NULL);
        if (r)
            *r = e->rip;
    }
    uint64_t *v = ex_u64map_put(&o->lastacc, e->addr, 0, NULL);
    if (v) /* without memory a spin's re-reads count as racy: more choices, still valid */
        *v = t | (e->kind == EX_READ ? LAST_READ | (o->wrote[t] & EPOCH_MASK) << EPOCH_SHIFT : 0);
}

/* o->conflict = h's conflict variables (o->conflict keeps its buffer across runs).
 * Returns 0 or -1 (no memory: then the set is partial, the run still valid). */
static int copy_conflicts(struct ex_online *o, const struct ex_history *h)
{
    ex_u64map_clear(&o->conflict);
    for (size_t i = 0; h && i < h->conflict.cap; i++)
        if (h->conflict.used[i] &&
            !ex_u64map_put(&o->conflict, h->conflict.keys[i], h->conflict.vals[i], NULL))
            return -1;
    return 0;
}

bool ex_online_spinning(const struct ex_online *o, const ex_pending_table *pend, uint32_t t)
{
    if (!ex_tidset_has(&pend->listed, t) || !pend->ev[t]->known || pend->ev[t]->kind != EX_READ)
        return false;
    /* The variable's last access was t's read by the same instruction (when the VMM
     * knows it), nobody wrote it since, and t has only read since: a poll, of one word
     * or several (musl's mutex spins on the lock word and the waiter count). A read
     * by other code (main's stack canary, read on entry to and return from each
     * pthread_create) or after t's own writes is no spin. */
    const uint64_t *last = ex_u64map_get(&o->lastacc, pend->ev[t]->addr);
    if (t > EX_MAX_TID || !last ||
        *last != (t | LAST_READ | (o->wrote[t] & EPOCH_MASK) << EPOCH_SHIFT))
        return false;
    const uint64_t *rip = ex_u64map_get(&o->lastrip, pend->ev[t]->addr);
    return !pend->ev[t]->rip || !rip || !*rip || *rip == pend->ev[t]->rip;
}

bool ex_online_racy(const struct ex_online *o, const ex_pending_table *pend,
                    const struct ex_tidset *enabled, uint32_t t)
{
    if (!ex_tidset_has(&pend->listed, t) || !pend->ev[t]->known ||
        ex_tidset_count(enabled) < 2)
        return false;
    const struct ex_pending *e = pend->ev[t];
    if (is_access(e)) {
        if (ex_online_spinning(o, pend, t))
            return false;
        if (ex_tidset_has(&o->after, t))
            return true; /* the window after its racy data access */
        const uint64_t *cls = ex_u64map_get(&o->conflict, e->addr);
        if (cls && ex_conflict_racy(*cls & o->racy_classes, (enum ex_kind)e->kind))
            return true;
    }
    if (!(o->racy_classes & EX_CONFLICT_SYNC))
        return false; /* pending races of locks and futexes are sync */
    struct ex_tidset it = *enabled;
    for (int i = 0; i < 4; i++)
        it.w[i] &= pend->listed.w[i];
    ex_tidset_del(&it, t);
    for (uint32_t u; (u = ex_tidset_pop(&it)) != 0;)
        if (ex_pending_races(e, pend->ev[u]))
            return true;
    return false;
}

bool ex_online_window(const struct ex_online *o, const ex_pending_table *pend,
                      const struct ex_tidset *enabled, uint32_t t)
{
    return ex_tidset_has(&o->after, t) && ex_tidset_has(&pend->listed, t) &&
           pend->ev[t]->known && is_access(pend->ev[t]) && ex_tidset_count(enabled) >= 2 &&
           !ex_online_spinning(o, pend, t);
}

void ex_online_free(struct ex_online *o)
{
    free(o->choices);
    free(o->rf.prefix);
    free(o->flip.prefix);
    free(o->rec);
    ex_u64map_free(&o->conflict);
    ex_u64map_free(&o->lastacc);
    ex_u64map_free(&o->lastrip);
    ex_online_init(o);
}

int ex_online_begin(struct ex_online *o, enum ex_online_kind kind,
                    const struct ex_online_params *params, const struct ex_history *h,
                    uint64_t seed, uint64_t index)
{
    if (kind == EX_ONLINE_LANES)
        return ex_online_lanes_begin(o, params, h, seed, index);
    struct ex_online_slot slot;
    if (kind == EX_ONLINE_PORTFOLIO)
        slot = ex_online_portfolio_slot(h, index); /* online_portfolio.c */
    else if (kind == EX_ONLINE_FLIP && index == 0 && (!h || (h->runs == 0 && h->flips.n == 0)))
        slot = ex_online_alone(EX_ONLINE_PCT, h, 0); /* run 0 as the lanes portfolio's: its
                                                      * flip lane starts there */
    else
        slot = ex_online_alone(kind, h, index);
    return ex_online_begin_as(o, kind, &slot, params, h, seed, index);
}

struct ex_online_slot ex_online_alone(enum ex_online_kind kind, const struct ex_history *h,
                                      uint64_t index)
{
    struct ex_online_slot s = { .kind = (uint8_t)kind, .ordinal = index };
    if (kind == EX_ONLINE_SWEEP) {
        uint64_t first = ex_online_sweep_first(h);
        s.ordinal = index >= first ? index - first : 0;
    }
    return s;
}

int ex_online_begin_as(struct ex_online *o, enum ex_online_kind asked,
                       const struct ex_online_slot *slot, const struct ex_online_params *params,
                       const struct ex_history *h, uint64_t seed, uint64_t index)
{
    uint32_t *choices = o->choices, *prefix = o->rf.prefix, *fprefix = o->flip.prefix;
    size_t cap = o->cap, caprec = o->caprec;
    struct ex_step *rec = o->rec;
    struct ex_u64map conflict = o->conflict, lastacc = o->lastacc, lastrip = o->lastrip;
    memset(o, 0, sizeof *o);
    o->choices = choices;   /* keep the buffers for the next run */
    o->cap = cap;
    o->rec = rec;
    o->caprec = caprec;
    o->conflict = conflict;
    o->lastacc = lastacc;
    o->lastrip = lastrip;
    ex_u64map_clear(&o->lastacc);
    ex_u64map_clear(&o->lastrip);
    free(prefix);
    free(fprefix);
    int rc = copy_conflicts(o, h);
    if (params)
        o->p = *params;
    else
        ex_online_params_default(&o->p);
    ex_online_params_sanitize(&o->p);
    o->seed = seed;
    o->index = index;
    o->racy_classes = EX_CONFLICT_DATA | EX_CONFLICT_SYNC;
    ex_rng_seed(&o->rng, ex_hash2(seed, index));
    bool known = (unsigned)slot->kind < EX_ONLINE_NKINDS && (unsigned)asked < EX_ONLINE_NKINDS;
    o->asked = known ? (uint8_t)asked : EX_ONLINE_POS;
    o->kind = known ? slot->kind : EX_ONLINE_POS;
    o->cycle = slot->cycle;
    o->flip.cand = -1;
    if (o->kind == EX_ONLINE_PCT || o->kind == EX_ONLINE_WINDOW || o->kind == EX_ONLINE_NEST)
        ex_online_pct_begin(o, h, slot->ordinal);
    if (o->kind == EX_ONLINE_SWEEP)
        ex_online_sweep_begin(o, h, slot->ordinal);
    if (o->kind == EX_ONLINE_WAKE)
        ex_online_wake_begin(o, h, slot->ordinal);
    if (o->kind == EX_ONLINE_RANDOM && (o->walk.data_only = ex_rng_below(&o->rng, 2) != 0))
        o->racy_classes = EX_CONFLICT_DATA;
    if (o->kind == EX_ONLINE_RF && ex_online_rf_begin(o, h) != 0)
        return -1;
    if (o->kind == EX_ONLINE_FLIP && ex_online_flip_begin(o, h) != 0)
        return -1;
    return known && rc == 0 ? 0 : -1;
}

static void record(struct ex_online *o, uint32_t t)
{
    if (!o->lost && ex_u32_append(&o->choices, &o->nchoices, &o->cap, t) != 0)
        o->lost = true;
}

static void build_table(const struct ex_view *v, ex_pending_table *pend)
{
    ex_tidset_clear(&pend->listed);
    for (size_t i = 0; v->next && i < v->nnext; i++) {
        uint32_t t = v->next[i].tid;
        if (t >= 1 && t <= EX_MAX_TID) {
            ex_tidset_add(&pend->listed, t);
            pend->ev[t] = &v->next[i];
        }
    }
}

static uint32_t lowest(const struct ex_tidset *s)
{
    return ex_tidset_next_cyclic(s, 0);
}

uint32_t ex_online_next(struct ex_online *o, const struct ex_view *v)
{
    if (!v || !v->enabled)
        return 0;
    struct ex_tidset en = *v->enabled, fresh;
    ex_tidset_del(&en, 0);
    if (ex_tidset_empty(&en))
        return 0;
    for (int i = 0; i < 4; i++) {
        fresh.w[i] = en.w[i] & ~o->seen.w[i];
        o->seen.w[i] |= en.w[i];
    }
    ex_pending_table pend;
    uint32_t t = 0;
    build_table(v, &pend);
    ex_online_wake_note(o, &en, &fresh); /* every strategy: who was woken (online_wake.c) */
    switch (o->kind) {
    case EX_ONLINE_PCT:
    case EX_ONLINE_WINDOW:
    case EX_ONLINE_NEST:
    case EX_ONLINE_SWEEP:
        t = ex_online_pct_pick(o, &en, &fresh, &pend);
        break;
    case EX_ONLINE_WAKE:
        t = ex_online_wake_pick(o, &en, &fresh, &pend);
        break;
    case EX_ONLINE_RANDOM:
        t = ex_online_random_pick(o, &en, &pend);
        break;
    case EX_ONLINE_RF:
        t = ex_online_rf_pick(o, &en, &fresh, &pend);
        break;
    case EX_ONLINE_FLIP:
        t = ex_online_flip_pick(o, &en, &fresh, &pend);
        break;
    default:
        ex_online_pos_fresh(o, &fresh);
        t = ex_online_pos_pick(o, &en);
        ex_online_pos_after(o, &pend, t);
        break;
    }
    if (!ex_tidset_has(&en, t))
        t = lowest(&en); /* cannot happen; keeps the contract if it ever did */
    o->windows += ex_online_window(o, &pend, &en, t);
    if (ex_online_nested(o, &pend, &en, t)) {
        o->nested++;
        ex_online_nest_edge(o, &pend, t);
    }
    ex_online_nest_note(o, &pend, t);
    bool racy = ex_online_racy(o, &pend, &en, t);
    o->racy += racy;
    /* A racy step at a DATA variable opens a window: t's next step. */
    const uint64_t *cls = racy ? ex_u64map_get(&o->conflict, pend.ev[t]->addr) : NULL;
    if (cls && (*cls & EX_CONFLICT_DATA) && is_access(pend.ev[t])) {
        ex_tidset_add(&o->after, t);
        if (t <= EX_MAX_TID) {
            o->sweep.open_var[t] = pend.ev[t]->addr;
            o->sweep.open_write[t] = pend.ev[t]->kind != EX_READ;
        }
    } else {
        ex_tidset_del(&o->after, t);
    }
    note_access(o, &pend, t);
    o->steps++;
    record(o, t);
    ex_online_record_step(o, &pend, t);
    return t;
}

const uint32_t *ex_online_choices(const struct ex_online *o, size_t *n)
{
    if (o->lost) {
        *n = 0;
        return NULL;
    }
    *n = o->nchoices;
    return o->choices;
}

int ex_online_schedule(const struct ex_online *o, struct ex_schedule *s)
{
    size_t n;
    const uint32_t *c = ex_online_choices(o, &n);
    char note[EX_NOTE_LEN];
    if (!c && o->lost)
        return -1;
    if (ex_schedule_from_choices(s, c, n) != 0)
        return -1;
    s->policy = EX_DEFAULT_CONTINUE;
    ex_schedule_set_note(s, "%s", ex_online_describe(o, note, sizeof note));
    return 0;
}

static void describe_pct(const struct ex_online *o, char *buf, size_t len, size_t *at)
{
    int w = o->pct.nest
                ? snprintf(buf + *at, len - *at, " nested=%" PRIu64 " lowered=%" PRIu32 "%s",
                           o->nested, o->pct.nfired, o->pct.nest_coin ? "(coin)" : "")
            : o->pct.windows
                ? snprintf(buf + *at, len - *at, " d=%" PRIu32 " k=%" PRIu64 " windows=%" PRIu64,
                           o->p.depth, o->pct.k, o->windows)
                : snprintf(buf + *at, len - *at, " d=%" PRIu32 " k=%" PRIu64 " racy=%" PRIu64 "%s",
                           o->p.depth, o->pct.k, o->racy, o->pct.data_only ? "(data)" : "");
    for (uint32_t i = 0; w >= 0 && i < o->pct.nchange; i++) {
        *at += (size_t)w < len - *at ? (size_t)w : len - *at - 1;
        w = snprintf(buf + *at, len - *at, "%s%" PRIu64, i ? "," : " change-points=",
                     o->pct.change[i]);
    }
    if (w >= 0)
        *at += (size_t)w < len - *at ? (size_t)w : len - *at - 1;
}

char *ex_online_describe(const struct ex_online *o, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    size_t at = 0;
    int w = o->asked == EX_ONLINE_LANES && (o->lane == 1 || o->lane == 2)
                ? snprintf(buf, len, "lanes/%s seed=%" PRIu64 " index=%" PRIu64
                           " lane-index=%" PRIu64, ex_online_name((enum ex_online_kind)o->kind),
                           o->seed, o->index, o->lane_index)
                : snprintf(buf, len, "%s%s seed=%" PRIu64 " index=%" PRIu64,
                           o->asked == EX_ONLINE_PORTFOLIO ? "portfolio/"
                           : o->asked == EX_ONLINE_LANES   ? "lanes/"
                                                           : "",
                           ex_online_name((enum ex_online_kind)o->kind), o->seed, o->index);
    if (w < 0)
        return buf;
    at = (size_t)w < len ? (size_t)w : len - 1;
    if (o->kind == EX_ONLINE_SWEEP && o->sweep.any) {
        snprintf(buf + at, len - at, " window=%" PRIu64 " k=%" PRIu64 " windows=%" PRIu64 "%s",
                 o->pct.change[0], o->pct.k, o->windows, o->pct.nfired ? "" : " (not reached)");
    } else if (o->kind == EX_ONLINE_SWEEP) {
        snprintf(buf + at, len - at, " after-%s=0x%" PRIx64 " windows=%" PRIu64 "%s",
                 o->sweep.pair ? "read+write" : o->sweep.write ? "write" : "read", o->sweep.var,
                 o->windows,
                 o->pct.nfired ? "" : " (not reached)");
    } else if (o->kind == EX_ONLINE_WAKE) {
        ex_online_wake_describe(o, buf + at, len - at);
    } else if (o->kind == EX_ONLINE_PCT || o->kind == EX_ONLINE_WINDOW || o->kind == EX_ONLINE_NEST) {
        describe_pct(o, buf, len, &at);
    } else if (o->kind == EX_ONLINE_RANDOM && o->walk.data_only) {
        snprintf(buf + at, len - at, " racy=data");
    } else if (o->kind == EX_ONLINE_RF && o->rf.mutating) {
        snprintf(buf + at, len - at, " parent=run%" PRIu64 " flip=%" PRIu64 "%s %s",
                 o->rf.parent_run, o->rf.flip, o->rf.flipped ? "" : "(not reached)",
                 o->rf.insert ? "insert" : "replace");
    } else if (o->kind == EX_ONLINE_RF) {
        snprintf(buf + at, len - at, " corpus=empty(pos)");
    } else if (o->kind == EX_ONLINE_FLIP && o->flip.cand >= 0) {
        snprintf(buf + at, len - at, " flip=%ld hold=t%" PRIu32 "@%" PRIu64 " addr=0x%" PRIx64
                 " extra=%" PRIu64 "%s%s", o->flip.cand, o->flip.t1, o->flip.at, o->flip.e1.addr,
                 o->flip.extras, o->flip.reversed ? " reversed" : "",
                 o->flip.diverged ? " diverged" : "");
    } else if (o->kind == EX_ONLINE_FLIP) {
        snprintf(buf + at, len - at, " none-left(pos)");
    }
    return buf;
}
