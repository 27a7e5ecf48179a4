/* The split-update gate (splitrmw.h): which variables of a trace two threads
 * each update by a plain read and, right after, a plain store (and which
 * near misses are not: one thread, an atomic access, something shared between,
 * a lock held, a variable that is no DATA); the history learns it (h->split_updates,
 * h->split_from, h->split_var); the portfolio's early pair slot opens on it
 * only, so a program whose runs show none runs exactly the schedules of the
 * layout without it at every index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include "explorer/splitrmw.h"
#include <stdio.h>
#include <string.h>

#include "online_sim.h"
#include "trace_fixture.h"

#define V 0x409228ull /* the variable updated */
#define U 0x409230ull /* another one */
#define LK 0x409240ull /* a lock word */

static void acc(struct ex_trace *t, uint32_t tid, enum ex_kind k, uint64_t addr, uint8_t flags)
{
    assert_non_null(ex_trace_access(t, tid, k, addr, 8, flags, 0x400000 + t->n));
}

/* Thread tid's read of V, then `between` (a store to U, or nothing), then its store. */
static void update(struct ex_trace *t, uint32_t tid, bool between, uint8_t rflags, uint8_t wflags)
{
    acc(t, tid, EX_READ, V, rflags);
    if (between)
        acc(t, tid, EX_WRITE, U, 0);
    acc(t, tid, EX_WRITE, V, wflags);
}

static uint64_t count(const struct ex_trace *t, const struct ex_u64map *conflict, uint64_t *first)
{
    return ex_trace_split_updates(t, conflict, first);
}

static void test_shapes(void **state)
{
    (void)state;
    struct ex_trace t;
    uint64_t first = 0;
    /* two threads, interleaved or one after the other: a split update of V */
    for (int order = 0; order < 2; order++) {
        ex_trace_init(&t);
        if (order) {
            update(&t, 2, false, 0, 0);
            update(&t, 3, false, 0, 0);
        } else {
            acc(&t, 2, EX_READ, V, 0);
            acc(&t, 3, EX_READ, V, 0);
            acc(&t, 2, EX_WRITE, V, 0);
            acc(&t, 3, EX_WRITE, V, 0);
        }
        assert_int_equal(count(&t, NULL, &first), 1);
        assert_true(first == V);
        ex_trace_free(&t);
    }
    /* near misses: one thread twice; something of its own between; an atomic
     * read or store; an RMW; no read before */
    ex_trace_init(&t);
    update(&t, 2, false, 0, 0);
    update(&t, 2, false, 0, 0);
    acc(&t, 3, EX_READ, V, 0);
    assert_int_equal(count(&t, NULL, NULL), 0);
    ex_trace_free(&t);
    ex_trace_init(&t);
    update(&t, 2, false, 0, 0);
    update(&t, 3, true, 0, 0);
    assert_int_equal(count(&t, NULL, NULL), 0);
    ex_trace_free(&t);
    ex_trace_init(&t);
    update(&t, 2, false, 0, 0);
    update(&t, 3, false, EX_F_ATOMIC, 0);
    assert_int_equal(count(&t, NULL, NULL), 0);
    ex_trace_free(&t);
    ex_trace_init(&t);
    update(&t, 2, false, 0, 0);
    update(&t, 3, false, 0, EX_F_ATOMIC);
    assert_int_equal(count(&t, NULL, NULL), 0);
    ex_trace_free(&t);
    ex_trace_init(&t);
    update(&t, 2, false, 0, 0);
    acc(&t, 3, EX_READ, V, 0);
    acc(&t, 3, EX_RMW, V, EX_F_ATOMIC);
    acc(&t, 3, EX_WRITE, U, 0);
    acc(&t, 3, EX_WRITE, V, 0);
    assert_int_equal(count(&t, NULL, NULL), 0);
    /* only DATA variables count when a conflict map is given */
    update(&t, 4, false, 0, 0);
    assert_int_equal(count(&t, NULL, NULL), 1);
    struct ex_u64map conflict;
    ex_u64map_init(&conflict);
    assert_int_equal(count(&t, &conflict, NULL), 0);
    assert_non_null(ex_u64map_put(&conflict, V, EX_CONFLICT_SYNC, NULL));
    assert_int_equal(count(&t, &conflict, NULL), 0);
    *ex_u64map_get(&conflict, V) = EX_CONFLICT_DATA;
    assert_int_equal(count(&t, &conflict, NULL), 1);
    ex_trace_free(&t);
    /* With a conflict map, an access between to a variable it does not know
     * (the thread's own stack: the compiler's pushes) is skipped; one it knows
     * is something between. */
    ex_trace_init(&t);
    update(&t, 2, true, 0, 0);
    update(&t, 3, true, 0, 0);
    assert_int_equal(count(&t, NULL, NULL), 0);
    assert_int_equal(count(&t, &conflict, NULL), 1);
    assert_non_null(ex_u64map_put(&conflict, U, EX_CONFLICT_DATA, NULL));
    assert_int_equal(count(&t, &conflict, NULL), 0);
    ex_trace_free(&t);
    /* Under a lock (the thread took L by an atomic RMW and has not released
     * it): no lost update, whatever the map says of V (a condition wait's
     * hidden release makes lock-protected data look racy). Released before
     * the read: an update again. */
    for (int released = 0; released < 2; released++) {
        ex_trace_init(&t);
        for (uint32_t tid = 2; tid <= 3; tid++) {
            acc(&t, tid, EX_RMW, LK, EX_F_ATOMIC);
            if (released)
                acc(&t, tid, EX_WRITE, LK, 0);
            update(&t, tid, false, 0, 0);
            if (!released)
                acc(&t, tid, EX_WRITE, LK, 0);
        }
        assert_int_equal(count(&t, NULL, NULL), (uint64_t)released);
        ex_trace_free(&t);
    }
    ex_u64map_free(&conflict);
    assert_int_equal(count(NULL, NULL, NULL), 0);
}

