/* The "nest" strategy (online.h, online_nest.c): PCT priorities, a thread
 * lowered at its nested lock steps (an RMW of a SYNC word while it holds
 * another), and its place in the portfolio. */
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

#define LA 0x2100
#define LB 0x2104
#define LC 0x2108

/* One cue point: threads 1 and 2 enabled, thread 1 about to do (k, a). */
static uint32_t step1(struct ex_online *o, uint8_t k, uint64_t a)
{
    struct ex_tidset en;
    ex_tidset_clear(&en);
    ex_tidset_add(&en, 1);
    ex_tidset_add(&en, 2);
    struct ex_pending p[2] = { { 1, k, a, 4, true, 0x10 }, { 2, EX_READ, 0x9000, 4, true, 0x20 } };
    struct ex_view v = { &en, p, 2, 0 };
    return ex_online_next(o, &v);
}

/* Which steps are nested (counted by every strategy): only an RMW of a SYNC
 * word other than the ones the thread holds (taken by RMW, not yet released by
 * an RMW or a store), while it holds one. The first lock, a release and a word
 * that is no SYNC variable are not. Thread 2 stays enabled (a nested step
 * needs another thread that could go); PCT with d = 1 runs thread 1 throughout
 * on the indexes where it drew the higher priority. */
static void test_nested_steps(void **state)
{
    (void)state;
    struct ex_history h;
    ex_history_init(&h);
    assert_non_null(ex_u64map_put(&h.conflict, LA, EX_CONFLICT_SYNC | EX_CONFLICT_ATOMIC, NULL));
    assert_non_null(ex_u64map_put(&h.conflict, LB, EX_CONFLICT_SYNC | EX_CONFLICT_ATOMIC, NULL));
    assert_non_null(ex_u64map_put(&h.conflict, X, EX_CONFLICT_DATA, NULL));
    struct ex_online o;
    ex_online_init(&o);
    struct ex_online_params prm;
    ex_online_params_default(&prm);
    prm.depth = 1;
    static const struct {
        uint8_t kind;
        uint64_t addr;
        bool nested;
    } seq[] = {
        { EX_RMW, LA, false },   /* lock A: holds nothing yet */
        { EX_WRITE, X, false },  /* data */
        { EX_RMW, LB, true },    /* lock B while holding A */
        { EX_RMW, LB, false },   /* unlock B (xchg): held */
        { EX_WRITE, LA, false }, /* unlock A (store) */
        { EX_RMW, LB, false },   /* lock B again: holds nothing */
        { EX_RMW, LA, true },    /* lock A while holding B */
        { EX_RMW, 0x9000, false }, /* an RMW of a word that is no SYNC variable */
    };
    unsigned checked = 0;
    for (uint64_t idx = 0; idx < 64 && checked == 0; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &prm, &h, 5, idx), 0);
        bool all1 = true;
        for (size_t i = 0; i < sizeof seq / sizeof seq[0] && all1; i++) {
            uint64_t before = o.nested;
            uint32_t t = step1(&o, seq[i].kind, seq[i].addr);
            if (t != 1) {
                all1 = false;
                break;
            }
            assert_int_equal(o.nested - before, seq[i].nested);
        }
        checked += all1;
    }
    assert_int_equal(checked, 1); /* some index ran thread 1 throughout */
    ex_online_free(&o);
    ex_history_free(&h);
}

/* main (1) creates workers 2, 3, 4 and joins them; worker i takes lock i,
 * then lock i+1 (mod 3): a three-lock cycle, deadlock when every worker holds
 * its first lock. */
static void build_cycle(struct sim_prog *p, struct sim_ev ev[5][8])
{
    static const uint64_t L[3] = { LA, LB, LC };
    memset(p, 0, sizeof *p);
    p->nthreads = 4;
    size_t n = 0;
    for (uint32_t w = 2; w <= 4; w++)
        ev[1][n++] = (struct sim_ev){ OP_CREATE, 0, 0x100 + w, w };
    for (uint32_t w = 2; w <= 4; w++)
        ev[1][n++] = (struct sim_ev){ OP_JOIN, 0, 0x110 + w, w };
    p->ev[1] = ev[1];
    p->n[1] = n;
    for (uint32_t w = 2; w <= 4; w++) {
        uint64_t a = L[w - 2], b = L[(w - 1) % 3], base = 0x400000 + 0x100 * w;
        n = 0;
        ev[w][n++] = (struct sim_ev){ OP_LOCK, a, 0x500, 0 };   /* shared lock code */
        ev[w][n++] = (struct sim_ev){ OP_WRITE, 0x3000 + 8 * w, base + 1, 0 };
        ev[w][n++] = (struct sim_ev){ OP_LOCK, b, 0x500, 0 };
        ev[w][n++] = (struct sim_ev){ OP_UNLOCK, b, 0x508, 0 };
        ev[w][n++] = (struct sim_ev){ OP_UNLOCK, a, 0x508, 0 };
        p->ev[w] = ev[w];
        p->n[w] = n;
        p->created[w] = true;
    }
}

