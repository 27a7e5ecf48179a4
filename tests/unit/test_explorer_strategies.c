/* Strategies: each one's defining property on synthetic traces, plus the
 * model and steering they are built on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdlib.h>
#include <string.h>

#include "strategies_fixture.h"


/* ---- model ---- */

static void test_model_enabledness(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    struct ex_model m;
    ex_trace_init(&t);
    ex_trace_sync(&t, 2, EX_FUTEX_WAIT, FUTEX, 0);              /* 0 */
    ex_trace_access(&t, 1, EX_WRITE, 0x10, 8, 0, 1);            /* 1 */
    ex_trace_sync(&t, 1, EX_FUTEX_WAKE, FUTEX, 1);              /* 2 */
    ex_trace_access(&t, 2, EX_READ, 0x10, 8, 0, 2);             /* 3 */
    ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 3);               /* 4 */
    ex_trace_access(&t, 3, EX_READ, 0x10, 8, 0, 3);             /* 5 */
    analyze(&t, &a);
    assert_int_equal(ex_model_init(&m, &a), 0);
    struct ex_tidset en;
    ex_model_enabled(&m, &en);
    assert_true(ex_tidset_has(&en, 1) && ex_tidset_has(&en, 2) && !ex_tidset_has(&en, 3));
    ex_model_step(&m, 2);   /* T2 waits */
    assert_false(ex_model_is_enabled(&m, 2));
    ex_model_step(&m, 1);
    assert_false(ex_model_is_enabled(&m, 2));
    ex_model_step(&m, 1);   /* wake */
    assert_true(ex_model_is_enabled(&m, 2));
    assert_false(ex_model_is_enabled(&m, 3));
    ex_model_step(&m, 1);   /* create */
    assert_true(ex_model_is_enabled(&m, 3));
    assert_false(ex_model_is_enabled(&m, 1)); /* no recorded events left */
    ex_model_undo(&m);
    assert_false(ex_model_is_enabled(&m, 3));
    assert_true(ex_model_is_enabled(&m, 1));
    ex_model_free(&m);

    /* The recording replays exactly. */
    struct ex_schedule s;
    ex_schedule_init(&s);
    assert_int_equal(ex_recorded_schedule(&a, &s), 0);
    uint32_t *order = predict_full(&a, &s);
    for (size_t i = 0; i < t.n; i++)
        assert_int_equal(order[i], i);
    free(order);
    /* A wait whose waker already ran does not block: run T1 first entirely. */
    ex_schedule_reset(&s);
    ex_schedule_push(&s, 1, 3);
    order = predict_full(&a, &s);
    assert_int_equal(order[3], 0); /* continue policy: T1 exhausted -> T2 */
    free(order);
    ex_schedule_free(&s);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_reorder_trace(void **st)
{
    (void)st;
    struct ex_trace t, r;
    struct ex_analysis a;
    ex_trace_init(&t);
    ex_trace_sync(&t, 2, EX_FUTEX_WAIT, FUTEX, 0);
    ex_trace_sync(&t, 1, EX_FUTEX_WAKE, FUTEX, 1);
    struct ex_event *e = ex_trace_access(&t, 2, EX_READ, 0x10, 8, 0, 2);
    e->waker = 2;
    uint32_t order[] = { 1, 0, 2 };
    assert_int_equal(ex_trace_reorder(&t, order, 3, &r), 0);
    assert_int_equal(r.ev[0].kind, EX_FUTEX_WAKE);
    assert_int_equal(r.ev[2].waker, 1);   /* remapped: the wake is now event 0 */
    assert_int_equal(r.ev[1].seq, 1);
    analyze(&r, &a);
    ex_analysis_free(&a);
    ex_trace_free(&r);
    uint32_t order2[] = { 2, 1 };           /* the wake after its wakee: cleared */
    assert_int_equal(ex_trace_reorder(&t, order2, 2, &r), 0);
    assert_int_equal(r.ev[0].waker, 0);
    ex_trace_free(&r);
    ex_trace_free(&t);
}

/* ---- steering ---- */

