/* The "flip" strategy (online.h, flip.h): flips learnt from a run's steps (block
 * ends, conflicts only, keyed once), their order (reversals no run showed yet,
 * DATA before SYNC, newest variable first), the online hold that reverses one
 * race, and the portfolio's flip slots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include "explorer/flip.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_sim.h"

static struct ex_step st(uint32_t tid, uint8_t kind, uint64_t addr, uint64_t rip)
{
    return (struct ex_step){ .addr = addr, .rip = rip, .tid = tid, .size = 8, .kind = kind };
}

static void conflict_map(struct ex_u64map *m, uint64_t data, uint64_t sync)
{
    ex_u64map_init(m);
    if (data)
        assert_non_null(ex_u64map_put(m, data, EX_CONFLICT_DATA, NULL));
    if (sync)
        assert_non_null(ex_u64map_put(m, sync, EX_CONFLICT_SYNC | EX_CONFLICT_ATOMIC, NULL));
}

/* Where the accesses to a variable pass from T1's block to T2 and one of them
 * writes, two flips: at the block's first and at its last access. Two reads,
 * variables that are no conflicts and accesses of other kinds give none; the
 * same races learnt again give none (keyed by code and variable). */
static void test_flips_at_block_ends(void **state)
{
    (void)state;
    struct ex_u64map cm;
    conflict_map(&cm, X, 0);
    struct ex_step s[] = {
        st(1, EX_READ, X, 0x10),    /* 0: T1's block at X: reads 0, 1 */
        st(1, EX_READ, X, 0x11),
        st(3, EX_WRITE, Y, 0x50),   /* Y is no conflict: never a flip */
        st(2, EX_WRITE, X, 0x20),   /* 3: T2 writes X: flips at 0 and 1 */
        st(3, EX_WRITE, Y, 0x51),
        st(1, EX_THREAD_JOIN, 0, 0),
        st(3, EX_READ, X, 0x30),    /* 6: T2's block [3] -> T3 reads: flip at 3 */
        st(1, EX_READ, X, 0x12),    /* T3's read -> T1's read: nothing */
    };
    uint32_t ch[8] = { 1, 1, 3, 2, 3, 1, 3, 1 };
    struct ex_flips f;
    ex_flips_init(&f);
    assert_int_equal(ex_flips_learn(&f, -1, ch, s, 8, &cm), 3);
    assert_int_equal(f.n, 3);
    assert_int_equal(f.v[0].step, 0);
    assert_false(f.v[0].last_end);
    assert_int_equal(f.v[1].step, 1);
    assert_true(f.v[1].last_end);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(f.v[i].t1, 1);
        assert_int_equal(f.v[i].t2, 2);
        assert_int_equal(f.v[i].addr, X);
        assert_int_equal(f.v[i].rank, 0);
    }
    assert_int_equal(f.v[2].step, 3);
    assert_int_equal(f.v[2].t1, 2);
    assert_int_equal(f.v[2].t2, 3);
    assert_int_equal(f.nparents, 1);
    assert_memory_equal(f.parents[0].choices, ch, sizeof ch);
    /* The same run again: run 0's races once more (from run 1, followed
     * faithfully, test_explorer_online_chain.c), then nothing new and no
     * further parent kept. */
    assert_int_equal(ex_flips_learn(&f, -1, ch, s, 8, &cm), 3);
    assert_int_equal(f.nparents, 2);
    assert_int_equal(ex_flips_learn(&f, -1, ch, s, 8, &cm), 0);
    assert_int_equal(f.nparents, 2);
    /* A flip handed out is marked tried by the run that made it. */
    assert_int_equal(ex_flips_learn(&f, 1, NULL, NULL, 0, &cm), 0);
    assert_true(f.v[1].tried);
    assert_int_equal(f.tried, 1);
    assert_int_equal(f.flipruns, 1);
    ex_flips_free(&f);
    ex_u64map_free(&cm);
}

/* ex_flips_next: a flip whose reversal (e2's code right before e1's at the
 * variable) some run showed comes after those whose reversal is new; then DATA
 * before SYNC; then the variable learnt last first. */
