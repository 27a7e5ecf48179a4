/* Sparse schedules (explorer/sparse.h, schedule.h's "sparse" and "preempt"): the points
 * travel through the JSON format into dumps and are refused when malformed; the model
 * learns racy variables (races by happens-before, or one thread's writes on a shared
 * page) and their sites; plans weigh variables by the log of their accesses, so a hot
 * counter does not absorb the points; counts stay within what a thread executes once it
 * is known; PCT over decisions lowers a thread whose point fired or that yielded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include "trace_fixture.h"
#include <stdlib.h>
#include <string.h>

static void test_json_round_trip(void **state)
{
    (void)state;
    struct ex_schedule s, back;
    ex_schedule_init(&s);
    assert_int_equal(ex_schedule_push(&s, 2, 3), 0);
    s.sparse = true;
    assert_int_equal(ex_schedule_add_preempt(&s, 2, 0x4012bf, 21), 0);
    assert_int_equal(ex_schedule_add_preempt(&s, 3, 0x4012bf, 1), 0);
    assert_int_equal(ex_schedule_add_preempt(&s, 2, 0x4012bf, 5), -1); /* same thread, rip */
    assert_int_equal(ex_schedule_add_preempt(&s, 0, 0x4012c4, 7), 0);  /* any thread's 7th */
    /* Chained: only to an earlier point, never a match point nor to one. */
    assert_int_equal(ex_schedule_chain_preempt(&s, 2, 3), -1);
    assert_int_equal(ex_schedule_chain_preempt(&s, 2, 0), -1);
    assert_int_equal(ex_schedule_chain_preempt(&s, 3, 1), -1);
    assert_int_equal(ex_schedule_chain_preempt(&s, 2, 1), 0);
    char *js = ex_schedule_to_json(&s);
    assert_non_null(strstr(js, "{\"thread\":0,\"rip\":4199108,\"count\":7,\"after\":1}"));
    assert_non_null(js);
    struct ex_parse_error pe;
    assert_int_equal(ex_schedule_parse_json(js, strlen(js), &back, &pe), 0);
    assert_true(back.sparse);
    assert_int_equal(back.npreempt, 3);
    assert_true(back.preempt[2].thread == 0 && back.preempt[2].count == 7 &&
                back.preempt[2].chain == 1 && back.preempt[0].chain == 0);
    assert_true(back.preempt[0].thread == 2 && back.preempt[0].rip == 0x4012bf &&
                back.preempt[0].count == 21);
    assert_true(ex_schedule_equal(&s, &back));
    assert_true(ex_schedule_hash(&s) == ex_schedule_hash(&back));
    /* The points are part of what a schedule means, and so is a chain. */
    back.preempt[2].chain = 2;
    assert_false(ex_schedule_equal(&s, &back));
    assert_false(ex_schedule_hash(&s) == ex_schedule_hash(&back));
    back.preempt[2].chain = 1;
    back.preempt[1].count = 2;
    assert_false(ex_schedule_equal(&s, &back));
    back.sparse = false;
    back.npreempt = 0;
    assert_false(ex_schedule_equal(&s, &back));
    struct ex_schedule c;
    assert_int_equal(ex_schedule_copy(&c, &s), 0);
    assert_true(ex_schedule_equal(&c, &s) && c.sparse);
    ex_schedule_free(&c);
    free(js);
    ex_schedule_free(&back);
    ex_schedule_free(&s);
}

