/* Whole-run (online) strategies: each one's defining property, driven step by
 * step on model programs (online_sim.h) the way the VMM drives them. */
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


static const enum ex_online_kind all_kinds[] = { EX_ONLINE_PCT, EX_ONLINE_POS, EX_ONLINE_RANDOM,
                                                 EX_ONLINE_RF, EX_ONLINE_WINDOW,
                                                 EX_ONLINE_PORTFOLIO };
static void test_names(void **state)
{
    (void)state;
    for (unsigned k = 0; k < EX_ONLINE_NKINDS; k++) {
        enum ex_online_kind got;
        assert_int_equal(ex_online_from_name(ex_online_name((enum ex_online_kind)k), &got), 0);
        assert_int_equal(got, k);
    }
    enum ex_online_kind got = EX_ONLINE_PCT;
    assert_string_equal(ex_online_name(EX_ONLINE_RF), "rf");
    assert_int_equal(ex_online_from_name("jinx", &got), -1);
    assert_int_equal(ex_online_from_name("", &got), -1);
    assert_int_equal(ex_online_from_name(NULL, &got), -1);
    assert_string_equal(ex_online_name((enum ex_online_kind)99), "?");
    /* The documented portfolio order. */
    const enum ex_online_kind order[] = { EX_ONLINE_PCT, EX_ONLINE_RANDOM, EX_ONLINE_POS,
                                          EX_ONLINE_WINDOW, EX_ONLINE_PCT, EX_ONLINE_RANDOM,
                                          EX_ONLINE_POS, EX_ONLINE_RF };
    for (uint64_t i = 0; i < 24; i++) {
        assert_int_equal(ex_online_resolve(EX_ONLINE_PORTFOLIO, i), order[i % 8]);
        assert_int_equal(ex_online_resolve(EX_ONLINE_POS, i), EX_ONLINE_POS);
    }
}

static void test_params(void **state)
{
    (void)state;
    struct ex_online_params p;
    ex_online_params_default(&p);
    assert_int_equal(p.depth, 3);
    assert_int_equal(p.default_steps, EX_ONLINE_DEFAULT_STEPS);
    p.depth = 0;
    p.default_steps = 0;
    ex_online_params_sanitize(&p);
    assert_int_equal(p.depth, 1);
    assert_int_equal(p.default_steps, 1);
    p.depth = 1000;
    p.default_steps = UINT32_MAX;
    ex_online_params_sanitize(&p);
    assert_int_equal(p.depth, EX_PCT_MAX_DEPTH);
    assert_int_equal(p.default_steps, EX_ONLINE_MAX_STEPS_ESTIMATE);
    /* begin sanitizes what it is given and refuses an unknown kind. */
    struct ex_online o;
    ex_online_init(&o);
    p.depth = 0;
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &p, NULL, 1, 0), 0);
    assert_int_equal(o.p.depth, 1);
    assert_int_equal(o.pct.nchange, 0);
    assert_int_equal(ex_online_begin(&o, (enum ex_online_kind)42, NULL, NULL, 1, 0), -1);
    ex_online_free(&o);
}

static void test_races(void **state)
{
    (void)state;
    struct ex_pending w1 = pend(1, EX_WRITE, X, 8), r2 = pend(2, EX_READ, X + 4, 4);
    struct ex_pending r3 = pend(3, EX_READ, X, 8), w2y = pend(2, EX_WRITE, Y, 8);
    struct ex_pending w2edge = pend(2, EX_WRITE, X + 8, 1), w2zero = pend(2, EX_WRITE, X + 7, 0);
    assert_true(ex_pending_races(&w1, &r2));
    assert_true(ex_pending_races(&r2, &w1));
    assert_false(ex_pending_races(&r2, &r3));        /* two reads */
    assert_false(ex_pending_races(&w1, &w2y));       /* no overlap */
    assert_false(ex_pending_races(&w1, &w2edge));    /* adjacent bytes */
    assert_true(ex_pending_races(&w1, &w2zero));     /* size 0 counts as 1 */
    struct ex_pending w1b = w1;
    assert_false(ex_pending_races(&w1, &w1b));       /* same thread */
    struct ex_pending unknown = w2y;
    unknown.addr = X;
    unknown.known = false;
    assert_false(ex_pending_races(&w1, &unknown));
    struct ex_pending wake = pend(2, EX_FUTEX_WAKE, X, 0), wait = pend(3, EX_FUTEX_WAIT, X, 0);
    assert_true(ex_pending_races(&wake, &wait));
    assert_true(ex_pending_races(&wake, &r3));
    struct ex_pending ex0 = pend(2, EX_THREAD_EXIT, 0, 0), exw = pend(2, EX_THREAD_EXIT, X, 0);
    assert_false(ex_pending_races(&ex0, &r3));
    assert_true(ex_pending_races(&exw, &r3));
    struct ex_pending join = pend(2, EX_THREAD_JOIN, X, 8);
    assert_false(ex_pending_races(&join, &w1));
    struct ex_pending top = pend(2, EX_WRITE, UINT64_MAX - 3, 8), low = pend(1, EX_WRITE, 0, 8);
    assert_false(ex_pending_races(&top, &low));      /* no wrap-around overlap */
}