static void test_steer_relaxes_contradictions(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    build_circle(&t);
    analyze(&t, &a);
    struct ex_hold holds[2] = { { 0, 7 }, { 7, 0 } }; /* a1 after b1 and b1 after a1 */
    struct ex_steer s = { .holds = holds, .nholds = 2, .prefer_after = -1 };
    struct ex_schedule sc;
    bool relaxed;
    uint32_t order[16];
    ex_schedule_init(&sc);
    assert_int_equal(ex_steer_run(&a, &s, &sc, order, &relaxed), 0);
    assert_true(relaxed);
    assert_int_equal(ex_schedule_length(&sc), t.n);
    ex_schedule_free(&sc);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* ---- jinx ---- */

static void test_jinx_circle(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    struct ex_jinx_site site;
    build_circle(&t);
    analyze(&t, &a);
    assert_int_equal(a.nraces, 0); /* everything under the lock */
    assert_int_equal(ex_jinx_site_find(&a, LOCK, 1, 2, &site), 0);
    assert_int_equal(site.n, 4);
    assert_int_equal(site.recorded_pos, 4);
    assert_int_equal(site.b1, 7);
    assert_int_equal(site.b_next, 10);
    /* b1 before a1, a1/a2, a2/a3, a3/a4, after a4 (the recording). */
    const char *want[5] = {
        "T2 x4\nT1 x7\ndefault continue\n",
        "T1 x2\nT2 x4\nT1 x5\ndefault continue\n",
        "T1 x3\nT2 x4\nT1 x4\ndefault continue\n",
        "T1 x6\nT2 x4\nT1 x1\ndefault continue\n",
        "T1 x7\nT2 x4\ndefault continue\n",
    };
    struct ex_schedule s;
    ex_schedule_init(&s);
    for (uint32_t pos = 0; pos <= 4; pos++) {
        assert_int_equal(ex_jinx_schedule(&a, &site, pos, &s, NULL), 0);
        assert_schedule(&s, want[pos]);
        uint32_t *order = predict_full(&a, &s);
        /* Exactly `pos` of A's lock accesses precede b1. */
        size_t pb = pos_in(order, t.n, 7);
        uint32_t before = 0;
        for (uint32_t i = 0; i < 4; i++)
            before += pos_in(order, t.n, site.a_acc[i]) < pb;
        assert_int_equal(before, pos);
        if (pos == 2) {
            /* The bug: GetArea sees the new r (1) but the old c (5). */
            assert_true(pos_in(order, t.n, 1) < pos_in(order, t.n, 9));
            assert_true(pos_in(order, t.n, 8) < pos_in(order, t.n, 5));
        }
        free(order);
    }
    assert_int_equal(ex_jinx_schedule(&a, &site, 5, &s, NULL), -1);
    ex_jinx_site_free(&site);
    ex_schedule_free(&s);

    /* The strategy: the lock is the most shared location; A = T1 (4 accesses),
     * B = T2; one schedule per position except the recorded one. */
    struct ex_params p;
    struct ex_rng rng;
    struct ex_schedule_set ss;
    ex_params_default(&p);
    p.max_schedules = 4;
    ex_rng_seed(&rng, 1);
    ex_schedule_set_init(&ss);
    assert_int_equal(a.locs[0].key, LOCK);
    assert_int_equal(ex_jinx_generate(&a, &p, &rng, &ss), 4);
    for (int i = 0; i < 4; i++)
        assert_schedule(&ss.v[i], want[i]);
    assert_non_null(strstr(ss.v[2].note, "pos=2/4"));
    ex_schedule_set_free(&ss);
    p.jinx_include_recorded = true;
    p.max_schedules = 5;
    assert_int_equal(ex_jinx_generate(&a, &p, &rng, &ss), 5);
    assert_schedule(&ss.v[4], want[4]);
    ex_schedule_set_free(&ss);
    /* With a bigger budget it goes on to other pairs and locations, no duplicates. */
    p.jinx_include_recorded = false;
    p.max_schedules = 100;
    int n = ex_jinx_generate(&a, &p, &rng, &ss);
    assert_true(n > 4 && n <= 100);
    for (size_t i = 0; i < ss.n; i++)
        for (size_t j = i + 1; j < ss.n; j++)
            assert_false(ex_schedule_equal(&ss.v[i], &ss.v[j]));
    ex_schedule_set_free(&ss);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* The same with musl's mutex as the VMM will see it: lock and unlock each
 * read the mutex type (offset 0, plain) before the LOCK cmpxchg / xchg of the
 * lock word (offset 4). The type word is read-only, so it is neither racy nor
 * a location to explore; the lock word still has A's four accesses. */
static void test_jinx_circle_musl_layout(void **st)
{
    (void)st;
    const uint64_t M = 0x5000, RAD = M + 40, CIRC = M + 48;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    uint64_t rip = 0x401000;
    for (int tid = 1; tid <= 2; tid++) {
        for (int cs = 0; cs < (tid == 1 ? 2 : 1); cs++) {
            ex_trace_access(&t, tid, EX_READ, M, 4, 0, 0x40a000);          /* m->_m_type */
            ex_trace_access(&t, tid, EX_RMW, M + 4, 4, EX_F_ATOMIC, 0x40a010);
            if (tid == 1) {
                if (cs == 1)
                    ex_trace_access(&t, 1, EX_READ, RAD, 8, 0, rip += 16);
                ex_trace_access(&t, 1, EX_WRITE, cs ? CIRC : RAD, 8, 0, rip += 16);
            } else {
                ex_trace_access(&t, 2, EX_READ, RAD, 8, 0, rip += 16);
                ex_trace_access(&t, 2, EX_READ, CIRC, 8, 0, rip += 16);
            }
            ex_trace_access(&t, tid, EX_READ, M, 4, 0, 0x40a100);
            ex_trace_access(&t, tid, EX_RMW, M + 4, 4, EX_F_ATOMIC, 0x40a110);
        }
    }
    analyze(&t, &a);
    assert_int_equal(a.nraces, 0);
    assert_int_equal(a.navio, 0);
    assert_null(ex_analysis_loc(&a, M));
    assert_non_null(ex_analysis_loc(&a, M + 4));
    struct ex_jinx_site site;
    assert_int_equal(ex_jinx_site_find(&a, M + 4, 1, 2, &site), 0);
    assert_int_equal(site.n, 4);
    assert_int_equal(site.recorded_pos, 4);
    struct ex_schedule s;
    ex_schedule_init(&s);
    assert_int_equal(ex_jinx_schedule(&a, &site, 2, &s, NULL), 0);
    uint32_t *order = predict_full(&a, &s);
    /* B's critical section (lock .. unlock, reads of radius and circumference)
     * lands between A's unlock after SetRadius and its relock. */
    size_t b_lock = pos_in(order, t.n, site.b1), b_unlock = pos_in(order, t.n, (uint32_t)site.b_next);
    assert_true(pos_in(order, t.n, site.a_acc[1]) < b_lock);
    assert_true(b_unlock < pos_in(order, t.n, site.a_acc[2]));
    assert_int_equal(b_unlock - b_lock, 4); /* contiguous: lock, R r, R c, R type, unlock */
    free(order);
    ex_schedule_free(&s);
    ex_jinx_site_free(&site);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_jinx_position_cap(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    for (int i = 0; i < 40; i++)
        ex_trace_access(&t, 1, EX_WRITE, 0x100, 8, 0, 0x10);
    ex_trace_access(&t, 2, EX_READ, 0x100, 8, 0, 0x20);
    analyze(&t, &a);
    struct ex_params p;
    struct ex_rng r1, r2;
    struct ex_schedule_set s1, s2;
    ex_params_default(&p);
    p.max_schedules = 5;
    p.jinx_max_positions = 5;
    ex_rng_seed(&r1, 9);
    ex_rng_seed(&r2, 9);
    ex_schedule_set_init(&s1);
    ex_schedule_set_init(&s2);
    assert_int_equal(ex_jinx_generate(&a, &p, &r1, &s1), 5);
    assert_int_equal(ex_jinx_generate(&a, &p, &r2, &s2), 5);
    for (int i = 0; i < 5; i++)
        assert_true(ex_schedule_equal(&s1.v[i], &s2.v[i]));
    ex_schedule_set_free(&s1);
    ex_schedule_set_free(&s2);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_enabledness),
        cmocka_unit_test(test_reorder_trace),
        cmocka_unit_test(test_steer_relaxes_contradictions),
        cmocka_unit_test(test_jinx_circle),
        cmocka_unit_test(test_jinx_circle_musl_layout),
        cmocka_unit_test(test_jinx_position_cap),
    };
    return cmocka_run_group_tests_name("explorer: strategies", tests, NULL, NULL);
}
