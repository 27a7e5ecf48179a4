/* Unit tests for vmm/rounds/explore_wall.c: the wall budget of whole runs after an early
 * run was cut. The case behind it: many-200-list on a loaded host (30-40k cue points a run
 * at ~0.5-1 ms each) had its first two runs cut at 2 s and 16 s, and exploration gave up
 * on a short test in 7 of 10 seeds; a long computing program must still give up soon. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rounds/explore_wall.h"

#define S 1000000000ULL

static void test_computing_run_stretches_only(void **st)
{
    (void)st;
    /* throughput: a few cue points in 2 s: 8 x 2 s, however much budget is left. */
    assert_int_equal(explore_wall_after_cut(2 * S, 8, 4, 2 * S, 52 * S), 16 * S);
    /* just below the rate: 399 cue points in 2 s */
    assert_int_equal(explore_wall_after_cut(2 * S, 8, 2 * EXPLORE_CUE_BOUND_RATE - 1, 2 * S, 52 * S),
                     16 * S);
}

static void test_cue_bound_run_gets_half_the_rest(void **st)
{
    (void)st;
    /* 200 threads: 3000 cue points in 2 s, 52 s left: 26 s */
    assert_int_equal(explore_wall_after_cut(2 * S, 8, 3000, 2 * S, 52 * S), 26 * S);
    /* exactly at the rate */
    assert_int_equal(explore_wall_after_cut(2 * S, 8, 2 * EXPLORE_CUE_BOUND_RATE, 2 * S, 52 * S),
                     26 * S);
    /* little left (a 10 s budget): never below the stretch */
    assert_int_equal(explore_wall_after_cut(2 * S, 8, 3000, 2 * S, 8 * S), 16 * S);
    /* nothing left, no time measured: the stretch */
    assert_int_equal(explore_wall_after_cut(2 * S, 8, 3000, 2 * S, 0), 16 * S);
    assert_int_equal(explore_wall_after_cut(2 * S, 8, 3000, 0, 52 * S), 16 * S);
}

static void test_sized(void **st)
{
    (void)st;
    assert_int_equal(explore_wall_sized(2 * S, 16 * S, 5 * S), 10 * S); /* twice the run */
    assert_int_equal(explore_wall_sized(2 * S, 16 * S, S / 2), 2 * S);  /* at least the base */
    assert_int_equal(explore_wall_sized(2 * S, 16 * S, 12 * S), 16 * S); /* at most the stretch */
    assert_int_equal(explore_wall_sized(2 * S, 26 * S, 12 * S), 24 * S); /* a cue-bound stretch */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_computing_run_stretches_only),
        cmocka_unit_test(test_cue_bound_run_gets_half_the_rest),
        cmocka_unit_test(test_sized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
