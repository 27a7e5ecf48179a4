/* The double-check gate (dcheck.h): which variables of a trace a thread reads
 * unlocked, re-reads under a lock by another instruction and then stores to
 * (and which near misses are not: the same instruction re-reading, no lock at
 * the re-read, the store after the release, a variable that is no DATA); the
 * history learns it (h->dchecks, h->dcheck_from, h->dcheck_var); the
 * portfolio's early slot runs the sweep's write window at it, only in a
 * program with no condition wait, and a program whose runs show none runs
 * exactly the schedules of the layout without it at every index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/dcheck.h"
#include "explorer/explorer.h"
#include <stdio.h>
#include <string.h>

#include "online_sim.h"
#include "trace_fixture.h"

#define P 0x409288ull /* the published pointer */
#define M 0x4092a0ull /* the lock word */

static void acc(struct ex_trace *t, uint32_t tid, enum ex_kind k, uint64_t addr, uint64_t rip)
{
    assert_non_null(ex_trace_access(t, tid, k, addr, 8, k == EX_RMW ? EX_F_ATOMIC : 0, rip));
}

/* Thread tid's get(): check P (rip 1), lock M, check P again (rip `again`),
 * store P before (stored_locked) or after the unlock. */
static void dcl(struct ex_trace *t, uint32_t tid, uint64_t again, bool stored_locked)
{
    acc(t, tid, EX_READ, P, 0x401);
    acc(t, tid, EX_RMW, M, 0x402);
    acc(t, tid, EX_READ, P, again);
    if (stored_locked)
        acc(t, tid, EX_WRITE, P, 0x404);
    acc(t, tid, EX_RMW, M, 0x405);
    if (!stored_locked)
        acc(t, tid, EX_WRITE, P, 0x404);
}

static void test_shapes(void **state)
{
    (void)state;
    struct ex_trace t;
    uint64_t first = 0;
    ex_trace_init(&t);
    dcl(&t, 2, 0x403, true);
    acc(&t, 3, EX_READ, P, 0x401);
    assert_int_equal(ex_trace_double_checks(&t, NULL, &first), 1);
    assert_true(first == P);
    ex_trace_free(&t);
    /* the same instruction re-reading (a predicate loop); the store after the
     * unlock; no lock taken between the reads; a lock only at the first read */
    ex_trace_init(&t);
    dcl(&t, 2, 0x401, true);
    dcl(&t, 3, 0x403, false);
    acc(&t, 4, EX_READ, P, 0x401);
    acc(&t, 4, EX_READ, P, 0x403);
    acc(&t, 4, EX_WRITE, P, 0x404);
    acc(&t, 5, EX_RMW, M + 8, 0x406);
    acc(&t, 5, EX_READ, P, 0x401);
    acc(&t, 5, EX_RMW, M + 8, 0x407);
    acc(&t, 5, EX_RMW, M, 0x402);
    acc(&t, 5, EX_READ, P, 0x403);
    acc(&t, 5, EX_READ, P + 8, 0x408);
    acc(&t, 5, EX_RMW, M, 0x405);
    assert_int_equal(ex_trace_double_checks(&t, NULL, NULL), 0);
    ex_trace_free(&t);
    /* only DATA variables count when a conflict map is given */
    ex_trace_init(&t);
    dcl(&t, 2, 0x403, true);
    struct ex_u64map conflict;
    ex_u64map_init(&conflict);
    assert_int_equal(ex_trace_double_checks(&t, &conflict, NULL), 0);
    assert_non_null(ex_u64map_put(&conflict, P, EX_CONFLICT_DATA, NULL));
    assert_int_equal(ex_trace_double_checks(&t, &conflict, NULL), 1);
    ex_u64map_free(&conflict);
    ex_trace_free(&t);
    assert_int_equal(ex_trace_double_checks(NULL, NULL, NULL), 0);
}

/* Any content is safe: random events, tids, flags and sizes. */
static void test_any_trace(void **state)
{
    (void)state;
    struct ex_rng rng;
    ex_rng_seed(&rng, 17);
    for (int round = 0; round < 50; round++) {
        struct ex_trace t;
        ex_trace_init(&t);
        fixture_random_events(&t, &rng, 300, P, 8, 8);
        assert_true(ex_trace_double_checks(&t, NULL, NULL) <= t.n);
        ex_trace_free(&t);
    }
}

/* A singleton: T2 checks X unlocked, locks L1, checks X again (by another
 * instruction; with `loop`, the same one), stores X and fills Y, unlocks; T3
 * finds X set by its unlocked check (the fast path) and reads Y. */
