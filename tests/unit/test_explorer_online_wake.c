/* The "wake" strategy (online.h, online_wake.c): start orders (the creator
 * first, its children in creation order or the older half last) and the wake
 * rules (the woken thread overtaken, or the waker preempted); the wake note
 * every strategy keeps; the portfolio's wake slots; the sweep's pair target
 * they use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdio.h>
#include <string.h>

#include "online_sim.h"

#define OWN(t) (0x5000 + 0x100 * (uint64_t)(t))

/* T1 (the creator) creates T2..T1+n and joins them; each child writes its own
 * variable twice. */
static void build_fan(struct sim_prog *p, struct sim_ev ev[SIM_MAX_THREADS + 1][16], uint32_t n)
{
    memset(p, 0, sizeof *p);
    p->nthreads = 1 + n;
    size_t k = 0;
    for (uint32_t c = 2; c <= 1 + n; c++)
        ev[1][k++] = (struct sim_ev){ OP_CREATE, 0, 0x100 + c, c };
    for (uint32_t c = 2; c <= 1 + n; c++)
        ev[1][k++] = (struct sim_ev){ OP_JOIN, 0, 0x200 + c, c };
    p->n[1] = k;
    p->ev[1] = ev[1];
    for (uint32_t c = 2; c <= 1 + n; c++) {
        ev[c][0] = (struct sim_ev){ OP_WRITE, OWN(c), 0x1000 * c, 0 };
        ev[c][1] = (struct sim_ev){ OP_WRITE, OWN(c), 0x1000 * c + 1, 0 };
        p->n[c] = 2;
        p->ev[c] = ev[c];
        p->created[c] = true;
    }
}

/* The order of the children's first events. */
static void first_events(const struct ex_trace *tr, uint32_t *order, uint32_t n)
{
    uint32_t k = 0;
    for (size_t i = 0; i < tr->n && k < n; i++)
        if (tr->ev[i].tid != 1 && tr->ev[i].rip % 0x1000 == 0)
            order[k++] = tr->ev[i].tid;
    assert_int_equal(k, n);
}

/* Variant 0 (creation order): the creator creates every child before any runs,
 * then they start in creation order; variant 1 (the older half last): of 5
 * children, 5 6 2 3 4 (ceil(5/2) = 3 go last). A schedule replays with the
 * cursor. */
static void test_wake_start_orders(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[SIM_MAX_THREADS + 1][16];
    build_fan(&p, ev, 5);
    struct ex_online o;
    ex_online_init(&o);
    static const uint32_t want[2][5] = { { 2, 3, 4, 5, 6 }, { 5, 6, 2, 3, 4 } };
    for (uint64_t idx = 0; idx < 2; idx++) {
        struct sim_run r;
        run_index(&p, &o, EX_ONLINE_WAKE, NULL, NULL, 9, idx, &r);
        assert_false(r.deadlock);
        /* every create before the first child event */
        assert_true(sim_index_of(&r.tr, 0x106) < sim_index_of(&r.tr, 0x2000));
        uint32_t got[5];
        first_events(&r.tr, got, 5);
        assert_memory_equal(got, want[idx], sizeof got);
        char note[EX_NOTE_LEN];
        sim_assert_replays(&p, &o, &r, note, sizeof note);
        assert_non_null(strstr(note, idx ? "start=older-half-last" : "start=creation"));
        sim_free(&r);
    }
    ex_online_free(&o);
}

/* A wake: T2 takes L and waits for T4 (a join while holding it); T3 blocks on
 * L; T4 ends, T2 goes on, writes X, unlocks L (T3 is WOKEN there), then writes
 * Z; T3 writes X, then Z. The woken rule lowers T3 at its wake, so T2's write of
 * Z comes before T3's write of X; the waker rule lowers T2 instead, so T3's
 * write of X comes before T2's write of Z. */
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
    k = 0;
    ev[2][k++] = (struct sim_ev){ OP_LOCK, L1, 0x2001, 0 };
    ev[2][k++] = (struct sim_ev){ OP_JOIN, 0, 0x2002, 4 };
    ev[2][k++] = (struct sim_ev){ OP_WRITE, X, 0x2003, 0 };
    ev[2][k++] = (struct sim_ev){ OP_UNLOCK, L1, 0x2004, 0 };
    ev[2][k++] = (struct sim_ev){ OP_WRITE, Z, 0x2005, 0 };
    p->n[2] = k;
    k = 0;
    ev[3][k++] = (struct sim_ev){ OP_LOCK, L1, 0x3001, 0 };
    ev[3][k++] = (struct sim_ev){ OP_WRITE, X, 0x3002, 0 };
    ev[3][k++] = (struct sim_ev){ OP_UNLOCK, L1, 0x3003, 0 };
    ev[3][k++] = (struct sim_ev){ OP_WRITE, Z, 0x3004, 0 };
    p->n[3] = k;
    k = 0;
    ev[4][k++] = (struct sim_ev){ OP_WRITE, Y, 0x4001, 0 };
    ev[4][k++] = (struct sim_ev){ OP_WRITE, Y, 0x4002, 0 };
    p->n[4] = k;
    for (uint32_t t = 1; t <= 4; t++) {
        p->ev[t] = ev[t];
        p->created[t] = t > 1;
    }
}

