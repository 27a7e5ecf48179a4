/* Unit tests for vmm/rounds/explore_replay.c (a bug run's live replay against the run) and
 * limits_merge (vmm/linux/limitlog.c: a whole run's sandbox limits noted for the live
 * program). The case that made the flip strategy look broken: the --timeout stopped the
 * replay of a 250-thread run part way, on a prefix of the run's trace; that is no
 * divergence, and the run's thread limit must still reach the live report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "linux/limitlog.h"
#include "rounds/explore_replay.h"

/* A synthetic run: n cue points, thread 1 + i % 3 writing address 0x1000 + 8 * (i % 5). */
static void make_run(struct ex_trace *t, size_t n)
{
    ex_trace_init(t);
    for (size_t i = 0; i < n; i++)
        assert_non_null(ex_trace_sync(t, 1 + (uint32_t)(i % 3), EX_WRITE, 0x1000 + 8 * (i % 5), 0));
}

static void test_same(void **st)
{
    (void)st;
    struct ex_trace run, live;
    make_run(&run, 100);
    make_run(&live, 100);
    struct explore_replay_result r = explore_replay_judge(&live, &run, true, false, true);
    assert_int_equal(r.verdict, EXPLORE_REPLAY_SAME);
    assert_int_equal(r.diff, -1);
    /* A deadlock found at a futex wait: the live trace lacks the run's last cue point. */
    live.n = 99;
    assert_int_equal(explore_replay_judge(&live, &run, true, false, true).verdict,
                     EXPLORE_REPLAY_SAME);
    /* Same trace, another outcome: a difference. */
    live.n = 100;
    assert_int_equal(explore_replay_judge(&live, &run, true, false, false).verdict,
                     EXPLORE_REPLAY_DIFFERS);
    ex_trace_free(&run);
    ex_trace_free(&live);
}

static void test_stopped_by_timeout(void **st)
{
    (void)st;
    struct ex_trace run, live;
    make_run(&run, 23700);
    make_run(&live, 12876); /* the timeout came here: the same run up to there */
    struct explore_replay_result r = explore_replay_judge(&live, &run, true, true, false);
    assert_int_equal(r.verdict, EXPLORE_REPLAY_STOPPED);
    assert_int_equal(r.diff, 12876);
    assert_int_equal(r.live_n, 12876);
    assert_int_equal(r.run_n, 23700);
    /* Cut by its own wall budget (the program did not end): stopped too. */
    assert_int_equal(explore_replay_judge(&live, &run, false, false, false).verdict,
                     EXPLORE_REPLAY_STOPPED);
    /* The program ended early on its own, on a prefix: that is a difference (another
     * outcome, sooner), not a stop. */
    assert_int_equal(explore_replay_judge(&live, &run, true, false, false).verdict,
                     EXPLORE_REPLAY_DIFFERS);
    ex_trace_free(&run);
    ex_trace_free(&live);
}

static void test_differs(void **st)
{
    (void)st;
    struct ex_trace run, live;
    make_run(&run, 500);
    make_run(&live, 300);
    live.ev[200].tid = 9; /* another thread went at cue point 200 */
    /* Stopped by the timeout later, but the traces parted before: a real difference. */
    struct explore_replay_result r = explore_replay_judge(&live, &run, true, true, false);
    assert_int_equal(r.verdict, EXPLORE_REPLAY_DIFFERS);
    assert_int_equal(r.diff, 200);
    /* A longer live trace than the run's (it went on past the run's end). */
    ex_trace_free(&live);
    make_run(&live, 600);
    assert_int_equal(explore_replay_judge(&live, &run, true, true, false).verdict,
                     EXPLORE_REPLAY_DIFFERS);
    ex_trace_free(&run);
    ex_trace_free(&live);
}

static void test_limits_merge(void **st)
{
    (void)st;
    struct limits sand, live;
    limits_init(&sand);
    limits_init(&live);
    assert_int_equal(limits_merge(&live, &sand), 0);
    assert_int_equal(limits_count(&live), 0);
    limits_note(&sand, LIMIT_THREADS, 0, NULL, "thread limit reached: more than %d", 254);
    limits_note(&sand, LIMIT_THREADS, 0, NULL, "counted, not kept");
    limits_note(&sand, LIMIT_SYSCALL, 22, "none", "syscall %d", 22);
    limits_note(&live, LIMIT_SYSCALL, 22, NULL, "the live one's text");
    assert_int_equal(limits_merge(&live, &sand), 1); /* threads is new, the syscall was there */
    assert_int_equal(limits_count(&live), 2);
    assert_int_equal(live.l[0].kind, LIMIT_SYSCALL);
    assert_string_equal(live.l[0].what, "the live one's text");
    assert_int_equal(live.l[0].count, 2);
    assert_int_equal(live.l[1].kind, LIMIT_THREADS);
    assert_string_equal(live.l[1].what, "thread limit reached: more than 254");
    assert_string_equal(live.l[1].option, "");
    limits_destroy(&sand);
    limits_destroy(&live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same), cmocka_unit_test(test_stopped_by_timeout),
        cmocka_unit_test(test_differs), cmocka_unit_test(test_limits_merge),
    };
    return cmocka_run_group_tests_name("vmm/explore_replay", tests, NULL, NULL);
}