/* Every strategy: choices are enabled, reproducible from (seed, index, history),
 * and replay exactly as an ordinary schedule through the cursor. */
static void test_contract(void **state)
{
    (void)state;
    struct ex_online o;
    ex_online_init(&o);
    for (size_t ki = 0; ki < sizeof all_kinds / sizeof all_kinds[0]; ki++) {
        for (uint64_t prog = 0; prog < 6; prog++) {
            struct rand_prog rp;
            struct ex_history h;
            build_random_prog(&rp, 77 + prog);
            ex_history_init(&h);
            for (uint64_t idx = 0; idx < 12; idx++) {
                struct sim_run a, b, c;
                run_index(&rp.p, &o, all_kinds[ki], NULL, &h, 5, idx, &a);
                assert_false(a.deadlock);
                size_t na;
                const uint32_t *ca = ex_online_choices(&o, &na);
                assert_int_equal(na, a.tr.n);
                uint32_t *copy = malloc(na * sizeof *copy);
                assert_non_null(copy);
                memcpy(copy, ca, na * sizeof *copy);
                struct ex_schedule s;
                ex_schedule_init(&s);
                assert_int_equal(ex_online_schedule(&o, &s), 0);
                assert_true(strstr(s.note, ex_online_name(all_kinds[ki])) != NULL);
                /* Same (seed, index, history): same run. */
                run_index(&rp.p, &o, all_kinds[ki], NULL, &h, 5, idx, &b);
                size_t nb;
                const uint32_t *cb = ex_online_choices(&o, &nb);
                assert_int_equal(na, nb);
                assert_memory_equal(copy, cb, na * sizeof *copy);
                /* The schedule replays it through the cursor. */
                sim_init(&c, &rp.p);
                sim_run_cursor(&c, &s);
                assert_int_equal(ex_trace_first_difference(&a.tr, &c.tr), -1);
                learn(&h, &o, &a, NULL);
                ex_schedule_free(&s);
                free(copy);
                sim_free(&a);
                sim_free(&b);
                sim_free(&c);
            }
            assert_int_equal(h.runs, 12);
            ex_history_free(&h);
        }
    }
    ex_online_free(&o);
}

static void test_no_enabled(void **state)
{
    (void)state;
    struct ex_online o;
    struct ex_tidset en;
    ex_online_init(&o);
    ex_tidset_clear(&en);
    for (size_t ki = 0; ki < sizeof all_kinds / sizeof all_kinds[0]; ki++) {
        assert_int_equal(ex_online_begin(&o, all_kinds[ki], NULL, NULL, 1, ki), 0);
        struct ex_view v = { &en, NULL, 5, 0 }; /* NULL next with nnext: ignored */
        assert_int_equal(ex_online_next(&o, &v), 0);
        assert_int_equal(ex_online_next(&o, NULL), 0);
        v.enabled = NULL;
        assert_int_equal(ex_online_next(&o, &v), 0);
        /* Pending entries with bad tids are ignored; tid 0 is never chosen. */
        struct ex_pending bad[2] = { pend(0, EX_WRITE, X, 8), pend(999, EX_WRITE, X, 8) };
        ex_tidset_add(&en, 0);
        ex_tidset_add(&en, 7);
        v = (struct ex_view){ &en, bad, 2, 0 };
        assert_int_equal(ex_online_next(&o, &v), 7);
        ex_tidset_clear(&en);
        size_t n;
        assert_non_null(ex_online_choices(&o, &n));
        assert_int_equal(n, 1);
    }
    ex_online_free(&o);
}