static void test_text_round_trip(void **state)
{
    (void)state;
    const char *txt = "# by hand\nsparse\npreempt T2 0x4012bf x21\nT1 x2\npreempt t3 0X40 x1\n"
                      "preempt T0 0x48 x9  after 2 # chained\ndefault roundrobin 1\n";
    struct ex_schedule s, back;
    struct ex_parse_error pe;
    assert_int_equal(ex_schedule_parse_text(txt, strlen(txt), &s, &pe), 0);
    assert_true(s.sparse);
    assert_int_equal(s.npreempt, 3);
    assert_true(s.preempt[1].thread == 3 && s.preempt[1].rip == 0x40 && s.preempt[1].count == 1);
    assert_true(s.preempt[2].thread == 0 && s.preempt[2].rip == 0x48 && s.preempt[2].count == 9 &&
                s.preempt[2].chain == 2 && !s.preempt[1].chain);
    char *out = ex_schedule_to_text(&s);
    assert_non_null(out);
    assert_non_null(strstr(out, "sparse\npreempt T2 0x4012bf x21\npreempt T3 0x40 x1\n"
                                "preempt T0 0x48 x9 after 2\n"));
    assert_int_equal(ex_schedule_parse_text(out, strlen(out), &back, &pe), 0);
    assert_true(ex_schedule_equal(&s, &back));
    free(out);
    ex_schedule_free(&back);
    ex_schedule_free(&s);
    const char *bad[][2] = {
        {"preempt T2 0x40 x1\n", "needs a 'sparse' line"},
        {"sparse\nsparse\n", "duplicate 'sparse'"},
        {"sparse on\n", "unexpected text after 'sparse'"},
        {"sparse\npreempt T2 0x40\n", "expected 'preempt T<thread> 0x<rip> x<count>"},
        {"sparse\npreempt T2 4096 x1\n", "0x<hex>"},
        {"sparse\npreempt T2 0x40g x1\n", "hexadecimal"},
        {"sparse\npreempt T2 0x800000000000 x1\n", "rip too large"},
        {"sparse\npreempt T2 0x0 x1\n", "must not be 0"},
        {"sparse\npreempt T2 0x40 x0\n", "count must be at least 1"},
        {"sparse\npreempt T256 0x40 x1\n", "thread id"},
        {"sparse\npreempt T2 0x40 x1\npreempt T2 0x40 x2\n", "two for one thread"},
        {"sparse\npreempt T2 0x40 x1 after 1\n", "'after 1': a point is chained to an earlier"},
        {"sparse\npreempt T2 0x40 x1\npreempt T0 0x41 x1 after 2\n", "chained to an earlier"},
        {"sparse\npreempt T2 0x40 x1\npreempt T0 0x41 x1 after 0\n", "point must be at least 1"},
        {"sparse\npreempt T2 0x40 x1\npreempt T0 0x41 x1 before 1\n", "[after <point>]"},
        {"sparse\npreempt T2 0x40 x1\npreempt T0 0x41 x1 after 1 2\n", "[after <point>]"},
        {"sparse\npreempt T2 0x40 x1 x2\n", "[after <point>]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&pe, 0, sizeof pe);
        assert_int_equal(ex_schedule_parse_text(bad[i][0], strlen(bad[i][0]), &s, &pe), -1);
        if (!strstr(pe.msg, bad[i][1]))
            fail_msg("%s: message \"%s\" lacks \"%s\"", bad[i][0], pe.msg, bad[i][1]);
    }
}

static void refused(const char *js, const char *why)
{
    struct ex_schedule s;
    struct ex_parse_error pe;
    memset(&pe, 0, sizeof pe);
    assert_int_equal(ex_schedule_parse_json(js, strlen(js), &s, &pe), -1);
    if (!strstr(pe.msg, why))
        fail_msg("%s: message \"%s\" lacks \"%s\"", js, pe.msg, why);
    assert_int_equal(s.npreempt, 0);
}

static void test_json_refusals(void **state)
{
    (void)state;
    refused("{\"version\":1,\"preempt\":[{\"thread\":1,\"rip\":4096,\"count\":1}],\"segments\":[]}",
            "need \"sparse\": true");
    refused("{\"version\":1,\"sparse\":1,\"segments\":[]}", "true or false");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":1,\"rip\":4096,\"count\":1,"
            "\"after\":1}],\"segments\":[]}", "chained to an earlier one");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":1,\"rip\":4096,\"count\":1},"
            "{\"thread\":0,\"rip\":4097,\"count\":1,\"after\":0}],\"segments\":[]}", "after");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":1,\"rip\":4096,\"count\":1},"
            "{\"thread\":0,\"rip\":4097,\"count\":1,\"after\":1,\"after\":1}],\"segments\":[]}",
            "duplicate");
    refused("{\"version\":1,\"sparse\":true,\"sparse\":true,\"segments\":[]}", "duplicate");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":1,\"rip\":4096}],"
            "\"segments\":[]}", "needs \"thread\", \"rip\" and \"count\"");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":256,\"rip\":4096,\"count\":1}],"
            "\"segments\":[]}", "thread");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":1,\"rip\":0,\"count\":1}],"
            "\"segments\":[]}", "rip");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":1,\"rip\":140737488355328,"
            "\"count\":1}],\"segments\":[]}", "rip too large");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":1,\"rip\":4096,\"count\":0}],"
            "\"segments\":[]}", "count");
    refused("{\"version\":1,\"sparse\":true,\"preempt\":[{\"thread\":1,\"rip\":4096,\"count\":1},"
            "{\"thread\":1,\"rip\":4096,\"count\":2}],\"segments\":[]}", "two for one thread");
    char big[4096];
    size_t n = (size_t)snprintf(big, sizeof big, "{\"version\":1,\"sparse\":true,\"preempt\":[");
    for (unsigned i = 0; i <= EX_MAX_PREEMPTS; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s{\"thread\":1,\"rip\":%u,\"count\":1}",
                              i ? "," : "", 4096 + i);
    snprintf(big + n, sizeof big - n, "],\"segments\":[]}");
    refused(big, "more than 16 preemption points");
}

