/* Unit tests for explorer/yielders.c: a thread that yields in a loop (EX_YIELD_STREAK in
 * a row) is left out of the choice while the others have not made EX_YIELD_PATIENCE cue
 * points since, a cue point of its own that is no yield ends that, and a yield or two
 * change nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "explorer/yielders.h"

static struct ex_event ev(uint64_t seq, uint32_t tid, enum ex_kind kind, uint8_t flags)
{
    struct ex_event e;
    memset(&e, 0, sizeof e);
    e.seq = seq;
    e.tid = tid;
    e.kind = (uint8_t)kind;
    e.flags = flags;
    return e;
}

/* T yields n times in a row (cue points seq on). */
static void yields(struct ex_yielders *y, uint64_t *seq, uint32_t tid, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        struct ex_event e = ev((*seq)++, tid, EX_SYNC_OTHER, 0);
        ex_yielders_observe(y, &e);
    }
}

static void test_yielder_left_out_until_patience(void **st)
{
    (void)st;
    struct ex_yielders y;
    struct ex_tidset out;
    ex_yielders_init(&y);
    uint64_t seq = 0;
    struct ex_event e = ev(seq++, 2, EX_READ, 0);
    ex_yielders_observe(&y, &e);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_empty(&out));
    /* Fewer yields in a row than EX_YIELD_STREAK: nothing changes. */
    yields(&y, &seq, 2, EX_YIELD_STREAK - 1);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_empty(&out));
    /* The streak-th yield in a row: T2 yields in a loop, left out. The same cue point
     * seen twice counts once. */
    e = ev(seq++, 2, EX_SYNC_OTHER, 0);
    ex_yielders_observe(&y, &e);
    ex_yielders_observe(&y, &e);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_has(&out, 2));
    assert_int_equal(ex_tidset_count(&out), 1);
    /* T3 runs: T2 stays out for EX_YIELD_PATIENCE cue points of the others, then is back. */
    for (uint32_t i = 0; i + 1 < EX_YIELD_PATIENCE; i++) {
        e = ev(seq++, 3, EX_WRITE, 0);
        ex_yielders_observe(&y, &e);
        ex_yielders_avoid(&y, &out);
        assert_true(ex_tidset_has(&out, 2));
    }
    e = ev(seq++, 3, EX_WRITE, 0);
    ex_yielders_observe(&y, &e);
    ex_yielders_avoid(&y, &out);
    assert_false(ex_tidset_has(&out, 2));
    /* Its next yield: still in the loop, out again at once. Then a cue point of its own
     * that is no yield (it ran: nobody else could) ends the loop. */
    yields(&y, &seq, 2, 1);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_has(&out, 2));
    e = ev(seq++, 2, EX_READ, 0);
    ex_yielders_observe(&y, &e);
    ex_yielders_avoid(&y, &out);
    assert_false(ex_tidset_has(&out, 2));
    yields(&y, &seq, 2, 1);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_has(&out, 2) == (EX_YIELD_STREAK <= 1)); /* a streak of 1 again */
    /* A sparse preemption point is no yield and breaks a streak; two loops at once are
     * both out. */
    yields(&y, &seq, 2, EX_YIELD_STREAK - 1);
    e = ev(seq++, 2, EX_SYNC_OTHER, EX_F_PREEMPT);
    ex_yielders_observe(&y, &e);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_empty(&out));
    yields(&y, &seq, 2, 1);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_has(&out, 2) == (EX_YIELD_STREAK <= 1));
    yields(&y, &seq, 3, EX_YIELD_STREAK);
    yields(&y, &seq, 4, EX_YIELD_STREAK);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_has(&out, 3) && ex_tidset_has(&out, 4));
    /* Out-of-range threads are ignored. */
    e = ev(seq++, EX_MAX_TID + 1, EX_SYNC_OTHER, 0);
    ex_yielders_observe(&y, &e);
    ex_yielders_observe(&y, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yielder_left_out_until_patience),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