/* ---- PCT ---- */

struct nonpre_ctx {
    struct ex_tidset before;    /* enabled at the previous cue point */
    struct ex_tidset spun;      /* spinning at the previous cue point */
    unsigned switches_while_enabled, to_woken, from_spinner;
    unsigned not_highest;
    const struct sim_run *r;
};

/* t's next event reads a word whose last access was t's own read, and t has
 * made nothing but reads since: a spin (PCT lets the next thread go instead).
 * The model's pending events carry no instruction, so that is all. */
static bool sim_spinning(const struct sim_run *r, uint32_t t)
{
    const struct sim_ev *e = sim_next_ev(r, t);
    if (!e || e->op != OP_READ)
        return false;
    bool only_reads = true;
    for (size_t i = r->tr.n; i-- > 0;) {
        const struct ex_event *x = &r->tr.ev[i];
        if (ex_is_access(x) && ex_word_of(x) == e->addr >> 3)
            return x->tid == t && x->kind == EX_READ && only_reads;
        if (x->tid == t && (!ex_is_access(x) || x->kind != EX_READ))
            only_reads = false;
    }
    return false;
}

static void observe_nonpreemptive(void *ctx, const struct ex_online *o,
                                  const struct ex_tidset *en, uint32_t chosen, uint32_t prev)
{
    struct nonpre_ctx *c = ctx;
    if (prev && ex_tidset_has(en, prev) && chosen != prev) {
        /* Only a thread just woken (a higher priority that was blocked) may
         * take over from a running thread, or any from a spinning one. */
        c->switches_while_enabled++;
        if (sim_spinning(c->r, prev) || ex_tidset_has(&c->spun, chosen))
            c->from_spinner++; /* or back to the higher one, its spin over */
        else
            c->to_woken += !ex_tidset_has(&c->before, chosen);
    }
    ex_tidset_clear(&c->spun);
    for (uint32_t t = 1; t <= SIM_MAX_THREADS; t++)
        if (ex_tidset_has(en, t) && sim_spinning(c->r, t))
            ex_tidset_add(&c->spun, t);
    for (uint32_t i = 0; i < o->pct.nthreads; i++)
        if (ex_tidset_has(en, o->pct.order[i]) && !sim_spinning(c->r, o->pct.order[i])) {
            c->not_highest += o->pct.order[i] != chosen;
            break;
        }
    c->before = *en;
}

/* d = 1: no change point, so the highest-priority enabled thread that does
 * not spin always runs: a thread runs until it blocks or ends, unless a
 * thread of higher priority is woken (by an unlock here) or created, or it
 * spins (re-reads what it read last: the next thread goes until the spinner's
 * word changes). Without locks and creation: one thread after the other but
 * for spins. */
static void test_pct_d1_nonpreemptive(void **state)
{
    (void)state;
    struct ex_online o;
    struct ex_online_params p;
    ex_online_init(&o);
    ex_online_params_default(&p);
    p.depth = 1;
    unsigned first[SIM_MAX_THREADS + 1] = { 0 }, woken = 0, spin_yields = 0;
    for (uint64_t prog = 0; prog < 8; prog++) {
        struct rand_prog rp;
        build_random_prog(&rp, 1000 + prog);
        bool lockfree = prog % 2 == 0;
        for (uint32_t t = 1; lockfree && t <= rp.p.nthreads; t++)
            for (size_t i = 0; i < rp.p.n[t]; i++)
                if (rp.ev[t][i].op != OP_READ) { /* no lock, no thread creation */
                    rp.ev[t][i].op = OP_WRITE;
                    rp.p.created[t] = false;
                }
        for (uint64_t idx = 0; idx < 40; idx++) {
            struct sim_run r;
            struct nonpre_ctx c = { { { 0 } }, { { 0 } }, 0, 0, 0, 0, &r };
            assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &p, NULL, 3, idx), 0);
            assert_int_equal(o.pct.nchange, 0);
            sim_init(&r, &rp.p);
            sim_run_online(&r, &o, observe_nonpreemptive, &c);
            assert_int_equal(c.switches_while_enabled, c.to_woken + c.from_spinner);
            spin_yields += c.from_spinner;
            if (lockfree)
                assert_int_equal(c.switches_while_enabled, c.from_spinner);
            woken += c.to_woken;
            assert_int_equal(c.not_highest, 0);
            assert_int_equal(o.pct.nfired, 0);
            if (prog == 0)
                first[r.tr.ev[0].tid]++;
            sim_free(&r);
        }
    }
    /* The priorities are random: over 40 indices both threads of the first
     * program start first some of the time. */
    assert_true(first[1] > 0 && first[2] > 0);
    print_message("pct d=1: %u switches to a woken or new thread of higher priority, %u from "
                  "a spinning one\n", woken, spin_yields);
    ex_online_free(&o);
}

