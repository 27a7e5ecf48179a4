/* Conflict variables of a run (conflict.h). */
#include "conflict.h"
#include "hb.h"
#include "race.h"
#include "syncdep.h"
#include <stdlib.h>
#include <string.h>

/* Per variable of the run: the first thread to write it atomically (low 32 bits),
 * another thread wrote it atomically too, it was accessed atomically at all. */
#define W_MULTI (1ull << 32)
#define W_ATOMIC (1ull << 33)

/* Marks in *word every variable the run touched atomically (W_ATOMIC, plus the
 * first atomic writer and W_MULTI) and adds those two threads wrote
 * atomically to *out as SYNC. Returns 0 or -1 (no memory). */
static int sync_words(const struct ex_trace *t, struct ex_u64map *word, struct ex_u64map *out)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e) || !ex_is_atomic(e))
            continue;
        uint64_t *st = ex_u64map_put(word, ex_loc_of(e), W_ATOMIC, NULL);
        if (!st)
            return -1;
        if (!ex_is_write(e))
            continue;
        if ((uint32_t)*st == 0) {
            *st |= e->tid;
        } else if ((uint32_t)*st != e->tid && !(*st & W_MULTI)) {
            *st |= W_MULTI;
            uint64_t *c = ex_u64map_put(out, ex_loc_of(e), 0, NULL);
            if (!c)
                return -1;
            *c |= EX_CONFLICT_SYNC;
        }
    }
    return 0;
}

/* Appends to c a release (an atomic write) of every address thread tid
 * wrote atomically in c so far: its exit frees what it held. The kernel's
 * store on clear_child_tid is one (musl's thread list lock is released that
 * way, and the VMM may not report that address); a lock a dead thread holds
 * blocks everyone anyway. Returns 0 or -1 (no memory). */
static int release_at_exit(struct ex_trace *c, const struct ex_event *exit_ev)
{
    struct ex_u64map done;
    int rc = 0;
    size_t n = c->n;
    ex_u64map_init(&done);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct ex_event *e = &c->ev[i];
        bool added;
        if (e->tid != exit_ev->tid || !ex_is_access(e) || !ex_is_write(e) || !ex_is_atomic(e))
            continue;
        if (!ex_u64map_put(&done, e->addr, 0, &added)) {
            rc = -1;
        } else if (added) {
            struct ex_event r = *e;
            r.flags = EX_F_ATOMIC;
            r.kind = EX_WRITE;
            r.waker = 0;
            r.seq = 0;
            r.rip = exit_ev->rip;
            if (!ex_trace_append(c, &r))
                rc = -1;
        }
    }
    ex_u64map_free(&done);
    return rc;
}

/* c = t with more releases than hb.h knows (data_words); at[i] = index of
 * t's event i in c. Returns 0 or -1 (no memory or too many events). */
static int with_releases(const struct ex_trace *t, const struct ex_u64map *word,
                         struct ex_trace *c, size_t *at)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (e->kind == EX_THREAD_EXIT && release_at_exit(c, e) != 0)
            return -1;
        struct ex_event d = *e;
        d.seq = 0;
        /* waker names an earlier event (1 + its seq); anything else is dropped */
        d.waker = e->waker && e->waker <= i ? at[e->waker - 1] + 1 : 0;
        if (ex_is_access(e) && ex_is_write(e) && ex_u64map_get(word, ex_loc_of(e)))
            d.flags |= EX_F_ATOMIC;
        at[i] = c->n;
        if (!ex_trace_append(c, &d))
            return -1;
    }
    return 0;
}

/* Adds to *out as DATA the variables of the run's data races (race.h: plain,
 * unordered by happens-before) that are not in *word. Two kinds of release
 * count here that hb.h does not know: a plain store to a variable touched
 * atomically (musl unlocks its internal locks with one, a_store) and a
 * thread's exit (release_at_exit); the data they guard is not racy. */
static int data_words(const struct ex_trace *t, const struct ex_u64map *word,
                      struct ex_u64map *out)
{
    struct ex_trace c;
    struct ex_hb hb;
    struct ex_race *races = NULL;
    size_t nraces = 0;
    int32_t *dep = NULL;
    int rc = -1;
    if (t->n == 0)
        return 0;
    ex_trace_init(&c);
    c.nthreads = t->nthreads;
    size_t *at = malloc(t->n * sizeof *at);
    if (!at || with_releases(t, word, &c, at) != 0 || !(dep = malloc(c.n * sizeof *dep)))
        goto out;
    if (ex_syncdeps(&c, dep) != 0 || ex_hb_build(&hb, &c, dep) != 0)
        goto out;
    if (ex_races_find(&c, &hb, 0, &races, &nraces) == 0) {
        rc = 0;
        for (size_t i = 0; i < 2 * nraces && rc == 0; i++) {
            uint64_t v = ex_loc_of(&c.ev[i % 2 ? races[i / 2].b : races[i / 2].a]), *cls;
            if (ex_u64map_get(word, v))
                continue; /* a lock's or flag's variable, not data */
            if (!(cls = ex_u64map_put(out, v, 0, NULL)))
                rc = -1;
            else
                *cls |= EX_CONFLICT_DATA;
        }
    }
    free(races);
    ex_hb_free(&hb);
out:
    free(at);
    free(dep);
    ex_trace_free(&c);
    return rc;
}

