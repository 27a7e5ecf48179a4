/* Unit tests for vmm/rounds/explore_timed.c: when timed runs are due, where their change
 * points fall, and how a recorded decision becomes a matched point and then a counted
 * one (the schedule a dump keeps must replay as any sparse one). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rounds/explore_timed.h"
#include "sched/sparse.h"

#define S 1000000000ULL
#define MS 1000000ULL

static void test_due_by_share_from_start(void **st)
{
    (void)st;
    struct explore_timed t;
    explore_timed_init(&t, 2 * S, 1);
    assert_false(explore_timed_due(&t, 10 * S)); /* not started: nothing is slow yet */
    explore_timed_start(&t, 1 * S);
    explore_timed_start(&t, 3 * S); /* the earliest start stays */
    assert_true(explore_timed_due(&t, 1 * S));
    explore_timed_after(&t, true, 100 * MS, 0);
    /* 100 ms taken: due again once it is their share of the time since the start. */
    uint64_t at = 1 * S + 100 * MS * 100 / EXPLORE_TIMED_SHARE_PCT;
    assert_false(explore_timed_due(&t, at - 1 * MS));
    assert_true(explore_timed_due(&t, at + 1));
    t.always = true; /* --explore-strategy timed */
    assert_true(explore_timed_due(&t, 1 * S + 1 * MS));
    explore_timed_free(&t);
}

static void test_times_fall_in_the_first_run(void **st)
{
    (void)st;
    struct explore_timed t;
    explore_timed_init(&t, 2 * S, 7);
    explore_timed_start(&t, 0);
    assert_int_equal(explore_timed_begin(&t, 7, NULL, 0), 0);
    assert_int_equal(t.nat, 0); /* the first run measures */
    assert_true(t.plan.sparse);
    assert_int_equal(t.plan.npreempt, 0);
    explore_timed_after(&t, true, 8 * MS, 0);
    assert_int_equal(explore_timed_budget(&t), EXPLORE_TIMED_MIN_NS);
    /* A run a change point made long sizes the budget, never the times' range. */
    explore_timed_after(&t, true, 50 * MS, 1);
    assert_int_equal(explore_timed_budget(&t), EXPLORE_TIMED_FACTOR * 50 * MS);
    uint64_t yields[2] = {0x401000, 0x402000};
    uint32_t seen[EXPLORE_TIMED_MAX + 1] = {0};
    for (int k = 0; k < 200; k++) {
        assert_int_equal(explore_timed_begin(&t, 7, yields, 2), 0);
        assert_true(t.nat >= 1 && t.nat <= EXPLORE_TIMED_MAX);
        seen[t.nat]++;
        for (uint32_t i = 0; i < t.nat; i++) {
            assert_true(t.at[i] < 8 * MS);
            if (i)
                assert_true(t.at[i - 1] <= t.at[i]);
        }
        assert_int_equal(t.plan.nyield, 2);
        assert_int_equal(t.plan.npreempt, 0);
    }
    for (uint32_t n = 1; n <= EXPLORE_TIMED_MAX; n++)
        assert_true(seen[n] > 0);
    explore_timed_free(&t);
}

static void test_first_cuts_turn_them_off(void **st)
{
    (void)st;
    struct explore_timed t;
    explore_timed_init(&t, 2 * S, 1);
    explore_timed_start(&t, 0);
    explore_timed_after(&t, false, 2 * S, 0);
    assert_false(t.off);
    explore_timed_after(&t, false, 2 * S, 0);
    assert_true(t.off);
    assert_false(explore_timed_due(&t, 100 * S));
    explore_timed_free(&t);
    /* One that ended first: cuts later are single runs, not a long program. */
    explore_timed_init(&t, 2 * S, 1);
    explore_timed_after(&t, true, 5 * MS, 0);
    for (int i = 0; i < 5; i++)
        explore_timed_after(&t, false, 100 * MS, 2);
    assert_false(t.off);
    explore_timed_free(&t);
}