struct cp_ctx {
    uint32_t seen_fired;
    unsigned preemptions, bad;
};

static void observe_change_points(void *ctx, const struct ex_online *o,
                                  const struct ex_tidset *en, uint32_t chosen, uint32_t prev)
{
    struct cp_ctx *c = ctx;
    bool fired_now = o->pct.nfired > c->seen_fired;
    if (fired_now) {
        uint32_t i = o->pct.nfired - 1;
        /* It fired at this choice (o->steps is 1-based after the choice), the
         * lowered thread went to the bottom, and it did not run. */
        c->bad += o->pct.fired_step[i] != o->steps;
        c->bad += o->pct.order[o->pct.nthreads - 1] != o->pct.fired_tid[i];
        c->bad += chosen == o->pct.fired_tid[i] && ex_tidset_count(en) > 1;
        c->seen_fired = o->pct.nfired;
    }
    if (prev && ex_tidset_has(en, prev) && chosen != prev) {
        c->preemptions++;
        c->bad += !fired_now; /* a preemption only at a change point */
    }
}

/* d-1 distinct change points in [1, k]; exactly d-1 drops, at those racy
 * steps (here every step while two threads are left: all write X). */
static void test_pct_change_points(void **state)
{
    (void)state;
    static struct sim_ev evs[4][50];
    struct sim_prog p = { .nthreads = 3 };
    for (uint32_t t = 1; t <= 3; t++) {
        for (int i = 0; i < 50; i++)
            evs[t][i] = (struct sim_ev){ OP_WRITE, X, 0x1000u * t + (uint64_t)i, 0 };
        p.ev[t] = evs[t];
        p.n[t] = 50;
    }
    struct ex_online o;
    struct ex_online_params params;
    ex_online_init(&o);
    ex_online_params_default(&params);
    params.depth = 4;
    unsigned preemptions = 0;
    for (uint64_t idx = 0; idx < 300; idx++) {
        struct cp_ctx c = { 0, 0, 0 };
        struct sim_run r;
        /* Even schedules: racy steps of every class (odd: data races only,
         * which needs a history to know them). */
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &params, NULL, 11, 2 * idx), 0);
        assert_false(o.pct.data_only);
        assert_int_equal(o.pct.k, EX_ONLINE_DEFAULT_STEPS);
        assert_int_equal(o.pct.nchange, 3);
        for (uint32_t i = 0; i < 3; i++) {
            assert_true(o.pct.change[i] >= 1 && o.pct.change[i] <= EX_ONLINE_DEFAULT_STEPS);
            if (i)
                assert_true(o.pct.change[i] > o.pct.change[i - 1]);
        }
        sim_init(&r, &p);
        sim_run_online(&r, &o, observe_change_points, &c);
        assert_int_equal(r.tr.n, 150);
        assert_int_equal(o.pct.nfired, 3);
        for (uint32_t i = 0; i < 3; i++)
            assert_int_equal(o.pct.fired_step[i], o.pct.change[i]);
        assert_int_equal(c.bad, 0);
        preemptions += c.preemptions;
        sim_free(&r);
    }
    assert_true(preemptions > 300); /* the drops do preempt */

    /* With a history, k is the mean racy accesses of the runs so far, rounded
     * up (not their steps); d-1 > k takes all of [1, k]. Thread 1 writes X n
     * times and Y once, then thread 2 reads X: n racy accesses to X made while
     * the other thread was alive, plus the write of Y in the window after the
     * last one (thread 1 has ended at thread 2's read): 7, 10, 4 -> k = 7. */
    struct ex_history h;
    ex_history_init(&h);
    static const unsigned writes[] = { 6, 9, 3 };
    for (int run = 0; run < 3; run++) {
        struct ex_trace tr;
        ex_trace_init(&tr);
        for (unsigned i = 0; i < writes[run]; i++)
            ex_trace_access(&tr, 1, EX_WRITE, X, 8, 0, 0x10);
        ex_trace_access(&tr, 1, EX_WRITE, Y, 8, 0, 0x11);
        ex_trace_access(&tr, 2, EX_READ, X, 8, 0, 0x20);
        assert_int_equal(ex_history_add_run(&h, NULL, 40, &tr, EX_OUTCOME_NORMAL, NULL), 0);
        ex_trace_free(&tr);
    }
    params.depth = 32;
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &params, &h, 11, 0), 0);
    assert_int_equal(o.pct.k, 7);
    assert_int_equal(o.pct.nchange, 7);
    for (uint32_t i = 0; i < 7; i++)
        assert_int_equal(o.pct.change[i], i + 1);
    ex_history_free(&h);
    ex_online_free(&o);
}

