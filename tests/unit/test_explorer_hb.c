/* Happens-before, blocking dependencies, race and atomicity-violation
 * detection on hand-made traces with known answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <string.h>

#define X 0x1000
#define Y 0x2000
#define L 0x3000    /* a lock word */
#define F 0x4000    /* a futex word */

static uint64_t rip_counter;
static struct ex_event *acc(struct ex_trace *t, uint32_t tid, enum ex_kind k, uint64_t addr)
{
    return ex_trace_access(t, tid, k, addr, 8, 0, 0x400000 + 16 * ++rip_counter);
}
static struct ex_event *lock_rmw(struct ex_trace *t, uint32_t tid, uint64_t addr)
{
    return ex_trace_access(t, tid, EX_RMW, addr, 4, EX_F_ATOMIC, 0x500000 + 16 * ++rip_counter);
}

static void analyze(const struct ex_trace *t, struct ex_analysis *a)
{
    char why[128] = "";
    int rc = ex_analyze(t, a, why, sizeof why);
    if (rc != EX_OK)
        fail_msg("ex_analyze: %d %s", rc, why);
}

static bool has_race(const struct ex_analysis *a, uint32_t x, uint32_t y)
{
    for (size_t i = 0; i < a->nraces; i++)
        if ((a->races[i].a == x && a->races[i].b == y) || (a->races[i].a == y && a->races[i].b == x))
            return true;
    return false;
}