/* An access event of tid at addr from rip (kind R/W). */
static void acc(struct ex_trace *t, uint32_t tid, enum ex_kind k, uint64_t addr, uint64_t rip)
{
    assert_non_null(ex_trace_access(t, tid, k, addr, 8, 0, rip));
}

/* A variable one thread alone accessed, every time near its own stack pointer
 * (EX_F_STACK), is not guessed racy on a shared page; the same accesses without the flag
 * are (one run may show one thread only), and a second thread makes the usual rules
 * apply. */
static void test_own_stack_not_guessed(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    assert_non_null(ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 2));
    assert_non_null(ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 3));
    acc(&t, 2, EX_WRITE, 0x6000, 0x402010); /* X: raced */
    acc(&t, 3, EX_WRITE, 0x6000, 0x403010);
    for (int i = 0; i < 3; i++) {
        assert_non_null(ex_trace_access(&t, 2, EX_WRITE, 0x7000, 8, EX_F_STACK, 0x402020));
        assert_non_null(ex_trace_access(&t, 2, EX_READ, 0x7000, 8, EX_F_STACK, 0x402030));
    }
    acc(&t, 2, EX_WRITE, 0x7100, 0x402040); /* one thread, not its stack: guessed racy */
    struct ex_u64map shared;
    ex_u64map_init(&shared);
    assert_non_null(ex_u64map_put(&shared, 0x6000, 1, NULL));
    assert_non_null(ex_u64map_put(&shared, 0x7000, 1, NULL));
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    assert_int_equal(ex_sparse_learn(&m, &t, true, &shared), 0);
    assert_int_equal(ex_sparse_racy_vars(&m), 2);
    struct ex_sparse_run r;
    ex_sparse_run_init(&r);
    struct ex_schedule plan;
    ex_schedule_init(&plan);
    for (uint64_t i = 0; i < 200; i++) {
        assert_int_equal(ex_sparse_begin(&r, &m, 3, i, &plan), 0);
        for (uint32_t k = 0; k < plan.npreempt; k++)
            assert_true(plan.preempt[k].rip != 0x402020 && plan.preempt[k].rip != 0x402030);
    }
    /* Another run: thread 3 on it too (a pointer to the stack variable): racy again. */
    struct ex_trace u;
    ex_trace_init(&u);
    assert_non_null(ex_trace_sync(&u, 1, EX_THREAD_CREATE, 0, 2));
    assert_non_null(ex_trace_sync(&u, 1, EX_THREAD_CREATE, 0, 3));
    assert_non_null(ex_trace_access(&u, 2, EX_WRITE, 0x7000, 8, EX_F_STACK, 0x402020));
    acc(&u, 3, EX_READ, 0x7000, 0x403020);
    assert_int_equal(ex_sparse_learn(&m, &u, true, &shared), 0);
    assert_int_equal(ex_sparse_racy_vars(&m), 3);
    ex_schedule_free(&plan);
    ex_sparse_run_free(&r);
    ex_sparse_model_free(&m);
    ex_u64map_free(&shared);
    ex_trace_free(&u);
    ex_trace_free(&t);
}

/* Code skipped by ex_sparse_skip_code (a sanitizer runtime's) is never learnt: its racy
 * variable does not count, the program's own still does. */
static void test_skip_code(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    assert_non_null(ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 2));
    assert_non_null(ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 3));
    acc(&t, 2, EX_WRITE, 0x6000, 0x402010);            /* the program's racy variable */
    acc(&t, 3, EX_WRITE, 0x6000, 0x403010);
    acc(&t, 2, EX_WRITE, 0x9000, 0x7f0000001000);      /* the runtime's: skipped */
    acc(&t, 3, EX_WRITE, 0x9000, 0x7f0000002000);
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    ex_sparse_skip_code(&m, 0x7f0000000000, 0x7f0000100000);
    ex_sparse_skip_code(&m, 5, 5); /* empty: ignored */
    assert_int_equal(m.nskip, 1);
    assert_int_equal(ex_sparse_learn(&m, &t, true, NULL), 0);
    assert_int_equal(ex_sparse_racy_vars(&m), 1);
    for (size_t i = 0; i < m.nsite; i++)
        assert_true(m.site[i].rip < 0x7f0000000000);
    for (uint32_t i = 0; i < EX_SPARSE_MAX_SKIP + 3; i++)
        ex_sparse_skip_code(&m, 0x1000 * (i + 1), 0x1000 * (i + 1) + 8);
    assert_int_equal(m.nskip, EX_SPARSE_MAX_SKIP);
    ex_sparse_model_free(&m);
    ex_trace_free(&t);
}