/* A thread first seen later gets a uniformly random rank among the threads
 * never lowered, and never below a lowered one. */
static void test_pct_new_thread_rank(void **state)
{
    (void)state;
    struct ex_online o;
    struct ex_online_params params;
    struct ex_tidset en;
    unsigned rank[4] = { 0 };
    ex_online_init(&o);
    ex_online_params_default(&params);
    params.depth = 1;
    const unsigned N = 4000;
    for (uint64_t idx = 0; idx < N; idx++) {
        ex_online_begin(&o, EX_ONLINE_PCT, &params, NULL, 9, idx);
        ex_tidset_clear(&en);
        ex_tidset_add(&en, 1);
        ex_tidset_add(&en, 2);
        ex_tidset_add(&en, 3);
        struct ex_view v = { &en, NULL, 0, 0 };
        ex_online_next(&o, &v);
        ex_tidset_add(&en, 4);
        ex_online_next(&o, &v);
        for (uint32_t i = 0; i < 4; i++)
            if (o.pct.order[i] == 4)
                rank[i]++;
    }
    double chi = 0;
    for (int i = 0; i < 4; i++)
        chi += (rank[i] - N / 4.0) * (rank[i] - N / 4.0) / (N / 4.0);
    print_message("pct new-thread rank counts %u %u %u %u chi2=%.2f\n", rank[0], rank[1],
                  rank[2], rank[3], chi);
    assert_true(chi < 16.27); /* 3 degrees of freedom, p = 0.001 */

    /* depth 2, k 1: the first (racy) choice lowers the thread about to run. */
    params.depth = 2;
    params.default_steps = 1;
    struct ex_pending wr[3] = { { 1, EX_WRITE, X, 8, true, 0 }, { 2, EX_WRITE, X, 8, true, 0 },
                                { 3, EX_WRITE, X, 8, true, 0 } };
    for (uint64_t idx = 0; idx < 400; idx += 2) {
        ex_online_begin(&o, EX_ONLINE_PCT, &params, NULL, 9, idx);
        ex_tidset_clear(&en);
        ex_tidset_add(&en, 1);
        ex_tidset_add(&en, 2);
        struct ex_view v = { &en, wr, 3, 0 };
        uint32_t t = ex_online_next(&o, &v);
        assert_int_equal(o.pct.nfired, 1);
        assert_int_not_equal(t, o.pct.fired_tid[0]);
        ex_tidset_add(&en, 3);
        ex_online_next(&o, &v);
        assert_int_equal(o.pct.nthreads, 3);
        assert_int_equal(o.pct.order[2], o.pct.fired_tid[0]);
    }
    ex_online_free(&o);
}