static void test_program_order_only_races(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    acc(&t, 1, EX_WRITE, X);    /* 0 */
    acc(&t, 2, EX_READ, X);     /* 1: races with 0 */
    acc(&t, 2, EX_READ, Y);     /* 2 */
    acc(&t, 1, EX_READ, Y);     /* 3: read-read, no race */
    acc(&t, 2, EX_WRITE, X);    /* 4: races with 0 (write-write) */
    analyze(&t, &a);
    assert_true(ex_hb_before(&a.hb, 0, 3));   /* program order */
    assert_true(ex_hb_before(&a.hb, 1, 4));
    assert_false(ex_hb_ordered(&a.hb, 0, 1));
    assert_false(ex_hb_before(&a.hb, 3, 3));
    assert_true(has_race(&a, 0, 1));
    assert_true(has_race(&a, 0, 4));
    assert_false(has_race(&a, 2, 3));
    assert_int_equal(a.nraces, 2);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* The Circle class: every access to r and c under the lock l, taken by
 * LOCK cmpxchg and released by xchg: no race, though the threads interleave. */
static void build_locked(struct ex_trace *t, bool with_lock)
{
    ex_trace_init(t);
    for (int round = 0; round < 2; round++) {
        uint32_t me = round == 0 ? 1 : 2;
        if (with_lock)
            lock_rmw(t, me, L);
        acc(t, me, me == 1 ? EX_WRITE : EX_READ, X);
        acc(t, me, me == 1 ? EX_WRITE : EX_READ, Y);
        if (with_lock)
            lock_rmw(t, me, L);
    }
    acc(t, 1, EX_WRITE, X); /* after the critical sections, unprotected */
    acc(t, 2, EX_READ, Y);  /* read only: no race with anything after the lock */
}

static void test_lock_protected_no_race(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    build_locked(&t, true);
    analyze(&t, &a);
    /* T2's read of X (5) follows T1's unlock (3) via T2's lock (4). */
    assert_true(ex_hb_before(&a.hb, 1, 5));
    assert_true(ex_hb_before(&a.hb, 3, 4));
    /* T1's late write of X (8) is unordered with T2's read of X (5): a race. */
    assert_true(has_race(&a, 5, 8));
    assert_int_equal(a.nraces, 1);
    ex_analysis_free(&a);
    ex_trace_free(&t);

    build_locked(&t, false);
    analyze(&t, &a);
    assert_true(has_race(&a, 0, 2));  /* W X / R X */
    assert_true(has_race(&a, 1, 3));  /* W Y / R Y */
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_atomics_do_not_race(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    lock_rmw(&t, 1, X);                                         /* 0 */
    lock_rmw(&t, 2, X);                                         /* 1: both atomic */
    ex_trace_access(&t, 1, EX_WRITE, Y, 4, 0, 0x10);            /* 2: bytes 0..3 */
    ex_trace_access(&t, 2, EX_WRITE, Y + 4, 4, 0, 0x20);        /* 3: bytes 4..7 */
    ex_trace_access(&t, 2, EX_READ, Y + 2, 4, 0, 0x30);         /* 4: overlaps 2 */
    analyze(&t, &a);
    assert_false(has_race(&a, 0, 1));
    assert_false(has_race(&a, 2, 3));   /* same word, disjoint bytes */
    assert_true(has_race(&a, 2, 4));
    assert_int_equal(a.nraces, 1);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* A plain (non-atomic) write racing an atomic RMW is still a race. */
static void test_plain_vs_atomic_races(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    lock_rmw(&t, 1, X);
    acc(&t, 2, EX_WRITE, X);
    analyze(&t, &a);
    assert_true(has_race(&a, 0, 1));
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* Futex handoff: T1 writes X, wakes T2 which waited; T2 reads X: ordered. */
static void test_futex_edge(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    ex_trace_sync(&t, 2, EX_FUTEX_WAIT, F, 0);  /* 0: T2 blocks */
    acc(&t, 1, EX_WRITE, X);                    /* 1 */
    ex_trace_sync(&t, 1, EX_FUTEX_WAKE, F, 1);  /* 2: wakes T2 */
    acc(&t, 2, EX_READ, X);                     /* 3 */
    acc(&t, 1, EX_WRITE, Y);                    /* 4 */
    acc(&t, 2, EX_READ, Y);                     /* 5: races with 4 */
    analyze(&t, &a);
    assert_int_equal(a.dep[3], 2);
    assert_int_equal(a.dep[0], -1);
    assert_true(ex_hb_before(&a.hb, 1, 3));
    assert_false(has_race(&a, 1, 3));
    assert_true(has_race(&a, 4, 5));
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* FIFO matching: two waiters, a wake of 1 wakes the older; then another
 * wake of 1 the younger. A non-blocking wait does not queue. */
static void test_futex_fifo(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    struct ex_event *e;
    ex_trace_init(&t);
    ex_trace_sync(&t, 2, EX_FUTEX_WAIT, F, 0);  /* 0 */
    e = ex_trace_sync(&t, 4, EX_FUTEX_WAIT, F, 0);  /* 1: EAGAIN */
    e->flags = EX_F_NOBLOCK;
    ex_trace_sync(&t, 3, EX_FUTEX_WAIT, F, 0);  /* 2 */
    ex_trace_sync(&t, 1, EX_FUTEX_WAKE, F, 1);  /* 3: wakes T2 */
    acc(&t, 4, EX_READ, X);                     /* 4: T4 never blocked */
    acc(&t, 2, EX_READ, X);                     /* 5 */
    ex_trace_sync(&t, 1, EX_FUTEX_WAKE, F, 1);  /* 6: wakes T3 */
    acc(&t, 3, EX_READ, X);                     /* 7 */
    analyze(&t, &a);
    assert_int_equal(a.dep[4], -1);
    assert_int_equal(a.dep[5], 3);
    assert_int_equal(a.dep[7], 6);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* An explicit waker (set by the VMM) wins over inference. */
static void test_explicit_waker(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    ex_trace_sync(&t, 2, EX_FUTEX_WAIT, F, 0);      /* 0 */
    ex_trace_sync(&t, 3, EX_FUTEX_WAIT, F, 0);      /* 1 */
    ex_trace_sync(&t, 1, EX_FUTEX_WAKE, F, 1);      /* 2: woke T3, not FIFO's T2 */
    struct ex_event *e = acc(&t, 3, EX_READ, X);    /* 3 */
    e->waker = 2 + 1;
    analyze(&t, &a);
    assert_int_equal(a.dep[3], 2);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* create -> child's first event; exit -> joiner's next event. */
static void test_create_join(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    acc(&t, 1, EX_WRITE, X);                        /* 0 */
    ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 2);   /* 1 */
    acc(&t, 2, EX_READ, X);                         /* 2: after create: no race */
    ex_trace_sync(&t, 1, EX_THREAD_JOIN, 0, 2);     /* 3: blocks */
    acc(&t, 2, EX_WRITE, Y);                        /* 4 */
    ex_trace_sync(&t, 2, EX_THREAD_EXIT, 0, 0);     /* 5 */
    acc(&t, 1, EX_READ, Y);                         /* 6: after join: no race */
    analyze(&t, &a);
    assert_int_equal(a.dep[2], 1);
    assert_int_equal(a.dep[6], 5);
    assert_true(ex_hb_before(&a.hb, 0, 2));
    assert_true(ex_hb_before(&a.hb, 4, 6));
    assert_int_equal(a.nraces, 0);
    assert_int_equal(t.nthreads, 2);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* An id reused after its thread exited (the VMM does so past EX_MAX_TID threads): the
 * new thread's first event waits for its create, not for nothing. */
static void test_reused_id(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 2);   /* 0 */
    acc(&t, 2, EX_WRITE, X);                        /* 1 */
    ex_trace_sync(&t, 2, EX_THREAD_EXIT, F, 1);     /* 2: wakes the joiner */
    ex_trace_sync(&t, 1, EX_FUTEX_WAIT, F, 0)->flags = EX_F_NOBLOCK; /* 3: the join: done */
    acc(&t, 1, EX_WRITE, Y);                        /* 4 */
    ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 2);   /* 5: id 2 again, a new thread */
    acc(&t, 2, EX_READ, Y);                         /* 6 */
    analyze(&t, &a);
    assert_int_equal(a.dep[1], 0);
    assert_int_equal(a.dep[6], 5);                  /* its create, not -1 */
    assert_true(ex_hb_before(&a.hb, 4, 6));
    assert_int_equal(a.nraces, 0);
    /* The model enables the new thread only after its create. */
    struct ex_model m;
    assert_int_equal(ex_model_init(&m, &a), 0);
    for (int i = 0; i < 5; i++) {
        struct ex_tidset en;
        ex_model_enabled(&m, &en);
        uint32_t tid = t.ev[i].tid;
        assert_true(ex_tidset_has(&en, tid));
        ex_model_step(&m, tid);
    }
    assert_false(ex_model_is_enabled(&m, 2));       /* event 6 waits for event 5 */
    ex_model_step(&m, 1);
    assert_true(ex_model_is_enabled(&m, 2));
    ex_model_free(&m);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* Transitivity through a third thread. */
static void test_transitive(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    acc(&t, 1, EX_WRITE, X);    /* 0 */
    lock_rmw(&t, 1, L);         /* 1: release */
    lock_rmw(&t, 2, L);         /* 2: acquire */
    lock_rmw(&t, 2, L + 8);     /* 3: release on another word */
    lock_rmw(&t, 3, L + 8);     /* 4: acquire */
    acc(&t, 3, EX_READ, X);     /* 5 */
    analyze(&t, &a);
    assert_true(ex_hb_before(&a.hb, 0, 5));
    assert_int_equal(a.nraces, 0);
    assert_int_equal(ex_hb_component(&a.hb, 5, 1), 2);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static int find_avio(const struct ex_analysis *a, uint32_t p, uint32_t r, uint32_t c)
{
    for (size_t i = 0; i < a->navio; i++)
        if (a->avio[i].p == p && a->avio[i].r == r && a->avio[i].c == c)
            return a->avio[i].pattern;
    return -1;
}

static void avio_case(enum ex_kind p, enum ex_kind r, enum ex_kind c, int expect)
{
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    acc(&t, 1, p, X);
    acc(&t, 2, r, X);
    acc(&t, 1, c, X);
    analyze(&t, &a);
    assert_int_equal(find_avio(&a, 0, 1, 2), expect);
    assert_int_equal(a.navio, expect < 0 ? 0 : 1);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_avio_patterns(void **st)
{
    (void)st;
    avio_case(EX_READ, EX_WRITE, EX_READ, EX_AVIO_RWR);
    avio_case(EX_WRITE, EX_WRITE, EX_READ, EX_AVIO_WWR);
    avio_case(EX_WRITE, EX_READ, EX_WRITE, EX_AVIO_WRW);
    avio_case(EX_READ, EX_WRITE, EX_WRITE, EX_AVIO_RWW);
    /* The four serializable ones. */
    avio_case(EX_READ, EX_READ, EX_READ, -1);
    avio_case(EX_READ, EX_READ, EX_WRITE, -1);
    avio_case(EX_WRITE, EX_READ, EX_READ, -1);
    avio_case(EX_WRITE, EX_WRITE, EX_WRITE, -1);
    /* A remote RMW is a read and a write: W-RMW-W is W-R-W. */
    avio_case(EX_WRITE, EX_RMW, EX_WRITE, EX_AVIO_WRW);
    assert_string_equal(ex_avio_name(EX_AVIO_WWR), "W-W-R");
}

static void test_avio_details(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    /* Lock pairs are skipped; the remote access reported is the latest. */
    ex_trace_init(&t);
    lock_rmw(&t, 1, L);         /* 0 */
    lock_rmw(&t, 2, L);         /* 1 */
    lock_rmw(&t, 1, L);         /* 2: atomic-atomic local pair: skipped */
    acc(&t, 1, EX_READ, X);     /* 3 */
    acc(&t, 2, EX_WRITE, X);    /* 4 */
    acc(&t, 3, EX_WRITE, X);    /* 5 */
    acc(&t, 1, EX_READ, Y);     /* 6: another location, no effect */
    acc(&t, 1, EX_READ, X);     /* 7: R-W-R with r = 5 */
    acc(&t, 1, EX_READ, X);     /* 8: nothing in between */
    analyze(&t, &a);
    assert_int_equal(find_avio(&a, 3, 5, 7), EX_AVIO_RWR);
    assert_int_equal(a.navio, 1);
    assert_int_not_equal(ex_avio_key(&t, &a.avio[0]), 0);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_shared_locations(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    acc(&t, 1, EX_WRITE, X);
    acc(&t, 2, EX_READ, X);
    acc(&t, 3, EX_READ, X);     /* X: 3 threads */
    acc(&t, 1, EX_WRITE, Y);
    acc(&t, 2, EX_WRITE, Y);    /* Y: 2 threads */
    acc(&t, 1, EX_READ, L);
    acc(&t, 2, EX_READ, L);     /* L: read-only, not shared-for-writing */
    acc(&t, 3, EX_WRITE, F);    /* F: one thread */
    analyze(&t, &a);
    assert_int_equal(a.nlocs, 2);
    assert_int_equal(a.locs[0].key, X);
    assert_int_equal(a.locs[0].nthreads, 3);
    assert_int_equal(a.locs[1].key, Y);
    assert_non_null(ex_analysis_loc(&a, Y));
    assert_null(ex_analysis_loc(&a, L));
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_invalid_traces_rejected(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    char why[128];
    ex_trace_init(&t);
    acc(&t, 1, EX_READ, X);
    acc(&t, 2, EX_READ, X);
    t.ev[1].seq = 7;
    assert_int_equal(ex_analyze(&t, &a, why, sizeof why), EX_ERR_INVALID);
    assert_non_null(strstr(why, "seq"));
    t.ev[1].seq = 1;
    t.ev[1].kind = 99;
    assert_int_equal(ex_analyze(&t, &a, why, sizeof why), EX_ERR_INVALID);
    t.ev[1].kind = EX_READ;
    t.ev[1].waker = 2; /* itself */
    assert_int_equal(ex_analyze(&t, &a, why, sizeof why), EX_ERR_INVALID);
    t.ev[1].waker = 1; /* T1's event: fine */
    assert_int_equal(ex_analyze(&t, &a, why, sizeof why), EX_OK);
    ex_analysis_free(&a);
    t.ev[1].tid = 0;
    assert_int_equal(ex_analyze(&t, &a, why, sizeof why), EX_ERR_INVALID);
    t.ev[1].tid = 9; /* beyond nthreads */
    assert_int_equal(ex_analyze(&t, &a, why, sizeof why), EX_ERR_INVALID);
    t.ev[1].tid = 2;
    memset(t.ev[1].sym, 'a', sizeof t.ev[1].sym);
    assert_int_equal(ex_analyze(&t, &a, why, sizeof why), EX_ERR_INVALID);
    ex_trace_free(&t);
}

static void test_empty_trace(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    analyze(&t, &a);
    assert_int_equal(a.nraces, 0);
    assert_int_equal(a.nlocs, 0);
    ex_analysis_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program_order_only_races),
        cmocka_unit_test(test_lock_protected_no_race),
        cmocka_unit_test(test_atomics_do_not_race),
        cmocka_unit_test(test_plain_vs_atomic_races),
        cmocka_unit_test(test_futex_edge),
        cmocka_unit_test(test_futex_fifo),
        cmocka_unit_test(test_explicit_waker),
        cmocka_unit_test(test_create_join),
        cmocka_unit_test(test_reused_id),
        cmocka_unit_test(test_transitive),
        cmocka_unit_test(test_avio_patterns),
        cmocka_unit_test(test_avio_details),
        cmocka_unit_test(test_shared_locations),
        cmocka_unit_test(test_invalid_traces_rejected),
        cmocka_unit_test(test_empty_trace),
    };
    return cmocka_run_group_tests_name("explorer: hb, races, avio", tests, NULL, NULL);
}