/* Chained points (explorer/sparse.h): one plan in EX_SPARSE_CHAIN_DIV gets one, after
 * a point of its own, at another instruction of that point's variable, any thread's (the
 * site's own under own_threads), half of them at the next execution, none past
 * EX_SPARSE_CHAIN_COUNT. */
static void test_chained_points(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    assert_non_null(ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 2));
    assert_non_null(ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 3));
    for (int i = 0; i < 3; i++) {
        acc(&t, 2, EX_READ, 0x6000, 0x402010); /* X: a thief's load and CAS ... */
        acc(&t, 2, EX_WRITE, 0x6000, 0x402020);
        acc(&t, 3, EX_READ, 0x6000, 0x403010); /* ... the owner's load and store */
        acc(&t, 3, EX_WRITE, 0x6000, 0x403020);
        acc(&t, 2, EX_WRITE, 0x7000, 0x402100); /* Z: one instruction of each */
        acc(&t, 3, EX_WRITE, 0x7000, 0x403100);
    }
    for (int own = 0; own < 2; own++) {
        struct ex_sparse_model m;
        ex_sparse_model_init(&m);
        m.own_threads = own;
        assert_int_equal(ex_sparse_learn(&m, &t, true, NULL), 0);
        struct ex_sparse_run r;
        ex_sparse_run_init(&r);
        struct ex_schedule plan;
        ex_schedule_init(&plan);
        unsigned plans = 400, chained = 0, next = 0;
        for (uint64_t i = 0; i < plans; i++) {
            assert_int_equal(ex_sparse_begin(&r, &m, 11, i, &plan), 0);
            bool noted = strstr(plan.note, "(1 chained)") != NULL;
            assert_int_equal(noted, plan.npreempt && plan.preempt[plan.npreempt - 1].chain);
            for (uint32_t k = 0; k < plan.npreempt; k++) {
                const struct ex_preempt *p = &plan.preempt[k];
                if (!p->chain)
                    continue;
                chained++;
                assert_int_equal(k, plan.npreempt - 1); /* one, the last */
                assert_true(p->chain <= k);
                const struct ex_preempt *first = &plan.preempt[p->chain - 1];
                assert_int_equal(first->chain, 0);
                assert_true(p->rip != first->rip);
                /* The same variable: X's four instructions, or Z's two. */
                bool x = (first->rip & 0xfff) < 0x100, px = (p->rip & 0xfff) < 0x100;
                assert_int_equal(x, px);
                uint32_t site_tid = p->rip >= 0x403000 ? 3 : 2;
                assert_int_equal(p->thread, own ? site_tid : 0);
                assert_true(p->count >= 1 && p->count <= EX_SPARSE_CHAIN_COUNT);
                next += p->count == 1;
            }
        }
        if (chained * 3 < plans || chained * 3 > plans * 2)
            fail_msg("%u of %u plans chained (own_threads %d)", chained, plans, own);
        if (next * 3 < chained || next * 3 > chained * 2)
            fail_msg("%u of %u chained points at the next execution", next, chained);
        ex_schedule_free(&plan);
        ex_sparse_run_free(&r);
        ex_sparse_model_free(&m);
    }
    ex_trace_free(&t);
}