/* Two threads, 5 events each; the bug needs B's first event between A's
 * first and second: depth 2. PCT d=2 over k=5 racy steps must hit it with
 * probability >= 1/(n k) = 1/10 (the bound asserted is that of k=10, 1/20). */
static void test_pct_depth2_bug(void **state)
{
    (void)state;
    static const struct sim_ev A[] = { { OP_WRITE, X, 0xa1, 0 }, { OP_WRITE, Y, 0xa2, 0 },
                                       { OP_WRITE, Z, 0xa3, 0 }, { OP_WRITE, Z, 0xa4, 0 },
                                       { OP_WRITE, Z, 0xa5, 0 } };
    static const struct sim_ev B[] = { { OP_READ, X, 0xb1, 0 }, { OP_READ, Y, 0xb2, 0 },
                                       { OP_READ, Z, 0xb3, 0 }, { OP_READ, Z, 0xb4, 0 },
                                       { OP_READ, Z, 0xb5, 0 } };
    struct sim_prog p = { .nthreads = 2, .ev = { NULL, A, B }, .n = { 0, 5, 5 } };
    struct ex_online o;
    struct ex_online_params params;
    struct ex_history h;
    ex_online_init(&o);
    ex_online_params_default(&params);
    ex_history_init(&h);
    /* The history of one run (A then B): k = A's 5 conflicting accesses (when
     * B reads, A has ended). */
    struct ex_trace serial;
    ex_trace_init(&serial);
    for (int i = 0; i < 5; i++)
        ex_trace_access(&serial, 1, EX_WRITE, A[i].addr, 8, 0, A[i].rip);
    for (int i = 0; i < 5; i++)
        ex_trace_access(&serial, 2, EX_READ, B[i].addr, 8, 0, B[i].rip);
    assert_int_equal(ex_history_add_run(&h, NULL, 10, &serial, EX_OUTCOME_NORMAL, NULL), 0);
    assert_int_equal(ex_history_racy_estimate(&h, 100), 5);
    ex_trace_free(&serial);
    for (uint32_t d = 1; d <= 3; d++) {
        const unsigned N = 3000;
        unsigned hits2 = 0, hits3 = 0;
        long first = -1;
        params.depth = d;
        for (uint64_t idx = 0; idx < N; idx++) {
            struct sim_run r;
            run_index(&p, &o, EX_ONLINE_PCT, &params, &h, 21, idx, &r);
            long a1 = sim_index_of(&r.tr, 0xa1), a2 = sim_index_of(&r.tr, 0xa2);
            long b1 = sim_index_of(&r.tr, 0xb1);
            long b2 = sim_index_of(&r.tr, 0xb2);
            bool bug2 = a1 < b1 && b1 < a2;
            /* depth 3: additionally B's second event after A's second
             * (a2 < b2: B preempted in turn) */
            bool bug3 = bug2 && a2 < b2;
            hits2 += bug2;
            hits3 += bug3;
            if (bug2 && first < 0)
                first = (long)idx;
            sim_free(&r);
        }
        print_message("pct d=%u k=5: depth-2 bug %u/%u (first at index %ld), depth-3 bug %u/%u\n",
                      d, hits2, N, first, hits3, N);
        if (d == 1) {
            assert_int_equal(hits2, 0); /* no preemption, no bug */
        } else if (d == 2) {
            assert_true(first >= 0 && first < 200);
            assert_true(hits2 >= N / 20 * 6 / 10);
            assert_int_equal(hits3, 0); /* needs a second preemption */
        } else {
            /* d = 3: >= 1/(n k^2) = 1/200 for the depth-3 bug */
            assert_true(hits3 >= N / 200 * 6 / 10);
        }
    }
    ex_history_free(&h);
    ex_online_free(&o);
}

