/* Scoring: the outcome outranks suspicion, each suspicion component counts
 * what docs/explorer.md says with the documented weights, coverage makes
 * repeats less novel, and selection breaks ties at random but reproducibly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <string.h>

#define X 0x1000
#define P 0x8000    /* private */

static void analyze(const struct ex_trace *t, struct ex_analysis *a)
{
    char why[128] = "";
    int rc = ex_analyze(t, a, why, sizeof why);
    if (rc != EX_OK)
        fail_msg("ex_analyze: %d %s", rc, why);
}

/* Recording: T1 writes X (rip 0xA1), does three private things, T2 reads X
 * (rip 0xB1): a race, 4 cue points apart, so not adjacent. */
static void build_rec(struct ex_trace *t)
{
    ex_trace_init(t);
    ex_trace_access(t, 1, EX_WRITE, X, 8, 0, 0xA1);
    ex_trace_access(t, 1, EX_WRITE, P, 8, 0, 0xA2);
    ex_trace_access(t, 1, EX_WRITE, P, 8, 0, 0xA3);
    ex_trace_access(t, 1, EX_WRITE, P, 8, 0, 0xA4);
    ex_trace_access(t, 2, EX_READ, X, 8, 0, 0xB1);
}

static void score(const struct ex_baseline *b, const struct ex_trace *rec, const uint32_t *order,
                  size_t n, enum ex_outcome o, const struct ex_coverage *cov, struct ex_score *sc)
{
    struct ex_trace sim;
    assert_int_equal(ex_trace_reorder(rec, order, n, &sim), 0);
    assert_int_equal(ex_score_simulation(b, &sim, o, cov, sc), EX_OK);
    ex_trace_free(&sim);
}

static uint64_t weighted(const struct ex_score *s, const struct ex_weights *w)
{
    return (uint64_t)w->race_adjacent * s->races_adjacent + (uint64_t)w->avio * s->avio_new +
           (uint64_t)w->new_writer * s->new_writers + (uint64_t)w->novel_pair * s->novel_pairs;
}

static void test_components_and_weights(void **st)
{
    (void)st;
    struct ex_trace rec;
    struct ex_analysis a;
    struct ex_baseline b;
    struct ex_weights w;
    struct ex_score s0, s1, s2;
    build_rec(&rec);
    analyze(&rec, &a);
    ex_weights_default(&w);
    assert_int_equal(w.race_adjacent, 100);
    assert_int_equal(w.avio, 40);
    assert_int_equal(w.new_writer, 10);
    assert_int_equal(w.novel_pair, 5);
    assert_int_equal(w.adjacency_window, 2);
    assert_int_equal(w.cap, 64);
    assert_int_equal(ex_baseline_build(&b, &a, NULL), 0);

    /* The recording itself: nothing new. */
    uint32_t same[] = { 0, 1, 2, 3, 4 };
    score(&b, &rec, same, 5, EX_OUTCOME_NORMAL, NULL, &s0);
    assert_int_equal(s0.rank, 0);
    assert_false(s0.bug);

    /* The race made adjacent, same order: 100. */
    uint32_t adj[] = { 1, 2, 3, 0, 4 };
    score(&b, &rec, adj, 5, EX_OUTCOME_NORMAL, NULL, &s1);
    assert_int_equal(s1.races_adjacent, 1);
    assert_int_equal(s1.new_writers, 0);
    assert_int_equal(s1.novel_pairs, 0);
    assert_int_equal(s1.avio_new, 0);
    assert_int_equal(s1.suspicion, 100);

    /* Flipped: adjacent race + T2's read no longer sees T1's write (new
     * writer) + the pair (read B1, then write A1) never seen: 100+10+5. */
    uint32_t flip[] = { 4, 0, 1, 2, 3 };
    score(&b, &rec, flip, 5, EX_OUTCOME_NORMAL, NULL, &s2);
    assert_int_equal(s2.races_adjacent, 1);
    assert_int_equal(s2.new_writers, 1);
    assert_int_equal(s2.novel_pairs, 1);
    assert_int_equal(s2.suspicion, 115);
    assert_int_equal(s2.suspicion, weighted(&s2, &w));
    assert_true(ex_score_compare(&s2, &s1) > 0);

    /* Once a round has seen it, the pair is no longer novel. */
    struct ex_coverage cov;
    struct ex_trace sim;
    ex_coverage_init(&cov);
    assert_int_equal(ex_trace_reorder(&rec, flip, 5, &sim), 0);
    assert_int_equal(ex_coverage_add_trace(&cov, &rec), 1);
    assert_int_equal(ex_coverage_add_trace(&cov, &sim), 1);
    assert_int_equal(ex_coverage_add_trace(&cov, &sim), 0);
    assert_int_equal(ex_coverage_count(&cov), 2);
    score(&b, &rec, flip, 5, EX_OUTCOME_NORMAL, &cov, &s2);
    assert_int_equal(s2.novel_pairs, 0);
    assert_int_equal(s2.suspicion, 110);
    ex_trace_free(&sim);
    ex_coverage_free(&cov);
    ex_baseline_free(&b);

    /* Custom weights are honoured. */
    struct ex_weights only_novel = { 0, 0, 0, 7, 2, 64 };
    assert_int_equal(ex_baseline_build(&b, &a, &only_novel), 0);
    score(&b, &rec, flip, 5, EX_OUTCOME_NORMAL, NULL, &s2);
    assert_int_equal(s2.suspicion, 7);
    ex_baseline_free(&b);
    ex_analysis_free(&a);
    ex_trace_free(&rec);
}

