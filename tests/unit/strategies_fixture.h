/* Fixture of test_explorer_strategies.c and test_explorer_strategies2.c: synthetic traces
 * (the article's Circle, random valid ones) and checks of the schedules strategies make.
 * After cmocka.h, for its assertions. */
#ifndef JINX_TEST_STRATEGIES_FIXTURE_H
#define JINX_TEST_STRATEGIES_FIXTURE_H
#include "explorer/explorer.h"
#include <stdlib.h>
#include <string.h>

#define LOCK 0x1000
#define R_ADDR 0x1008
#define C_ADDR 0x1010
#define FUTEX 0x2000

static inline void analyze(const struct ex_trace *t, struct ex_analysis *a)
{
    char why[128] = "";
    int rc = ex_analyze(t, a, why, sizeof why);
    if (rc != EX_OK)
        fail_msg("ex_analyze: %d %s", rc, why);
}

/* The article's Circle: A = T1 (SetRadius then UpdateCircumference, each
 * under the lock), B = T2 (GetArea under the lock). Recorded: all of A, then B.
 *   0 a1 lock   1 W r   2 a2 unlock   3 a3 lock   4 R r   5 W c   6 a4 unlock
 *   7 b1 lock   8 R c   9 R r        10 b2 unlock */
static inline void build_circle(struct ex_trace *t)
{
    ex_trace_init(t);
    ex_trace_access(t, 1, EX_RMW, LOCK, 4, EX_F_ATOMIC, 0x401000);
    ex_trace_access(t, 1, EX_WRITE, R_ADDR, 8, 0, 0x401010);
    ex_trace_access(t, 1, EX_RMW, LOCK, 4, EX_F_ATOMIC, 0x401020);
    ex_trace_access(t, 1, EX_RMW, LOCK, 4, EX_F_ATOMIC, 0x401030);
    ex_trace_access(t, 1, EX_READ, R_ADDR, 8, 0, 0x401040);
    ex_trace_access(t, 1, EX_WRITE, C_ADDR, 8, 0, 0x401050);
    ex_trace_access(t, 1, EX_RMW, LOCK, 4, EX_F_ATOMIC, 0x401060);
    ex_trace_access(t, 2, EX_RMW, LOCK, 4, EX_F_ATOMIC, 0x402000);
    ex_trace_access(t, 2, EX_READ, C_ADDR, 8, 0, 0x402010);
    ex_trace_access(t, 2, EX_READ, R_ADDR, 8, 0, 0x402020);
    ex_trace_access(t, 2, EX_RMW, LOCK, 4, EX_F_ATOMIC, 0x402030);
}

static inline uint32_t runnable(const bool *alive, const bool *blocked, uint32_t nthreads)
{
    uint32_t n = 0;
    for (uint32_t i = 1; i <= nthreads; i++)
        n += alive[i] && !blocked[i];
    return n;
}

/* A random but valid trace: nthreads threads (thread 3, if any, created by
 * thread 1 partway), accesses to 4 shared words and private ones, lock-style
 * atomic RMWs, and futex waits that are always woken later. */
static inline void build_random(struct ex_trace *t, uint64_t seed, uint32_t nthreads, size_t n)
{
    struct ex_rng r;
    bool blocked[8] = { false }, alive[8] = { false };
    uint32_t waitq[8], nq = 0;
    ex_rng_seed(&r, seed);
    ex_trace_init(t);
    for (uint32_t i = 1; i <= nthreads; i++)
        alive[i] = i != 3;
    while (t->n < n) {
        uint32_t tid = 1 + (uint32_t)ex_rng_below(&r, nthreads);
        if (!alive[tid] || blocked[tid])
            continue;
        uint64_t k = ex_rng_below(&r, 20), rip = 0x400000 + 0x100 * tid + 8 * ex_rng_below(&r, 6);
        uint64_t shared = 0x1000 + 8 * ex_rng_below(&r, 4);
        if (k == 0 && tid == 1 && nthreads >= 3 && !alive[3]) {
            ex_trace_sync(t, 1, EX_THREAD_CREATE, 0, 3);
            alive[3] = true;
        } else if (k == 1 && runnable(alive, blocked, nthreads) >= 2) {
            ex_trace_sync(t, tid, EX_FUTEX_WAIT, FUTEX, 0);
            blocked[tid] = true;
            waitq[nq++] = tid;
        } else if (k == 2 && nq > 0) {
            ex_trace_sync(t, tid, EX_FUTEX_WAKE, FUTEX, 1);
            blocked[waitq[0]] = false;
            memmove(waitq, waitq + 1, --nq * sizeof *waitq);
        } else if (k < 6) {
            ex_trace_access(t, tid, EX_RMW, LOCK, 4, EX_F_ATOMIC, rip);
        } else if (k < 12) {
            ex_trace_access(t, tid, EX_READ, shared, 8, 0, rip);
        } else if (k < 17) {
            ex_trace_access(t, tid, EX_WRITE, shared, 8, 0, rip);
        } else {
            ex_trace_access(t, tid, EX_WRITE, 0x9000 + 0x100 * tid, 8, 0, rip);
        }
    }
    while (nq > 0) {
        uint32_t waker = 0;
        for (uint32_t i = 1; i <= nthreads && !waker; i++)
            if (alive[i] && !blocked[i])
                waker = i;
        ex_trace_sync(t, waker, EX_FUTEX_WAKE, FUTEX, 1);
        blocked[waitq[0]] = false;
        memmove(waitq, waitq + 1, --nq * sizeof *waitq);
    }
}

/* Schedule as canonical text without its note. */
static inline char *text_of(const struct ex_schedule *s)
{
    struct ex_schedule c;
    assert_int_equal(ex_schedule_copy(&c, s), 0);
    c.note[0] = 0;
    char *t = ex_schedule_to_text(&c);
    ex_schedule_free(&c);
    return t;
}

static inline void assert_schedule(const struct ex_schedule *s, const char *want)
{
    char *t = text_of(s);
    if (strcmp(t, want) != 0)
        fail_msg("schedule\n%s-- expected --\n%s", t, want);
    free(t);
}

static inline size_t pos_in(const uint32_t *order, size_t n, uint32_t e)
{
    for (size_t i = 0; i < n; i++)
        if (order[i] == e)
            return i;
    fail_msg("event %u not in order", e);
    return 0;
}

/* Predicts s and checks it is feasible: every event exactly once, no
 * divergence. Returns the order (malloc'd). */
static inline uint32_t *predict_full(const struct ex_analysis *a, const struct ex_schedule *s)
{
    uint32_t *order = malloc((a->tr->n + 1) * sizeof *order);
    size_t n;
    struct ex_cursor c;
    assert_int_equal(ex_model_predict(a, s, order, &n, &c), 0);
    assert_int_equal(n, a->tr->n);
    assert_int_equal(c.divergences, 0);
    uint8_t *seen = calloc(a->tr->n + 1, 1);
    for (size_t i = 0; i < n; i++) {
        assert_false(seen[order[i]]);
        seen[order[i]] = 1;
    }
    free(seen);
    return order;
}

#endif
