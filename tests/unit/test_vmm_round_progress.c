/* Unit tests for vmm/rounds/round_progress.c: the counts of rounds with and without
 * simulations and why, the medians over the ring (and that it forgets old rounds), the
 * histogram, and the JSON object (parsed back, and refused when the buffer is short). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "rounds/round_progress.h"

static struct round_progress prog;

static void add(struct round_progress *p, uint64_t cues, unsigned sims, uint64_t sim_cues,
                enum round_nosim why, bool cut, bool stopped)
{
    struct round_progress_round r = {.rec_cues = cues, .sims = sims, .sim_cues = sim_cues,
                                     .why = why, .rec_cut = cut, .rec_stopped = stopped};
    round_progress_add(p, &r);
}

static void test_median(void **state)
{
    (void)state;
    const uint64_t v[] = {9, 1, 5, 7, 3};
    assert_int_equal(round_progress_median(v, 5), 5);
    assert_int_equal(round_progress_median(v, 4), 5); /* 1 5 7 9: the lower middle */
    assert_int_equal(round_progress_median(v, 1), 9);
    assert_int_equal(round_progress_median(v, 0), 0);
    assert_int_equal(v[0], 9); /* not sorted in place */
}

static void test_counts(void **state)
{
    (void)state;
    struct round_progress *p = &prog;
    memset(p, 0, sizeof *p);
    add(p, 300, 8, 150, ROUND_NOSIM_OTHER, true, false);
    add(p, 4, 0, 0, ROUND_NOSIM_NONE, true, true);
    add(p, 200, 6, 90, ROUND_NOSIM_OTHER, false, false);
    add(p, 0, 0, 0, ROUND_NOSIM_ENDED, false, false);
    add(p, 10, 0, 0, ROUND_NOSIM_UNUSABLE, false, false);
    assert_int_equal(p->rounds, 5);
    assert_int_equal(p->with_sims, 2);
    assert_int_equal(p->nosim[ROUND_NOSIM_NONE], 1);
    assert_int_equal(p->nosim[ROUND_NOSIM_ENDED], 1);
    assert_int_equal(p->nosim[ROUND_NOSIM_UNUSABLE], 1);
    assert_int_equal(p->nosim[ROUND_NOSIM_OTHER], 0); /* rounds with simulations have no why */
    assert_int_equal(p->rec_cut, 2);
    assert_int_equal(p->rec_stopped, 1);
    assert_int_equal(p->hist[0], 3);
    assert_int_equal(p->hist[8], 1);
    assert_int_equal(p->hist[6], 1);
    uint64_t cues, sims, sc;
    round_progress_medians(p, &cues, &sims, &sc);
    assert_int_equal(cues, 10);  /* 0 4 10 200 300 */
    assert_int_equal(sims, 0);   /* 0 0 0 6 8 */
    assert_int_equal(sc, 90);    /* only rounds that simulated: 90 150 */
    /* Sparse rounds that made no recording are not samples of the recordings' median. */
    for (int i = 0; i < 6; i++) {
        struct round_progress_round r = {.unrecorded = true, .sims = 8, .sim_cues = 3};
        round_progress_add(p, &r);
    }
    round_progress_medians(p, &cues, &sims, &sc);
    assert_int_equal(cues, 10);  /* still 0 4 10 200 300 */
    assert_int_equal(sims, 8);
    assert_int_equal(sc, 3);     /* 3 x 6, 90, 150 */
}

static void test_ring(void **state)
{
    (void)state;
    struct round_progress *p = &prog;
    memset(p, 0, sizeof *p);
    for (int i = 0; i < ROUND_PROGRESS_RING; i++)
        add(p, 4, 0, 0, ROUND_NOSIM_NONE, true, true);
    for (int i = 0; i < ROUND_PROGRESS_RING; i++)
        add(p, 500, 8, 200, ROUND_NOSIM_OTHER, true, false);
    uint64_t cues, sims, sc;
    round_progress_medians(p, &cues, &sims, &sc);
    assert_int_equal(cues, 500); /* the old rounds are out of the ring */
    assert_int_equal(sims, 8);
    assert_int_equal(sc, 200);
    assert_int_equal(p->rounds, 2 * ROUND_PROGRESS_RING); /* the counts keep everything */
    assert_int_equal(p->with_sims, ROUND_PROGRESS_RING);
    add(p, 1, 70, 3, ROUND_NOSIM_OTHER, false, false); /* past the histogram: last bucket */
    assert_int_equal(p->hist[ROUND_PROGRESS_HIST - 1], 1);
}

static void test_json(void **state)
{
    (void)state;
    struct round_progress *p = &prog;
    memset(p, 0, sizeof *p);
    add(p, 300, 8, 150, ROUND_NOSIM_OTHER, true, false);
    add(p, 4, 0, 0, ROUND_NOSIM_NONE, true, true);
    char buf[1024] = "{\"x\":1";
    size_t used = strlen(buf);
    assert_true(round_progress_json(p, buf, sizeof buf - 1, &used));
    buf[used++] = '}';
    buf[used] = 0;
    static struct json_obj o, q;
    char err[120];
    assert_int_equal(json_parse_object(buf, used, JSON_ALLOW_NESTED, &o, err, sizeof err), 0);
    const struct json_field *f = json_get(&o, "progress");
    assert_non_null(f);
    assert_int_equal(json_parse_object(f->raw, f->rawlen, JSON_ALLOW_NESTED, &q, err, sizeof err), 0);
    assert_non_null(strstr(buf, "\"rounds_with_sims\":1,\"rounds_without_sims\":1"));
    assert_non_null(strstr(buf, "\"nosim_none\":1"));
    assert_non_null(strstr(buf, "\"record_stopped\":1"));
    assert_non_null(strstr(buf, "\"sims_hist\":[1,0,0,0,0,0,0,0,1]"));
    /* Too short: refused, never cut mid-way. */
    for (size_t len = 0; len < 60; len += 7) {
        size_t u = 0;
        char small[64];
        assert_false(round_progress_json(p, small, len, &u));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median), cmocka_unit_test(test_counts),
        cmocka_unit_test(test_ring), cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests_name("vmm/round_progress", tests, NULL, NULL);
}
