/* The condition-wait gate (condwait.h): which futex waits of a trace are
 * condition waits (musl's and glibc's shapes) and which are lock waits or
 * joins; the history learns it (h->cond_waits, h->cond_from); the portfolio's
 * wake slots open on it only, so a program whose runs only contend for locks
 * runs exactly the schedules of the layout without wake slots at every index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/condwait.h"
#include "explorer/explorer.h"
#include <stdio.h>
#include <string.h>

#include "online_sim.h"
#include "trace_fixture.h"

#define W 0x7f0000001000ull     /* the futex word */
#define W_NEXT (W + 4)          /* the word after it (a waiter count) */

static void acc(struct ex_trace *t, uint32_t tid, enum ex_kind k, uint64_t addr, uint16_t size)
{
    assert_non_null(ex_trace_access(t, tid, k, addr, size, k == EX_RMW ? EX_F_ATOMIC : 0,
                                    0x400000 + t->n));
}

static void wait_on(struct ex_trace *t, uint32_t tid, uint64_t addr, bool blocked)
{
    struct ex_event *e = ex_trace_sync(t, tid, EX_FUTEX_WAIT, addr, 0);
    assert_non_null(e);
    e->flags = blocked ? 0 : EX_F_NOBLOCK;
}

static void wake_on(struct ex_trace *t, uint32_t tid, uint64_t addr)
{
    assert_non_null(ex_trace_sync(t, tid, EX_FUTEX_WAKE, addr, 1));
}

/* musl's condition wait: the waiter stores 2 into its node's barrier, waits on
 * it; the signaler's swap unlocks it and wakes; the waiter re-reads it, CASes
 * its state (the next word), then locks the barrier. */
static void musl_cond_by(struct ex_trace *t, uint32_t waiter, uint32_t waker, bool blocked)
{
    acc(t, waiter, EX_WRITE, W, 4);
    wait_on(t, waiter, W, blocked);
    acc(t, waker, EX_RMW, W_NEXT, 4);
    acc(t, waker, EX_RMW, W, 4);
    wake_on(t, waker, W);
    acc(t, waiter, EX_READ, W, 4);
    acc(t, waiter, EX_RMW, W_NEXT, 4);
    acc(t, waiter, EX_RMW, W, 4);
}

static void musl_cond(struct ex_trace *t, bool blocked)
{
    musl_cond_by(t, 2, 3, blocked);
}

/* glibc's: the waiter reads __g_signals, waits; the signaler adds to it and
 * wakes; the waiter's reference count (another word), then the reload and at
 * once the grab (cmpxchg). */
static void glibc_cond_by(struct ex_trace *t, uint32_t waiter, uint32_t waker)
{
    acc(t, waiter, EX_READ, W, 4);
    wait_on(t, waiter, W, true);
    acc(t, waker, EX_RMW, W, 4);
    wake_on(t, waker, W);
    acc(t, waiter, EX_RMW, W_NEXT, 4);
    acc(t, waiter, EX_READ, W, 4);
    acc(t, waiter, EX_RMW, W, 4);
}

static void glibc_cond(struct ex_trace *t)
{
    glibc_cond_by(t, 2, 3);
}

static void test_condition_shapes(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    musl_cond(&t, true);
    assert_int_equal(ex_trace_cond_waits(&t), 1);
    ex_trace_free(&t);

    ex_trace_init(&t);
    glibc_cond(&t);
    assert_int_equal(ex_trace_cond_waits(&t), 1);
    /* the same twice, and an 8-byte access covering the word counts for it */
    glibc_cond(&t);
    acc(&t, 2, EX_READ, W - 4, 8);
    assert_int_equal(ex_trace_cond_waits(&t), 2);
    ex_trace_free(&t);

    /* A wait that did not block is no evidence. */
    ex_trace_init(&t);
    musl_cond(&t, false);
    assert_int_equal(ex_trace_cond_waits(&t), 0);
    ex_trace_free(&t);
    assert_int_equal(ex_trace_cond_waits(NULL), 0);
}

/* The waker's age: a consumer (T3) woken by a producer created before it (T2)
 * is woken by an older thread; the producer woken by the consumer is not. */