struct wake_check {
    uint64_t wakes, woken_chosen, waker_chosen;
};

/* At every cue point with a wake whose waker (the thread chosen last) can still
 * run: whether the woken thread or the waker was chosen. */
static void observe_wake(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                         uint32_t chosen, uint32_t prev)
{
    struct wake_check *c = ctx;
    if (ex_tidset_empty(&o->wake.woken) || ex_tidset_count(en) < 2)
        return;
    if (!ex_tidset_has(en, prev) || ex_tidset_has(&o->wake.woken, prev))
        return; /* the waker ended (a join's wake) or was woken itself: no rule to check */
    c->wakes++;
    c->woken_chosen += ex_tidset_has(&o->wake.woken, chosen);
    c->waker_chosen += chosen == prev;
}

static void test_wake_rules(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[SIM_MAX_THREADS + 1][16];
    build_handoff(&p, ev);
    struct ex_online o;
    ex_online_init(&o);
    /* variant 2: creation order, woken lowered; variant 0: creation order, waker lowered */
    for (uint64_t idx = 0; idx < 3; idx += 2) {
        struct sim_run r;
        struct wake_check c = { 0 };
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_WAKE, NULL, NULL, 4, idx), 0);
        sim_init(&r, &p);
        sim_run_online(&r, &o, observe_wake, &c);
        assert_false(r.deadlock);
        assert_true(c.wakes >= 1);
        assert_true(o.wake.lowered >= 1);
        bool woken_rule = idx == 2;
        assert_int_equal(c.woken_chosen, woken_rule ? 0 : c.wakes);
        assert_int_equal(c.waker_chosen, woken_rule ? c.wakes : 0);
        long t2z = sim_index_of(&r.tr, 0x2005), t3x = sim_index_of(&r.tr, 0x3002);
        assert_true(woken_rule ? t2z < t3x : t3x < t2z);
        sim_free(&r);
    }
    /* PCT at random never lowers anyone at a wake: both orders appear */
    uint32_t before = 0, runs = 0;
    for (uint64_t idx = 0; idx < 200; idx++) {
        struct sim_run r;
        run_index(&p, &o, EX_ONLINE_PCT, NULL, NULL, 4, idx, &r);
        long t2z = sim_index_of(&r.tr, 0x2005), t3x = sim_index_of(&r.tr, 0x3002);
        before += t2z < t3x, runs++;
        sim_free(&r);
    }
    assert_true(before > 0 && before < runs);
    ex_online_free(&o);
}

/* Every strategy notes wakes: a run with one (T3 woken by T2) teaches h->woke
 * from the next index; a run without (the fan: only the creator is woken, by
 * its joins) teaches nothing. */
static void test_wake_learnt(void **state)
{
    (void)state;
    struct sim_prog fan, hand;
    struct sim_ev ev1[SIM_MAX_THREADS + 1][16], ev2[SIM_MAX_THREADS + 1][16];
    build_fan(&fan, ev1, 3);
    build_handoff(&hand, ev2);
    struct ex_history h;
    ex_history_init(&h);
    struct ex_online o;
    ex_online_init(&o);
    for (uint64_t idx = 0; idx < 6; idx++) {
        struct sim_run r;
        run_index(&fan, &o, EX_ONLINE_POS, NULL, &h, 1, idx, &r);
        learn(&h, &o, &r, NULL);
        assert_true(ex_history_learn_flips(&h, &o) >= 0);
        assert_false(h.woke);
        sim_free(&r);
    }
    struct sim_run r;
    run_index(&hand, &o, EX_ONLINE_WAKE, NULL, &h, 1, 6, &r);
    assert_true(o.wake.child_wakes >= 1);
    learn(&h, &o, &r, NULL);
    assert_true(ex_history_learn_flips(&h, &o) >= 0);
    assert_true(h.woke);
    assert_int_equal(h.woke_from, 7);
    sim_free(&r);
    ex_online_free(&o);
    ex_history_free(&h);
}