static void test_pct_describe(void **state)
{
    (void)state;
    struct ex_online o;
    char buf[EX_NOTE_LEN], want[EX_NOTE_LEN];
    ex_online_init(&o);
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, NULL, NULL, 7, 4), 0);
    snprintf(want, sizeof want, "pct seed=7 index=4 d=3 k=100 racy=0 change-points=%llu,%llu",
             (unsigned long long)o.pct.change[0], (unsigned long long)o.pct.change[1]);
    assert_string_equal(ex_online_describe(&o, buf, sizeof buf), want);
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PORTFOLIO, NULL, NULL, 7, 6), 0);
    assert_string_equal(ex_online_describe(&o, buf, sizeof buf), "portfolio/pos seed=7 index=6");
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_RF, NULL, NULL, 7, 1), 0);
    assert_string_equal(ex_online_describe(&o, buf, sizeof buf),
                        "rf seed=7 index=1 corpus=empty(pos)");
    /* Truncation never overflows; 32 change points do not fit a note. */
    struct ex_online_params p;
    ex_online_params_default(&p);
    p.depth = 32;
    p.default_steps = 1000000;
    assert_int_equal(ex_online_begin(&o, EX_ONLINE_PCT, &p, NULL, 7, 4), 0);
    for (size_t len = 1; len < sizeof buf; len++) {
        char small[EX_NOTE_LEN];
        memset(small, 'x', sizeof small);
        ex_online_describe(&o, small, len);
        assert_true(strlen(small) < len);
        assert_int_equal(small[len], 'x');
    }
    buf[0] = 'q';
    ex_online_describe(&o, buf, 0);
    assert_int_equal(buf[0], 'q');
    ex_online_free(&o);
}

/* ---- POS ---- */

/* After a choice, the priorities of exactly the threads whose pending events
 * race with the chosen event are re-drawn (and the chosen thread's own). */
static void test_pos_redraw(void **state)
{
    (void)state;
    static const uint8_t kinds[] = { EX_READ, EX_WRITE, EX_RMW, EX_THREAD_JOIN };
    struct ex_online o;
    struct ex_rng r;
    ex_online_init(&o);
    ex_rng_seed(&r, 4);
    unsigned racing = 0, quiet = 0;
    for (uint64_t idx = 0; idx < 500; idx++) {
        struct ex_pending pd[5];
        struct ex_tidset en;
        ex_tidset_clear(&en);
        for (uint32_t t = 1; t <= 5; t++) {
            pd[t - 1] = pend(t, kinds[ex_rng_below(&r, 4)], X + 4 * ex_rng_below(&r, 3), 8);
            pd[t - 1].known = ex_rng_below(&r, 8) != 0;
            ex_tidset_add(&en, t);
        }
        assert_int_equal(ex_online_begin(&o, EX_ONLINE_POS, NULL, NULL, 8, idx), 0);
        struct ex_view v = { &en, pd, 5, 0 };
        ex_online_next(&o, &v);
        if (ex_rng_below(&r, 2)) /* blocked now: its pending event still counts */
            ex_tidset_del(&en, 5);
        uint64_t before[6], redraws = o.pos.redraws;
        memcpy(before, o.pos.prio, sizeof before);
        uint32_t t = ex_online_next(&o, &v);
        uint32_t best = 0;
        for (uint32_t u = 1; u <= 5; u++)
            if (ex_tidset_has(&en, u) && (!best || before[u] > before[best]))
                best = u;
        assert_int_equal(t, best);
        assert_true(o.pos.prio[t] != before[t]);
        unsigned want = 0;
        for (uint32_t u = 1; u <= 5; u++) {
            if (u == t)
                continue;
            bool races = ex_pending_races(&pd[t - 1], &pd[u - 1]);
            want += races;
            assert_int_equal(o.pos.prio[u] != before[u], races);
            racing += races;
            quiet += !races;
        }
        assert_int_equal(o.pos.redraws - redraws, want);
    }
    assert_true(racing > 100 && quiet > 100);
    ex_online_free(&o);
}

static double chi2_4(const unsigned *c, unsigned n)
{
    double chi = 0, e = n / 4.0;
    for (int i = 0; i < 4; i++)
        chi += (c[i] - e) * (c[i] - e) / e;
    return chi;
}

/* Two independent pairs of racing writes (T1,T2 on X; T3,T4 on Y): the four
 * orderings of the pairs are sampled uniformly. */
