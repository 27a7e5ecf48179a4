/* The "window" strategy (online.h: PCT whose change points fall at window
 * steps only), the history's window estimate, and the spin test every
 * strategy relies on (a thread re-reading what its own last event read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_sim.h"

#define PRIV(t) (0x3000 + 0x100 * (uint64_t)(t))

/* One cue point of two enabled threads with the given pending accesses. */
static uint32_t step2(struct ex_online *o, uint8_t k1, uint64_t a1, uint64_t rip1, uint8_t k2,
                      uint64_t a2, uint64_t rip2)
{
    struct ex_tidset en;
    ex_tidset_clear(&en);
    ex_tidset_add(&en, 1);
    ex_tidset_add(&en, 2);
    struct ex_pending p[2] = { { 1, k1, a1, 8, true, rip1 }, { 2, k2, a2, 8, true, rip2 } };
    struct ex_view v = { &en, p, 2, 0 };
    return ex_online_next(o, &v);
}

/* PCT with d = 1 runs the highest thread that does not spin. A spin is a
 * re-read of a word whose last access was the thread's own read by the same
 * instruction, nobody having written it since and the thread having only read
 * since (a poll of one word or several: musl's mutex spins on the lock word and
 * the waiter count). A read of the word by other code, or after the thread's
 * own writes, is no spin (main reads its stack canary on entry to and return
 * from each pthread_create: taken for a spin, PCT ran the thread it had just
 * preempted instead of main). */
static void test_spin_is_a_pure_reread(void **state)
{
    (void)state;
    struct ex_online o;
    struct ex_online_params p;
    ex_online_init(&o);
    ex_online_params_default(&p);
    p.depth = 1;
    unsigned checked = 0;
    for (uint64_t idx = 0; idx < 20; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &p, NULL, 7, idx), 0);
        /* Both read their own word first: the higher one, h, goes. */
        uint32_t h = step2(&o, EX_READ, X, 0x10, EX_READ, Y, 0x20);
        uint64_t ha = h == 1 ? X : Y, la = h == 1 ? Y : X;
        uint64_t hr = h == 1 ? 0x10 : 0x20, lr = h == 1 ? 0x20 : 0x10;
#define STEP(hk, hadr, hrip, lk, ladr, lrip)                                       \
    (h == 1 ? step2(&o, hk, hadr, hrip, lk, ladr, lrip)                             \
            : step2(&o, lk, ladr, lrip, hk, hadr, hrip))
        /* h re-reads its word by the same instruction: a spin, the other goes. */
        assert_int_equal(STEP(EX_READ, ha, hr, EX_READ, la, lr), 3 - h);
        /* The other ran, h has only read since: still a spin; the other now
         * re-reads too, so both spin and the higher, h, goes. */
        assert_int_equal(STEP(EX_READ, ha, hr, EX_READ, la, lr), h);
        /* A poll of two words: h reads Z, then its first word again by the first
         * instruction: a spin. */
        assert_int_equal(STEP(EX_READ, Z, 0x30, EX_WRITE, Z + 16, 0x40), h);
        assert_int_equal(STEP(EX_READ, ha, hr, EX_WRITE, Z + 16, 0x40), 3 - h);
        /* The same word by another instruction: no spin. */
        ex_online_begin(&o, EX_ONLINE_PCT, &p, NULL, 7, idx);
        assert_int_equal(step2(&o, EX_READ, X, 0x10, EX_READ, Y, 0x20), h);
        assert_int_equal(STEP(EX_READ, ha, hr + 1, EX_READ, la, lr), h);
        /* h writes its own word Z + 24, then reads ha again: no spin. */
        assert_int_equal(STEP(EX_WRITE, Z + 24, 0x50, EX_READ, la, lr), h);
        assert_int_equal(STEP(EX_READ, ha, hr + 1, EX_READ, la, lr), h);
        /* Another thread wrote the word since h read it: no spin either. */
        assert_int_equal(STEP(EX_READ, ha, hr + 1, EX_READ, la, lr), 3 - h); /* spins */
        assert_int_equal(STEP(EX_READ, ha, hr + 1, EX_WRITE, ha, 0x60), 3 - h);
        assert_int_equal(STEP(EX_READ, ha, hr + 1, EX_READ, la, lr), h);
