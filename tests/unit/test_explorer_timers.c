/* Timers that end early (explorer/timers.h) on synthetic runs: the plan (half the runs,
 * 1-2 endings at timed steps uniform in [1, K], reproducible from (seed, index), nothing
 * when strict or when no run showed a timed step), the ending at its timed step only, the
 * turn kept by the woken thread until it blocks, spins or had EX_TIMER_BOOST steps, and a
 * loop that waits on time (a poller sleeping 1 ms, woken early again and again) that ends
 * at most EX_TIMERS_MAX_ENDS timers and then runs as before: no livelock. Also the
 * schedule format's timer endings (text and JSON, their checks) and their names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ex_tidset set_of(uint32_t a, uint32_t b)
{
    struct ex_tidset s;
    ex_tidset_clear(&s);
    if (a)
        ex_tidset_add(&s, a);
    if (b)
        ex_tidset_add(&s, b);
    return s;
}

static void test_plans(void **state)
{
    (void)state;
    struct ex_timers_hist h;
    ex_timers_hist_init(&h);
    struct ex_timers_run r, r2;
    ex_timers_begin(&r, &h, 1, 5, false);
    assert_int_equal(r.nplan, 0); /* no timed step known: nothing to end */
    h.max_timed = 100;
    unsigned planned = 0, two = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        ex_timers_begin(&r, &h, 7, i, false);
        ex_timers_begin(&r2, &h, 7, i, false);
        assert_memory_equal(&r, &r2, sizeof r); /* (seed, index) alone */
        planned += r.nplan > 0;
        two += r.nplan == 2;
        for (uint32_t k = 0; k < r.nplan; k++) {
            assert_in_range(r.at[k], 1, 100);
            if (k)
                assert_true(r.at[k] > r.at[k - 1]);
        }
        ex_timers_begin(&r, &h, 7, i, true);
        assert_int_equal(r.nplan, 0); /* strict: never */
    }
    assert_in_range(planned, 420, 580); /* about half */
    assert_in_range(two, 80, 180);      /* about a quarter of those */
    h.max_timed = 1;
    for (uint64_t i = 0; i < 50; i++) {
        ex_timers_begin(&r, &h, 3, i, false);
        assert_true(r.nplan <= 1);
    }
}

/* A plan with one ending at timed step 3: picks without a timer or without an enabled
 * thread are no timed steps; the ending names a thread of the timed set. */
static void test_fires_at_its_timed_step(void **state)
{
    (void)state;
    struct ex_timers_run r;
    memset(&r, 0, sizeof r);
    ex_rng_seed(&r.rng, 1);
    r.nplan = 1;
    r.at[0] = 3;
    struct ex_tidset en = set_of(1, 0), none = set_of(0, 0), timed = set_of(2, 3);
    assert_int_equal(ex_timers_fire(&r, &en, &none), 0);   /* nobody on a timer */
    assert_int_equal(ex_timers_fire(&r, &none, &timed), 0); /* nobody enabled: time skips */
    assert_int_equal(r.timed, 0);
    assert_int_equal(ex_timers_fire(&r, &en, &timed), 0);
    assert_int_equal(ex_timers_fire(&r, &en, &timed), 0);
    uint32_t t = ex_timers_fire(&r, &en, &timed);
    assert_true(t == 2 || t == 3);
    assert_int_equal(r.ended, 1);
    for (int i = 0; i < 100; i++)
        assert_int_equal(ex_timers_fire(&r, &en, &timed), 0); /* the plan is spent */
    r.strict = true;
    r.nplan = 2;
    r.at[1] = r.timed + 1;
    assert_int_equal(ex_timers_fire(&r, &en, &timed), 0);
}

static void test_the_woken_thread_keeps_the_turn(void **state)
{
    (void)state;
    struct ex_timers_run r;
    memset(&r, 0, sizeof r);
    r.nplan = 1;
    r.at[0] = 1;
    struct ex_tidset en = set_of(1, 0), timed = set_of(2, 0), both = set_of(1, 2);
    assert_int_equal(ex_timers_fire(&r, &en, &timed), 2);
    assert_int_equal(ex_timers_forced(&r, &both, NULL), 2);
    assert_int_equal(ex_timers_forced(&r, &both, NULL), 2);
    struct ex_tidset spin = set_of(2, 0);
    assert_int_equal(ex_timers_forced(&r, &both, &spin), 0); /* found spinning: let go */
    assert_int_equal(ex_timers_forced(&r, &both, NULL), 0);  /* and for good */
    /* Blocked: let go; and never more than EX_TIMER_BOOST steps. */
    r.boost = 2, r.boost_left = 5;
    assert_int_equal(ex_timers_forced(&r, &en, NULL), 0);
    r.boost = 2, r.boost_left = EX_TIMER_BOOST;
    unsigned kept = 0;
    while (ex_timers_forced(&r, &both, NULL) == 2)
        kept++;
    assert_int_equal(kept, EX_TIMER_BOOST);
    assert_int_equal(ex_timers_forced(&r, &en, NULL), 0);
}