struct nest_ctx {
    struct sim_run *r;
    uint32_t fired;
    unsigned lowered, at_nested;
};

/* Each lowering: the lowered thread's next event is a lock while it owns another. */
static void observe_nest(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                         uint32_t chosen, uint32_t prev)
{
    (void)en, (void)chosen, (void)prev;
    struct nest_ctx *c = ctx;
    for (; c->fired < o->pct.nfired && c->fired < EX_PCT_MAX_DEPTH; c->fired++) {
        uint32_t t = o->pct.fired_tid[c->fired];
        const struct sim_ev *e = sim_next_ev(c->r, t);
        bool owns = false;
        for (int i = 0; i < SIM_MAX_LOCKS; i++)
            owns |= c->r->lock_owner[i] == t && (!e || c->r->lock_addr[i] != e->addr);
        c->lowered++;
        c->at_nested += e && e->op == OP_LOCK && owns;
    }
}

static void learn_runs(struct ex_history *h, struct ex_online *o, const struct sim_prog *p,
                       enum ex_online_kind kind, unsigned runs)
{
    for (uint64_t idx = 0; idx < runs; idx++) {
        struct sim_run r;
        sim_init(&r, p);
        ex_online_begin(o, kind, NULL, h, 1, idx);
        sim_run_coded(&r, o);
        size_t n;
        const uint32_t *ch = ex_online_choices(o, &n);
        assert_int_equal(ex_history_add_run(h, ch, n, &r.tr,
                                            r.deadlock ? EX_OUTCOME_DEADLOCK : EX_OUTCOME_NORMAL,
                                            NULL), 0);
        assert_true(ex_history_learn_flips(h, o) >= 0);
        sim_free(&r);
    }
}

static void test_nest_finds_lock_cycle(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[5][8];
    build_cycle(&p, ev);
    struct ex_online o;
    struct ex_history h;
    ex_online_init(&o);
    ex_history_init(&h);
    learn_runs(&h, &o, &p, EX_ONLINE_POS, 6);
    assert_true(ex_history_conflict_class(&h, LA) & EX_CONFLICT_SYNC);
    unsigned dl[3] = { 0 }, lowered = 0, at_nested = 0, replayed = 0;
    const enum ex_online_kind kinds[3] = { EX_ONLINE_NEST, EX_ONLINE_NEST, EX_ONLINE_PCT };
    for (int k = 0; k < 3; k++)
        for (uint64_t i = 0; i < 100; i++) {
            /* k 0: even indexes (lowered at every nested step), 1: odd (a coin) */
            uint64_t idx = k == 2 ? i : 2 * i + (k == 1);
            struct sim_run r;
            sim_init(&r, &p);
            struct nest_ctx c = { &r, 0, 0, 0 };
            assert_int_equal(ex_online_begin(&o, kinds[k], NULL, &h, 9, idx), 0);
            assert_int_equal(o.pct.nest_coin, k == 1);
            sim_run_online(&r, &o, k < 2 ? observe_nest : NULL, &c);
            dl[k] += r.deadlock;
            lowered += c.lowered;
            at_nested += c.at_nested;
            if (k == 0 && r.deadlock && replayed < 5) {
                /* The run's choices replay it to the same deadlock. */
                struct ex_schedule s;
                ex_schedule_init(&s);
                assert_int_equal(ex_online_schedule(&o, &s), 0);
                struct sim_run rr;
                sim_init(&rr, &p);
                sim_run_cursor(&rr, &s);
                assert_true(rr.deadlock);
                assert_int_equal(rr.tr.n, r.tr.n);
                sim_free(&rr);
                ex_schedule_free(&s);
                replayed++;
            }
            sim_free(&r);
        }
    print_message("nest: deadlock in %u of 100 runs (coin: %u, pct d=3: %u); %u of %u "
                  "lowerings at a nested lock\n", dl[0], dl[1], dl[2], at_nested, lowered);
    assert_true(lowered > 100);
    assert_int_equal(at_nested, lowered); /* every lowering at a nested lock step */
    assert_true(dl[0] >= 80);             /* most runs: lowered at every nested step */
    assert_true(dl[1] >= 15);
    assert_true(dl[0] > dl[2] && dl[1] > dl[2] / 2);
    assert_int_equal(replayed, 5);
    ex_history_free(&h);
    ex_online_free(&o);
}

