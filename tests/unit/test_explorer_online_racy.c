/* Racy steps (online.h): the history's conflict words and racy-step estimate,
 * and the strategies that switch threads only at racy steps (PCT's change
 * points, the random walk, rf's flips). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_sim.h"

#define S 0x2000                /* the one shared word of the programs below */
#define PRIV(t) (0x3000 + 0x100 * (uint64_t)(t))

/* Conflict variables: a data race's and those two threads wrote atomically;
 * not one only one thread wrote, nor one ordered by a lock. */
static void test_history_conflicts(void **state)
{
    (void)state;
    struct ex_history h;
    struct ex_trace t;
    ex_history_init(&h);
    ex_trace_init(&t);
    ex_trace_access(&t, 1, EX_WRITE, X, 8, 0, 0x10);           /* races with 2's read */
    ex_trace_access(&t, 2, EX_READ, X, 8, 0, 0x20);
    ex_trace_access(&t, 2, EX_READ, X, 8, 0, 0x21);            /* a re-read: not counted */
    ex_trace_access(&t, 1, EX_WRITE, Y, 8, 0, 0x30);           /* only thread 1 */
    ex_trace_access(&t, 1, EX_READ, Y, 8, 0, 0x31);
    ex_trace_access(&t, 1, EX_RMW, S, 4, EX_F_ATOMIC, 0x40);   /* lock L ... */
    ex_trace_access(&t, 1, EX_WRITE, Z, 8, 0, 0x41);           /* Z under L */
    ex_trace_access(&t, 1, EX_RMW, S, 4, EX_F_ATOMIC, 0x42);   /* ... unlock */
    ex_trace_access(&t, 2, EX_READ, S, 4, 0, 0x4f);           /* a spin's plain read */
    ex_trace_access(&t, 2, EX_RMW, S, 4, EX_F_ATOMIC, 0x50);   /* lock L */
    ex_trace_access(&t, 2, EX_READ, Z, 8, 0, 0x51);            /* ordered by L */
    ex_trace_access(&t, 2, EX_RMW, S, 4, EX_F_ATOMIC, 0x52);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(ex_history_conflict_class(&h, X), EX_CONFLICT_DATA);
    /* Variables are start addresses: X + 4 (another field of X's word) is not one. */
    assert_int_equal(ex_history_conflict_class(&h, X + 4), 0);
    /* The plain read races with the RMWs, but S is a lock word, not data. */
    assert_int_equal(ex_history_conflict_class(&h, S), EX_CONFLICT_SYNC | EX_CONFLICT_ATOMIC);
    assert_int_equal(ex_history_conflict_class(&h, Y), 0);
    assert_int_equal(ex_history_conflict_class(&h, Z), 0);
    assert_int_equal(ex_history_conflict_class(NULL, X), 0);
    assert_true(ex_conflict_racy(EX_CONFLICT_DATA, EX_READ));
    assert_false(ex_conflict_racy(EX_CONFLICT_SYNC, EX_READ));
    assert_true(ex_conflict_racy(EX_CONFLICT_SYNC, EX_RMW));
    assert_false(ex_conflict_racy(0, EX_WRITE));
    /* Made while the other thread was alive (thread 2 from the snapshot to its
     * last event, thread 1 to 0x42): X's write and first read, thread 1's
     * write of Y in the window after its racy write of X (thread 2's re-read
     * of X is its window, but a re-read), thread 1's two RMWs of S; not the
     * plain read of S. */
    assert_int_equal(h.max_racy, 5);
    assert_int_equal(h.max_racy_data, 3);
    assert_int_equal(ex_history_racy_estimate(&h, 99), 5);
    assert_int_equal(ex_history_racy_estimate(NULL, 99), 99);
    /* A later run's accesses to a word learnt earlier count too. */
    ex_trace_free(&t);
    ex_trace_init(&t);
    for (int i = 0; i < 9; i++)
        ex_trace_access(&t, 3, EX_WRITE, X, 8, 0, 0x60);
    ex_trace_access(&t, 4, EX_WRITE, Y, 8, 0, 0x70); /* alive all along */
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(h.max_racy, 9);
    /* The estimates are the means, rounded up: (5 + 9) / 2, (3 + 9) / 2. */
    assert_int_equal(ex_history_racy_estimate(&h, 99), 7);
    assert_int_equal(ex_history_data_racy_estimate(&h, 99), 6);
    /* A run without a trace teaches nothing about racy steps. */
    assert_int_equal(ex_history_add_run(&h, NULL, 30, NULL, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(ex_history_racy_estimate(&h, 99), 7);
    ex_trace_free(&t);
    ex_history_free(&h);
}

/* musl's own locks: released by a plain store (a_store) or by the kernel at
 * a thread's exit; the data they guard is not DATA. A word seen atomic in a
 * later run stops being DATA (a run may miss accesses on a page only one
 * thread had used). */
static void test_history_lock_releases(void **state)
{
    (void)state;
    struct ex_history h;
    struct ex_trace t;
    ex_history_init(&h);
    ex_trace_init(&t);
    ex_trace_access(&t, 1, EX_RMW, S, 4, EX_F_ATOMIC, 0x10);   /* lock (CAS) */
    ex_trace_access(&t, 1, EX_WRITE, X, 8, 0, 0x11);           /* guarded */
    ex_trace_access(&t, 1, EX_WRITE, S, 4, 0, 0x12);           /* unlock: plain store */
    ex_trace_access(&t, 2, EX_RMW, S, 4, EX_F_ATOMIC, 0x20);
    ex_trace_access(&t, 2, EX_READ, X, 8, 0, 0x21);
    ex_trace_access(&t, 2, EX_WRITE, Y, 8, 0, 0x22);           /* unguarded */
    ex_trace_access(&t, 1, EX_READ, Y, 8, 0, 0x13);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(ex_history_conflict_class(&h, X), 0);
    assert_int_equal(ex_history_conflict_class(&h, Y), EX_CONFLICT_DATA);
    ex_trace_free(&t);
    /* Y touched atomically later: a sync word from then on. */
    ex_trace_init(&t);
    ex_trace_access(&t, 3, EX_RMW, Y, 8, EX_F_ATOMIC, 0x30);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(ex_history_conflict_class(&h, Y), EX_CONFLICT_ATOMIC);
    assert_false(ex_conflict_racy(EX_CONFLICT_ATOMIC, EX_WRITE));
    ex_trace_free(&t);
    /* Z: held by thread 4 at its exit, the kernel's store on clear_child_tid
     * (Z) unlocks it for thread 5. */
    ex_trace_init(&t);
    ex_trace_access(&t, 4, EX_RMW, Z, 4, EX_F_ATOMIC, 0x40);
    ex_trace_access(&t, 4, EX_WRITE, X + 64, 8, 0, 0x41);
    ex_trace_sync(&t, 4, EX_THREAD_EXIT, Z, 0);
    ex_trace_access(&t, 5, EX_RMW, Z, 4, EX_F_ATOMIC, 0x50);
    ex_trace_access(&t, 5, EX_READ, X + 64, 8, 0, 0x51);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &t, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(ex_history_conflict_class(&h, X + 64), 0);
    ex_trace_free(&t);
    ex_history_free(&h);
}

/* Three threads, each: 3 private writes, one access to S, 3 private writes.
 * Thread 1 writes S, threads 2 and 3 read it. */
static struct sim_ev prog_ev[4][7];
static void build_prog(struct sim_prog *p)
{
    memset(p, 0, sizeof *p);
    p->nthreads = 3;
    for (uint32_t t = 1; t <= 3; t++) {
        for (int i = 0; i < 7; i++)
            prog_ev[t][i] = (struct sim_ev){ OP_WRITE, PRIV(t) + 8 * (uint64_t)i,
                                             0x100 * t + (uint64_t)i, 0 };
        prog_ev[t][3] = (struct sim_ev){ t == 1 ? OP_WRITE : OP_READ, S, 0x100 * t + 3, 0 };
        p->ev[t] = prog_ev[t];
        p->n[t] = 7;
    }
}

struct racy_ctx {
    struct sim_run *r;
    const struct ex_history *h;
    unsigned switches, bad;
};

/* Whether the step of thread prev (its next event) was racy: it accesses S,
 * another enabled thread's next event races with it or S is a conflict
 * variable of the history, and someone else could run; or it is the one after
 * prev's access to S, a DATA variable (its window). */
static bool step_was_racy(const struct racy_ctx *c, const struct ex_tidset *en, uint32_t prev)
{
    const struct sim_ev *e = sim_next_ev(c->r, prev);
    /* The window after a racy access to a DATA variable: the next event. */
    if (e && c->r->pc[prev] == 4 && ex_tidset_count(en) >= 2 &&
        (ex_history_conflict_class(c->h, S) & EX_CONFLICT_DATA))
        return true;
    if (!e || e->addr != S || ex_tidset_count(en) < 2)
        return false;
    if (ex_history_conflict_class(c->h, S))
        return true;
    for (uint32_t u = 1; u <= 3; u++) {
        const struct sim_ev *f = u != prev && ex_tidset_has(en, u) ? sim_next_ev(c->r, u) : NULL;
        if (f && f->addr == S && (e->op == OP_WRITE || f->op == OP_WRITE))
            return true;
    }
    return false;
}

static void observe_switch(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                           uint32_t chosen, uint32_t prev)
{
    (void)o;
    struct racy_ctx *c = ctx;
    if (prev && ex_tidset_has(en, prev) && chosen != prev) {
        c->switches++;
        c->bad += !step_was_racy(c, en, prev);
    }
}

/* The random walk switches away from a thread that can go on only at a racy
 * step, and still reaches every order of the accesses to S. */
static void test_random_switches_only_at_racy(void **state)
{
    (void)state;
    struct sim_prog p;
    struct ex_online o;
    struct ex_history h;
    unsigned writer_first = 0, writer_last = 0, switches = 0;
    const unsigned N = 600;
    build_prog(&p);
    ex_online_init(&o);
    ex_history_init(&h);
    for (int with_history = 0; with_history < 2; with_history++)
        for (uint64_t idx = 0; idx < N; idx++) {
            struct sim_run r;
            sim_init(&r, &p);
            struct racy_ctx c = { &r, with_history ? &h : NULL, 0, 0 };
            assert_int_equal(ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, c.h, 3, idx), 0);
            sim_run_online(&r, &o, observe_switch, &c);
            assert_int_equal(c.bad, 0);
            switches += c.switches;
            long w = sim_index_of(&r.tr, 0x103), r2 = sim_index_of(&r.tr, 0x203),
                 r3 = sim_index_of(&r.tr, 0x303);
            writer_first += w < r2 && w < r3;
            writer_last += w > r2 && w > r3;
            if (!with_history && idx == 0) /* the history learns S from one run */
                assert_int_equal(ex_history_add_run(&h, NULL, 0, &r.tr, EX_OUTCOME_NORMAL, NULL), 0);
            sim_free(&r);
        }
    print_message("random: %u switches at racy steps; writer first %u, last %u of %u\n",
                  switches, writer_first, writer_last, 2 * N);
    assert_true(switches > N / 4);
    assert_true(writer_first > N / 10 && writer_last > N / 10);
    ex_history_free(&h);
    ex_online_free(&o);
}

/* PCT's change points fire only at racy steps: with d = 3 and k = the
 * history's estimate, every preemption is at an access to S. */
static void test_pct_changes_only_at_racy(void **state)
{
    (void)state;
    struct sim_prog p;
    struct ex_online o;
    struct ex_online_params params;
    struct ex_history h;
    unsigned fired = 0, switches = 0;
    build_prog(&p);
    ex_online_init(&o);
    ex_online_params_default(&params);
    ex_history_init(&h);
    struct sim_run r0;
    sim_init(&r0, &p);
    ex_online_begin(&o, EX_ONLINE_PCT, &params, NULL, 1, 0);
    sim_run_online(&r0, &o, NULL, NULL);
    assert_int_equal(ex_history_add_run(&h, NULL, 0, &r0.tr, EX_OUTCOME_NORMAL, NULL), 0);
    sim_free(&r0);
    /* The accesses to S made while another thread was alive, and the window
     * after each. */
    uint64_t k = ex_history_racy_estimate(&h, 100);
    assert_true(k >= 2 && k <= 6);
    for (uint64_t idx = 0; idx < 300; idx++) {
        struct sim_run r;
        sim_init(&r, &p);
        struct racy_ctx c = { &r, &h, 0, 0 };
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &params, &h, 3, idx), 0);
        assert_int_equal(o.pct.k, k);
        sim_run_online(&r, &o, observe_switch, &c);
        assert_int_equal(c.bad, 0);
        assert_true(o.racy <= 6);
        fired += o.pct.nfired;
        switches += c.switches;
        sim_free(&r);
    }
    print_message("pct: %u change points fired, %u switches\n", fired, switches);
    assert_true(fired > 300 && switches > 150);
    ex_history_free(&h);
    ex_online_free(&o);
}

