/* Unit tests for explorer/yielders.c: a thread that yields is left out of the choice
 * while the others have not made EX_YIELD_PATIENCE cue points since, and its own next
 * cue point ends that. */
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
    /* T2 yields: left out. The same cue point seen twice counts once. */
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
    /* T2 yields again, then makes another cue point of its own (it ran: nobody else
     * could): that ends it. */
    e = ev(seq++, 2, EX_SYNC_OTHER, 0);
    ex_yielders_observe(&y, &e);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_has(&out, 2));
    e = ev(seq++, 2, EX_READ, 0);
    ex_yielders_observe(&y, &e);
    ex_yielders_avoid(&y, &out);
    assert_false(ex_tidset_has(&out, 2));
    /* A sparse preemption point is no yield; two yielders at once are both out. */
    e = ev(seq++, 2, EX_SYNC_OTHER, EX_F_PREEMPT);
    ex_yielders_observe(&y, &e);
    ex_yielders_avoid(&y, &out);
    assert_true(ex_tidset_empty(&out));
    e = ev(seq++, 3, EX_SYNC_OTHER, 0);
    ex_yielders_observe(&y, &e);
    e = ev(seq++, 4, EX_SYNC_OTHER, 0);
    ex_yielders_observe(&y, &e);
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