static void test_flips_next_order(void **state)
{
    (void)state;
    struct ex_u64map cm;
    conflict_map(&cm, X, L1);
    struct ex_flips f;
    ex_flips_init(&f);
    /* Run 0: T1 locks L1, then T2 (SYNC flip); T1 writes X, then T2 reads it
     * (DATA flip). */
    struct ex_step r0[] = { st(1, EX_RMW, L1, 0x10), st(2, EX_RMW, L1, 0x20),
                            st(1, EX_WRITE, X, 0x11), st(2, EX_READ, X, 0x21) };
    uint32_t c0[] = { 1, 2, 1, 2 };
    assert_int_equal(ex_flips_learn(&f, -1, c0, r0, 4, &cm), 2);
    long next = ex_flips_next(&f);
    assert_int_equal(next, 1); /* DATA first */
    assert_int_equal(f.v[next].addr, X);
    /* Run 1 shows X's race the other way (T2's read, then T1's write): that
     * flip is covered, the lock's comes first. */
    struct ex_step r1[] = { st(2, EX_READ, X, 0x21), st(1, EX_WRITE, X, 0x11) };
    uint32_t c1[] = { 2, 1 };
    assert_int_equal(ex_flips_learn(&f, -1, c1, r1, 2, &cm), 1); /* its own flip */
    next = ex_flips_next(&f);
    assert_int_equal(f.v[next].addr, L1);
    /* Run 2 meets a new racing variable Z: its flip goes first. */
    assert_non_null(ex_u64map_put(&cm, Z, EX_CONFLICT_DATA, NULL));
    struct ex_step r2[] = { st(1, EX_WRITE, Z, 0x12), st(2, EX_WRITE, Z, 0x22) };
    assert_int_equal(ex_flips_learn(&f, -1, c1, r2, 2, &cm), 1);
    next = ex_flips_next(&f);
    assert_int_equal(f.v[next].addr, Z);
    assert_int_equal(f.v[next].born, 2);
    /* All tried: none left. */
    for (size_t i = 0; i < f.n; i++)
        assert_int_equal(ex_flips_learn(&f, (long)i, NULL, NULL, 0, &cm), 0);
    assert_int_equal(ex_flips_next(&f), -1);
    ex_flips_free(&f);
    ex_u64map_free(&cm);
}

/* Check then use: T2 reads X twice, T3 (created by T1 after T2) writes it. */
static const struct sim_ev cu_main[] = { { OP_CREATE, 0, 0x100, 2 }, { OP_CREATE, 0, 0x101, 3 },
                                         { OP_JOIN, 0, 0x102, 2 }, { OP_JOIN, 0, 0x103, 3 } };
static const struct sim_ev cu_reader[] = { { OP_READ, X, 0x10, 0 }, { OP_WRITE, Y, 0x11, 0 },
                                           { OP_READ, X, 0x12, 0 } };
static const struct sim_ev cu_closer[] = { { OP_WRITE, X, 0x20, 0 } };

static bool write_between_reads(const struct ex_trace *t)
{
    long r1 = sim_index_of(t, 0x10), r2 = sim_index_of(t, 0x12), w = sim_index_of(t, 0x20);
    return r1 >= 0 && r2 >= 0 && w >= 0 && r1 < w && w < r2;
}

/* The defining property: from a run where the reader made both reads before the
 * closer's write, the flip at the reader's last read holds the reader there
 * while main creates the closer and the closer writes: the write lands between
 * the reads (the atomicity violation), in the first two flips. The flip run
 * replays with the cursor to the same trace, and leaves the history's racy-step
 * estimates as they were. */