/* The kind the portfolio's schedule `index` (seed 3) runs; *o holds its state. */
static uint8_t portfolio_kind(struct ex_online *o, const struct ex_history *h, uint64_t index)
{
    assert_int_equal(ex_online_begin(o, EX_ONLINE_PORTFOLIO, NULL, h, 3, index), 0);
    return o->kind;
}

/* The portfolio: wake slots at 2 and 3 (the wake strategy's first two
 * variants; 5 and 7 where not known by then, or once a split update was) and 9
 * (the sweep's pair of the second newest DATA variable) once a run showed a
 * condition wait (h.cond_waits, condwait.h); not before, and not for a run
 * that only woke a child (mutex contention: h.woke); every other index keeps
 * the virtual index. */
static void test_portfolio_wake_slots(void **state)
{
    (void)state;
    struct ex_history h;
    ex_history_init(&h);
    struct ex_online o;
    ex_online_init(&o);
    for (uint64_t idx = 0; idx < 24; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, idx), 0);
        assert_int_not_equal(o.kind, EX_ONLINE_WAKE);
        assert_int_equal(o.kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, idx));
    }
    h.woke = true, h.woke_from = 0; /* a child woken: no slot by itself */
    for (uint64_t idx = 0; idx < 24; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, idx), 0);
        assert_int_equal(o.kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, idx));
    }
    h.cond_waits = true, h.cond_from = 6; /* learnt by run 5: slots 7 and 9 only */
    uint64_t wakes = 0;
    for (uint64_t idx = 0; idx < 24; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, idx), 0);
        if (idx == 7) {
            assert_int_equal(o.kind, EX_ONLINE_WAKE);
            assert_int_equal(o.wake.variant, 1);
        } else if (idx == 9) {
            assert_int_equal(o.kind, EX_ONLINE_WAKE); /* no DATA variable: no pair */
            assert_int_equal(o.wake.variant, 2);
        } else {
            assert_int_equal(o.kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, idx - wakes));
        }
        wakes += idx == 7 || idx == 9;
    }
    /* With DATA variables X (born run 1) and Y (run 3): slot 9 is X's pair (the
     * second newest); the sweep slots keep theirs. */
    assert_non_null(ex_u64map_put(&h.conflict, X, EX_CONFLICT_DATA, NULL));
    assert_non_null(ex_u64map_put(&h.conflict, Y, EX_CONFLICT_DATA, NULL));
    assert_non_null(ex_u64map_put(&h.flips.born, X, 1, NULL));
    assert_non_null(ex_u64map_put(&h.flips.born, Y, 3, NULL));
    h.cond_from = 0;
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, 2), 0);
    assert_int_equal(o.kind, EX_ONLINE_WAKE);
    assert_int_equal(o.wake.variant, 0);
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, 9), 0);
    assert_int_equal(o.kind, EX_ONLINE_SWEEP);
    assert_true(o.sweep.pair);
    assert_int_equal(o.sweep.var, X);
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, 6), 0);
    assert_int_equal(o.kind, EX_ONLINE_SWEEP);
    assert_false(o.sweep.pair);
    assert_true(o.sweep.write); /* the sweep's second schedule: Y's write window */
    char buf[160];
    ex_online_describe(&o, buf, sizeof buf);
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, 3), 0);
    ex_online_describe(&o, buf, sizeof buf);
    assert_string_equal(buf, "portfolio/wake seed=3 index=3 start=older-half-last lower=woken "
                             "wakes=0 lowered=0");
    /* Indexes 5 and 7 are the virtual index's again: the two wake slots
     * before them are left out. */
    assert_int_not_equal(portfolio_kind(&o, &h, 5), EX_ONLINE_WAKE);
    assert_int_not_equal(portfolio_kind(&o, &h, 7), EX_ONLINE_WAKE);
    /* A split update known by index 2 (thr4-barrier's count bumped outside the
     * lock): the variants go to 5 and 7, index 2 is the early slot's pair. */
    h.split_updates = true, h.split_from = 2, h.split_var = X;
    assert_int_equal(portfolio_kind(&o, &h, 2), EX_ONLINE_SWEEP);
    assert_int_not_equal(portfolio_kind(&o, &h, 3), EX_ONLINE_WAKE);
    assert_int_equal(portfolio_kind(&o, &h, 5), EX_ONLINE_WAKE);
    assert_int_equal(o.wake.variant, 0);
    assert_int_equal(portfolio_kind(&o, &h, 7), EX_ONLINE_WAKE);
    assert_int_equal(o.wake.variant, 1);
    /* Known only from index 3: slot 0 stays at 2 (the layout already run does
     * not change), slot 1 goes to 7. */
    h.split_from = 3;
    assert_int_equal(portfolio_kind(&o, &h, 2), EX_ONLINE_WAKE);
    assert_int_not_equal(portfolio_kind(&o, &h, 3), EX_ONLINE_WAKE);
    assert_int_equal(portfolio_kind(&o, &h, 7), EX_ONLINE_WAKE);
    assert_int_equal(o.wake.variant, 1);
    ex_online_free(&o);
    ex_history_free(&h);
}