/* Any content is safe: random events, tids and sizes. */
static void test_any_trace(void **state)
{
    (void)state;
    struct ex_rng rng;
    ex_rng_seed(&rng, 13);
    for (int round = 0; round < 50; round++) {
        struct ex_trace t;
        ex_trace_init(&t);
        fixture_random_events(&t, &rng, 300, V, 8, 3);
        assert_true(ex_trace_split_updates(&t, NULL, NULL) <= t.n);
        ex_trace_free(&t);
    }
}

/* The history learns the gate from the run that shows one, at a DATA variable
 * (the run's own races make V one): the next index, and the variable. */
static void test_history_learns(void **state)
{
    (void)state;
    struct ex_history h;
    ex_history_init(&h);
    struct ex_trace t;
    ex_trace_init(&t);
    update(&t, 2, true, 0, 0); /* both store to U between: U is DATA, something between */
    update(&t, 3, true, 0, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_false(h.split_updates);
    ex_trace_free(&t);
    ex_trace_init(&t);
    acc(&t, 2, EX_READ, V, 0);
    acc(&t, 3, EX_READ, V, 0);
    acc(&t, 2, EX_WRITE, V, 0);
    acc(&t, 3, EX_WRITE, V, 0);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_true(h.split_updates);
    assert_int_equal(h.split_from, 4);
    assert_true(h.split_var == V);
    ex_trace_free(&t);
    ex_history_free(&h);
}

/* A reference count (online_wake's model): two threads each get (read X,
 * store it plus one), use, put (read X, store it minus one); main holds one.
 * Without split, each thread stores to Y (a DATA variable: both do) between
 * its read of X and its store. */
static void build_refcount(struct sim_prog *p, struct sim_ev ev[SIM_MAX_THREADS + 1][16],
                           bool split)
{
    memset(p, 0, sizeof *p);
    p->nthreads = 3;
    size_t k = 0;
    ev[1][k++] = (struct sim_ev){ OP_CREATE, 0, 0x102, 2 };
    ev[1][k++] = (struct sim_ev){ OP_CREATE, 0, 0x103, 3 };
    ev[1][k++] = (struct sim_ev){ OP_JOIN, 0, 0x202, 2 };
    ev[1][k++] = (struct sim_ev){ OP_JOIN, 0, 0x203, 3 };
    p->n[1] = k;
    p->ev[1] = ev[1];
    for (uint32_t t = 2; t <= 3; t++) {
        uint64_t b = 0x1000 * t;
        size_t n = 0;
        ev[t][n++] = (struct sim_ev){ OP_READ, X, b + 1, 0 }; /* get */
        if (!split) /* a near miss: the thread stores to Y between its read and its store */
            ev[t][n++] = (struct sim_ev){ OP_WRITE, Y, b + 6, 0 };
        ev[t][n++] = (struct sim_ev){ OP_WRITE, X, b + 2, 0 };
        ev[t][n++] = (struct sim_ev){ OP_WRITE, Z + 8 * t, b + 3, 0 }; /* use */
        ev[t][n++] = (struct sim_ev){ OP_READ, X, b + 4, 0 };  /* put */
        if (!split)
            ev[t][n++] = (struct sim_ev){ OP_WRITE, Y, b + 7, 0 };
        ev[t][n++] = (struct sim_ev){ OP_WRITE, X, b + 5, 0 };
        p->n[t] = n;
        p->ev[t] = ev[t];
        p->created[t] = true;
    }
}

#define LAYOUT_INDEXES SIM_LAYOUT_INDEXES

static bool split_gate(struct ex_history *h, bool shut)
{
    bool was = h->split_updates;
    if (shut)
        h->split_updates = false;
    return was;
}

/* The portfolio's first LAYOUT_INDEXES schedules of the reference count; with no_gate,
 * h->split_updates is cleared after every run (the layout without the pair slot). */
static void run_layout(bool split, bool no_gate, uint8_t *kinds, uint64_t *hash, bool *gated)
{
    struct sim_prog p;
    struct sim_ev ev[SIM_MAX_THREADS + 1][16];
    build_refcount(&p, ev, split);
    struct sim_layout L = {.p = &p, .seed = 5, .gate = split_gate};
    sim_run_layout(&L, no_gate, kinds, hash, gated);
}

/* Without a split update (the near miss) every index runs the same strategy
 * and choices as with the gate forced off; with one, indexes 0-1 are
 * unchanged and index 2 runs the sweep's pair at X. */
static void test_portfolio_layout(void **state)
{
    (void)state;
    uint8_t k1[LAYOUT_INDEXES], k2[LAYOUT_INDEXES];
    uint64_t h1[LAYOUT_INDEXES], h2[LAYOUT_INDEXES];
    bool g1, g2;
    run_layout(false, false, k1, h1, &g1);
    run_layout(false, true, k2, h2, &g2);
    assert_false(g1);
    assert_int_not_equal(k1[2], EX_ONLINE_SWEEP); /* the slot stays shut */
    for (int i = 0; i < LAYOUT_INDEXES; i++) {
        assert_int_equal(k1[i], k2[i]);
        assert_true(h1[i] == h2[i]);
    }
    run_layout(true, true, k1, h1, &g1);
    run_layout(true, false, k2, h2, &g2);
    assert_true(g1 && g2);
    int differ = 0;
    for (int i = 0; i < LAYOUT_INDEXES; i++) {
        if (i < 2)
            assert_true(k1[i] == k2[i] && h1[i] == h2[i]);
        differ += k1[i] != k2[i] || h1[i] != h2[i];
    }
    assert_int_equal(k2[2], EX_ONLINE_SWEEP);
    assert_int_not_equal(k1[2], EX_ONLINE_SWEEP);
    assert_true(differ >= 3);
}

/* The slot's schedule: the pair at h->split_var, two preemptions at two
 * threads, the count reaching 0 early (the use-after-free) in every seed. */
static void test_pair_slot(void **state)
{
    (void)state;
    struct sim_prog p;
    struct sim_ev ev[SIM_MAX_THREADS + 1][16];
    build_refcount(&p, ev, true);
    struct ex_history h;
    ex_history_init(&h);
    struct ex_online o;
    ex_online_init(&o);
    int early = 0;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        ex_history_free(&h);
        for (uint64_t idx = 0; idx < 3; idx++) {
            struct sim_run r;
            run_index(&p, &o, EX_ONLINE_PORTFOLIO, NULL, &h, seed, idx, &r);
            if (idx == 2) {
                assert_int_equal(o.kind, EX_ONLINE_SWEEP);
                assert_true(o.sweep.pair && o.sweep.var == X);
                assert_int_equal(o.pct.nfired, 2);
                assert_int_not_equal(o.pct.fired_tid[0], o.pct.fired_tid[1]);
                char note[EX_NOTE_LEN];
                sim_assert_replays(&p, &o, &r, note, sizeof note);
                assert_non_null(strstr(note, "after-read+write=0x1000"));
                long val = 1, loaded[SIM_MAX_THREADS + 1] = { 0 };
                bool zero = false;
                for (size_t i = 0; i < r.tr.n && !zero; i++) {
                    const struct ex_event *e = &r.tr.ev[i];
                    if (e->addr != X || e->tid > SIM_MAX_THREADS)
                        continue;
                    if (e->kind == EX_READ)
                        loaded[e->tid] = val;
                    else if (e->kind == EX_WRITE)
                        zero = (val = loaded[e->tid] + ((e->rip & 0xf) == 2 ? 1 : -1)) == 0;
                }
                early += zero;
            }
            assert_int_equal(ex_online_learn(&h, &o, &r.tr, EX_OUTCOME_NORMAL, NULL), 0);
            sim_free(&r);
        }
        assert_true(h.split_updates && h.split_var == X);
    }
    assert_int_equal(early, 50);
    ex_online_free(&o);
    ex_history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_any_trace),
        cmocka_unit_test(test_history_learns),
        cmocka_unit_test(test_portfolio_layout),
        cmocka_unit_test(test_pair_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
