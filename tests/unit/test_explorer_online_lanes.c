/* The "lanes" portfolio (explorer/online_lanes.c, online.h): flip and sweep learn
 * from run 0 and their own runs only, so each lane's schedules are exactly the
 * ones the strategy makes alone, whatever the other lanes run; pages per lane;
 * the slots an exhausted flip lane gives back; nest once a lock chain is known. */
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

#define RUNS 40

/* One schedule's choices, kept for comparison. */
struct kept {
    uint32_t ch[512];
    size_t n;
    uint8_t kind;
    uint64_t lane_index;
    uint8_t lane;
};

/* Runs schedule idx of `kind` on p, learns it into h (with one page per run,
 * 0x10000 * (idx + 1), as the VMM would) and keeps its choices. */
static void run_one(struct ex_history *h, struct ex_online *o, const struct sim_prog *p,
                    enum ex_online_kind kind, uint64_t seed, uint64_t idx, struct kept *k)
{
    struct sim_run r;
    sim_init(&r, p);
    assert_int_equal(ex_online_begin(o, kind, NULL, h, seed, idx), 0);
    sim_run_coded(&r, o);
    size_t n = 0;
    const uint32_t *ch = ex_online_choices(o, &n);
    assert_true(n <= sizeof k->ch / sizeof k->ch[0]);
    memcpy(k->ch, ch, n * sizeof *ch);
    k->n = n;
    k->kind = o->kind;
    k->lane = o->lane;
    k->lane_index = o->lane_index;
    struct ex_u64map pages;
    ex_u64map_init(&pages);
    assert_non_null(ex_u64map_put(&pages, 0x10000 * (idx + 1), 1, NULL));
    assert_int_equal(ex_online_learn(h, o, &r.tr, EX_OUTCOME_NORMAL, &pages), 0);
    ex_u64map_free(&pages);
    sim_free(&r);
}

/* The k-th flip (sweep) schedule of "lanes" is flip (sweep) alone's schedule at
 * that lane index, choice for choice, on random programs and seeds: the cycle's
 * runs between them change nothing. Both lanes run; the cycle runs too. */
static void test_lanes_equal_alone(void **state)
{
    (void)state;
    static struct kept lanes[RUNS], alone[RUNS];
    uint64_t matched[3] = { 0 };
    for (uint64_t prog = 0; prog < 12; prog++) {
        struct rand_prog rp;
        build_random_prog(&rp, 500 + prog);
        uint64_t seed = 7 + prog;
        struct ex_history h;
        struct ex_online o;
        ex_history_init(&h);
        ex_online_init(&o);
        for (uint64_t idx = 0; idx < RUNS; idx++)
            run_one(&h, &o, &rp.p, EX_ONLINE_LANES, seed, idx, &lanes[idx]);
        ex_online_free(&o);
        ex_history_free(&h);
        for (int lane = 1; lane <= 2; lane++) {
            enum ex_online_kind kind = lane == 1 ? EX_ONLINE_FLIP : EX_ONLINE_SWEEP;
            ex_history_init(&h);
            ex_online_init(&o);
            for (uint64_t idx = 0; idx < RUNS; idx++)
                run_one(&h, &o, &rp.p, kind, seed, idx, &alone[idx]);
            ex_online_free(&o);
            ex_history_free(&h);
            /* The flip lane's run 0 is the portfolio's (pct); the sweep lane has its own. */
            if (lane == 1) {
                assert_int_equal(alone[0].kind, EX_ONLINE_PCT);
                assert_int_equal(lanes[0].n, alone[0].n);
                assert_memory_equal(lanes[0].ch, alone[0].ch, alone[0].n * sizeof alone[0].ch[0]);
            }
            uint64_t next = lane == 1 ? 1 : 0;
            for (uint64_t idx = 1; idx < RUNS; idx++) {
                if (lanes[idx].lane != lane)
                    continue;
                assert_int_equal(lanes[idx].lane_index, next);
                const struct kept *a = &alone[next++];
                assert_int_equal(lanes[idx].kind, a->kind);
                assert_int_equal(lanes[idx].n, a->n);
                assert_memory_equal(lanes[idx].ch, a->ch, a->n * sizeof a->ch[0]);
                matched[lane]++;
            }
        }
    }
    /* The comparison is not empty: both lanes ran many schedules. */
    assert_true(matched[1] >= 12 * 4);
    assert_true(matched[2] >= 12 * 4);
}

/* A flip schedule pre-shares the pages of run 0 and of its lane's runs only, a
 * sweep schedule those of its lane's runs, a cycle schedule those of every run. */
static void test_lanes_pages(void **state)
{
    (void)state;
    struct rand_prog rp;
    build_random_prog(&rp, 3);
    struct ex_history h;
    struct ex_online o;
    static struct kept k[RUNS];
    ex_history_init(&h);
    ex_online_init(&o);
    for (uint64_t idx = 0; idx < RUNS; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_LANES, NULL, &h, 5, idx), 0);
        uint64_t pages[RUNS];
        size_t n = ex_online_pages(&o, &h, pages, RUNS);
        size_t want = 0;
        for (uint64_t j = 0; j < idx; j++) {
            bool mine = k[j].lane == o.lane || (j == 0 && o.lane == 1);
            if ((o.lane == 1 || o.lane == 2) && !mine)
                continue;
            assert_true(want < n);
            assert_int_equal(pages[want++], 0x10000 * (j + 1)); /* ascending */
        }
        assert_int_equal(n, want);
        run_one(&h, &o, &rp.p, EX_ONLINE_LANES, 5, idx, &k[idx]);
    }
    ex_online_free(&o);
    ex_history_free(&h);
}

