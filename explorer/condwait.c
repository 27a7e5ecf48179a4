#include "condwait.h"
#include "u64map.h"
#include <stdbool.h>
#include <string.h>

/* What a thread did last to a 4-byte word (condwait.h: the access before a wait). */
enum { LAST_NONE = 0, LAST_READ = 1, LAST_WRITE = 2, LAST_RMW = 3 };

/* The key of (thread, 4-byte word): words above 2^54 alias, which at worst
 * misjudges one wait (any content is safe). */
static uint64_t word_key(uint64_t word, uint32_t tid)
{
    return word << 8 | (tid & 0xff);
}

/* After a blocking wait on `word`: 1 until the waiter's first access to it, 2
 * once that was a read (then its very next access, an RMW of the word, makes it
 * a condition wait). */
struct waiter {
    uint64_t word;
    uint8_t phase;
    bool blocked;   /* since its wait, no wake of the word and no event of its own */
    bool proved;    /* a condition wait by its store before the wait (shape a) */
    uint32_t waker; /* the thread whose futex wake of the word came first (0: none) */
};

/* The 4-byte words an access covers (at most 5 for 16 bytes unaligned: more is
 * no futex word's business). */
static unsigned words_of(const struct ex_event *e, uint64_t *first)
{
    uint64_t size = e->size ? e->size : 1;
    if (size > 16)
        size = 16;
    uint64_t lo = e->addr >> 2, hi = (e->addr + size - 1) >> 2;
    if (e->addr + size - 1 < e->addr)
        hi = lo; /* wraps at the top of the address space */
    *first = lo;
    return (unsigned)(hi - lo + 1);
}

/* The waiter's access e (to its word or not) moves its wait on: returns 1 when
 * it proves a condition wait, and clears the wait when it decides either way. */
static int advance(struct waiter *w, const struct ex_event *e, uint64_t lo, unsigned nw)
{
    bool word = w->word >= lo && w->word < lo + nw;
    if (w->phase == 1 && word) {
        w->phase = e->kind == EX_READ ? 2 : 0; /* a lock is taken by its first access */
        return 0;
    }
    if (w->phase != 2)
        return 0;
    /* The reload, then at once the grab. musl's "wait until it changes" (__wait:
     * its thread-list lock, joins) reads other words (the waiter count) first. */
    w->phase = 0;
    return word && e->kind == EX_RMW;
}

uint64_t ex_trace_cond_waits(const struct ex_trace *t)
{
    return ex_trace_cond_waits_older(t, NULL);
}

/* U's futex wake of word (that woke a thread) is the waker of every thread
 * blocked on it (FUTEX_WAKE's count is not matched to the queue: a heuristic). */
static uint64_t note_wake(struct waiter *w, uint64_t word, uint32_t u)
{
    uint64_t older = 0;
    for (uint32_t t = 1; t <= EX_MAX_TID; t++)
        if (w[t].blocked && w[t].word == word && t != u) {
            w[t].blocked = false;
            w[t].waker = u;
            older += w[t].proved && u < t; /* tids are creation order */
        }
    return older;
}

uint64_t ex_trace_cond_waits_older(const struct ex_trace *t, uint64_t *older)
{
    uint64_t by_older = 0;
    if (older)
        *older = 0;
    if (!t || !t->ev)
        return 0;
    struct waiter w[EX_MAX_TID + 1];
    memset(w, 0, sizeof w);
    struct ex_u64map last; /* (word, tid) -> LAST_*: the thread's last access to it */
    ex_u64map_init(&last);
    uint64_t found = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        uint32_t tid = e->tid;
        if (tid == 0 || tid > EX_MAX_TID)
            continue;
        if (e->kind != EX_FUTEX_WAIT)
            w[tid].blocked = false; /* it runs: woken (a requeue, a signal) or never blocked */
        if (ex_is_access(e)) {
            uint64_t lo;
            unsigned nw = words_of(e, &lo);
            int got = advance(&w[tid], e, lo, nw);
            found += (uint64_t)got;
            by_older += (uint64_t)(got && w[tid].waker && w[tid].waker < tid);
            for (unsigned k = 0; k < nw; k++) {
                uint64_t *v = ex_u64map_put(&last, word_key(lo + k, tid), LAST_NONE, NULL);
                if (v) /* no memory: that word looks untouched (at worst one wait misjudged) */
                    *v = e->kind == EX_RMW ? LAST_RMW : e->kind == EX_WRITE ? LAST_WRITE : LAST_READ;
            }
            continue;
        }
        if (e->kind == EX_FUTEX_WAKE && e->arg > 0)
            by_older += note_wake(w, e->addr >> 2, tid);
        if (e->kind != EX_FUTEX_WAIT)
            continue;
        /* An earlier wait's evidence ends at the thread's next wait. The VMM records
         * a blocking wait when the thread blocks: its wake comes after. */
        memset(&w[tid], 0, sizeof w[tid]);
        if (e->flags & EX_F_NOBLOCK)
            continue;
        const uint64_t *before = ex_u64map_get(&last, word_key(e->addr >> 2, tid));
        if (before && *before == LAST_RMW)
            continue; /* the waiter had just tried to take it: a lock */
        w[tid].word = e->addr >> 2;
        w[tid].blocked = true;
        if (before && *before == LAST_WRITE) {
            found++; /* it waits on the value it stored itself: musl's waiter node */
            w[tid].proved = true;
            continue;
        }
        w[tid].phase = 1;
    }
    ex_u64map_free(&last);
    if (older)
        *older = by_older;
    return found;
}
