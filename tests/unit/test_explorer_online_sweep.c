/* The "sweep" strategy (online.h, online_sweep.c): one preemption, at the first
 * window opened by a read (then a write) of each DATA variable, newest first,
 * then at the n-th window of the run; and its slots in the portfolio. */
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

/* Lost update: T1 and T2 each read X, do private work, write X back; T3 writes Y
 * (read by T1 at its end) under a lock. The bug: the other thread's write of X
 * falls between a thread's read and its write. */
static void build_counter(struct sim_prog *p, struct sim_ev ev[4][8])
{
    memset(p, 0, sizeof *p);
    p->nthreads = 3;
    size_t n = 0;
    ev[1][n++] = (struct sim_ev){ OP_WRITE, PRIV(1), 0x100, 0 };
    ev[1][n++] = (struct sim_ev){ OP_READ, X, 0x101, 0 };
    ev[1][n++] = (struct sim_ev){ OP_WRITE, PRIV(1) + 8, 0x102, 0 };
    ev[1][n++] = (struct sim_ev){ OP_WRITE, X, 0x103, 0 };
    ev[1][n++] = (struct sim_ev){ OP_READ, Y, 0x104, 0 };
    p->n[1] = n;
    n = 0;
    ev[2][n++] = (struct sim_ev){ OP_READ, X, 0x201, 0 };
    ev[2][n++] = (struct sim_ev){ OP_WRITE, PRIV(2), 0x202, 0 };
    ev[2][n++] = (struct sim_ev){ OP_WRITE, X, 0x203, 0 };
    p->n[2] = n;
    n = 0;
    ev[3][n++] = (struct sim_ev){ OP_LOCK, L1, 0x300, 0 };
    ev[3][n++] = (struct sim_ev){ OP_WRITE, Y, 0x301, 0 };
    ev[3][n++] = (struct sim_ev){ OP_UNLOCK, L1, 0x302, 0 };
    p->n[3] = n;
    for (uint32_t t = 1; t <= 3; t++)
        p->ev[t] = ev[t];
}

static bool lost_update(const struct ex_trace *tr)
{
    long r1 = sim_index_of(tr, 0x101), w1 = sim_index_of(tr, 0x103);
    long r2 = sim_index_of(tr, 0x201), w2 = sim_index_of(tr, 0x203);
    return (r1 < w2 && w2 < w1) || (r2 < w1 && w1 < w2);
}

/* Publish, then fill: T1 checks P, publishes it, then fills F; T2 reads P,
 * then F. The bug: T2 sees P published and F not filled. */
static void build_publish(struct sim_prog *p, struct sim_ev ev[4][8])
{
    memset(p, 0, sizeof *p);
    p->nthreads = 2;
    size_t n = 0;
    ev[1][n++] = (struct sim_ev){ OP_READ, X, 0x101, 0 };
    ev[1][n++] = (struct sim_ev){ OP_WRITE, X, 0x102, 0 };  /* publish */
    ev[1][n++] = (struct sim_ev){ OP_WRITE, Y, 0x103, 0 };  /* fill */
    ev[1][n++] = (struct sim_ev){ OP_WRITE, PRIV(1), 0x104, 0 };
    p->n[1] = n;
    n = 0;
    ev[2][n++] = (struct sim_ev){ OP_WRITE, PRIV(2), 0x200, 0 };
    ev[2][n++] = (struct sim_ev){ OP_READ, X, 0x201, 0 };
    ev[2][n++] = (struct sim_ev){ OP_READ, Y, 0x202, 0 };
    p->n[2] = n;
    for (uint32_t t = 1; t <= 2; t++)
        p->ev[t] = ev[t];
}

static bool half_built(const struct ex_trace *tr)
{
    return sim_reads_from(tr, 0x201) == 0x102 && sim_reads_from(tr, 0x202) == 0;
}

/* Learns the program's conflict variables and flips from random walks, as the
 * VMM does after every run (ex_history_add_run, then ex_history_learn_flips). */
static void learn_walks(struct ex_history *h, struct ex_online *o, const struct sim_prog *p,
                  uint64_t runs)
{
    for (uint64_t idx = 0; idx < runs; idx++) {
        struct sim_run r;
        sim_init(&r, p);
        assert_int_equal(ex_online_begin(o, EX_ONLINE_RANDOM, NULL, h, 1, idx), 0);
        sim_run_online(&r, o, NULL, NULL);
        size_t n;
        const uint32_t *ch = ex_online_choices(o, &n);
        assert_int_equal(ex_history_add_run(h, ch, n, &r.tr, EX_OUTCOME_NORMAL, NULL), 0);
        assert_true(ex_history_learn_flips(h, o) >= 0);
        sim_free(&r);
    }
}