static void test_pos_uniform_pairs(void **state)
{
    (void)state;
    static const struct sim_ev e1[] = { { OP_WRITE, X, 0x11, 0 } }, e2[] = { { OP_WRITE, X, 0x22, 0 } };
    static const struct sim_ev e3[] = { { OP_WRITE, Y, 0x33, 0 } }, e4[] = { { OP_WRITE, Y, 0x44, 0 } };
    struct sim_prog p = { .nthreads = 4, .ev = { NULL, e1, e2, e3, e4 }, .n = { 0, 1, 1, 1, 1 } };
    struct ex_online o;
    unsigned cls[4] = { 0 };
    const unsigned N = 2000;
    ex_online_init(&o);
    for (uint64_t idx = 0; idx < N; idx++) {
        struct sim_run r;
        run_index(&p, &o, EX_ONLINE_POS, NULL, NULL, 13, idx, &r);
        bool a = sim_index_of(&r.tr, 0x11) < sim_index_of(&r.tr, 0x22);
        bool b = sim_index_of(&r.tr, 0x33) < sim_index_of(&r.tr, 0x44);
        cls[2 * a + b]++;
        sim_free(&r);
    }
    double chi = chi2_4(cls, N);
    print_message("pos pair orderings %u %u %u %u chi2=%.2f\n", cls[0], cls[1], cls[2], cls[3], chi);
    assert_true(chi < 16.27);
    ex_online_free(&o);
}

/* ---- random walk ---- */

/* At racy steps the walk draws uniformly (the third choice of four threads
 * all about to write X); without pending events nothing is racy and the
 * first thread goes on. */
static void test_random_uniform(void **state)
{
    (void)state;
    struct ex_online o;
    struct ex_tidset en;
    unsigned c[4] = { 0 };
    const unsigned N = 4000;
    ex_online_init(&o);
    ex_tidset_clear(&en);
    for (uint32_t t = 3; t <= 6; t++)
        ex_tidset_add(&en, t);
    /* Every thread about to write X: every step is racy, a fresh draw. */
    struct ex_pending wr[4] = { { 3, EX_WRITE, X, 8, true, 0 }, { 4, EX_WRITE, X, 8, true, 0 },
                                { 5, EX_WRITE, X, 8, true, 0 }, { 6, EX_WRITE, X, 8, true, 0 } };
    struct ex_view v = { &en, wr, 4, 0 };
    for (uint64_t idx = 0; idx < N; idx++) {
        ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, NULL, 17, idx);
        for (int step = 0; step < 3; step++) {
            uint32_t t = ex_online_next(&o, &v);
            assert_true(t >= 3 && t <= 6);
            if (step == 2)
                c[t - 3]++;
        }
    }
    struct ex_view quiet = { &en, NULL, 0, 0 };
    ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, NULL, 17, 1);
    uint32_t t0 = ex_online_next(&o, &quiet);
    for (int step = 0; step < 20; step++)
        assert_int_equal(ex_online_next(&o, &quiet), t0);
    double chi = chi2_4(c, N);
    print_message("random third choice %u %u %u %u chi2=%.2f\n", c[0], c[1], c[2], c[3], chi);
    assert_true(chi < 16.27);
    /* Reproducible from (seed, index), different for another seed. */
    uint32_t a[32], b[32];
    unsigned differ = 0;
    for (uint64_t seed = 0; seed < 2; seed++) {
        ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, NULL, 100 + seed, 5);
        for (int i = 0; i < 32; i++)
            a[i] = ex_online_next(&o, &v);
        ex_online_begin(&o, EX_ONLINE_RANDOM, NULL, NULL, 100 + seed, 5);
        for (int i = 0; i < 32; i++)
            assert_int_equal(ex_online_next(&o, &v), a[i]);
        if (seed == 0)
            memcpy(b, a, sizeof a);
    }
    for (int i = 0; i < 32; i++)
        differ += a[i] != b[i];
    assert_true(differ > 0);
    ex_online_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_races),
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_no_enabled),
        cmocka_unit_test(test_pct_d1_nonpreemptive),
        cmocka_unit_test(test_pct_change_points),
        cmocka_unit_test(test_pct_new_thread_rank),
        cmocka_unit_test(test_pct_depth2_bug),
        cmocka_unit_test(test_pct_describe),
        cmocka_unit_test(test_pos_redraw),
        cmocka_unit_test(test_pos_uniform_pairs),
        cmocka_unit_test(test_random_uniform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