static void build_dcl(struct sim_prog *p, struct sim_ev ev[SIM_MAX_THREADS + 1][16], bool loop)
{
    memset(p, 0, sizeof *p);
    p->nthreads = 3;
    size_t k = 0;
    ev[1][k++] = (struct sim_ev){ OP_CREATE, 0, 0x102, 2 };
    ev[1][k++] = (struct sim_ev){ OP_CREATE, 0, 0x103, 3 };
    ev[1][k++] = (struct sim_ev){ OP_JOIN, 0, 0x202, 2 };
    ev[1][k++] = (struct sim_ev){ OP_JOIN, 0, 0x203, 3 };
    p->n[1] = k;
    p->ev[1] = ev[1];
    size_t n = 0;
    ev[2][n++] = (struct sim_ev){ OP_READ, X, 0x5001, 0 };
    ev[2][n++] = (struct sim_ev){ OP_LOCK, L1, 0x5002, 0 };
    ev[2][n++] = (struct sim_ev){ OP_READ, X, loop ? 0x5001 : 0x5003, 0 };
    ev[2][n++] = (struct sim_ev){ OP_WRITE, X, 0x5004, 0 };
    ev[2][n++] = (struct sim_ev){ OP_WRITE, Y, 0x5005, 0 };
    ev[2][n++] = (struct sim_ev){ OP_UNLOCK, L1, 0x5006, 0 };
    p->n[2] = n;
    n = 0;
    ev[3][n++] = (struct sim_ev){ OP_READ, X, 0x6001, 0 };
    ev[3][n++] = (struct sim_ev){ OP_READ, Y, 0x6007, 0 };
    p->n[3] = n;
    for (uint32_t t = 2; t <= 3; t++) {
        p->ev[t] = ev[t];
        p->created[t] = true;
    }
}

/* The condition wait glibc shows (condwait.h shape b), appended to a trace. */
static void glibc_cond(struct ex_trace *t)
{
    const uint64_t w = 0x7f0000001000ull;
    acc(t, 2, EX_READ, w, 0x601);
    struct ex_event *e = ex_trace_sync(t, 2, EX_FUTEX_WAIT, w, 0);
    assert_non_null(e);
    acc(t, 3, EX_RMW, w, 0x602);
    assert_non_null(ex_trace_sync(t, 3, EX_FUTEX_WAKE, w, 1));
    acc(t, 2, EX_READ, w, 0x603);
    acc(t, 2, EX_RMW, w, 0x604);
}

#define LAYOUT_INDEXES SIM_LAYOUT_INDEXES

static bool dcheck_gate(struct ex_history *h, bool shut)
{
    bool was = h->dchecks;
    if (shut)
        h->dchecks = false;
    return was;
}

/* Index 2, when it runs the sweep, aims its write window at X. */
static void check_slot(uint64_t idx, const struct ex_online *o)
{
    if (idx == 2 && o->kind == EX_ONLINE_SWEEP)
        assert_true(o->sweep.var == X && o->sweep.write && !o->sweep.pair);
}

/* The portfolio's first LAYOUT_INDEXES schedules of the singleton; with no_gate
 * h->dchecks is cleared after every run (the layout without the slot), with cond a
 * condition wait is appended to every run's trace. */
static void run_layout(bool loop, bool no_gate, bool cond, uint8_t *kinds, uint64_t *hash,
                       bool *gated)
{
    struct sim_prog p;
    struct sim_ev ev[SIM_MAX_THREADS + 1][16];
    build_dcl(&p, ev, loop);
    struct sim_layout L = {.p = &p, .seed = 7, .amend = cond ? glibc_cond : NULL,
                           .gate = dcheck_gate, .check = check_slot};
    sim_run_layout(&L, no_gate, kinds, hash, gated);
}

/* A loop re-reading X (no double check) runs every index as with the gate
 * forced off; so does a double check in a program with a condition wait; a
 * double check alone opens index 2 (the write window at X), 0-1 unchanged. */
static void test_portfolio_layout(void **state)
{
    (void)state;
    uint8_t k1[LAYOUT_INDEXES], k2[LAYOUT_INDEXES];
    uint64_t h1[LAYOUT_INDEXES], h2[LAYOUT_INDEXES];
    bool g1, g2;
    for (int cond = 0; cond < 2; cond++) {
        run_layout(!cond, false, cond, k1, h1, &g1);
        run_layout(!cond, true, cond, k2, h2, &g2);
        assert_int_equal(g1, cond);
        assert_int_not_equal(k1[2], EX_ONLINE_SWEEP);
        for (int i = 0; i < LAYOUT_INDEXES; i++) {
            assert_int_equal(k1[i], k2[i]);
            assert_true(h1[i] == h2[i]);
        }
    }
    run_layout(false, true, false, k1, h1, &g1);
    run_layout(false, false, false, k2, h2, &g2);
    assert_true(g1 && g2);
    int differ = 0;
    for (int i = 0; i < LAYOUT_INDEXES; i++) {
        if (i < 2)
            assert_true(k1[i] == k2[i] && h1[i] == h2[i]);
        differ += k1[i] != k2[i] || h1[i] != h2[i];
    }
    assert_int_equal(k2[2], EX_ONLINE_SWEEP);
    assert_int_not_equal(k1[2], EX_ONLINE_SWEEP);
    assert_true(differ >= 3);
}

/* The history learns the gate from the run that shows one: the next index. */
static void test_history_learns(void **state)
{
    (void)state;
    struct ex_history h;
    ex_history_init(&h);
    struct ex_trace t;
    ex_trace_init(&t);
    dcl(&t, 2, 0x401, true);
    acc(&t, 3, EX_READ, P, 0x401);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_false(h.dchecks);
    ex_trace_free(&t);
    ex_trace_init(&t);
    acc(&t, 3, EX_READ, P, 0x401); /* races with T2's store: P is DATA */
    dcl(&t, 2, 0x403, true);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_true(h.dchecks);
    assert_int_equal(h.dcheck_from, 3);
    assert_true(h.dcheck_var == P);
    ex_trace_free(&t);
    ex_history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_any_trace),
        cmocka_unit_test(test_history_learns),
        cmocka_unit_test(test_portfolio_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