static void test_flip_reverses_race(void **state)
{
    (void)state;
    struct sim_prog p = { 3, { NULL, cu_main, cu_reader, cu_closer }, { 0, 4, 3, 1 },
                          { false, false, true, true } };
    struct ex_online o;
    struct ex_history h;
    ex_online_init(&o);
    unsigned seeds_checked = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        ex_history_init(&h);
        /* A first run, by pos, with the reads together before the write. */
        struct sim_run r;
        uint64_t idx = 0;
        for (;; idx++) {
            assert_int_equal(ex_online_begin(&o, EX_ONLINE_POS, NULL, &h, seed, idx), 0);
            sim_init(&r, &p);
            sim_run_coded(&r, &o);
            long r2 = sim_index_of(&r.tr, 0x12), w = sim_index_of(&r.tr, 0x20);
            if (r2 < w)
                break;
            sim_free(&r);
            assert_true(idx < 50);
        }
        learn(&h, &o, &r, NULL);
        assert_true(ex_history_learn_flips(&h, &o) >= 2);
        sim_free(&r);
        uint64_t racy = ex_history_racy_estimate(&h, 0), data = ex_history_data_racy_estimate(&h, 0);
        uint64_t windows = ex_history_window_estimate(&h, 0), traced = h.traced;
        bool found = false;
        for (int k = 0; k < 2 && !found; k++) {
            assert_int_equal(ex_online_begin(&o, EX_ONLINE_FLIP, NULL, &h, seed, ++idx), 0);
            assert_true(o.flip.cand >= 0);
            sim_init(&r, &p);
            sim_run_coded(&r, &o);
            found = write_between_reads(&r.tr);
            if (found) {
                assert_true(o.flip.reversed);
                assert_int_equal(o.flip.t1, 2);
                struct ex_schedule s;
                ex_schedule_init(&s);
                assert_int_equal(ex_online_schedule(&o, &s), 0);
                struct sim_run again;
                sim_init(&again, &p);
                sim_run_cursor(&again, &s);
                assert_true(write_between_reads(&again.tr));
                assert_int_equal(again.tr.n, r.tr.n);
                sim_free(&again);
                ex_schedule_free(&s);
            }
            learn(&h, &o, &r, NULL);
            ex_history_learn_flips(&h, &o);
            sim_free(&r);
            /* A flip run's hold stretches it: PCT's and window's k leave it out. */
            assert_int_equal(h.traced, traced);
            assert_int_equal(ex_history_racy_estimate(&h, 0), racy);
            assert_int_equal(ex_history_data_racy_estimate(&h, 0), data);
            assert_int_equal(ex_history_window_estimate(&h, 0), windows);
        }
        assert_true(found);
        seeds_checked++;
        ex_history_free(&h);
    }
    assert_int_equal(seeds_checked, 40);
    ex_online_free(&o);
}

/* A held thread runs when nobody else can: T2 holds the lock T3 needs, so
 * holding T2 at its unlock leaves only T2 enabled; the run still ends, with
 * the flip not reversed. */
static const struct sim_ev hl_t1[] = { { OP_LOCK, L1, 0x10, 0 }, { OP_WRITE, X, 0x11, 0 },
                                       { OP_UNLOCK, L1, 0x12, 0 } };
static const struct sim_ev hl_t2[] = { { OP_LOCK, L1, 0x20, 0 }, { OP_READ, X, 0x21, 0 },
                                       { OP_UNLOCK, L1, 0x22, 0 } };