static void test_learn_racy_variables(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    acc(&t, 1, EX_WRITE, 0x5000, 0x401000);            /* Y: main's, before the create */
    assert_non_null(ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 2));
    assert_non_null(ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 3));
    acc(&t, 2, EX_READ, 0x5000, 0x402000);             /* ... read by its child: ordered */
    acc(&t, 2, EX_WRITE, 0x6000, 0x402010);            /* X: written by 2 and 3, unordered */
    acc(&t, 3, EX_WRITE, 0x6000, 0x403010);
    acc(&t, 3, EX_READ, 0x6000, 0x403020);
    acc(&t, 3, EX_WRITE, 0x7008, 0x403030);            /* Z: only 3's, on a shared page */
    acc(&t, 3, EX_WRITE, 0x8008, 0x403040);            /* W: only 3's, page not shared */
    struct ex_u64map shared;
    ex_u64map_init(&shared);
    assert_non_null(ex_u64map_put(&shared, 0x7000, 1, NULL));
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    assert_int_equal(ex_sparse_learn(&m, &t, true, &shared), 0);
    assert_int_equal(ex_sparse_racy_vars(&m), 2); /* X and Z */
    /* V: written by 2 alone in one run, by 3 alone in another (each run showed one
     * thread: the other's accesses came before the page was shared): racy. W stays not. */
    struct ex_trace t2, t3;
    ex_trace_init(&t2);
    ex_trace_init(&t3);
    acc(&t2, 2, EX_WRITE, 0xb008, 0x402100);
    acc(&t3, 3, EX_WRITE, 0xb008, 0x403100);
    assert_int_equal(ex_sparse_learn(&m, &t2, false, NULL), 0);
    assert_int_equal(ex_sparse_racy_vars(&m), 2);
    assert_int_equal(ex_sparse_learn(&m, &t3, false, NULL), 0);
    assert_int_equal(ex_sparse_racy_vars(&m), 3);
    ex_trace_free(&t2);
    ex_trace_free(&t3);
    /* Plans name the racy variables' sites (X, Z, V), and one point in
     * EX_SPARSE_ORDERED_DIV the ordered shared Y's (written by main, read by its child:
     * ordered in the run learnt). W's, never (one thread's). */
    struct ex_sparse_run r;
    ex_sparse_run_init(&r);
    struct ex_schedule plan;
    ex_schedule_init(&plan);
    uint32_t points = 0, ordered = 0;
    for (uint64_t i = 0; i < 400; i++) {
        assert_int_equal(ex_sparse_begin(&r, &m, 7, i, &plan), 0);
        assert_true(plan.sparse);
        uint32_t chained = plan.npreempt && plan.preempt[plan.npreempt - 1].chain;
        assert_true(plan.npreempt >= 1 && plan.npreempt <= EX_SPARSE_MAX_POINTS + chained);
        for (uint32_t k = 0; k < plan.npreempt; k++) {
            uint64_t rip = plan.preempt[k].rip;
            bool y = rip == 0x401000 || rip == 0x402000;
            assert_true(y || rip == 0x402010 || rip == 0x403010 || rip == 0x403020 ||
                        rip == 0x403030 || rip == 0x402100 || rip == 0x403100);
            assert_true(plan.preempt[k].thread <= 3); /* 0: any thread's */
            points++;
            ordered += y;
        }
    }
    assert_true(ordered * EX_SPARSE_ORDERED_DIV > points / 2);     /* about a quarter */
    assert_true(ordered * EX_SPARSE_ORDERED_DIV < points * 3 / 2);
    /* The same seed and index plan the same points. */
    struct ex_schedule again;
    ex_schedule_init(&again);
    assert_int_equal(ex_sparse_begin(&r, &m, 7, 3, &plan), 0);
    assert_int_equal(ex_sparse_begin(&r, &m, 7, 3, &again), 0);
    assert_true(ex_schedule_equal(&plan, &again));
    ex_schedule_free(&again);
    ex_schedule_free(&plan);
    ex_sparse_run_free(&r);
    ex_sparse_model_free(&m);
    ex_u64map_free(&shared);
    ex_trace_free(&t);
}

/* own_threads (rounds): every point goes on the thread that showed its site; without it,
 * about half go on another thread that runs the same code. */
static void test_own_threads(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    for (int i = 0; i < 40; i++) {
        acc(&t, 2, i & 1 ? EX_WRITE : EX_READ, 0x6000, 0x402000 + (uint64_t)(i & 1));
        acc(&t, 3, i & 1 ? EX_WRITE : EX_READ, 0x6000, 0x403000 + (uint64_t)(i & 1));
    }
    for (int own = 0; own < 2; own++) {
        struct ex_sparse_model m;
        ex_sparse_model_init(&m);
        m.own_threads = own;
        assert_int_equal(ex_sparse_learn(&m, &t, false, NULL), 0);
        struct ex_sparse_run r;
        ex_sparse_run_init(&r);
        struct ex_schedule plan;
        ex_schedule_init(&plan);
        unsigned other = 0, all = 0;
        for (uint64_t i = 0; i < 400; i++) {
            assert_int_equal(ex_sparse_begin(&r, &m, 5, i, &plan), 0);
            for (uint32_t k = 0; k < plan.npreempt; k++, all++)
                other += plan.preempt[k].thread != (plan.preempt[k].rip >= 0x403000 ? 3u : 2u);
        }
        assert_true(all > 400);
        if (own)
            assert_int_equal(other, 0);
        else if (other < all / 8)
            fail_msg("without own_threads only %u of %u points went on another thread", other,
                     all);
        ex_schedule_free(&plan);
        ex_sparse_run_free(&r);
        ex_sparse_model_free(&m);
    }
    ex_trace_free(&t);
}