static void test_outcome_outranks_everything(void **st)
{
    (void)st;
    struct ex_trace rec;
    struct ex_analysis a;
    struct ex_baseline b;
    struct ex_score quiet_bug[3], loud, timeout;
    build_rec(&rec);
    analyze(&rec, &a);
    assert_int_equal(ex_baseline_build(&b, &a, NULL), 0);
    uint32_t same[] = { 0, 1, 2, 3, 4 }, flip[] = { 4, 0, 1, 2, 3 };
    enum ex_outcome bugs[3] = { EX_OUTCOME_CRASH, EX_OUTCOME_ASSERT, EX_OUTCOME_DEADLOCK };
    score(&b, &rec, flip, 5, EX_OUTCOME_NORMAL, NULL, &loud);
    score(&b, &rec, flip, 5, EX_OUTCOME_TIMEOUT, NULL, &timeout);
    assert_int_equal(ex_score_compare(&loud, &timeout), 0); /* timeout = normal */
    for (int i = 0; i < 3; i++) {
        score(&b, &rec, same, 5, bugs[i], NULL, &quiet_bug[i]);
        assert_true(quiet_bug[i].bug);
        assert_int_equal(quiet_bug[i].suspicion, 0);
        assert_true(ex_score_compare(&quiet_bug[i], &loud) > 0);
        assert_true(ex_outcome_is_bug(bugs[i]));
    }
    assert_false(ex_outcome_is_bug(EX_OUTCOME_TIMEOUT));
    assert_string_equal(ex_outcome_name(EX_OUTCOME_ASSERT), "assert");
    /* Among bugs, suspicion still orders. */
    struct ex_score loud_bug;
    score(&b, &rec, flip, 5, EX_OUTCOME_DEADLOCK, NULL, &loud_bug);
    assert_true(ex_score_compare(&loud_bug, &quiet_bug[0]) > 0);
    struct ex_score all[4] = { loud, quiet_bug[1], timeout, loud_bug };
    struct ex_rng r;
    ex_rng_seed(&r, 1);
    assert_int_equal(ex_select_best(all, 4, &r), 3);
    ex_baseline_free(&b);
    ex_analysis_free(&a);
    ex_trace_free(&rec);
}