struct spin_ctx {
    struct sim_run *r;
    unsigned spins_seen, spin_chosen;
};

/* Thread 1's next event re-reads S, whose last access was its own read. */
static bool t1_spinning(const struct sim_run *r)
{
    const struct sim_ev *e = sim_next_ev(r, 1);
    if (!e || e->op != OP_READ)
        return false;
    for (size_t i = r->tr.n; i-- > 0;)
        if (ex_word_of(&r->tr.ev[i]) == e->addr >> 3)
            return r->tr.ev[i].tid == 1 && r->tr.ev[i].kind == EX_READ;
    return false;
}

static void observe_spin(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                         uint32_t chosen, uint32_t prev)
{
    (void)o, (void)prev;
    struct spin_ctx *c = ctx;
    if (t1_spinning(c->r) && ex_tidset_count(en) > 1) {
        c->spins_seen++;
        c->spin_chosen += chosen == 1;
    }
}

/* The random walk never runs a spinning thread while another can go: thread
 * 1 polls S six times, thread 2 writes private words and then S. */
static void test_random_spinner_gives_way(void **state)
{
    (void)state;
    static struct sim_ev t1[6], t2[5];
    for (int i = 0; i < 6; i++)
        t1[i] = (struct sim_ev){ OP_READ, S, 0x100 + (uint64_t)i, 0 };
    for (int i = 0; i < 4; i++)
        t2[i] = (struct sim_ev){ OP_WRITE, PRIV(2) + 8 * (uint64_t)i, 0x200 + (uint64_t)i, 0 };
    t2[4] = (struct sim_ev){ OP_WRITE, S, 0x204, 0 };
    struct sim_prog p = { .nthreads = 2, .ev = { NULL, t1, t2 }, .n = { 0, 6, 5 } };
    struct ex_online o;
    unsigned seen = 0;
    ex_online_init(&o);
    for (uint64_t idx = 0; idx < 300; idx++) {
        struct sim_run r;
        sim_init(&r, &p);
        struct spin_ctx c = { &r, 0, 0 };
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, NULL, 8, idx), 0);
        sim_run_online(&r, &o, observe_spin, &c);
        assert_int_equal(c.spin_chosen, 0);
        seen += c.spins_seen;
        sim_free(&r);
    }
    print_message("random: %u cue points with a spinner and another thread, spinner never run\n",
                  seen);
    assert_true(seen > 100);
    ex_online_free(&o);
}