/* Adds the run's conflict variables to *out with their class (history.h):
 * SYNC for variables two threads wrote atomically (locks, counters, CAS'd pointers:
 * happens-before orders them by the order they happened in, which is what
 * another schedule changes), DATA for the variables of data races never touched
 * atomically. Lock-protected data, a thread's structures handed over by
 * create and join, and a lock's spinning plain reads stay out. */
static int run_conflicts(const struct ex_trace *t, struct ex_u64map *out)
{
    struct ex_u64map word;
    int rc = 0;
    ex_u64map_init(&word);
    /* Variables seen atomic in an earlier run stay so: the VMM records no
     * access on a page only one thread has used, so a run may lack them. */
    for (size_t i = 0; i < out->cap && rc == 0; i++)
        if (out->used[i] && (out->vals[i] & EX_CONFLICT_ATOMIC) &&
            !ex_u64map_put(&word, out->keys[i], W_ATOMIC, NULL))
            rc = -1;
    if (rc == 0 && (sync_words(t, &word, out) != 0 || data_words(t, &word, out) != 0))
        rc = -1;
    for (size_t i = 0; i < word.cap && rc == 0; i++) {
        if (!word.used[i])
            continue;
        uint64_t *c = ex_u64map_put(out, word.keys[i], 0, NULL);
        if (!c)
            rc = -1;
        else
            *c = (*c | EX_CONFLICT_ATOMIC) & ~(uint64_t)EX_CONFLICT_DATA;
    }
    ex_u64map_free(&word);
    return rc;
}

bool ex_conflict_racy(uint64_t cls, enum ex_kind kind)
{
    if (cls & EX_CONFLICT_DATA)
        return kind == EX_READ || kind == EX_WRITE || kind == EX_RMW;
    return (cls & EX_CONFLICT_SYNC) && (kind == EX_WRITE || kind == EX_RMW);
}

int ex_conflicts_learn(struct ex_u64map *conflict, const struct ex_trace *t, uint64_t *racy,
                       uint64_t *racy_data, uint64_t *windows)
{
    uint64_t nwin = 0;
    if (!windows)
        windows = &nwin;
    *windows = 0;
    struct ex_u64map last; /* address -> tid | W_MULTI if read: its last access */
    static const size_t none = SIZE_MAX;
    size_t first[EX_MAX_TID + 1], end[EX_MAX_TID + 1];
    int rc = 0;
    *racy = *racy_data = 0;
    if (!t || run_conflicts(t, conflict) != 0)
        return t ? -1 : 0;
    for (uint32_t u = 0; u <= EX_MAX_TID; u++)
        first[u] = none, end[u] = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        uint32_t u = e->tid <= EX_MAX_TID ? e->tid : 0;
        if (e->kind == EX_THREAD_CREATE && e->arg <= EX_MAX_TID && first[e->arg] == none)
            first[e->arg] = i;
        if (first[u] == none)
            first[u] = 0; /* there at the snapshot */
        end[u] = i + 1;
    }
    ex_u64map_init(&last);
    struct ex_tidset after; /* threads whose last access was a racy DATA one */
    ex_tidset_clear(&after);
    for (size_t i = 0; i < t->n && rc == 0; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        bool company = false;
        for (uint32_t u = 1; u <= EX_MAX_TID && !company; u++)
            company = u != e->tid && first[u] <= i && i < end[u];
        bool window = e->tid <= EX_MAX_TID && ex_tidset_has(&after, e->tid);
        if (e->tid <= EX_MAX_TID)
            ex_tidset_del(&after, e->tid);
        *windows += company && window;
        const uint64_t *cls = ex_u64map_get(conflict, ex_loc_of(e));
        if (!cls || !ex_conflict_racy(*cls, (enum ex_kind)e->kind)) {
            /* the access right after a racy data access: its window */
            *racy += company && window;
            *racy_data += company && window;
            continue;
        }
        uint64_t *l = ex_u64map_put(&last, ex_loc_of(e), 0, NULL);
        uint64_t now = e->tid | (e->kind == EX_READ ? W_MULTI : 0);
        if (!l)
            rc = -1;
        else if (company && (*l != now || e->kind != EX_READ)) {
            (*racy)++;
            if (*cls & EX_CONFLICT_DATA) {
                (*racy_data)++;
                if (e->tid <= EX_MAX_TID)
                    ex_tidset_add(&after, e->tid);
            }
        }
        if (l)
            *l = now;
    }
    ex_u64map_free(&last);
    return rc;
}