static void test_flip_hold_gives_way(void **state)
{
    (void)state;
    struct sim_prog p = { 2, { NULL, hl_t1, hl_t2 }, { 0, 3, 3 }, { false, false, false } };
    struct ex_u64map cm;
    conflict_map(&cm, 0, L1);
    struct ex_history h;
    ex_history_init(&h);
    /* The parent: T1 all, then T2 all. Flips at L1: T1's lock (first), its unlock (last). */
    struct ex_step s[] = { st(1, EX_RMW, L1, 0x10), st(1, EX_WRITE, X, 0x11),
                           st(1, EX_RMW, L1, 0x12), st(2, EX_RMW, L1, 0x20),
                           st(2, EX_READ, X, 0x21), st(2, EX_RMW, L1, 0x22) };
    uint32_t ch[] = { 1, 1, 1, 2, 2, 2 };
    assert_int_equal(ex_flips_learn(&h.flips, -1, ch, s, 6, &cm), 2);
    struct ex_online o;
    ex_online_init(&o);
    bool saw_first = false, saw_last = false;
    for (uint64_t idx = 0; idx < 2; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_FLIP, NULL, &h, 1, idx), 0);
        long c = o.flip.cand;
        assert_true(c >= 0);
        struct sim_run r;
        sim_init(&r, &p);
        sim_run_coded(&r, &o);
        assert_false(r.deadlock);
        if (h.flips.v[c].last_end) {
            /* Held at its unlock, T1 owns L1: T2 cannot lock; T1 goes on. */
            assert_false(o.flip.reversed);
            assert_true(sim_index_of(&r.tr, 0x12) < sim_index_of(&r.tr, 0x20));
            saw_last = true;
        } else {
            /* Held at its lock: T2 takes L1 first. */
            assert_true(o.flip.reversed);
            assert_true(sim_index_of(&r.tr, 0x20) < sim_index_of(&r.tr, 0x10));
            saw_first = true;
        }
        sim_free(&r);
        assert_int_equal(ex_flips_learn(&h.flips, c, NULL, NULL, 0, &cm), 0);
    }
    assert_true(saw_first && saw_last);
    /* None left: flip is pos. */
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_FLIP, NULL, &h, 1, 2), 0);
    assert_int_equal(o.flip.cand, -1);
    ex_online_free(&o);
    ex_history_free(&h);
    ex_u64map_free(&cm);
}

/* The portfolio: a flip on three in four schedules below 8 (not index % 4 == 0),
 * odd ones below 16 and index % 8 == 1 after,
 * only while an untried flip remains; the cycle of the other strategies goes
 * on from where its last schedule left it. */
static void test_portfolio_flip_slots(void **state)
{
    (void)state;
    struct ex_u64map cm;
    conflict_map(&cm, X, 0);
    struct ex_history h;
    ex_history_init(&h);
    struct ex_online o;
    ex_online_init(&o);
    for (uint64_t idx = 0; idx < 40; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, idx), 0);
        assert_int_not_equal(o.kind, EX_ONLINE_FLIP); /* no flips learnt */
        assert_int_equal(o.kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, idx));
    }
    /* Plenty of flips: 60 variables, each written by T1 then T2. */
    struct ex_step s[120];
    uint32_t ch[120];
    for (int i = 0; i < 60; i++) {
        assert_non_null(ex_u64map_put(&cm, 0x8000 + 8 * (uint64_t)i, EX_CONFLICT_DATA, NULL));
        s[2 * i] = st(1, EX_WRITE, 0x8000 + 8 * (uint64_t)i, 0x10);
        s[2 * i + 1] = st(2, EX_WRITE, 0x8000 + 8 * (uint64_t)i, 0x20);
        ch[2 * i] = 1, ch[2 * i + 1] = 2;
    }
    assert_int_equal(ex_flips_learn(&h.flips, -1, ch, s, 120, &cm), 60);
    uint64_t flips = 0;
    for (uint64_t idx = 0; idx < 40; idx++) {
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, &h, 3, idx), 0);
        bool want = idx < 8 ? idx % 4 != 0 : idx < 16 ? (idx & 1) : idx % 8 == 1;
        assert_int_equal(o.kind == EX_ONLINE_FLIP, want);
        if (!want)
            assert_int_equal(o.kind, ex_online_resolve(EX_ONLINE_PORTFOLIO, idx - flips));
        assert_int_equal(ex_flips_learn(&h.flips, o.kind == EX_ONLINE_FLIP ? o.flip.cand : -1,
                                        NULL, NULL, 0, &cm), 0);
        flips += want;
    }
    assert_int_equal(h.flips.flipruns, flips);
    ex_online_free(&o);
    ex_history_free(&h);
    ex_u64map_free(&cm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flips_at_block_ends),
        cmocka_unit_test(test_flips_next_order),
        cmocka_unit_test(test_flip_reverses_race),
        cmocka_unit_test(test_flip_hold_gives_way),
        cmocka_unit_test(test_portfolio_flip_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