/* A hot counter beside a variable accessed 30 times: the points must not all go to the
 * counter (drawn in proportion to accesses it would take 99.97% of them). */
static void test_hot_counter_bounded(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    for (int i = 0; i < 100000; i++)
        acc(&t, 2 + (i & 1), i & 2 ? EX_WRITE : EX_READ, 0x9000, 0x401100 + (uint64_t)(i & 1));
    for (int i = 0; i < 30; i++)
        acc(&t, 2 + (i & 1), i % 3 ? EX_READ : EX_WRITE, 0x9010, 0x401200 + (uint64_t)(i % 3));
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    assert_int_equal(ex_sparse_learn(&m, &t, true, NULL), 0);
    assert_int_equal(ex_sparse_racy_vars(&m), 2);
    struct ex_sparse_run r;
    ex_sparse_run_init(&r);
    struct ex_schedule plan;
    ex_schedule_init(&plan);
    unsigned on_b = 0, all = 0;
    for (uint64_t i = 0; i < 2000; i++) {
        assert_int_equal(ex_sparse_begin(&r, &m, 1, i, &plan), 0);
        for (uint32_t k = 0; k < plan.npreempt; k++, all++) {
            on_b += plan.preempt[k].rip >= 0x401200;
            /* Exact counts: never past what the thread executed (a site's hits). */
            assert_true(plan.preempt[k].count >= 1 &&
                        plan.preempt[k].count <= EX_SPARSE_MAX_COUNT);
            if (plan.preempt[k].rip >= 0x401200 && plan.preempt[k].thread)
                assert_true(plan.preempt[k].count <= 16); /* 10 hits: at most 1.5 x 10 + 1 */
        }
    }
    double share = (double)on_b / all;
    if (share < 0.15 || share > 0.40)
        fail_msg("the 30-access variable got %.3f of %u points", share, all);
    ex_schedule_free(&plan);
    ex_sparse_run_free(&r);
    ex_sparse_model_free(&m);
    ex_trace_free(&t);
}

/* A work cursor two threads raced on, beside 200 per-thread slots on one shared page,
 * each written by its own thread at the same instruction (racy because their page was
 * shared): the slots weigh as one variable together, so most points go to the cursor
 * (drawn per slot, 200 to 6, the cursor got about 1 point in 35). */
static void test_one_instruction_slots_weigh_as_one(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    for (int i = 0; i < 20; i++) {
        acc(&t, 2 + (i & 1), EX_READ, 0xc000, 0x401500);
        acc(&t, 2 + (i & 1), EX_WRITE, 0xc000, 0x401508);
    }
    for (int i = 0; i < 200; i++)
        acc(&t, 4 + (uint32_t)i, EX_WRITE, 0xb000 + 8 * (uint64_t)i, 0x401600);
    struct ex_u64map shared;
    ex_u64map_init(&shared);
    assert_non_null(ex_u64map_put(&shared, 0xb000, 1, NULL));
    assert_non_null(ex_u64map_put(&shared, 0xc000, 1, NULL));
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    assert_int_equal(ex_sparse_learn(&m, &t, true, &shared), 0);
    assert_int_equal(ex_sparse_racy_vars(&m), 201);
    struct ex_sparse_run r;
    ex_sparse_run_init(&r);
    struct ex_schedule plan;
    ex_schedule_init(&plan);
    unsigned on_cursor = 0, on_slots = 0, any = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        assert_int_equal(ex_sparse_begin(&r, &m, 5, i, &plan), 0);
        for (uint32_t k = 0; k < plan.npreempt; k++) {
            if (plan.preempt[k].chain)
                continue; /* chained points: their own test */
            any += plan.preempt[k].thread == 0; /* whichever thread makes the count-th */
            on_cursor += plan.preempt[k].rip < 0x401600;
            on_slots += plan.preempt[k].rip >= 0x401600;
        }
    }
    double share = (double)on_cursor / (on_cursor + on_slots);
    if (share < 0.6 || on_slots == 0)
        fail_msg("the raced cursor got %.3f of the points (%u on slots)", share, on_slots);
    /* About a quarter of the points count every thread's executions. */
    if (any * 6 < on_cursor + on_slots || any * 3 > on_cursor + on_slots)
        fail_msg("%u of %u points on any thread", any, on_cursor + on_slots);
    ex_schedule_free(&plan);
    ex_sparse_run_free(&r);
    ex_sparse_model_free(&m);
    ex_u64map_free(&shared);
    ex_trace_free(&t);
}

