/* Flip chains (flip.h, online.h "flip"): a flip run follows its parent through
 * cue points the parent did not have, a race run 0 showed is learnt again from a
 * later run, DATA flips learnt since run 1 put the block's last end first, and a
 * reversed DATA flip run makes the variables of its new code flip candidates
 * (the next preemption of a relay). */
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

static struct ex_step mk(uint32_t tid, uint8_t kind, uint64_t addr, uint64_t rip)
{
    return (struct ex_step){ .addr = addr, .rip = rip, .tid = tid, .size = 8, .kind = kind };
}

static void data_map(struct ex_u64map *m, uint64_t data, uint64_t sync)
{
    ex_u64map_init(m);
    if (data)
        assert_non_null(ex_u64map_put(m, data, EX_CONFLICT_DATA, NULL));
    if (sync)
        assert_non_null(ex_u64map_put(m, sync, EX_CONFLICT_SYNC | EX_CONFLICT_ATOMIC, NULL));
}

/* The reader checks X, writes Y twice (a page only it touched: no cue points in
 * the parent), then uses X; the closer, created after, writes X. */
static const struct sim_ev ch_main[] = { { OP_CREATE, 0, 0x100, 2 }, { OP_CREATE, 0, 0x101, 3 },
                                         { OP_JOIN, 0, 0x102, 2 }, { OP_JOIN, 0, 0x103, 3 } };
static const struct sim_ev ch_reader[] = { { OP_READ, X, 0x10, 0 }, { OP_WRITE, Y, 0x11, 0 },
                                           { OP_WRITE, Y, 0x13, 0 }, { OP_READ, X, 0x12, 0 } };
static const struct sim_ev ch_closer[] = { { OP_WRITE, X, 0x20, 0 } };

/* The parent as the VMM recorded it without Y's cue points: main creates the
 * reader, which checks and uses X, then main creates the closer, which writes. */
static const uint32_t parent_ch[] = { 1, 2, 2, 1, 3, 1, 1 };

static void parent_steps(struct ex_step *s)
{
    s[0] = mk(1, EX_THREAD_CREATE, 0, 0), s[1] = mk(2, EX_READ, X, 0x10);
    s[2] = mk(2, EX_READ, X, 0x12), s[3] = mk(1, EX_THREAD_CREATE, 0, 0);
    s[4] = mk(3, EX_WRITE, X, 0x20), s[5] = mk(1, EX_THREAD_JOIN, 0, 0);
    s[6] = mk(1, EX_THREAD_JOIN, 0, 0);
    for (int i = 0; i < 7; i++)
        if (s[i].kind > EX_RMW)
            s[i].kind = 0; /* not an access: the VMM shows its kind as unknown */
}

/* The reader's events before the closer's write, by code. */
static size_t reader_before_write(const struct ex_trace *t, uint64_t *rips, size_t max)
{
    size_t n = 0;
    long w = sim_index_of(t, 0x20);
    for (long i = 0; i < w && n < max; i++)
        if (t->ev[i].tid == 2)
            rips[n++] = t->ev[i].rip;
    return n;
}

/* The defining property of the faithful follow: the flip run meets the Y writes
 * as cue points its parent did not have, runs the reader through them as the
 * parent did (one step), and holds it exactly at its use of X (e1), not at a Y
 * write: the closer's write lands between check and use after both Y writes. A
 * flip learnt from run 0 (no pre-shared pages in the VMM) follows by index and
 * holds the reader wherever it is at e1's index: at its first Y write. */