struct sweep_ctx {
    struct sim_run *r;
    unsigned fired, lowered_ran;
    uint64_t opened_by;     /* the lowered thread's previous access: rip */
    uint32_t lowered;
};

/* The one preemption: which access opened the lowered thread's window (its
 * previous event in the trace); afterwards the lowered thread runs only when
 * nobody else can. */
static void observe(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                    uint32_t chosen, uint32_t prev)
{
    (void)prev;
    struct sweep_ctx *c = ctx;
    if (c->lowered && chosen == c->lowered && ex_tidset_count(en) > 1)
        c->lowered_ran++;
    if (o->pct.nfired == c->fired)
        return;
    c->fired = o->pct.nfired;
    c->lowered = o->pct.fired_tid[0];
    for (size_t i = c->r->tr.n; i-- > 0;)
        if (c->r->tr.ev[i].tid == c->lowered) {
            c->opened_by = c->r->tr.ev[i].rip;
            break;
        }
}

/* Ordinal 0 targets the newest variable's first read window (X and Y are as
 * new: the lower address first). Each run lowers exactly one thread, the first
 * one to read X, right after that read, and keeps it there while another thread
 * can go: the lost update in every run. Ordinal 1 targets X's first write
 * window, where no update is lost. The window strategy (d = 2), whose change
 * point falls on any of the run's windows, loses it less often. */
static void test_sweep_read_window(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[4][8];
    build_counter(&p, ev);
    struct ex_online o;
    struct ex_history h;
    ex_online_init(&o);
    ex_history_init(&h);
    learn_walks(&h, &o, &p, 6);
    assert_true(ex_history_conflict_class(&h, X) & EX_CONFLICT_DATA);
    assert_true(ex_history_conflict_class(&h, Y) & EX_CONFLICT_DATA);
    uint64_t first = ex_online_sweep_first(&h);
    assert_true(first >= 1 && first <= 6);
    unsigned lost[3] = { 0 };
    struct ex_online_params prm;
    ex_online_params_default(&prm);
    prm.depth = 2;
    for (int k = 0; k < 3; k++)
        for (uint64_t seed = 1; seed <= 200; seed++) {
            struct sim_run r;
            sim_init(&r, &p);
            struct sweep_ctx c = { &r, 0, 0, 0, 0 };
            enum ex_online_kind kind = k < 2 ? EX_ONLINE_SWEEP : EX_ONLINE_WINDOW;
            assert_int_equal(ex_online_begin(&o, kind, &prm, &h, seed, first + (k == 1)), 0);
            if (k < 2) {
                assert_false(o.sweep.any);
                assert_int_equal(o.sweep.var, X);
                assert_int_equal(o.sweep.write, k == 1);
            }
            sim_run_online(&r, &o, k < 2 ? observe : NULL, &c);
            lost[k] += lost_update(&r.tr);
            if (k == 0) {
                assert_int_equal(c.fired, 1);
                assert_true(c.opened_by == 0x101 || c.opened_by == 0x201);
                assert_int_equal(c.lowered_ran, 0);
            }
            if (k == 1 && c.fired)
                assert_true(c.opened_by == 0x103 || c.opened_by == 0x203);
            sim_free(&r);
        }
    print_message("lost update in 200 runs: sweep after a read %u, after a write %u, "
                  "window d=2 %u\n", lost[0], lost[1], lost[2]);
    assert_int_equal(lost[0], 200);
    assert_int_equal(lost[1], 0);
    assert_true(lost[2] < 200);
    ex_history_free(&h);
    ex_online_free(&o);
}

/* Ordinal 1 targets X's first write window: the publisher preempted between
 * publish and fill; T2 then sees a half-built object whenever it had not read
 * X before the publish. The runs replay with the cursor. */