static void test_decisions_become_matched_then_counted(void **st)
{
    (void)st;
    struct explore_timed t;
    explore_timed_init(&t, 2 * S, 1);
    assert_int_equal(explore_timed_begin(&t, 1, NULL, 0), 0);
    struct sparse *sp = calloc(1, sizeof *sp);
    assert_non_null(sp);
    sp->ntimed = 2;
    sp->timed[0] = (struct sparse_timed){.xid = 2, .rip = 0x401234, .hash = 0xabc};
    sp->timed[1] = (struct sparse_timed){.xid = 3, .rip = 0x405678, .hash = 0xdef, .cue = 9};
    struct ex_schedule s;
    ex_schedule_init(&s);
    assert_int_equal(explore_timed_schedule(&t, sp, &s), 0);
    assert_true(s.sparse);
    assert_int_equal(s.npreempt, 2);
    assert_true(explore_timed_has_match(&s));
    assert_int_equal(s.preempt[0].thread, 2);
    assert_int_equal(s.preempt[0].rip, 0x401234);
    assert_int_equal(s.preempt[0].match, 0xabc);
    assert_int_equal(s.preempt[1].match_after, 9);
    /* The live replay: the VM's points as sparse_begin_locked made them; the first fired
     * at its 3118th hit, the second never did. */
    sp->n = 2;
    sp->pt[0] = (struct sparse_point){.rip = 0x401234, .xid = 2, .match = 0xabc,
                                      .count = 3118, .hits = 3118, .done = true};
    sp->pt[1] = (struct sparse_point){.rip = 0x405678, .xid = 3, .match = 0xdef,
                                      .count = EX_MAX_STEPS, .hits = 40};
    struct ex_schedule c;
    ex_schedule_init(&c);
    assert_int_equal(ex_schedule_copy(&c, &s), 0);
    assert_int_equal(explore_timed_counts(sp, &c), -1); /* one never fired: no schedule */
    sp->pt[1].count = sp->pt[1].hits = 12;
    sp->pt[1].done = true;
    ex_schedule_free(&c);
    ex_schedule_init(&c);
    assert_int_equal(ex_schedule_copy(&c, &s), 0);
    assert_int_equal(explore_timed_counts(sp, &c), 0);
    assert_false(explore_timed_has_match(&c));
    assert_int_equal(c.preempt[0].count, 3118);
    assert_int_equal(c.preempt[1].count, 12);
    /* A matched point of the same thread and place but another state is not it. */
    sp->pt[0].match = 0x999;
    ex_schedule_free(&c);
    ex_schedule_init(&c);
    assert_int_equal(ex_schedule_copy(&c, &s), 0);
    assert_int_equal(explore_timed_counts(sp, &c), -1);
    ex_schedule_free(&c);
    ex_schedule_free(&s);
    free(sp);
    explore_timed_free(&t);
}

static void test_schedule_refuses_bad_matches(void **st)
{
    (void)st;
    struct ex_schedule s;
    ex_schedule_init(&s);
    assert_int_equal(ex_schedule_add_match(&s, 0, 0x401000, 5, 0), -1); /* any thread: no */
    assert_int_equal(ex_schedule_add_match(&s, 2, 0x401000, 0, 0), -1); /* no state */
    assert_int_equal(ex_schedule_add_match(&s, 2, 0, 5, 0), -1);
    assert_int_equal(ex_schedule_add_match(&s, 2, 0x401000, 5, 0), 0);
    assert_int_equal(ex_schedule_add_match(&s, 2, 0x401000, 6, 0), -1); /* a repeat */
    ex_schedule_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_due_by_share_from_start),
        cmocka_unit_test(test_times_fall_in_the_first_run),
        cmocka_unit_test(test_first_cuts_turn_them_off),
        cmocka_unit_test(test_decisions_become_matched_then_counted),
        cmocka_unit_test(test_schedule_refuses_bad_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