static void test_waker_age(void **state)
{
    (void)state;
    struct ex_trace t;
    uint64_t older = 9;
    ex_trace_init(&t);
    musl_cond_by(&t, 2, 3, true);
    glibc_cond_by(&t, 2, 3);
    assert_int_equal(ex_trace_cond_waits_older(&t, &older), 2);
    assert_int_equal(older, 0);
    musl_cond_by(&t, 3, 2, true);
    assert_int_equal(ex_trace_cond_waits_older(&t, &older), 3);
    assert_int_equal(older, 1);
    glibc_cond_by(&t, 4, 2);
    assert_int_equal(ex_trace_cond_waits_older(&t, &older), 4);
    assert_int_equal(older, 2);
    ex_trace_free(&t);
    /* a wake that woke nobody names no waker */
    ex_trace_init(&t);
    acc(&t, 3, EX_WRITE, W, 4);
    wait_on(&t, 3, W, true);
    assert_non_null(ex_trace_sync(&t, 2, EX_FUTEX_WAKE, W, 0));
    acc(&t, 3, EX_READ, W, 4);
    assert_int_equal(ex_trace_cond_waits_older(&t, &older), 1);
    assert_int_equal(older, 0);
    ex_trace_free(&t);
}

static void test_lock_shapes(void **state)
{
    (void)state;
    struct ex_trace t;
    /* musl's mutex: the holder's CAS; the waiter's CAS sets the waiters bit,
     * it waits; the unlock swaps and wakes; the waiter's count (next word), then
     * its CAS takes the lock. */
    ex_trace_init(&t);
    acc(&t, 3, EX_RMW, W, 4);
    acc(&t, 2, EX_RMW, W_NEXT, 4);
    acc(&t, 2, EX_RMW, W, 4);
    wait_on(&t, 2, W, true);
    acc(&t, 3, EX_RMW, W, 4);
    wake_on(&t, 3, W);
    acc(&t, 2, EX_RMW, W_NEXT, 4);
    acc(&t, 2, EX_READ, W, 4); /* the owner-type trylock reads first */
    acc(&t, 2, EX_RMW, W, 4);
    /* glibc's mutex with three contenders: the waiter reads 2 and waits at once
     * (no RMW before), then its xchg takes the lock */
    acc(&t, 4, EX_READ, W, 4);
    wait_on(&t, 4, W, true);
    wake_on(&t, 2, W);
    acc(&t, 4, EX_RMW, W, 4);
    /* musl's "wait until it changes" (__wait: the thread-list lock): reads, the
     * waiter count, wait, reload, the count again, then the CAS */
    acc(&t, 5, EX_READ, W, 4);
    acc(&t, 5, EX_RMW, W_NEXT, 4);
    wait_on(&t, 5, W, true);
    wake_on(&t, 4, W);
    acc(&t, 5, EX_READ, W, 4);
    acc(&t, 5, EX_RMW, W_NEXT, 4);
    acc(&t, 5, EX_RMW, W, 4);
    /* a join: reads of the thread's word around the wait, nothing after */
    acc(&t, 1, EX_READ, W + 64, 4);
    wait_on(&t, 1, W + 64, true);
    wake_on(&t, 6, W + 64);
    acc(&t, 1, EX_READ, W + 64, 4);
    /* a condition-shaped reload whose RMW comes only after the thread's next
     * wait: that evidence ends at the wait */
    wait_on(&t, 7, W + 128, true);
    acc(&t, 7, EX_READ, W + 128, 4);
    wait_on(&t, 7, W + 256, false);
    acc(&t, 7, EX_RMW, W + 128, 4);
    assert_int_equal(ex_trace_cond_waits(&t), 0);
    ex_trace_free(&t);
}

/* Any content is safe: random events (kinds, tids past EX_MAX_TID, sizes,
 * addresses at the top of the address space) give a count, never a crash. */
static void test_any_trace(void **state)
{
    (void)state;
    struct ex_rng rng;
    ex_rng_seed(&rng, 13);
    for (int round = 0; round < 200; round++) {
        struct ex_trace t;
        ex_trace_init(&t);
        fixture_random_events(&t, &rng, 64, W, 4, 3);
        assert_true(ex_trace_cond_waits(&t) <= t.n);
        ex_trace_free(&t);
    }
}