static void test_sweep_write_window(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[4][8];
    build_publish(&p, ev);
    struct ex_online o;
    struct ex_history h;
    ex_online_init(&o);
    ex_history_init(&h);
    learn_walks(&h, &o, &p, 6);
    uint64_t first = ex_online_sweep_first(&h);
    assert_int_not_equal(first, UINT64_MAX);
    unsigned half[2] = { 0 }, fired = 0;
    for (int k = 0; k < 2; k++)
        for (uint64_t seed = 1; seed <= 200; seed++) {
            struct sim_run r;
            sim_init(&r, &p);
            struct sweep_ctx c = { &r, 0, 0, 0, 0 };
            assert_int_equal(ex_online_begin(&o, EX_ONLINE_SWEEP, NULL, &h, seed, first + 1 - k), 0);
            assert_true(o.sweep.write == (k == 0) && o.sweep.var == X);
            sim_run_online(&r, &o, observe, &c);
            half[k] += half_built(&r.tr);
            if (k == 0 && c.fired) {
                fired++;
                assert_int_equal(c.opened_by, 0x102);
                assert_int_equal(c.lowered_ran, 0);
            }
            if (k == 0 && seed == 7) { /* the run replays */
                struct ex_schedule s;
                ex_schedule_init(&s);
                assert_int_equal(ex_online_schedule(&o, &s), 0);
                assert_non_null(strstr(s.note, "sweep"));
                struct sim_run rr;
                sim_init(&rr, &p);
                sim_run_cursor(&rr, &s);
                assert_int_equal(rr.tr.n, r.tr.n);
                for (size_t i = 0; i < r.tr.n; i++)
                    assert_int_equal(rr.tr.ev[i].rip, r.tr.ev[i].rip);
                sim_free(&rr);
                ex_schedule_free(&s);
            }
            sim_free(&r);
        }
    print_message("half-built object in 200 runs: sweep after a write %u (%u preempted), "
                  "after a read %u\n", half[0], fired, half[1]);
    /* Whenever T1 published first (T1 above T2 at the start: about half). */
    assert_int_equal(half[0], fired);
    assert_true(fired >= 60);
    assert_true(half[0] > half[1]);
    ex_history_free(&h);
    ex_online_free(&o);
}

/* A flag checked once: T1 sets F after a little work, T2 reads F after more
 * work and (the bug) misses the set if T1 writes F between T2's read and its
 * next step. With F's read window as the target, a writer of F waits until the
 * read came: every run reads F before the write and preempts the reader there.
 * Without the wait (the window strategy) the writer mostly comes first. */
static void build_flag(struct sim_prog *p, struct sim_ev ev[4][8])
{
    memset(p, 0, sizeof *p);
    p->nthreads = 2;
    size_t n = 0;
    ev[1][n++] = (struct sim_ev){ OP_WRITE, PRIV(1), 0x100, 0 };
    ev[1][n++] = (struct sim_ev){ OP_WRITE, X, 0x101, 0 };      /* set */
    p->n[1] = n;
    n = 0;
    for (uint64_t i = 0; i < 4; i++)
        ev[2][n++] = (struct sim_ev){ OP_WRITE, PRIV(2) + 8 * i, 0x200 + i, 0 };
    ev[2][n++] = (struct sim_ev){ OP_READ, X, 0x210, 0 };       /* check */
    ev[2][n++] = (struct sim_ev){ OP_WRITE, PRIV(2) + 64, 0x211, 0 }; /* act */
    p->n[2] = n;
    for (uint32_t t = 1; t <= 2; t++)
        p->ev[t] = ev[t];
}

static bool missed_set(const struct ex_trace *tr)
{
    long r = sim_index_of(tr, 0x210), w = sim_index_of(tr, 0x101), a = sim_index_of(tr, 0x211);
    return r < w && w < a;
}

static void test_sweep_writer_waits(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[4][8];
    build_flag(&p, ev);
    struct ex_online o;
    struct ex_history h;
    ex_online_init(&o);
    ex_history_init(&h);
    learn_walks(&h, &o, &p, 8);
    assert_true(ex_history_conflict_class(&h, X) & EX_CONFLICT_DATA);
    uint64_t first = ex_online_sweep_first(&h);
    struct ex_online_params prm;
    ex_online_params_default(&prm);
    prm.depth = 2;
    unsigned missed[2] = { 0 };
    for (int k = 0; k < 2; k++)
        for (uint64_t seed = 1; seed <= 200; seed++) {
            struct sim_run r;
            sim_init(&r, &p);
            enum ex_online_kind kind = k == 0 ? EX_ONLINE_SWEEP : EX_ONLINE_WINDOW;
            assert_int_equal(ex_online_begin(&o, kind, &prm, &h, seed, first), 0);
            sim_run_online(&r, &o, NULL, NULL);
            missed[k] += missed_set(&r.tr);
            sim_free(&r);
        }
    print_message("set missed in 200 runs: sweep %u, window d=2 %u\n", missed[0], missed[1]);
    assert_int_equal(missed[0], 200);
    assert_true(missed[1] < 180);
    ex_history_free(&h);
    ex_online_free(&o);
}

/* The targets cycle: read and write windows of each DATA variable, newest
 * first, then the n-th window of the run for n = 1..K (K the mean windows per
 * run), then over again; a history without DATA variables has no variable
 * targets. */
