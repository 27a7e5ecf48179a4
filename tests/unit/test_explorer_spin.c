/* Spin detection (explorer/spin.h) on synthetic cue-point sequences, and the cursor
 * keeping its default policy away from spinners while an explicit schedule is obeyed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdlib.h>
#include <string.h>

#define FLAG 0x404000ULL
#define OTHER 0x404100ULL

static struct ex_spin *new_spin(uint32_t threshold, uint32_t patience)
{
    struct ex_spin *s = malloc(sizeof *s);
    assert_non_null(s);
    ex_spin_init(s, threshold, patience);
    return s;
}

static void reads(struct ex_spin *s, uint32_t tid, uint64_t addr, uint64_t value, int n)
{
    for (int i = 0; i < n; i++)
        ex_spin_observe(s, tid, EX_READ, addr, 4, value);
}

static void test_spinner_found_after_threshold(void **st)
{
    (void)st;
    struct ex_spin *s = new_spin(8, 64);
    reads(s, 2, FLAG, 0, 7);
    assert_false(ex_spin_is_spinning(s, 2));
    /* another thread's unrelated cue points do not break T2's run */
    ex_spin_observe(s, 1, EX_WRITE, OTHER, 4, 0);
    ex_spin_observe(s, 1, EX_FUTEX_WAKE, OTHER, 0, 0);
    reads(s, 2, FLAG, 0, 1);
    assert_true(ex_spin_is_spinning(s, 2));
    assert_true(ex_tidset_has(ex_spin_avoid(s), 2));
    assert_false(ex_spin_is_spinning(s, 1));
    assert_int_equal(s->detections, 1);
    /* still spinning: no second detection */
    reads(s, 2, FLAG, 0, 5);
    assert_int_equal(s->detections, 1);
    free(s);
}

static void test_run_broken_by_own_other_cue_points(void **st)
{
    (void)st;
    struct ex_spin *s = new_spin(8, 64);
    /* a different value, address, size or kind in between starts afresh */
    reads(s, 2, FLAG, 0, 7);
    reads(s, 2, FLAG, 1, 1);
    reads(s, 2, FLAG, 1, 6);
    assert_false(ex_spin_is_spinning(s, 2));
    ex_spin_observe(s, 2, EX_READ, FLAG, 8, 1);
    reads(s, 2, FLAG, 1, 7);
    assert_false(ex_spin_is_spinning(s, 2));
    ex_spin_observe(s, 2, EX_SYNC_OTHER, 0, 0, 0);
    reads(s, 2, FLAG, 1, 7);
    assert_false(ex_spin_is_spinning(s, 2));
    ex_spin_observe(s, 2, EX_READ, OTHER, 4, 1);
    reads(s, 2, FLAG, 1, 7);
    assert_false(ex_spin_is_spinning(s, 2));
    reads(s, 2, FLAG, 1, 1);
    assert_true(ex_spin_is_spinning(s, 2));
    /* bytes beyond the access size do not count */
    struct ex_spin *t = new_spin(3, 64);
    ex_spin_observe(t, 1, EX_READ, FLAG, 1, 0x100);
    ex_spin_observe(t, 1, EX_READ, FLAG, 1, 0x200);
    ex_spin_observe(t, 1, EX_READ, FLAG, 1, 0x300);
    assert_true(ex_spin_is_spinning(t, 1));
    free(t);
    free(s);
}

static void test_write_to_location_lifts(void **st)
{
    (void)st;
    struct ex_spin *s = new_spin(8, 64);
    reads(s, 2, FLAG, 0, 8);
    assert_true(ex_spin_is_spinning(s, 2));
    /* a write elsewhere does not, an overlapping one does (here 1 byte into the word) */
    ex_spin_observe(s, 1, EX_WRITE, FLAG + 4, 4, 1);
    assert_true(ex_spin_is_spinning(s, 2));
    ex_spin_observe(s, 1, EX_WRITE, FLAG + 1, 1, 1);
    assert_false(ex_spin_is_spinning(s, 2));
    /* and the run starts again from zero: 7 more reads are not enough */
    reads(s, 2, FLAG, 0x100, 7);
    assert_false(ex_spin_is_spinning(s, 2));
    reads(s, 2, FLAG, 0x100, 1);
    assert_true(ex_spin_is_spinning(s, 2));
    /* an RMW (lock xadd) counts as a write */
    ex_spin_observe(s, 3, EX_RMW, FLAG, 4, 0);
    assert_false(ex_spin_is_spinning(s, 2));
    assert_int_equal(s->detections, 2);
    free(s);
}

static void test_patience(void **st)
{
    (void)st;
    struct ex_spin *s = new_spin(8, 5);
    reads(s, 2, FLAG, 0, 8);
    for (int i = 0; i < 4; i++)
        ex_spin_observe(s, 1, EX_READ, OTHER, 4, (uint64_t)i);
    assert_true(ex_spin_is_spinning(s, 2));
    ex_spin_observe(s, 1, EX_READ, OTHER, 4, 9);
    assert_false(ex_spin_is_spinning(s, 2)); /* 5 cue points of others: T2 may run */
    /* one more identical read and it is a spinner again */
    reads(s, 2, FLAG, 0, 1);
    assert_true(ex_spin_is_spinning(s, 2));
    assert_int_equal(s->detections, 2);
    /* its own cue point elsewhere ends it too */
    ex_spin_observe(s, 2, EX_FUTEX_WAIT, OTHER, 0, 0);
    assert_false(ex_spin_is_spinning(s, 2));
    free(s);
}