/* A poller (thread 2) sleeps 1 ms in a loop while a worker (thread 1) makes 5000 cue
 * points, then sets the flag. Whatever the plan, at most EX_TIMERS_MAX_ENDS sleeps end
 * early, the poller keeps the turn only until it sleeps again, and the worker gets to its
 * end: no livelock. */
static void test_a_polling_loop_does_not_livelock(void **state)
{
    (void)state;
    struct ex_timers_hist h;
    ex_timers_hist_init(&h);
    h.max_timed = 5000;
    for (uint64_t idx = 0; idx < 200; idx++) {
        struct ex_timers_run r;
        ex_timers_begin(&r, &h, 11, idx, false);
        unsigned worker = 0, poller_steps = 0, ends = 0;
        bool asleep = true;
        for (unsigned step = 0; worker < 5000 && step < 100000; step++) {
            struct ex_tidset en = set_of(1, asleep ? 0 : 2), timed = set_of(asleep ? 2 : 0, 0);
            uint32_t e = ex_timers_fire(&r, &en, &timed);
            if (e) {
                assert_int_equal(e, 2);
                asleep = false;
                ends++;
                en = set_of(1, 2);
            }
            uint32_t f = ex_timers_forced(&r, &en, NULL);
            uint32_t t = f ? f : 1; /* the strategy: the worker */
            if (t == 2) {
                poller_steps++;
                asleep = true; /* it reads the flag (0) and sleeps again */
            } else {
                worker++;
            }
        }
        assert_int_equal(worker, 5000);
        assert_true(ends <= EX_TIMERS_MAX_ENDS);
        assert_int_equal(poller_steps, ends);
        ex_timers_learn(&h, &r);
    }
    assert_int_equal(h.runs, 200);
}

static void test_schedule_format(void **state)
{
    (void)state;
    struct ex_schedule s, p;
    ex_schedule_init(&s);
    uint32_t c[] = {1, 1, 2, 1};
    assert_int_equal(ex_schedule_from_choices(&s, c, 4), 0);
    struct ex_timer_end e = {.step = 2, .thread = 2, .by = 1, .ns = 50000000, .rip = 0x401219};
    snprintf(e.call, sizeof e.call, "nanosleep");
    snprintf(e.sym, sizeof e.sym, "reader+0x49 (libc.so.6)");
    assert_int_equal(ex_schedule_add_timer(&s, &e), 0);
    e.sym[0] = 0;
    e.step = 2;
    assert_int_equal(ex_schedule_add_timer(&s, &e), -1); /* not after the last one */
    e.step = 5000000000ULL;
    snprintf(e.call, sizeof e.call, "Bad-name");
    assert_int_equal(ex_schedule_add_timer(&s, &e), -1);
    snprintf(e.call, sizeof e.call, "futex");
    e.thread = 0;
    assert_int_equal(ex_schedule_add_timer(&s, &e), -1);
    e.thread = 3;
    assert_int_equal(ex_schedule_add_timer(&s, &e), 0);
    char *js = ex_schedule_to_json(&s);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"timers\":[{\"step\":2,\"thread\":2,\"call\":\"nanosleep\""));
    assert_int_equal(ex_schedule_parse(js, strlen(js), &p, NULL), 0);
    assert_true(ex_schedule_equal(&s, &p));
    assert_int_equal(ex_schedule_hash(&s), ex_schedule_hash(&p));
    assert_int_equal(p.ntimers, 2);
    assert_string_equal(p.timer[0].call, "nanosleep");
    assert_int_equal(p.timer[0].rip, 0x401219);
    assert_string_equal(p.timer[0].sym, "reader+0x49 (libc.so.6)");
    assert_int_equal(p.timer[1].step, 5000000000ULL);
    ex_schedule_free(&p);
    free(js);
    char *tx = ex_schedule_to_text(&s);
    assert_non_null(tx);
    assert_non_null(strstr(tx, "timer T2 at 2   # nanosleep"));
    assert_int_equal(ex_schedule_parse(tx, strlen(tx), &p, NULL), 0);
    assert_true(ex_schedule_equal(&s, &p)); /* steps and threads; the names are comments */
    assert_int_equal(ex_schedule_timer_from(&p, 3), 1);
    assert_int_equal(ex_schedule_timer_from(&p, 5000000001ULL), 2);
    ex_schedule_free(&p);
    free(tx);
    /* No endings: the hash and equality of before; one ending more: another schedule. */
    struct ex_schedule q;
    ex_schedule_init(&q);
    assert_int_equal(ex_schedule_from_choices(&q, c, 4), 0);
    assert_false(ex_schedule_equal(&s, &q));
    ex_schedule_free(&q);
    ex_schedule_free(&s);
    static const char *const bad[] = {
        "timer T2 at 5\ntimer T2 at 5\n",        /* not ascending */
        "timer T0 at 5\n",
        "timer T2 5\n",
        "timer T2 at 1234567890123456789\n",
        "{\"version\":1,\"segments\":[],\"timers\":[{\"step\":1}]}",
        "{\"version\":1,\"segments\":[],\"timers\":[{\"step\":1,\"thread\":2,\"call\":\"a b\"}]}",
        "{\"version\":1,\"segments\":[],\"timers\":[{\"step\":1,\"thread\":2,\"step\":2}]}",
        "{\"version\":1,\"segments\":[],\"timers\":[{\"step\":1,\"thread\":2,\"sym\":\"a\\\"b\"}]}",
        "{\"version\":1,\"segments\":[],\"timers\":[{\"step\":1,\"thread\":2,\"sym\":\"a\\nb\"}]}",
        "{\"version\":1,\"segments\":[],\"timers\":[{\"step\":2,\"thread\":2},{\"step\":1,\"thread\":2}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ex_parse_error pe;
        assert_int_equal(ex_schedule_parse(bad[i], strlen(bad[i]), &p, &pe), -1);
    }
    /* The fuzz entry's round trip (tests/fuzz/schedule_fuzz.c) on endings with names. */
    const char *seeds[] = {
        "{\"version\":1,\"timers\":[{\"step\":59,\"thread\":1,\"call\":\"nanosleep\","
        "\"ns\":50000000,\"by\":2,\"rip\":4198937}],\"segments\":[{\"thread\":2,\"steps\":4}]}",
        "timer T1 at 3   # nanosleep(50 ms)\ntimer t2 at 12345678901\nT2 x3\n",
    };
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(explorer_fuzz_schedule((const uint8_t *)seeds[i], strlen(seeds[i])), 0);
    const char *ok = "timer T2 at 12345678901   # a comment\nT1 x3\n";
    assert_int_equal(ex_schedule_parse(ok, strlen(ok), &p, NULL), 0);
    assert_int_equal(p.timer[0].step, 12345678901ULL);
    ex_schedule_free(&p);
}