#define L 0x2100 /* a lock */

struct fire_ctx {
    struct sim_run *r;
    uint32_t seen;
    unsigned at_s, at_lock;
};

static void observe_fire(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                         uint32_t chosen, uint32_t prev)
{
    (void)en, (void)chosen, (void)prev;
    struct fire_ctx *c = ctx;
    if (o->pct.nfired > c->seen) {
        const struct sim_ev *e = sim_next_ev(c->r, o->pct.fired_tid[o->pct.nfired - 1]);
        c->at_s += e && e->addr == S;
        c->at_lock += e && e->addr == L;
        c->seen = o->pct.nfired;
    }
}

struct switch_ctx {
    struct sim_run *r;
    unsigned at[2];     /* switches away from a thread whose next event is at S, at L */
};

static void observe_switch_at(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                              uint32_t chosen, uint32_t prev)
{
    (void)o;
    struct switch_ctx *c = ctx;
    if (!prev || !ex_tidset_has(en, prev) || chosen == prev)
        return;
    const struct sim_ev *e = sim_next_ev(c->r, prev);
    c->at[0] += e && e->addr == S;
    c->at[1] += e && e->addr == L;
}

/* Odd PCT schedules count the racy steps at DATA words only: with a lock (a
 * SYNC word) and a plain shared word, they fire at the plain word only; the
 * even ones at both. */
