/* Strategies, second half: PCT and PCTVB, race postponing, and the bounded ones
 * against brute force. Traces and checks from strategies_fixture.h; the model, steering
 * and jinx are in test_explorer_strategies.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdlib.h>
#include <string.h>

#include "strategies_fixture.h"

/* ---- pct / pctvb ---- */

/* Re-derives the PCT decisions from the plan and checks the schedule obeys
 * "highest-priority enabled thread runs; change point i lowers the thread
 * about to run to priority i". */
static void check_pct_rule(const struct ex_analysis *a, const struct ex_pct_plan *plan,
                           const uint32_t *order, const struct ex_pct_result *res)
{
    struct ex_model m;
    uint32_t prio[EX_MAX_TID + 1];
    memcpy(prio, plan->prio, sizeof prio);
    assert_int_equal(ex_model_init(&m, a), 0);
    uint32_t fi = 0;
    for (size_t step = 0; step < a->tr->n; step++) {
        while (fi < res->nfired && res->fired_step[fi] == step) {
            /* The lowered thread was the highest enabled one at that moment. */
            uint32_t top = 0;
            for (uint32_t t = 1; t <= a->tr->nthreads; t++)
                if (ex_model_is_enabled(&m, t) && (!top || prio[t] > prio[top]))
                    top = t;
            assert_int_equal(top, res->fired_tid[fi]);
            assert_int_equal((uint32_t)ex_model_next_event(&m, top), res->fired_event[fi]);
            prio[top] = fi + 1;
            fi++;
        }
        uint32_t chosen = a->tr->ev[order[step]].tid;
        assert_true(ex_model_is_enabled(&m, chosen));
        for (uint32_t t = 1; t <= a->tr->nthreads; t++)
            if (ex_model_is_enabled(&m, t) && t != chosen)
                assert_true(prio[t] < prio[chosen]);
        ex_model_step(&m, chosen);
    }
    assert_int_equal(fi, res->nfired);
    ex_model_free(&m);
}