static void test_names(void **state)
{
    (void)state;
    struct ex_timer_end e = {.step = 4, .thread = 1, .by = 2, .ns = 100000000};
    char b[200];
    snprintf(e.call, sizeof e.call, "futex");
    assert_string_equal(ex_timer_end_describe(&e, "main.c:41", b, sizeof b),
                        "thread 1's futex wait (timeout 100 ms) ended early while thread 2 was "
                        "at main.c:41");
    snprintf(e.call, sizeof e.call, "clock_nanosleep");
    e.ns = 1500000000;
    assert_string_equal(ex_timer_end_describe(&e, NULL, b, sizeof b),
                        "thread 1's clock_nanosleep(1.5 s) ended early while thread 2 ran");
    e.by = 1, e.ns = 0, e.call[0] = 0;
    assert_string_equal(ex_timer_end_describe(&e, "", b, sizeof b),
                        "thread 1's timer ended early, right as it began");
    e.by = 0;
    assert_string_equal(ex_timer_end_describe(&e, "x.c:1", b, sizeof b),
                        "thread 1's timer ended early");
    e.by = 1;
    snprintf(e.call, sizeof e.call, "nanosleep");
    e.ns = 50000000;
    assert_string_equal(ex_timer_end_describe(&e, "x.c:9", b, sizeof b),
                        "thread 1's nanosleep(50 ms) ended early, right as it began (at x.c:9)");
}

/* A flip or rf schedule following its parent names the thread it wants next, so that a
 * timer the parent ended early there ends again (explore_timers.h); nothing once it no
 * longer follows. */
static void test_following_a_parent(void **state)
{
    (void)state;
    static struct ex_online o;
    uint32_t prefix[] = {1, 2, 2, 1};
    ex_online_init(&o);
    assert_int_equal(ex_online_following(&o), 0);
    o.kind = EX_ONLINE_FLIP;
    o.flip.cand = 0;
    o.flip.prefix = prefix;
    o.flip.nprefix = 4;
    o.flip.at = 3;
    o.flip.phase = 0;
    o.flip.pj = 1;
    assert_int_equal(ex_online_following(&o), 2);
    o.flip.pj = 3; /* at the held access: the flip's own choices from here */
    assert_int_equal(ex_online_following(&o), 0);
    o.flip.pj = 2, o.flip.phase = 1;
    assert_int_equal(ex_online_following(&o), 0);
    o.flip.cand = -1, o.flip.phase = 0;
    assert_int_equal(ex_online_following(&o), 0); /* no flip: pos */
    o.kind = EX_ONLINE_RF;
    o.rf.mutating = true;
    o.rf.prefix = prefix;
    o.rf.nprefix = 4;
    o.rf.flip = 3;
    o.steps = 2;
    assert_int_equal(ex_online_following(&o), 2);
    o.steps = 3;
    assert_int_equal(ex_online_following(&o), 0);
    o.steps = 0, o.rf.diverged = true;
    assert_int_equal(ex_online_following(&o), 0);
    o.flip.prefix = NULL, o.rf.prefix = NULL; /* not ours to free */
    ex_online_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_fires_at_its_timed_step),
        cmocka_unit_test(test_the_woken_thread_keeps_the_turn),
        cmocka_unit_test(test_a_polling_loop_does_not_livelock),
        cmocka_unit_test(test_schedule_format),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_following_a_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