static void test_flip_follows_extra_cue_points(void **state)
{
    (void)state;
    struct sim_prog p = { 3, { NULL, ch_main, ch_reader, ch_closer }, { 0, 4, 4, 1 },
                          { false, false, true, true } };
    struct ex_u64map cm;
    data_map(&cm, X, 0);
    struct ex_step s[7];
    parent_steps(s);
    for (int from = 1; from >= 0; from--) {
        struct ex_history h;
        ex_history_init(&h);
        if (from == 1)
            assert_int_equal(ex_flips_learn(&h.flips, -1, NULL, NULL, 0, &cm), 0); /* run 0 */
        assert_int_equal(ex_flips_learn(&h.flips, -1, parent_ch, s, 7, &cm), 2);
        if (from == 0) /* run 0's flips in learnt order: the first end comes first */
            assert_int_equal(ex_flips_learn(&h.flips, ex_flips_next(&h.flips), NULL, NULL, 0,
                                            &cm), 0);
        struct ex_online o;
        ex_online_init(&o);
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_FLIP, NULL, &h, 5, 3), 0);
        assert_true(o.flip.cand >= 0);
        const struct ex_flip *fl = &h.flips.v[o.flip.cand];
        assert_true(fl->last_end);
        assert_int_equal(fl->rip1, 0x12);
        struct sim_run r;
        sim_init(&r, &p);
        sim_run_coded(&r, &o);
        assert_true(o.flip.reversed);
        uint64_t rips[8];
        size_t n = reader_before_write(&r.tr, rips, 8);
        if (from == 1) {
            assert_false(o.flip.diverged);
            assert_int_equal(o.flip.extras, 2);
            assert_int_equal(n, 3);
            assert_int_equal(rips[0], 0x10);
            assert_int_equal(rips[1], 0x11);
            assert_int_equal(rips[2], 0x13);
            /* The run replays with the cursor: choices are the schedule. */
            struct ex_schedule sc;
            ex_schedule_init(&sc);
            assert_int_equal(ex_online_schedule(&o, &sc), 0);
            struct sim_run again;
            sim_init(&again, &p);
            sim_run_cursor(&again, &sc);
            assert_int_equal(again.tr.n, r.tr.n);
            assert_int_equal(sim_index_of(&again.tr, 0x20), sim_index_of(&r.tr, 0x20));
            sim_free(&again);
            ex_schedule_free(&sc);
        } else {
            assert_int_equal(o.flip.extras, 0);
            assert_int_equal(n, 1); /* held at its first Y write */
            assert_int_equal(rips[0], 0x10);
        }
        sim_free(&r);
        ex_online_free(&o);
        ex_history_free(&h);
    }
    ex_u64map_free(&cm);
}

/* Order and re-learning: a race run 0 showed is noted again (once) by the next
 * run that shows it, as a flip learnt from that run; DATA flips learnt since
 * run 1 put the block's first end last (run 0's keep learnt order). */
static void test_flip_order_by_run(void **state)
{
    (void)state;
    struct ex_u64map cm;
    data_map(&cm, X, L1);
    struct ex_step s[] = { mk(1, EX_READ, X, 0x10), mk(1, EX_READ, X, 0x12),
                           mk(2, EX_WRITE, X, 0x20), mk(1, EX_RMW, L1, 0x30),
                           mk(1, EX_RMW, L1, 0x31), mk(2, EX_RMW, L1, 0x30) };
    uint32_t ch[] = { 1, 1, 2, 1, 1, 2 };
    struct ex_flips f;
    ex_flips_init(&f);
    assert_int_equal(ex_flips_learn(&f, -1, ch, s, 6, &cm), 4); /* run 0 */
    assert_int_equal(f.v[ex_flips_next(&f)].last_end, false);   /* learnt order */
    assert_int_equal(ex_flips_learn(&f, -1, ch, s, 6, &cm), 4); /* run 1: again */
    assert_int_equal(ex_flips_learn(&f, -1, ch, s, 6, &cm), 0); /* run 2: known */
    assert_int_equal(f.n, 8);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(f.v[i].from, i < 4 ? 0 : 1);
    /* X's four flips (one variable: one born) in turn: run 0's in learnt order,
     * run 1's last end with them, run 1's first end behind them all. */
    static const struct { uint64_t from; bool last; } want[] = {
        { 0, false }, { 0, true }, { 1, true }, { 1, false } };
    long c = -1;
    for (int k = 0; k < 4; k++) {
        if (k)
            assert_int_equal(ex_flips_learn(&f, c, NULL, NULL, 0, &cm), 0);
        c = ex_flips_next(&f);
        assert_int_equal(f.v[c].addr, X);
        assert_int_equal(f.v[c].from, want[k].from);
        assert_int_equal(f.v[c].last_end, want[k].last);
    }
    /* The lock's (SYNC) flips come after X's. */
    assert_int_equal(ex_flips_learn(&f, c, NULL, NULL, 0, &cm), 0);
    c = ex_flips_next(&f);
    assert_int_equal(f.v[c].addr, L1);
    ex_flips_free(&f);
    ex_u64map_free(&cm);
}