/* A reference count with plain loads and stores: main holds 1; T2 and T3 each
 * get (read, write +1), then put (read, write -1). The bug: the count reaches
 * 0 while main still holds its reference (a lost increment that lands before
 * the other thread's put). Replays the trace with values. */
static bool count_hits_zero(const struct ex_trace *tr)
{
    long val = 1, loaded[SIM_MAX_THREADS + 1] = { 0 };
    for (size_t i = 0; i < tr->n; i++) {
        const struct ex_event *e = &tr->ev[i];
        if (e->addr != X || e->tid > SIM_MAX_THREADS)
            continue;
        if (e->kind == EX_READ)
            loaded[e->tid] = val;
        else if (e->kind == EX_WRITE && (val = loaded[e->tid] + ((e->rip & 0xf) == 2 ? 1 : -1)) == 0)
            return true;
    }
    return false;
}

static void build_refcount(struct sim_prog *p, struct sim_ev ev[SIM_MAX_THREADS + 1][16])
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
    for (uint32_t t = 2; t <= 3; t++) {
        uint64_t b = 0x1000 * t;
        ev[t][0] = (struct sim_ev){ OP_READ, X, b + 1, 0 };  /* get */
        ev[t][1] = (struct sim_ev){ OP_WRITE, X, b + 2, 0 };
        ev[t][2] = (struct sim_ev){ OP_WRITE, OWN(t), b + 3, 0 }; /* use */
        ev[t][3] = (struct sim_ev){ OP_READ, X, b + 4, 0 };  /* put */
        ev[t][4] = (struct sim_ev){ OP_WRITE, X, b + 5, 0 };
        p->n[t] = 5;
        p->ev[t] = ev[t];
        p->created[t] = true;
    }
}

/* The sweep's pair target of X (its read window, then the other thread's
 * write window of X) meets the early zero in every run, with two
 * preemptions; X's read target alone (one preemption) never does. */
static void test_sweep_pair(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[SIM_MAX_THREADS + 1][16];
    build_refcount(&p, ev);
    struct ex_history h;
    ex_history_init(&h);
    assert_non_null(ex_u64map_put(&h.conflict, X, EX_CONFLICT_DATA, NULL));
    assert_non_null(ex_u64map_put(&h.flips.born, X, 0, NULL));
    h.traced = 1, h.total_windows = 4;
    uint64_t first = ex_online_sweep_first(&h);
    struct ex_online o;
    ex_online_init(&o);
    for (int pair = 0; pair < 2; pair++) {
        uint32_t bugs = 0;
        for (uint64_t seed = 1; seed <= 100; seed++) {
            struct sim_run r;
            run_index(&p, &o, EX_ONLINE_SWEEP, NULL, &h, seed, first + (pair ? 2 : 0), &r);
            assert_int_equal(o.sweep.pair, pair);
            assert_int_equal(o.pct.nfired, pair ? 2 : 1);
            if (pair)
                assert_int_not_equal(o.pct.fired_tid[0], o.pct.fired_tid[1]);
            bugs += count_hits_zero(&r.tr);
            sim_free(&r);
        }
        assert_int_equal(bugs, pair ? 100 : 0);
    }
    ex_online_free(&o);
    ex_history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wake_start_orders),
        cmocka_unit_test(test_wake_rules),
        cmocka_unit_test(test_wake_learnt),
        cmocka_unit_test(test_portfolio_wake_slots),
        cmocka_unit_test(test_sweep_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