/* A cut run's counts are lower bounds: a point may go past them (log-uniform up to the
 * cap), and a sparse run that ended tells the exact count. */
static void test_counts_bound_then_observed(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    for (int i = 0; i < 6; i++) {
        acc(&t, 2, EX_READ, 0xa000, 0x401300);
        acc(&t, 3, EX_WRITE, 0xa000, 0x401310);
    }
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    assert_int_equal(ex_sparse_learn(&m, &t, false, NULL), 0);
    struct ex_sparse_run r;
    ex_sparse_run_init(&r);
    struct ex_schedule plan;
    ex_schedule_init(&plan);
    uint32_t most = 0;
    for (uint64_t i = 0; i < 300; i++) {
        assert_int_equal(ex_sparse_begin(&r, &m, 3, i, &plan), 0);
        for (uint32_t k = 0; k < plan.npreempt; k++)
            if (plan.preempt[k].count > most)
                most = plan.preempt[k].count;
    }
    assert_true(most > 6 && most <= EX_SPARSE_MAX_COUNT);
    /* A run whose points did not fire: T2 ran 0x401300 40 times, T3 0x401310 0 times. */
    ex_schedule_reset(&plan);
    plan.sparse = true;
    for (;;) {
        assert_int_equal(ex_sparse_begin(&r, &m, 3, most++, &plan), 0);
        if (plan.npreempt == 1 && plan.preempt[0].thread == 2 &&
            plan.preempt[0].rip == 0x401300 && plan.preempt[0].count > 40)
            break;
    }
    uint32_t hits[EX_MAX_PREEMPTS] = {40};
    assert_int_equal(ex_sparse_observe(&m, &r, &plan, hits), 0);
    for (uint64_t i = 0; i < 300; i++) {
        assert_int_equal(ex_sparse_begin(&r, &m, 5, i, &plan), 0);
        for (uint32_t k = 0; k < plan.npreempt; k++)
            if (plan.preempt[k].thread == 2 && plan.preempt[k].rip == 0x401300)
                assert_true(plan.preempt[k].count <= 61); /* 40 observed: 1.5 x 40 + 1 */
    }
    ex_schedule_free(&plan);
    ex_sparse_run_free(&r);
    ex_sparse_model_free(&m);
    ex_trace_free(&t);
}

static void test_pct_over_decisions(void **state)
{
    (void)state;
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    struct ex_sparse_run r;
    ex_sparse_run_init(&r);
    struct ex_schedule plan, out;
    ex_schedule_init(&plan);
    ex_schedule_init(&out);
    assert_int_equal(ex_sparse_begin(&r, &m, 9, 0, &plan), 0);
    assert_int_equal(plan.npreempt, 0); /* nothing learnt: PCT over syscalls alone */
    struct ex_tidset en;
    ex_tidset_clear(&en);
    ex_tidset_add(&en, 2);
    ex_tidset_add(&en, 3);
    struct ex_trace t;
    ex_trace_init(&t);
    uint32_t first = ex_sparse_next(&r, &en, NULL, NULL);
    assert_true(first == 2 || first == 3);
    /* The same again while nothing happens to it (a futex wake is no drop). */
    struct ex_event *e = ex_trace_sync(&t, first, EX_FUTEX_WAKE, 0x10, 0);
    assert_int_equal(ex_sparse_next(&r, &en, NULL, e), first);
    /* Its point fires: the other runs, and keeps running after its own futex wake. */
    e = ex_trace_sync(&t, first, EX_SYNC_OTHER, 0x401000, 0);
    e->flags = EX_F_PREEMPT;
    uint32_t other = first == 2 ? 3 : 2;
    assert_int_equal(ex_sparse_next(&r, &en, NULL, e), other);
    /* A pick with no new cue point changes nothing. */
    assert_int_equal(ex_sparse_next(&r, &en, NULL, e), other);
    e = ex_trace_sync(&t, other, EX_FUTEX_WAKE, 0x10, 0);
    assert_int_equal(ex_sparse_next(&r, &en, NULL, e), other);
    /* The other yields: it goes below the first. */
    e = ex_trace_sync(&t, other, EX_SYNC_OTHER, 0, 0);
    assert_int_equal(ex_sparse_next(&r, &en, NULL, e), first);
    /* A spinner is avoided while another can run. */
    struct ex_tidset av;
    ex_tidset_clear(&av);
    ex_tidset_add(&av, first);
    assert_int_equal(ex_sparse_next(&r, &en, &av, e), other);
    ex_tidset_clear(&en);
    assert_int_equal(ex_sparse_next(&r, &en, NULL, e), 0);
    /* The choices and the plan make the bug's schedule. */
    assert_int_equal(ex_sparse_schedule(&r, &plan, &out), 0);
    assert_true(out.sparse);
    assert_int_equal(ex_schedule_length(&out), 7); /* every pick that chose someone */
    assert_int_equal(ex_schedule_thread_at(&out, 0), first);
    assert_int_equal(ex_schedule_thread_at(&out, 2), other);
    assert_int_equal(ex_schedule_thread_at(&out, 5), first);
    assert_int_equal(ex_schedule_thread_at(&out, 6), other);
    ex_trace_free(&t);
    ex_schedule_free(&out);
    ex_schedule_free(&plan);
    ex_sparse_run_free(&r);
    ex_sparse_model_free(&m);
}