/* A reversed DATA flip run opens the variables its two threads reached with code
 * no earlier run executed: they count as DATA for its flips (B entered its
 * branch and writes deferred, C reads it, ordered by chance), newest first. Not
 * from a run that made no flip or did not reverse it, not from old code, not
 * from another thread's new code, not from a reversed SYNC flip. */
static void test_opened_variables(void **state)
{
    (void)state;
    struct ex_u64map cm;
    data_map(&cm, X, L1);
    /* Run 0: X races (T2 -> T3), L1 too; T3 reads Z (0x41). */
    struct ex_step r0[] = { mk(2, EX_WRITE, X, 0x10), mk(3, EX_READ, X, 0x20),
                            mk(3, EX_READ, Z, 0x41), mk(2, EX_RMW, L1, 0x30),
                            mk(3, EX_RMW, L1, 0x30) };
    uint32_t c0[] = { 2, 3, 3, 2, 3 };
    struct ex_flips f;
    ex_flips_init(&f);
    assert_int_equal(ex_flips_learn(&f, -1, c0, r0, 5, &cm), 2);
    assert_int_equal(ex_flips_learn(&f, -1, NULL, NULL, 0, &cm), 0); /* run 1 */
    long xflip = 0, lflip = 1;
    assert_int_equal(f.v[xflip].addr, X);
    assert_int_equal(f.v[lflip].addr, L1);
    /* The branch: T2 writes Z by new code (0x42), T3 reads it (old code). */
    struct ex_step br[] = { mk(2, EX_WRITE, Z, 0x42), mk(3, EX_READ, Z, 0x41) };
    uint32_t cb[] = { 2, 3 };
    /* Not a reversed flip run: nothing (and 0x42 is now old code). */
    assert_int_equal(ex_flips_learn_opened(&f, -1, false, cb, br, 2, &cm), 0);
    struct ex_step br2[] = { mk(2, EX_WRITE, Z, 0x43), mk(3, EX_READ, Z, 0x41) };
    assert_int_equal(ex_flips_learn_opened(&f, -1, true, cb, br2, 2, &cm), 0); /* no flip made */
    struct ex_step br3[] = { mk(2, EX_WRITE, Z, 0x44), mk(3, EX_READ, Z, 0x41) };
    assert_int_equal(ex_flips_learn_opened(&f, lflip, true, cb, br3, 2, &cm), 0); /* SYNC */
    struct ex_step old[] = { mk(2, EX_WRITE, Z, 0x42), mk(3, EX_READ, Z, 0x41) };
    assert_int_equal(ex_flips_learn_opened(&f, xflip, true, cb, old, 2, &cm), 0); /* old code */
    struct ex_step other[] = { mk(4, EX_WRITE, Z, 0x45), mk(3, EX_READ, Z, 0x41) };
    uint32_t co[] = { 4, 3 };
    assert_int_equal(ex_flips_learn_opened(&f, xflip, true, co, other, 2, &cm), 0);
    /* The flip at X reversed, and its thread T2 wrote Z by new code: a DATA flip at Z. */
    size_t before = f.n;
    struct ex_step now[] = { mk(2, EX_WRITE, Z, 0x46), mk(3, EX_READ, Z, 0x41) };
    assert_int_equal(ex_flips_learn_opened(&f, xflip, true, cb, now, 2, &cm), 1);
    assert_int_equal(f.v[before].addr, Z);
    assert_int_equal(f.v[before].rank, 0);
    assert_int_equal(f.v[before].t1, 2);
    assert_int_equal(f.v[before].t2, 3);
    assert_int_equal(ex_flips_next(&f), (long)before); /* newest variable: next */
    ex_flips_free(&f);
    ex_u64map_free(&cm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flip_follows_extra_cue_points),
        cmocka_unit_test(test_flip_order_by_run),
        cmocka_unit_test(test_opened_variables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