static void test_off_and_bad_tids(void **st)
{
    (void)st;
    struct ex_spin *s = new_spin(0, 0);
    reads(s, 2, FLAG, 0, 100);
    assert_false(ex_spin_is_spinning(s, 2));
    assert_int_equal(s->detections, 0);
    ex_spin_init(s, 2, 0);
    assert_int_equal(s->patience, EX_SPIN_PATIENCE);
    reads(s, 0, FLAG, 0, 10);
    reads(s, EX_MAX_TID + 1, FLAG, 0, 10);
    reads(s, EX_MAX_TID, FLAG, 0, 2);
    assert_true(ex_spin_is_spinning(s, EX_MAX_TID));
    assert_int_equal(s->detections, 1);
    free(s);
}

/* The scenario of tests/guest/spin.c, as the VMM would drive it: with `continue`,
 * T1 spins on a flag that T2 sets after 20 cue points of work. Without detection the
 * cursor keeps choosing T1 forever; with it, T2 gets to run and set the flag. */
static int run_scenario(uint32_t threshold, int max_steps)
{
    struct ex_schedule sch;
    ex_schedule_init(&sch);
    sch.policy = EX_DEFAULT_CONTINUE;
    struct ex_cursor c;
    ex_cursor_init(&c, &sch);
    struct ex_spin *s = new_spin(threshold, 64);
    struct ex_tidset en;
    ex_tidset_clear(&en);
    ex_tidset_add(&en, 1);
    ex_tidset_add(&en, 2);
    uint64_t flag = 0;
    int t2_work = 0, steps = 0;
    for (; steps < max_steps; steps++) {
        uint32_t t = ex_cursor_next_avoiding(&c, &en, ex_spin_avoid(s));
        if (t == 1) {
            if (flag)
                break; /* T1 saw the flag: done */
            ex_spin_observe(s, 1, EX_READ, FLAG, 4, flag);
        } else if (t2_work < 20) {
            ex_spin_observe(s, 2, EX_WRITE, OTHER, 4, 0);
            t2_work++;
        } else {
            flag = 1;
            ex_spin_observe(s, 2, EX_WRITE, FLAG, 4, 1);
            ex_tidset_del(&en, 2); /* T2 exits */
        }
    }
    uint64_t det = s->detections;
    free(s);
    ex_schedule_free(&sch);
    return steps < max_steps ? (int)det : -1;
}

static void test_cursor_avoids_spinner(void **st)
{
    (void)st;
    assert_int_equal(run_scenario(0, 10000), -1);  /* livelock */
    assert_int_equal(run_scenario(8, 10000), 1);   /* one deprioritisation, then done */
}

static void test_cursor_avoid_rules(void **st)
{
    (void)st;
    struct ex_schedule sch;
    ex_schedule_init(&sch);
    sch.policy = EX_DEFAULT_ROUNDROBIN;
    sch.quantum = 1;
    struct ex_tidset en, avoid, only2;
    ex_tidset_clear(&en);
    ex_tidset_clear(&avoid);
    ex_tidset_clear(&only2);
    for (uint32_t t = 1; t <= 3; t++)
        ex_tidset_add(&en, t);
    ex_tidset_add(&avoid, 2);
    ex_tidset_add(&only2, 2);
    struct ex_cursor c;
    ex_cursor_init(&c, &sch);
    assert_int_equal(ex_cursor_next_avoiding(&c, &en, &avoid), 1);
    assert_int_equal(ex_cursor_next_avoiding(&c, &en, &avoid), 3);
    assert_int_equal(ex_cursor_next_avoiding(&c, &en, &avoid), 1);
    /* a spinner alone still runs */
    assert_int_equal(ex_cursor_next_avoiding(&c, &only2, &avoid), 2);
    assert_int_equal(ex_cursor_next_avoiding(&c, &en, NULL), 3);
    /* explicit segments are obeyed even for a spinner */
    ex_schedule_free(&sch);
    ex_schedule_init(&sch);
    struct ex_parse_error pe;
    memset(&pe, 0, sizeof pe);
    assert_int_equal(ex_schedule_parse("T2 x2\n", 6, &sch, &pe), 0);
    ex_cursor_init(&c, &sch);
    assert_int_equal(ex_cursor_next_avoiding(&c, &en, &avoid), 2);
    assert_int_equal(ex_cursor_next_avoiding(&c, &en, &avoid), 2);
    assert_int_not_equal(ex_cursor_next_avoiding(&c, &en, &avoid), 2);
    assert_int_equal(c.divergences, 0);
    ex_schedule_free(&sch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spinner_found_after_threshold),
        cmocka_unit_test(test_run_broken_by_own_other_cue_points),
        cmocka_unit_test(test_write_to_location_lifts),
        cmocka_unit_test(test_patience),
        cmocka_unit_test(test_off_and_bad_tids),
        cmocka_unit_test(test_cursor_avoids_spinner),
        cmocka_unit_test(test_cursor_avoid_rules),
    };
    return cmocka_run_group_tests_name("explorer: spin detection", tests, NULL, NULL);
}