/* The history learns the gate from the run that shows one: the next index. */
static void test_history_learns(void **state)
{
    (void)state;
    struct ex_history h;
    ex_history_init(&h);
    struct ex_trace t;
    ex_trace_init(&t);
    acc(&t, 2, EX_RMW, W, 4);
    wait_on(&t, 2, W, true);
    wake_on(&t, 3, W);
    acc(&t, 2, EX_RMW, W, 4);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_false(h.cond_waits);
    ex_trace_free(&t);
    ex_trace_init(&t);
    glibc_cond(&t);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_true(h.cond_waits);
    assert_int_equal(h.cond_from, 4);
    ex_trace_free(&t);
    ex_history_free(&h);
}

/* A hand-off under a lock (T2 holds L while it waits for T4; T3 blocks on L and
 * is woken by T2's unlock: a child woken, h->woke) and, appended to each run's
 * trace, a contended mutex's futex wait (or a condition wait). */
static void build_handoff(struct sim_prog *p, struct sim_ev ev[SIM_MAX_THREADS + 1][16])
{
    memset(p, 0, sizeof *p);
    p->nthreads = 4;
    size_t k = 0;
    for (uint32_t c = 2; c <= 4; c++)
        ev[1][k++] = (struct sim_ev){ OP_CREATE, 0, 0x100 + c, c };
    for (uint32_t c = 2; c <= 4; c++)
        ev[1][k++] = (struct sim_ev){ OP_JOIN, 0, 0x200 + c, c };
    p->n[1] = k;
    ev[2][0] = (struct sim_ev){ OP_LOCK, L1, 0x2001, 0 };
    ev[2][1] = (struct sim_ev){ OP_JOIN, 0, 0x2002, 4 };
    ev[2][2] = (struct sim_ev){ OP_WRITE, X, 0x2003, 0 };
    ev[2][3] = (struct sim_ev){ OP_UNLOCK, L1, 0x2004, 0 };
    ev[2][4] = (struct sim_ev){ OP_WRITE, Z, 0x2005, 0 };
    p->n[2] = 5;
    ev[3][0] = (struct sim_ev){ OP_LOCK, L1, 0x3001, 0 };
    ev[3][1] = (struct sim_ev){ OP_WRITE, X, 0x3002, 0 };
    ev[3][2] = (struct sim_ev){ OP_UNLOCK, L1, 0x3003, 0 };
    ev[3][3] = (struct sim_ev){ OP_WRITE, Z, 0x3004, 0 };
    p->n[3] = 4;
    ev[4][0] = (struct sim_ev){ OP_WRITE, Z, 0x4001, 0 };
    ev[4][1] = (struct sim_ev){ OP_READ, X, 0x4002, 0 };
    p->n[4] = 2;
    for (uint32_t t = 1; t <= 4; t++) {
        p->ev[t] = ev[t];
        p->created[t] = t > 1;
    }
}

#define LAYOUT_INDEXES SIM_LAYOUT_INDEXES

/* The hand-off's runs end in a mutex wait, or in a condition wait. */
static void mutex_wait(struct ex_trace *tr)
{
    acc(tr, 3, EX_RMW, W, 4);
    acc(tr, 2, EX_RMW, W, 4);
    wait_on(tr, 2, W, true);
    wake_on(tr, 3, W);
    acc(tr, 2, EX_RMW, W, 4);
}

/* The old gate's signal, h->woke: cleared when shut (the layout without wake slots). */
static bool woke_gate(struct ex_history *h, bool shut)
{
    bool was = h->woke;
    if (shut)
        h->woke = false;
    return was;
}

/* Runs the portfolio's first LAYOUT_INDEXES schedules of the hand-off, each trace
 * followed by a mutex wait (cond false) or a condition wait; with no_woke, h->woke is
 * cleared after every run. */
static void run_layout(bool cond, bool no_woke, uint8_t *kinds, uint64_t *hash, bool *woke)
{
    struct sim_prog p;
    struct sim_ev ev[SIM_MAX_THREADS + 1][16];
    build_handoff(&p, ev);
    struct sim_layout L = {.p = &p, .seed = 5, .amend = cond ? glibc_cond : mutex_wait,
                           .gate = woke_gate};
    sim_run_layout(&L, no_woke, kinds, hash, woke);
}