/* Two workers nesting the same two locks in the same order: no chain. */
static void build_same_order(struct sim_prog *p, struct sim_ev ev[5][8])
{
    build_cycle(p, ev);
    p->nthreads = 3;
    p->n[1] = 0;
    p->ev[1] = ev[1];
    size_t n = 0;
    for (uint32_t w = 2; w <= 3; w++)
        ev[1][n++] = (struct sim_ev){ OP_CREATE, 0, 0x100 + w, w };
    for (uint32_t w = 2; w <= 3; w++)
        ev[1][n++] = (struct sim_ev){ OP_JOIN, 0, 0x110 + w, w };
    p->n[1] = n;
    for (uint32_t w = 2; w <= 3; w++) {
        ev[w][0].addr = LA;
        ev[w][2].addr = LB;
        ev[w][3].addr = LB;
        ev[w][4].addr = LA;
    }
}

/* The portfolio runs nest in the first random and the second pos slot of its
 * cycle once a run showed a lock chain (one thread took Y holding X, another
 * took Z holding Y, by the same instruction): the three-lock cycle's runs do;
 * two workers nesting the same locks in the same order do not, nor the cycle
 * when the second locks are taken by other code. */
static void test_portfolio_nest_slots(void **state)
{
    (void)state;
    struct ex_history h;
    struct ex_online o;
    ex_history_init(&h);
    ex_online_init(&o);
    for (int chain = 0; chain < 2; chain++) {
        h.nest_chain = chain;
        for (uint64_t idx = 0; idx < 24; idx++) {
            assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 2, idx), 0);
            enum ex_online_kind want = ex_online_resolve(EX_ONLINE_PORTFOLIO, idx);
            if (chain && (idx % 8 == 1 || idx % 8 == 6))
                want = EX_ONLINE_NEST;
            assert_int_equal(o.kind, want);
            if (o.kind == EX_ONLINE_NEST)
                assert_int_equal(o.pct.nest_coin, idx % 8 == 6); /* odd cycle / 4 */
        }
    }
    struct sim_prog p;
    struct sim_ev ev[5][8];
    build_same_order(&p, ev);
    ex_history_free(&h);
    ex_history_init(&h);
    learn_runs(&h, &o, &p, EX_ONLINE_POS, 8);
    assert_true(ex_history_conflict_class(&h, LB) & EX_CONFLICT_SYNC);
    assert_false(h.nest_chain);
    /* The cycle with each worker's second lock taken by other code (a condition
     * variable's internal lock, not the mutex's): no chain. */
    build_cycle(&p, ev);
    for (uint32_t w = 2; w <= 4; w++)
        ev[w][2].rip = 0x600 + w;
    ex_history_free(&h);
    ex_history_init(&h);
    learn_runs(&h, &o, &p, EX_ONLINE_POS, 8);
    assert_false(h.nest_chain);
    build_cycle(&p, ev);
    ex_history_free(&h);
    ex_history_init(&h);
    learn_runs(&h, &o, &p, EX_ONLINE_POS, 4);
    assert_true(h.nest_chain);
    char note[EX_NOTE_LEN];
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_NEST, NULL, &h, 2, 1), 0);
    assert_non_null(
        strstr(ex_online_describe(&o, note, sizeof note), "nest seed=2 index=1 nested=0"));
    enum ex_online_kind k;
    assert_int_equal(ex_online_from_name("nest", &k), 0);
    assert_int_equal(k, EX_ONLINE_NEST);
    ex_online_free(&o);
    ex_history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_steps),
        cmocka_unit_test(test_nest_finds_lock_cycle),
        cmocka_unit_test(test_portfolio_nest_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