#undef STEP
        checked++;
    }
    assert_int_equal(checked, 20);
    ex_online_free(&o);
}

/* T1 makes a transient state (X = 1, then X = 0) among private writes; T2,
 * after private work, reads X. The bug: T2 reads the 1. Thread 3 locks and
 * unlocks around private writes (SYNC racy steps that are no windows). */
static void build_transient(struct sim_prog *p, struct sim_ev ev[4][8])
{
    memset(p, 0, sizeof *p);
    p->nthreads = 3;
    size_t n = 0;
    ev[1][n++] = (struct sim_ev){ OP_WRITE, PRIV(1), 0x100, 0 };
    ev[1][n++] = (struct sim_ev){ OP_WRITE, X, 0x101, 0 };      /* X = 1 */
    ev[1][n++] = (struct sim_ev){ OP_WRITE, X, 0x102, 0 };      /* X = 0: its window */
    ev[1][n++] = (struct sim_ev){ OP_WRITE, PRIV(1) + 8, 0x103, 0 };
    p->n[1] = n;
    n = 0;
    ev[2][n++] = (struct sim_ev){ OP_WRITE, PRIV(2), 0x200, 0 };
    ev[2][n++] = (struct sim_ev){ OP_WRITE, PRIV(2) + 8, 0x201, 0 };
    ev[2][n++] = (struct sim_ev){ OP_READ, X, 0x202, 0 };
    ev[2][n++] = (struct sim_ev){ OP_WRITE, PRIV(2) + 16, 0x203, 0 };
    p->n[2] = n;
    n = 0;
    for (int i = 0; i < 2; i++) {
        ev[3][n++] = (struct sim_ev){ OP_LOCK, L1, 0x300 + 4 * (uint64_t)i, 0 };
        ev[3][n++] = (struct sim_ev){ OP_WRITE, PRIV(3) + 8 * (uint64_t)i, 0x301 + 4 * (uint64_t)i, 0 };
        ev[3][n++] = (struct sim_ev){ OP_UNLOCK, L1, 0x302 + 4 * (uint64_t)i, 0 };
    }
    p->n[3] = n;
    for (uint32_t t = 1; t <= 3; t++)
        p->ev[t] = ev[t];
}

struct window_ctx {
    struct sim_run *r;
    uint32_t nfired;
    unsigned fired, at_window, lowered_ran;
    uint32_t lowered;   /* the thread the last change point lowered (d = 2: one) */
};

/* At a change point the thread lowered had just made a racy access to X (its
 * previous event in the trace), and is about to make another access. After
 * it, the lowered thread runs only when no other thread is enabled. */
static void observe_window(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                           uint32_t chosen, uint32_t prev)
{
    (void)prev;
    struct window_ctx *c = ctx;
    if (c->lowered && chosen == c->lowered && ex_tidset_count(en) > 1)
        c->lowered_ran++;
    if (o->pct.nfired == c->nfired)
        return;
    c->nfired = o->pct.nfired;
    c->fired++;
    uint32_t t = o->pct.fired_tid[o->pct.nfired - 1];
    c->lowered = t;
    for (size_t i = c->r->tr.n; i-- > 0;)
        if (c->r->tr.ev[i].tid == t) {
            c->at_window += c->r->tr.ev[i].addr == X;
            break;
        }
}