/* Lock waits and woken children (h->woke) change nothing: every index runs the
 * same strategy and the same choices as with h->woke never set. A condition
 * wait (learnt from run 0) and no split update open the wake slots 2, 3 and 9. */
static void test_portfolio_layout(void **state)
{
    (void)state;
    uint8_t k1[LAYOUT_INDEXES], k2[LAYOUT_INDEXES];
    uint64_t h1[LAYOUT_INDEXES], h2[LAYOUT_INDEXES];
    bool woke1, woke2;
    run_layout(false, false, k1, h1, &woke1);
    run_layout(false, true, k2, h2, &woke2);
    assert_true(woke1); /* the hand-off woke a child: the old gate's signal */
    for (int i = 0; i < LAYOUT_INDEXES; i++) {
        assert_int_not_equal(k1[i], EX_ONLINE_WAKE);
        assert_int_equal(k1[i], k2[i]);
        assert_true(h1[i] == h2[i]);
    }
    run_layout(true, false, k2, h2, &woke2);
    int differ = 0;
    for (int i = 0; i < LAYOUT_INDEXES; i++) {
        if (i < 2)
            assert_true(k1[i] == k2[i] && h1[i] == h2[i]);
        differ += k1[i] != k2[i] || h1[i] != h2[i];
    }
    assert_int_equal(k2[2], EX_ONLINE_WAKE);
    assert_int_equal(k2[3], EX_ONLINE_WAKE);
    assert_int_not_equal(k2[5], EX_ONLINE_WAKE);
    assert_int_not_equal(k2[7], EX_ONLINE_WAKE);
    assert_true(k2[9] == EX_ONLINE_WAKE || k2[9] == EX_ONLINE_SWEEP);
    assert_true(differ >= 3);
}

/* The wake slots' order: creation order first (ordinal 0 at the first slot,
 * 1 at the second), the older half last first once a condition wait woken by
 * an older thread was known by the first slot; known later, the order stays.
 * The slots are 2 and 3, or 5 and 7 once a split update was known by then
 * (online_wake.c: a lost update beside the wait, found by the early slot's
 * pair and the first flips). */
static void test_slot_order(void **state)
{
    (void)state;
    struct ex_history h;
    ex_history_init(&h);
    struct ex_online o;
    ex_online_init(&o);
    h.cond_waits = true, h.cond_from = 1;
    static const struct { bool split; bool older; uint64_t from; uint32_t at_first, at_second; }
        cases[] = {
            { false, false, 0, 0, 1 }, { false, true, 1, 1, 0 }, { false, true, 2, 1, 0 },
            { false, true, 3, 0, 1 },  { true, false, 0, 0, 1 },  { true, true, 3, 1, 0 },
            { true, true, 5, 1, 0 },   { true, true, 6, 0, 1 },
        };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        h.split_updates = cases[c].split, h.split_from = 1;
        h.cond_older = cases[c].older, h.cond_older_from = cases[c].from;
        uint64_t first = cases[c].split ? 5 : 2, second = cases[c].split ? 7 : 3;
        uint64_t not_first = cases[c].split ? 2 : 5, not_second = cases[c].split ? 3 : 7;
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 2, first), 0);
        assert_int_equal(o.kind, EX_ONLINE_WAKE);
        assert_int_equal(o.wake.variant, cases[c].at_first);
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 2, second), 0);
        assert_int_equal(o.kind, EX_ONLINE_WAKE);
        assert_int_equal(o.wake.variant, cases[c].at_second);
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 2, not_first), 0);
        assert_int_not_equal(o.kind, EX_ONLINE_WAKE);
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 2, not_second), 0);
        assert_int_not_equal(o.kind, EX_ONLINE_WAKE);
    }
    ex_online_free(&o);
    ex_history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_condition_shapes),
        cmocka_unit_test(test_lock_shapes),
        cmocka_unit_test(test_waker_age),
        cmocka_unit_test(test_any_trace),
        cmocka_unit_test(test_history_learns),
        cmocka_unit_test(test_portfolio_layout),
        cmocka_unit_test(test_slot_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