static void test_avio_and_cap(void **st)
{
    (void)st;
    struct ex_trace rec;
    struct ex_analysis a;
    struct ex_baseline b;
    struct ex_score s;
    /* T1 reads X twice, then T2 writes it: serializable as recorded. */
    ex_trace_init(&rec);
    ex_trace_access(&rec, 1, EX_READ, X, 8, 0, 0x11);
    ex_trace_access(&rec, 1, EX_READ, X, 8, 0, 0x12);
    ex_trace_access(&rec, 2, EX_WRITE, X, 8, 0, 0x21);
    analyze(&rec, &a);
    assert_int_equal(a.navio, 0);
    assert_int_equal(ex_baseline_build(&b, &a, NULL), 0);
    uint32_t rwr[] = { 0, 2, 1 };
    score(&b, &rec, rwr, 3, EX_OUTCOME_NORMAL, NULL, &s);
    assert_int_equal(s.avio_new, 1);
    struct ex_weights w;
    ex_weights_default(&w);
    assert_int_equal(s.suspicion, weighted(&s, &w));
    assert_true(s.suspicion >= 40);
    ex_baseline_free(&b);
    ex_analysis_free(&a);
    ex_trace_free(&rec);

    /* 100 distinct novel pairs are capped at 64. */
    ex_trace_init(&rec);
    for (uint64_t i = 0; i < 100; i++) {
        ex_trace_access(&rec, 1, EX_WRITE, X + 8 * i, 8, 0, 0x1000 + i);
        ex_trace_access(&rec, 2, EX_WRITE, X + 8 * i, 8, 0, 0x2000 + i);
    }
    analyze(&rec, &a);
    struct ex_weights nov = { 0, 0, 0, 5, 2, 64 };
    assert_int_equal(ex_baseline_build(&b, &a, &nov), 0);
    uint32_t order[200];
    for (uint32_t i = 0; i < 100; i++)
        order[2 * i] = 2 * i + 1, order[2 * i + 1] = 2 * i;
    score(&b, &rec, order, 200, EX_OUTCOME_NORMAL, NULL, &s);
    assert_int_equal(s.novel_pairs, 100);
    assert_int_equal(s.suspicion, 64 * 5);
    ex_baseline_free(&b);
    ex_analysis_free(&a);
    ex_trace_free(&rec);
}

static void test_selection_ties(void **st)
{
    (void)st;
    struct ex_score s[5];
    uint64_t ranks[5] = { 5, 9, 9, 3, 9 };
    memset(s, 0, sizeof s);
    for (int i = 0; i < 5; i++)
        s[i].rank = ranks[i];
    int hits[5] = { 0 };
    for (uint64_t seed = 0; seed < 600; seed++) {
        struct ex_rng r1, r2;
        ex_rng_seed(&r1, seed);
        ex_rng_seed(&r2, seed);
        size_t k = ex_select_best(s, 5, &r1);
        assert_int_equal(k, ex_select_best(s, 5, &r2)); /* reproducible */
        hits[k]++;
    }
    assert_int_equal(hits[0] + hits[3], 0);
    for (int i = 1; i < 5; i += (i == 2 ? 2 : 1)) {
        assert_true(hits[i] > 150); /* ~200 each */
        assert_true(hits[i] < 250);
    }
    struct ex_rng r;
    ex_rng_seed(&r, 1);
    assert_int_equal(ex_select_best(s, 1, &r), 0);
}

static void test_invalid_sim_rejected(void **st)
{
    (void)st;
    struct ex_trace rec, sim;
    struct ex_analysis a;
    struct ex_baseline b;
    struct ex_score s;
    build_rec(&rec);
    analyze(&rec, &a);
    assert_int_equal(ex_baseline_build(&b, &a, NULL), 0);
    assert_int_equal(ex_trace_copy(&sim, &rec), 0);
    sim.ev[2].tid = 0;
    assert_int_equal(ex_score_simulation(&b, &sim, EX_OUTCOME_NORMAL, NULL, &s), EX_ERR_INVALID);
    ex_trace_free(&sim);
    ex_baseline_free(&b);
    ex_analysis_free(&a);
    ex_trace_free(&rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_components_and_weights),
        cmocka_unit_test(test_outcome_outranks_everything),
        cmocka_unit_test(test_avio_and_cap),
        cmocka_unit_test(test_selection_ties),
        cmocka_unit_test(test_invalid_sim_rejected),
    };
    return cmocka_run_group_tests_name("explorer: scoring", tests, NULL, NULL);
}