static void test_sweep_targets_cycle(void **state)
{
    (void)state;
    struct ex_history h;
    struct ex_online o;
    ex_history_init(&h);
    ex_online_init(&o);
    assert_int_equal(ex_online_sweep_first(&h), UINT64_MAX);
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_SWEEP, NULL, &h, 1, 0), 0);
    assert_true(o.sweep.any);
    assert_int_equal(o.pct.change[0], 1);
    /* Y first raced in run 3, X in run 1, Z (SYNC) never counts. */
    assert_non_null(ex_u64map_put(&h.conflict, X, EX_CONFLICT_DATA, NULL));
    assert_non_null(ex_u64map_put(&h.conflict, Y, EX_CONFLICT_DATA, NULL));
    assert_non_null(ex_u64map_put(&h.conflict, Z, EX_CONFLICT_SYNC, NULL));
    assert_non_null(ex_u64map_put(&h.flips.born, X, 1, NULL));
    assert_non_null(ex_u64map_put(&h.flips.born, Y, 3, NULL));
    h.traced = 2, h.total_windows = 5; /* K = 3 */
    assert_int_equal(ex_online_sweep_first(&h), 2);
    static const struct {
        uint64_t var;
        bool write, any;
        uint64_t n;
    } want[] = {
        { Y, false, false, 1 }, { Y, true, false, 1 }, { X, false, false, 1 },
        { X, true, false, 1 },  { 0, false, true, 1 }, { 0, false, true, 2 },
        { 0, false, true, 3 },  { Y, false, false, 1 },
    };
    for (uint64_t j = 0; j < sizeof want / sizeof want[0]; j++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_SWEEP, NULL, &h, 1, 2 + j), 0);
        assert_int_equal(o.sweep.any, want[j].any);
        if (!want[j].any) {
            assert_int_equal(o.sweep.var, want[j].var);
            assert_int_equal(o.sweep.write, want[j].write);
        }
        assert_int_equal(o.pct.change[0], want[j].n);
        assert_int_equal(o.pct.nchange, 1);
    }
    ex_online_free(&o);
    ex_history_free(&h);
}

/* The portfolio: sweeps at index 4 and every 8th from 6 once a DATA variable is
 * known (index 4, 6, 14, 22, ...; not before), every other index runs what the portfolio without sweeps
 * gives its virtual index (index minus the sweeps before it); with a lock
 * chain, the sweep slots and the first schedule after the chain was learnt are
 * nest (every nested step, no coin). */
static void test_portfolio_sweep_slots(void **state)
{
    (void)state;
    struct ex_history h;
    struct ex_online o;
    ex_history_init(&h);
    ex_online_init(&o);
    for (uint64_t idx = 0; idx < 40; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, idx), 0);
        assert_int_equal(o.kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, idx));
    }
    assert_non_null(ex_u64map_put(&h.conflict, X, EX_CONFLICT_DATA, NULL));
    assert_non_null(ex_u64map_put(&h.flips.born, X, 3, NULL)); /* known from index 4 */
    for (int chain = 0; chain < 2; chain++) {
        h.nest_chain = chain;
        h.nest_chain_from = 9;
        uint64_t sweeps = 0;
        for (uint64_t idx = 0; idx < 40; idx++) {
            assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, idx), 0);
            bool slot = (idx >= 4 && (idx == 4 || idx % 8 == 6)) || (chain && idx == 9);
            if (slot) {
                assert_int_equal(o.kind, chain ? EX_ONLINE_NEST : EX_ONLINE_SWEEP);
                if (chain)
                    assert_false(o.pct.nest_coin);
                sweeps++;
                continue;
            }
            uint64_t v = idx - sweeps;
            enum ex_online_kind want = ex_online_resolve(EX_ONLINE_PORTFOLIO, v);
            if (chain && (v % 8 == 1 || v % 8 == 6))
                want = EX_ONLINE_NEST;
            assert_int_equal(o.kind, want);
        }
        assert_int_equal(sweeps, 6 + chain);
    }
    /* Known only from index 5: index 4 is no sweep, 6 is the first. */
    uint64_t *born = ex_u64map_put(&h.flips.born, X, 0, NULL);
    assert_non_null(born);
    *born = 4;
    h.nest_chain = false;
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, 4), 0);
    assert_int_equal(o.kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, 4));
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, 6), 0);
    assert_int_equal(o.kind, EX_ONLINE_SWEEP);
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, 7), 0);
    assert_int_equal(o.kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, 6));
    ex_online_free(&o);
    ex_history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_read_window),
        cmocka_unit_test(test_sweep_write_window),
        cmocka_unit_test(test_sweep_writer_waits),
        cmocka_unit_test(test_sweep_targets_cycle),
        cmocka_unit_test(test_portfolio_sweep_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