static void test_pct_properties(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    build_random(&t, 77, 4, 120);
    analyze(&t, &a);
    uint32_t *order = malloc(t.n * sizeof *order);
    struct ex_schedule s;
    ex_schedule_init(&s);
    for (uint32_t d = 1; d <= 6; d++) {
        for (uint64_t seed = 1; seed <= 40; seed++) {
            struct ex_rng r;
            struct ex_pct_plan plan;
            struct ex_pct_result res;
            ex_rng_seed(&r, seed * 1000 + d);
            ex_pct_plan_make(&a, d, &r, &plan);
            assert_int_equal(plan.depth, d);
            assert_int_equal(plan.nchange, d - 1);  /* exactly d-1 change points */
            for (uint32_t i = 0; i < plan.nchange; i++) {
                assert_true(plan.change[i] < t.n);
                if (i)
                    assert_true(plan.change[i - 1] < plan.change[i]); /* distinct */
            }
            /* Distinct initial priorities d .. d+n-1. */
            uint32_t seen = 0;
            for (uint32_t tid = 1; tid <= t.nthreads; tid++) {
                if (!ex_tidset_has(&a.threads, tid))
                    continue;
                assert_true(plan.prio[tid] >= d && plan.prio[tid] < d + 4);
                assert_false(seen & (1u << (plan.prio[tid] - d)));
                seen |= 1u << (plan.prio[tid] - d);
            }
            assert_int_equal(ex_pct_run(&a, &plan, &s, order, &res), 0);
            assert_int_equal(res.nfired, d - 1);
            for (uint32_t i = 0; i < res.nfired; i++)
                assert_int_equal(res.fired_step[i], plan.change[i]);
            check_pct_rule(&a, &plan, order, &res);
            free(predict_full(&a, &s));
        }
    }
    /* Depth beyond the trace: as many change points as steps. */
    struct ex_trace tiny;
    struct ex_analysis ta;
    struct ex_rng r;
    struct ex_pct_plan plan;
    ex_trace_init(&tiny);
    ex_trace_access(&tiny, 1, EX_WRITE, 8, 8, 0, 1);
    ex_trace_access(&tiny, 2, EX_WRITE, 8, 8, 0, 2);
    analyze(&tiny, &ta);
    ex_rng_seed(&r, 3);
    ex_pct_plan_make(&ta, 10, &r, &plan);
    assert_int_equal(plan.nchange, 2);
    ex_analysis_free(&ta);
    ex_trace_free(&tiny);

    /* The generator: K distinct schedules, reproducible. */
    struct ex_params p;
    struct ex_schedule_set s1, s2;
    struct ex_rng r1, r2;
    ex_params_default(&p);
    ex_rng_seed(&r1, 5);
    ex_rng_seed(&r2, 5);
    ex_schedule_set_init(&s1);
    ex_schedule_set_init(&s2);
    assert_int_equal(ex_pct_generate(&a, &p, &r1, &s1), 8);
    assert_int_equal(ex_pct_generate(&a, &p, &r2, &s2), 8);
    for (int i = 0; i < 8; i++) {
        assert_true(ex_schedule_equal(&s1.v[i], &s2.v[i]));
        assert_non_null(strstr(s1.v[i].note, "pct d=3"));
    }
    ex_schedule_set_free(&s1);
    ex_schedule_set_free(&s2);
    ex_schedule_free(&s);
    free(order);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_pctvb_properties(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    build_random(&t, 99, 3, 150);
    analyze(&t, &a);
    assert_true(a.nlocs >= 3);
    uint32_t *order = malloc(t.n * sizeof *order);
    struct ex_schedule s;
    ex_schedule_init(&s);
    for (uint32_t v = 1; v <= 3; v++) {
        for (uint64_t seed = 1; seed <= 40; seed++) {
            struct ex_rng r;
            struct ex_pct_plan plan;
            struct ex_pct_result res;
            ex_rng_seed(&r, seed * 77 + v);
            ex_pctvb_plan_make(&a, 4, v, &r, &plan);
            assert_true(plan.by_event);
            assert_int_equal(plan.nvars, v);
            for (uint32_t i = 0; i < plan.nvars; i++) {
                assert_non_null(ex_analysis_loc(&a, plan.vars[i]));
                for (uint32_t j = 0; j < i; j++)
                    assert_true(plan.vars[i] != plan.vars[j]);
            }
            assert_int_equal(plan.nchange, 3);
            /* Change points only at accesses to the chosen variables. */
            for (uint32_t i = 0; i < plan.nchange; i++) {
                const struct ex_event *e = &t.ev[plan.change[i]];
                bool at_var = false;
                for (uint32_t j = 0; j < plan.nvars; j++)
                    at_var |= ex_is_access(e) && ex_loc_of(e) == plan.vars[j];
                assert_true(at_var);
            }
            assert_int_equal(ex_pct_run(&a, &plan, &s, order, &res), 0);
            assert_int_equal(res.nfired, 3);
            for (uint32_t i = 0; i < res.nfired; i++) {
                bool listed = false;
                for (uint32_t j = 0; j < plan.nchange; j++)
                    listed |= plan.change[j] == res.fired_event[i];
                assert_true(listed);
            }
            check_pct_rule(&a, &plan, order, &res);
            free(predict_full(&a, &s));
        }
    }
    struct ex_params p;
    struct ex_rng r;
    struct ex_schedule_set ss;
    ex_params_default(&p);
    ex_rng_seed(&r, 1);
    ex_schedule_set_init(&ss);
    int n = ex_pctvb_generate(&a, &p, &r, &ss);
    assert_true(n >= 1 && n <= 8);
    ex_schedule_set_free(&ss);
    ex_schedule_free(&s);
    free(order);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* ---- race ---- */

static void test_race_postpones(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    ex_trace_access(&t, 1, EX_WRITE, 0x100, 8, 0, 0x10);    /* 0 e1 */
    ex_trace_access(&t, 1, EX_WRITE, 0x900, 8, 0, 0x11);    /* 1 private */
    ex_trace_access(&t, 2, EX_WRITE, 0xa00, 8, 0, 0x20);    /* 2 private */
    ex_trace_access(&t, 2, EX_READ, 0x100, 8, 0, 0x21);     /* 3 e2 */
    analyze(&t, &a);
    assert_int_equal(a.nraces, 1);
    assert_int_equal(a.races[0].a, 0);
    assert_int_equal(a.races[0].b, 3);
    struct ex_schedule s;
    ex_schedule_init(&s);
    /* T1 waits before e1 until T2 is at e2; then e1, e2 back to back. */
    assert_int_equal(ex_race_schedule(&a, &a.races[0], false, &s), 0);
    assert_schedule(&s, "T2 x1\nT1 x1\nT2 x1\nT1 x1\ndefault continue\n");
    assert_int_equal(ex_race_schedule(&a, &a.races[0], true, &s), 0);
    assert_schedule(&s, "T2 x2\nT1 x2\ndefault continue\n");
    ex_schedule_free(&s);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_race_adjacency_random(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    build_random(&t, 4242, 3, 200);
    analyze(&t, &a);
    assert_true(a.nraces > 5);
    struct ex_schedule s;
    ex_schedule_init(&s);
    for (size_t i = 0; i < a.nraces; i++) {
        const struct ex_race *r = &a.races[i];
        uint32_t t2 = t.ev[r->b].tid;
        for (int flip = 0; flip < 2; flip++) {
            assert_int_equal(ex_race_schedule(&a, r, flip, &s), 0);
            uint32_t *order = predict_full(&a, &s);
            size_t p1 = pos_in(order, t.n, r->a), p2 = pos_in(order, t.n, r->b);
            if (flip)
                assert_int_equal(p1, p2 + 1);
            else
                assert_int_equal(p2, p1 + 1);
            /* T1 was postponed until T2 was about to perform e2. */
            if (a.tpos[r->b] > 0) {
                size_t pprev = pos_in(order, t.n, ex_thread_event(&a, t2, a.tpos[r->b] - 1));
                assert_true(pprev < p1);
            }
            free(order);
        }
    }
    struct ex_params p;
    struct ex_rng rng;
    struct ex_schedule_set ss;
    ex_params_default(&p);
    p.max_schedules = 6;
    ex_rng_seed(&rng, 2);
    ex_schedule_set_init(&ss);
    assert_int_equal(ex_race_generate(&a, &p, &rng, &ss), 6);
    assert_non_null(strstr(ss.v[0].note, "order=e1,e2"));
    assert_non_null(strstr(ss.v[1].note, "order=e2,e1"));
    ex_schedule_set_free(&ss);
    ex_schedule_free(&s);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* ---- bounded ---- */

struct collect {
    uint64_t *h;
    size_t n, cap;
};

static uint64_t hash_seq(const uint32_t *tids, size_t n)
{
    uint64_t h = n;
    for (size_t i = 0; i < n; i++)
        h = ex_hash2(h, tids[i]);
    return h;
}

static int collect_cb(const uint32_t *tids, size_t n, void *ctx)
{
    struct collect *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->h = realloc(c->h, c->cap * sizeof *c->h);
    }
    c->h[c->n++] = hash_seq(tids, n);
    return 0;
}

/* Brute force: every interleaving the model allows, filtered by preemptions. */
static void brute(struct ex_model *m, uint32_t *tids, size_t depth, size_t start, size_t len,
                  uint32_t last, uint32_t pre, uint32_t bound, struct collect *out)
{
    if (depth - start == len || ex_model_finished(m)) {
        collect_cb(tids, depth, out);
        return;
    }
    bool last_en = last && ex_model_is_enabled(m, last);
    for (uint32_t t = 1; t <= m->a->tr->nthreads; t++) {
        if (!ex_model_is_enabled(m, t))
            continue;
        uint32_t p = pre + (last_en && t != last);
        if (p > bound)
            continue;
        tids[depth] = t;
        ex_model_step(m, t);
        brute(m, tids, depth + 1, start, len, t, p, bound, out);
        ex_model_undo(m);
    }
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static void check_bounded(const struct ex_analysis *a, uint32_t c, uint32_t wstart, uint32_t wlen)
{
    struct collect got = { 0 }, want = { 0 };
    long n = ex_bounded_enumerate(a, c, wstart, wlen, 0, collect_cb, &got);
    assert_int_equal(n, (long)got.n);

    struct ex_model m;
    uint32_t tids[64];
    assert_int_equal(ex_model_init(&m, a), 0);
    for (uint32_t i = 0; i < wstart; i++) {
        tids[i] = a->tr->ev[i].tid;
        ex_model_step(&m, tids[i]);
    }
    size_t len = wlen ? wlen : a->tr->n - wstart;
    brute(&m, tids, wstart, wstart, len, wstart ? tids[wstart - 1] : 0, 0, c, &want);
    ex_model_free(&m);

    assert_true(got.n > 0);
    assert_int_equal(got.n, want.n);
    qsort(got.h, got.n, sizeof *got.h, cmp_u64);
    qsort(want.h, want.n, sizeof *want.h, cmp_u64);
    for (size_t i = 0; i < got.n; i++) {
        assert_int_equal(got.h[i], want.h[i]);  /* same set ... */
        if (i)
            assert_true(got.h[i] != got.h[i - 1]); /* ... each exactly once */
    }
    free(got.h);
    free(want.h);
}

static void test_bounded_exhaustive(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    ex_trace_access(&t, 1, EX_WRITE, 0x10, 8, 0, 1);     /* 0 */
    ex_trace_sync(&t, 3, EX_FUTEX_WAIT, FUTEX, 0);       /* 1: T3 blocks ... */
    ex_trace_access(&t, 2, EX_READ, 0x10, 8, 0, 2);      /* 2 */
    ex_trace_access(&t, 1, EX_WRITE, 0x18, 8, 0, 3);     /* 3 */
    ex_trace_sync(&t, 1, EX_FUTEX_WAKE, FUTEX, 1);       /* 4: ... until here */
    ex_trace_access(&t, 2, EX_WRITE, 0x18, 8, 0, 4);     /* 5 */
    ex_trace_access(&t, 3, EX_READ, 0x10, 8, 0, 5);      /* 6 */
    ex_trace_access(&t, 1, EX_READ, 0x18, 8, 0, 6);      /* 7 */
    analyze(&t, &a);
    for (uint32_t c = 0; c <= 2; c++) {
        check_bounded(&a, c, 0, 0);
        check_bounded(&a, c, 2, 4);
        check_bounded(&a, c, 5, 0);
    }
    /* More preemptions allowed, more schedules. */
    struct collect c0 = { 0 }, c2 = { 0 };
    ex_bounded_enumerate(&a, 0, 0, 0, 0, collect_cb, &c0);
    ex_bounded_enumerate(&a, 2, 0, 0, 0, collect_cb, &c2);
    assert_true(c0.n < c2.n);
    free(c0.h);
    free(c2.h);
    /* The cap. */
    struct collect capped = { 0 };
    assert_int_equal(ex_bounded_enumerate(&a, 2, 0, 0, 5, collect_cb, &capped), 5);
    free(capped.h);
    struct ex_params p;
    struct ex_schedule_set ss;
    ex_params_default(&p);
    p.max_schedules = 5;
    ex_schedule_set_init(&ss);
    assert_int_equal(ex_bounded_generate(&a, &p, NULL, &ss), 5);
    for (size_t i = 0; i < ss.n; i++) {
        free(predict_full(&a, &ss.v[i]));
        for (size_t j = 0; j < i; j++)
            assert_false(ex_schedule_equal(&ss.v[i], &ss.v[j]));
    }
    /* The first is the non-preemptive run: each thread until it runs out (T3's
     * wait comes after its waker, so it does not block). */
    assert_schedule(&ss.v[0], "T1 x4\nT2 x2\nT3 x2\ndefault continue\n");
    ex_schedule_set_free(&ss);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* ---- random ---- */

static void test_random_reproducible(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    build_random(&t, 7, 3, 80);
    analyze(&t, &a);
    struct ex_params p;
    struct ex_schedule_set s1, s2, s3;
    struct ex_rng r1, r2, r3;
    ex_params_default(&p);
    ex_rng_seed(&r1, 31);
    ex_rng_seed(&r2, 31);
    ex_rng_seed(&r3, 32);
    ex_schedule_set_init(&s1);
    ex_schedule_set_init(&s2);
    ex_schedule_set_init(&s3);
    assert_int_equal(ex_random_generate(&a, &p, &r1, &s1), 8);
    assert_int_equal(ex_random_generate(&a, &p, &r2, &s2), 8);
    assert_int_equal(ex_random_generate(&a, &p, &r3, &s3), 8);
    int same_as_other_seed = 0;
    for (int i = 0; i < 8; i++) {
        assert_true(ex_schedule_equal(&s1.v[i], &s2.v[i]));
        assert_string_equal(s1.v[i].note, s2.v[i].note);
        same_as_other_seed += ex_schedule_equal(&s1.v[i], &s3.v[i]);
        free(predict_full(&a, &s1.v[i]));
    }
    assert_int_equal(same_as_other_seed, 0);
    ex_schedule_set_free(&s1);
    ex_schedule_set_free(&s2);
    ex_schedule_set_free(&s3);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

/* ---- all strategies, portfolio ---- */

static void test_every_strategy_feasible_and_deterministic(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    build_random(&t, 2024, 4, 160);
    analyze(&t, &a);
    for (int k = 0; k < EX_NSTRATEGIES; k++) {
        struct ex_params p;
        struct ex_schedule_set s1, s2;
        struct ex_rng r1, r2;
        ex_params_default(&p);
        p.max_schedules = 6;
        if (k == EX_STRAT_BOUNDED)
            p.bounded_window_start = 100, p.bounded_window_len = 0;
        ex_rng_seed(&r1, 1000 + (uint64_t)k);
        ex_rng_seed(&r2, 1000 + (uint64_t)k);
        ex_schedule_set_init(&s1);
        ex_schedule_set_init(&s2);
        int n1 = ex_generate((enum ex_strategy)k, &a, &p, &r1, &s1);
        int n2 = ex_generate((enum ex_strategy)k, &a, &p, &r2, &s2);
        assert_true(n1 >= 1);
        assert_true(n1 <= 6);
        assert_int_equal(n1, n2);
        assert_int_equal((size_t)n1, s1.n);
        for (size_t i = 0; i < s1.n; i++) {
            assert_true(ex_schedule_equal(&s1.v[i], &s2.v[i]));
            assert_true(s1.v[i].note[0] != 0);
            free(predict_full(&a, &s1.v[i]));
            for (size_t j = 0; j < i; j++)
                assert_false(ex_schedule_equal(&s1.v[i], &s1.v[j]));
        }
        ex_schedule_set_free(&s1);
        ex_schedule_set_free(&s2);
    }
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_portfolio(void **st)
{
    (void)st;
    struct ex_trace t;
    struct ex_analysis a;
    build_random(&t, 31337, 3, 300);
    analyze(&t, &a);
    struct ex_params p;
    struct ex_rng r;
    struct ex_schedule_set ss;
    struct ex_schedule rec;
    ex_params_default(&p);
    p.max_schedules = 10;
    ex_rng_seed(&r, 42);
    ex_schedule_set_init(&ss);
    ex_schedule_init(&rec);
    assert_int_equal(ex_recorded_schedule(&a, &rec), 0);
    assert_int_equal(ex_generate(EX_STRAT_PORTFOLIO, &a, &p, &r, &ss), 10);
    const char *kinds[] = { "jinx", "race", "pct d", "pctvb", "bounded", "random" };
    for (size_t k = 0; k < 6; k++) {
        bool found = false;
        for (size_t i = 0; i < ss.n; i++)
            found |= strncmp(ss.v[i].note, kinds[k], strlen(kinds[k])) == 0;
        if (!found)
            fail_msg("portfolio has no %s schedule", kinds[k]);
    }
    for (size_t i = 0; i < ss.n; i++) {
        assert_false(ex_schedule_equal(&ss.v[i], &rec));
        for (size_t j = 0; j < i; j++)
            assert_false(ex_schedule_equal(&ss.v[i], &ss.v[j]));
    }
    /* Same seed, same mix. */
    struct ex_schedule_set s2;
    ex_rng_seed(&r, 42);
    ex_schedule_set_init(&s2);
    assert_int_equal(ex_generate(EX_STRAT_PORTFOLIO, &a, &p, &r, &s2), 10);
    for (size_t i = 0; i < ss.n; i++)
        assert_true(ex_schedule_equal(&ss.v[i], &s2.v[i]));
    ex_schedule_set_free(&s2);
    ex_schedule_set_free(&ss);

    /* No races, few locations: the others fill the budget. */
    struct ex_trace c;
    struct ex_analysis ca;
    build_circle(&c);
    analyze(&c, &ca);
    p.max_schedules = 8;
    assert_int_equal(ex_generate(EX_STRAT_PORTFOLIO, &ca, &p, &r, &ss), 8);
    ex_schedule_set_free(&ss);
    ex_analysis_free(&ca);
    ex_trace_free(&c);
    ex_schedule_free(&rec);
    ex_analysis_free(&a);
    ex_trace_free(&t);
}

static void test_names_and_params(void **st)
{
    (void)st;
    enum ex_strategy s;
    for (int k = 0; k < EX_NSTRATEGIES; k++) {
        assert_int_equal(ex_strategy_from_name(ex_strategy_name((enum ex_strategy)k), &s), 0);
        assert_int_equal(s, k);
    }
    assert_int_equal(ex_strategy_from_name("nope", &s), -1);
    assert_int_equal(ex_strategy_from_name(NULL, &s), -1);
    struct ex_params p;
    ex_params_default(&p);
    p.pct_depth = 0;
    p.bounded_preemptions = 9;
    p.pctvb_vars = 1000;
    ex_params_sanitize(&p);
    assert_int_equal(p.pct_depth, 1);
    assert_int_equal(p.bounded_preemptions, 2);
    assert_int_equal(p.pctvb_vars, EX_PCTVB_MAX_VARS);
    /* Empty trace: nothing to do, nothing breaks. */
    struct ex_trace t;
    struct ex_analysis a;
    ex_trace_init(&t);
    analyze(&t, &a);
    for (int k = 0; k < EX_NSTRATEGIES; k++) {
        struct ex_schedule_set ss;
        struct ex_rng r;
        ex_rng_seed(&r, 1);
        ex_schedule_set_init(&ss);
        ex_params_default(&p);
        assert_true(ex_generate((enum ex_strategy)k, &a, &p, &r, &ss) >= 0);
        ex_schedule_set_free(&ss);
    }
    ex_analysis_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pct_properties),
        cmocka_unit_test(test_pctvb_properties),
        cmocka_unit_test(test_race_postpones),
        cmocka_unit_test(test_race_adjacency_random),
        cmocka_unit_test(test_bounded_exhaustive),
        cmocka_unit_test(test_random_reproducible),
        cmocka_unit_test(test_every_strategy_feasible_and_deterministic),
        cmocka_unit_test(test_portfolio),
        cmocka_unit_test(test_names_and_params),
    };
    return cmocka_run_group_tests_name("explorer: strategies (pct, race, bounded)", tests, NULL, NULL);
}