static void test_pct_data_only(void **state)
{
    (void)state;
    static struct sim_ev ev[4][5];
    struct sim_prog p = { .nthreads = 3 };
    for (uint32_t t = 1; t <= 3; t++) {
        ev[t][0] = (struct sim_ev){ OP_LOCK, L, 0x100 * t, 0 };
        ev[t][1] = (struct sim_ev){ OP_WRITE, PRIV(t), 0x100 * t + 1, 0 };
        ev[t][2] = (struct sim_ev){ OP_UNLOCK, L, 0x100 * t + 2, 0 };
        ev[t][3] = (struct sim_ev){ t == 1 ? OP_WRITE : OP_READ, S, 0x100 * t + 3, 0 };
        ev[t][4] = (struct sim_ev){ OP_WRITE, PRIV(t) + 8, 0x100 * t + 4, 0 };
        p.ev[t] = ev[t];
        p.n[t] = 5;
    }
    struct ex_online o;
    struct ex_online_params params;
    struct ex_history h;
    ex_online_init(&o);
    ex_online_params_default(&params);
    ex_history_init(&h);
    for (uint64_t idx = 0; idx < 4; idx++) { /* learn both words */
        struct sim_run r;
        sim_init(&r, &p);
        ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, &h, 1, idx);
        sim_run_online(&r, &o, NULL, NULL);
        assert_int_equal(ex_history_add_run(&h, NULL, 0, &r.tr, EX_OUTCOME_NORMAL, NULL), 0);
        sim_free(&r);
    }
    assert_true(ex_history_conflict_class(&h, S) & EX_CONFLICT_DATA);
    assert_true(ex_history_conflict_class(&h, L) & EX_CONFLICT_SYNC);
    unsigned at_s[2] = { 0 }, at_lock[2] = { 0 };
    for (uint64_t idx = 0; idx < 400; idx++) {
        struct sim_run r;
        sim_init(&r, &p);
        struct fire_ctx c = { &r, 0, 0, 0 };
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &params, &h, 5, idx), 0);
        assert_int_equal(o.pct.data_only, idx % 2 == 1);
        assert_int_equal(o.pct.k, idx % 2 ? ex_history_data_racy_estimate(&h, 100)
                                          : ex_history_racy_estimate(&h, 100));
        sim_run_online(&r, &o, observe_fire, &c);
        at_s[idx % 2] += c.at_s;
        at_lock[idx % 2] += c.at_lock;
        sim_free(&r);
    }
    print_message("pct change points at S / at the lock: all classes %u / %u, data only %u / %u\n",
                  at_s[0], at_lock[0], at_s[1], at_lock[1]);
    assert_int_equal(at_lock[1], 0);
    assert_true(at_s[1] > 50 && at_lock[0] > 50 && at_s[0] > 20);

    /* The random walk's data-only schedules (a coin) switch away from a
     * thread that could go on at S only, the others at the lock too. */
    unsigned sw_s[2] = { 0 }, sw_lock[2] = { 0 }, runs[2] = { 0 };
    for (uint64_t idx = 0; idx < 400; idx++) {
        struct sim_run r;
        sim_init(&r, &p);
        struct switch_ctx c = { &r, { 0, 0 } };
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, &h, 5, idx), 0);
        sim_run_online(&r, &o, observe_switch_at, &c);
        int d = o.walk.data_only;
        runs[d]++;
        sw_s[d] += c.at[0];
        sw_lock[d] += c.at[1];
        sim_free(&r);
    }
    print_message("random switches at S / at the lock: all classes %u / %u (%u runs), data only "
                  "%u / %u (%u runs)\n", sw_s[0], sw_lock[0], runs[0], sw_s[1], sw_lock[1], runs[1]);
    assert_true(runs[0] > 150 && runs[1] > 150);
    assert_int_equal(sw_lock[1], 0);
    assert_true(sw_s[1] > 50 && sw_lock[0] > 50);
    ex_history_free(&h);
    ex_online_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_conflicts),
        cmocka_unit_test(test_history_lock_releases),
        cmocka_unit_test(test_random_switches_only_at_racy),
        cmocka_unit_test(test_pct_changes_only_at_racy),
        cmocka_unit_test(test_pct_data_only),
        cmocka_unit_test(test_random_spinner_gives_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