/* Whatever a guest's trace holds, learning and planning give an answer. */
static void test_yields_always_hand_over(void **state)
{
    (void)state;
    /* A spin barrier of four workers: each waiter yields until the last one arrives.
     * However many yields a run makes (150 phases, pipelines: 10^3-10^5), the one that
     * yielded goes below every other, so the turn rotates and the last arriver comes.
     * Priorities that stopped dropping after a few hundred yields left a waiter the
     * turn for good. */
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    struct ex_sparse_run r;
    ex_sparse_run_init(&r);
    struct ex_schedule plan;
    ex_schedule_init(&plan);
    assert_int_equal(ex_sparse_begin(&r, &m, 3, 0, &plan), 0);
    struct ex_tidset en;
    ex_tidset_clear(&en);
    for (uint32_t k = 2; k <= 5; k++)
        ex_tidset_add(&en, k);
    struct ex_trace t;
    ex_trace_init(&t);
    uint32_t cur = ex_sparse_next(&r, &en, NULL, NULL);
    for (int i = 0; i < 20000; i++) {
        struct ex_event *e = ex_trace_sync(&t, cur, EX_SYNC_OTHER, 0, 0);
        assert_non_null(e);
        uint32_t next = ex_sparse_next(&r, &en, NULL, e);
        assert_int_not_equal(next, cur);
        /* FIFO: the next is the one that yielded longest ago (after the first round) */
        if (i >= 4) {
            assert_int_equal(next, t.ev[t.n - 4].tid);
        }
        cur = next;
    }
    ex_trace_free(&t);
    ex_schedule_free(&plan);
    ex_sparse_run_free(&r);
    ex_sparse_model_free(&m);
}

static void test_any_trace_is_safe(void **state)
{
    (void)state;
    struct ex_rng rng;
    ex_rng_seed(&rng, 42);
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    struct ex_sparse_run r;
    ex_sparse_run_init(&r);
    struct ex_schedule plan;
    ex_schedule_init(&plan);
    for (int k = 0; k < 20; k++) {
        struct ex_trace t;
        ex_trace_init(&t);
        fixture_random_events(&t, &rng, 500, 0x7000, 8, 6);
        ex_sparse_learn(&m, &t, k & 1, NULL);
        assert_int_equal(ex_sparse_begin(&r, &m, 1, (uint64_t)k, &plan), 0);
        for (uint32_t i = 0; i < plan.npreempt; i++)
            assert_true(plan.preempt[i].thread <= EX_MAX_TID && /* 0: any thread's */
                        plan.preempt[i].rip && plan.preempt[i].count >= 1);
        ex_trace_free(&t);
    }
    ex_schedule_free(&plan);
    ex_sparse_run_free(&r);
    ex_sparse_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_refusals),
        cmocka_unit_test(test_text_round_trip),
        cmocka_unit_test(test_learn_racy_variables),
        cmocka_unit_test(test_skip_code),
        cmocka_unit_test(test_hot_counter_bounded),
        cmocka_unit_test(test_one_instruction_slots_weigh_as_one),
        cmocka_unit_test(test_own_threads),
        cmocka_unit_test(test_counts_bound_then_observed),
        cmocka_unit_test(test_pct_over_decisions),
        cmocka_unit_test(test_yields_always_hand_over),
        cmocka_unit_test(test_any_trace_is_safe),
        cmocka_unit_test(test_chained_points),
        cmocka_unit_test(test_own_stack_not_guessed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