/* Two threads that share nothing: no race, no flip. The flip slots go to the
 * cycle, which resumes where it left (pct, random, pos, window, pct, random,
 * pos, rf); the sweep, which knows no DATA variable after its run 0, gives its
 * slots to the cycle too. */
static void test_lanes_give_back(void **state)
{
    (void)state;
    static const struct sim_ev a[] = { { OP_WRITE, X, 0x10, 0 }, { OP_READ, X, 0x11, 0 } };
    static const struct sim_ev b[] = { { OP_WRITE, Y, 0x20, 0 }, { OP_READ, Y, 0x21, 0 } };
    struct sim_prog p = { .nthreads = 2, .ev = { NULL, a, b }, .n = { 0, 2, 2 } };
    struct ex_history h;
    struct ex_online o;
    static struct kept k[RUNS];
    ex_history_init(&h);
    ex_online_init(&o);
    uint64_t cycle = 0, sweeps = 0;
    for (uint64_t idx = 0; idx < RUNS; idx++) {
        run_one(&h, &o, &p, EX_ONLINE_LANES, 9, idx, &k[idx]);
        assert_int_not_equal(k[idx].lane, 1);
        if (k[idx].lane == 2) {
            sweeps++;
            continue;
        }
        assert_int_equal(k[idx].lane, 0);
        assert_int_equal(k[idx].kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, cycle++));
    }
    /* No DATA variable after its run 0: nothing to preempt at, one sweep in all. */
    assert_int_equal(sweeps, 1);
    assert_int_equal(h.lane_runs[0], cycle);
    assert_int_equal(h.lane[1]->runs, sweeps);
    ex_online_free(&o);
    ex_history_free(&h);
}

/* Once a lock chain is known, the sweep slots and the first schedule after the
 * chain was learnt are nest (every nested step), and the cycle's first random
 * and second pos turns too; those runs are not the sweep lane's. */
static void test_lanes_chain_nest(void **state)
{
    (void)state;
    struct rand_prog rp;
    build_random_prog(&rp, 11);
    struct ex_history h;
    struct ex_online o;
    struct kept k;
    ex_history_init(&h);
    ex_online_init(&o);
    run_one(&h, &o, &rp.p, EX_ONLINE_LANES, 2, 0, &k);
    h.nest_chain = true;
    h.nest_chain_from = 1;
    uint64_t sweep_runs = h.lane[1]->runs, nests = 0;
    for (uint64_t idx = 1; idx < RUNS; idx++) {
        uint64_t cycle = h.lane_runs[0];
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_LANES, NULL, &h, 2, idx), 0);
        if (o.lane == 3) {
            assert_int_equal(o.kind, EX_ONLINE_NEST);
            assert_false(o.pct.nest_coin);
            nests++;
        } else if (o.lane == 0 && (cycle % 8 == 1 || cycle % 8 == 6)) {
            assert_int_equal(o.kind, EX_ONLINE_NEST);
        }
        assert_int_not_equal(o.lane, 2);
        run_one(&h, &o, &rp.p, EX_ONLINE_LANES, 2, idx, &k);
    }
    assert_true(nests >= RUNS / 5);
    assert_int_equal(h.lane[1]->runs, sweep_runs);
    ex_online_free(&o);
    ex_history_free(&h);
}

/* A "lanes" run replays with the cursor from its schedule, whatever lane. */
static void test_lanes_replay(void **state)
{
    (void)state;
    struct rand_prog rp;
    build_random_prog(&rp, 21);
    struct ex_history h;
    struct ex_online o;
    ex_history_init(&h);
    ex_online_init(&o);
    for (uint64_t idx = 0; idx < 16; idx++) {
        struct sim_run r, rr;
        sim_init(&r, &rp.p);
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_LANES, NULL, &h, 4, idx), 0);
        sim_run_coded(&r, &o);
        struct ex_schedule s;
        ex_schedule_init(&s);
        assert_int_equal(ex_online_schedule(&o, &s), 0);
        assert_non_null(strstr(s.note, "lanes/"));
        sim_init(&rr, &rp.p);
        sim_run_cursor(&rr, &s);
        assert_int_equal(rr.tr.n, r.tr.n);
        for (size_t i = 0; i < r.tr.n; i++)
            assert_int_equal(rr.tr.ev[i].tid, r.tr.ev[i].tid);
        assert_int_equal(ex_online_learn(&h, &o, &r.tr, EX_OUTCOME_NORMAL, NULL), 0);
        ex_schedule_free(&s);
        sim_free(&r);
        sim_free(&rr);
    }
    ex_online_free(&o);
    ex_history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lanes_equal_alone),
        cmocka_unit_test(test_lanes_pages),
        cmocka_unit_test(test_lanes_give_back),
        cmocka_unit_test(test_lanes_chain_nest),
        cmocka_unit_test(test_lanes_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