static void test_window_change_points(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[4][8];
    build_transient(&p, ev);
    struct ex_online o;
    struct ex_history h;
    ex_online_init(&o);
    ex_history_init(&h);
    /* Learn X as DATA (and the lock as SYNC) from random walks. */
    for (uint64_t idx = 0; idx < 6; idx++) {
        struct sim_run r;
        sim_init(&r, &p);
        ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, &h, 1, idx);
        sim_run_online(&r, &o, NULL, NULL);
        assert_int_equal(ex_history_add_run(&h, NULL, 0, &r.tr, EX_OUTCOME_NORMAL, NULL), 0);
        sim_free(&r);
    }
    assert_true(ex_history_conflict_class(&h, X) & EX_CONFLICT_DATA);
    uint64_t kw = ex_history_window_estimate(&h, 100);
    assert_true(kw >= 1 && kw < ex_history_racy_estimate(&h, 100));
    struct ex_online_params params;
    ex_online_params_default(&params);
    params.depth = 2;
    unsigned hits[2] = { 0 }, fired = 0, at_window = 0, lowered_ran = 0;
    const enum ex_online_kind kinds[2] = { EX_ONLINE_WINDOW, EX_ONLINE_PCT };
    for (int k = 0; k < 2; k++)
        for (uint64_t idx = 0; idx < 600; idx++) {
            struct sim_run r;
            sim_init(&r, &p);
            struct window_ctx c = { &r, 0, 0, 0, 0, 0 };
            assert_int_equal(ex_online_begin(&o, kinds[k], &params, &h, 11, idx), 0);
            if (k == 0) {
                assert_true(o.pct.windows && o.pct.data_only);
                assert_int_equal(o.pct.k, kw);
            }
            sim_run_online(&r, &o, k == 0 ? observe_window : NULL, &c);
            hits[k] += sim_reads_from(&r.tr, 0x202) == 0x101;
            fired += c.fired;
            at_window += c.at_window;
            lowered_ran += c.lowered_ran;
            sim_free(&r);
        }
    print_message("window: %u change points, %u at X's window; T2 read the transient 1 in %u "
                  "of 600 runs (pct over all racy steps: %u)\n", fired, at_window, hits[0],
                  hits[1]);
    assert_true(fired > 100);
    assert_int_equal(at_window, fired);   /* every change point at a window */
    assert_int_equal(lowered_ran, 0);     /* the lowered thread stays preempted */
    /* T1 above T2 (1/2) and the change point at X = 1's window (1 of kw). */
    assert_true(hits[0] >= 600 / (4 * kw));
    assert_true(hits[0] > hits[1]);
    ex_history_free(&h);
    ex_online_free(&o);
}

/* The history's window count: the access right after a racy DATA access of the
 * same thread, made while another thread was alive. */
static void test_history_windows(void **state)
{
    (void)state;
    struct ex_history h;
    struct ex_trace t;
    ex_history_init(&h);
    ex_trace_init(&t);
    ex_trace_access(&t, 1, EX_WRITE, X, 8, 0, 0x10);   /* races with 2's read */
    ex_trace_access(&t, 1, EX_WRITE, Y, 8, 0, 0x11);   /* window 1 */
    ex_trace_access(&t, 1, EX_WRITE, Z, 8, 0, 0x12);   /* not one: Y is not racy */
    ex_trace_access(&t, 2, EX_READ, X, 8, 0, 0x20);
    ex_trace_access(&t, 2, EX_WRITE, Z + 8, 8, 0, 0x21); /* window 2 */
    ex_trace_access(&t, 1, EX_WRITE, Z + 16, 8, 0, 0x13); /* thread 1 alive till here */
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(h.total_windows, 2);
    assert_int_equal(ex_history_window_estimate(&h, 99), 2);
    assert_int_equal(ex_history_window_estimate(NULL, 99), 99);
    /* A thread alone has no windows: thread 3 after both ended. */
    ex_trace_free(&t);
    ex_trace_init(&t);
    ex_trace_access(&t, 3, EX_WRITE, X, 8, 0, 0x30);
    ex_trace_access(&t, 3, EX_WRITE, Y, 8, 0, 0x31);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(h.total_windows, 2);
    assert_int_equal(ex_history_window_estimate(&h, 99), 1); /* (2 + 0) / 2 runs */
    ex_trace_free(&t);
    ex_history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spin_is_a_pure_reread),
        cmocka_unit_test(test_window_change_points),
        cmocka_unit_test(test_history_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
