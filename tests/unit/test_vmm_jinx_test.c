/* Unit tests for jinx test's reading of jinx-vmm's exploration summary
 * (vmm/cli/jinx_test_read.c) and its reports (vmm/cli/jinx_test_report.c), against the
 * summary as jinx-vmm writes it (vmm/rounds/explore_json.c).
 *
 * The case behind them: a timed run of seqlock-plain met its assertion, the live replay
 * of that run was stopped at its time bound, the program then ended well, and jinx test
 * said "nothing found". A bug met in exploration that no live run met again is still the
 * program's bug (when its replay was stopped, or a timed run's decisions were not found
 * again): it becomes the verdict when no run leaves a dump. A replay that differed on a
 * sparse or traced schedule is jinx's own mismatch: named, never a verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/jinx_test.h"
#include "lib/json.h"
#include "rounds/explore.h"

/* A run's log holding one exploration summary: what jinx-vmm writes for st. */
static void write_log(char *path, size_t cap, const struct explore_stats *st)
{
    char js[4096];
    assert_int_equal(explore_stats_json(st, js, sizeof js), 0);
    snprintf(path, cap, "/tmp/jinx-test-unit.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f, "some guest output\njinx-vmm: explore: %s\n", js);
    fclose(f);
}

/* A summary whose bug run (schedule bug_at of schedules) met outcome and was replayed
 * as `replay` says. */
static struct explore_stats stats(uint64_t schedules, uint64_t bug_at, const char *strategy,
                                  enum ex_outcome outcome, const char *replay)
{
    struct explore_stats st;
    memset(&st, 0, sizeof st);
    st.snapshot_taken = true;
    st.schedules = schedules;
    st.bug_at = bug_at;
    st.ns_explore = 2000000000ULL;
    st.reproduced = !strcmp(replay, "same");
    st.bug_outcome = (uint8_t)outcome;
    snprintf(st.strategy, sizeof st.strategy, "%s", strategy);
    snprintf(st.note, sizeof st.note, "x");
    snprintf(st.replay, sizeof st.replay, "%s", replay);
    return st;
}

/* Reads the log of a run with that seed and live status, as judge_run does: found runs
 * in full, the others for their summary only. */
static void read_run(struct result *r, const struct explore_stats *st, uint64_t seed,
                     bool found)
{
    char path[64];
    write_log(path, sizeof path, st);
    r->runs++;
    r->seed = seed;
    jt_read_log(path, r, !found);
    unlink(path);
}

static char *text_of(const struct result *r, bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    if (json)
        jt_report_json("images/bin/x", r, m);
    else
        jt_report_text("images/bin/x", r, m);
    fclose(m);
    return buf;
}

static void test_summary_carries_outcome_and_replay(void **s)
{
    (void)s;
    char js[4096];
    struct explore_stats st = stats(40, 17, "timed", EX_OUTCOME_ASSERT, "stopped");
    assert_int_equal(explore_stats_json(&st, js, sizeof js), 0);
    struct json_obj o;
    char err[128];
    assert_int_equal(json_parse_object(js, strlen(js), 0, &o, err, sizeof err), 0);
    const char *v = NULL;
    assert_int_equal(json_get_str(&o, "bug_outcome", &v), 1);
    assert_string_equal(v, "assert");
    assert_int_equal(json_get_str(&o, "replay", &v), 1);
    assert_string_equal(v, "stopped");
    /* No bug run: both empty. */
    st = stats(40, 0, "", EX_OUTCOME_NORMAL, "");
    assert_int_equal(explore_stats_json(&st, js, sizeof js), 0);
    assert_int_equal(json_parse_object(js, strlen(js), 0, &o, err, sizeof err), 0);
    assert_int_equal(json_get_str(&o, "bug_outcome", &v), 1);
    assert_string_equal(v, "");
}

/* seqlock-plain's case: run 1 met an abort in a timed run whose replay stopped; runs 2
 * and 3 found nothing. The verdict is that bug, without a dump. */
static void test_stopped_timed_find_is_the_verdict(void **s)
{
    (void)s;
    static struct result r;
    memset(&r, 0, sizeof r);
    struct explore_stats a = stats(30, 12, "timed", EX_OUTCOME_ASSERT, "stopped");
    read_run(&r, &a, 1, false);
    assert_true(r.unreplayed.met);
    assert_int_equal(r.unreplayed.seed, 1);
    assert_int_equal(r.unreplayed.schedule, 12);
    assert_false(r.whole_run); /* a run that found nothing names no bug run */
    struct explore_stats b = stats(25, 0, "", EX_OUTCOME_NORMAL, "");
    read_run(&r, &b, 2, false);
    read_run(&r, &b, 3, false);
    assert_int_equal(r.schedules, 80);
    assert_true(jt_adopt_unreplayed(&r));
    assert_true(r.found);
    assert_int_equal(r.seed, 1);
    assert_int_equal(r.schedules_to_bug, 12);
    assert_string_equal(r.strategy, "timed");
    assert_string_equal(r.outcome, "abort or failure exit");
    assert_false(r.replayable);
    assert_int_equal(r.dump[0], '\0');
    assert_false(jt_adopt_unreplayed(&r)); /* once */

    char *t = text_of(&r, false);
    assert_non_null(strstr(t, "BUG FOUND"));
    assert_non_null(strstr(t, "in exploration only: its live replay was stopped"));
    assert_non_null(strstr(t, "dump:      none: no run met the bug live"));
    free(t);
    t = text_of(&r, true);
    /* The whole report is valid JSON (json_find validates all of it). */
    const char *raw;
    size_t rl;
    char err[128];
    assert_int_equal(json_find(t, strlen(t) - 1, "found", &raw, &rl, err, sizeof err), 1);
    assert_int_equal(strncmp(raw, "true", rl), 0);
    assert_int_equal(json_find(t, strlen(t) - 1, "exploration_only", &raw, &rl, err,
                               sizeof err), 1);
    assert_int_equal(raw[0], '{');
    assert_non_null(strstr(t, "\"exploration_only\":{\"seed\":1,\"schedule\":12,"
                              "\"class\":\"assert\",\"replay\":\"stopped\"}"));
    assert_non_null(strstr(t, "\"dump\":null"));
    free(t);
}

/* A timed run whose decisions were not found again live ("differs") is the program's too;
 * the first such run is the one kept. */
static void test_timed_differs_first_kept(void **s)
{
    (void)s;
    static struct result r;
    memset(&r, 0, sizeof r);
    struct explore_stats a = stats(10, 4, "timed", EX_OUTCOME_CRASH, "differs");
    read_run(&r, &a, 5, false);
    struct explore_stats b = stats(10, 7, "timed", EX_OUTCOME_DEADLOCK, "stopped");
    read_run(&r, &b, 6, false);
    assert_true(jt_adopt_unreplayed(&r));
    assert_int_equal(r.seed, 5);
    assert_int_equal(r.schedules_to_bug, 4);
    assert_string_equal(r.outcome, "fatal signal");
    char *t = text_of(&r, false);
    assert_non_null(strstr(t, "its time-slice decisions were not found again live"));
    free(t);
}

/* What is not the program's bug, or not known to be, is never adopted. */
static void test_not_adopted(void **s)
{
    (void)s;
    static struct result r;
    /* A sparse schedule whose replay differed: jinx's mismatch, named in the report. */
    memset(&r, 0, sizeof r);
    struct explore_stats a = stats(10, 3, "sparse", EX_OUTCOME_ASSERT, "differs");
    read_run(&r, &a, 1, false);
    assert_false(r.unreplayed.met);
    assert_int_equal(r.jinx_mismatches, 1);
    assert_false(jt_adopt_unreplayed(&r));
    char *t = text_of(&r, false);
    assert_non_null(strstr(t, "nothing found"));
    assert_non_null(strstr(t, "a bug in jinx, not a verdict on the program"));
    free(t);
    t = text_of(&r, true);
    assert_non_null(strstr(t, "\"jinx_mismatches\":1"));
    free(t);

    /* A run that met a jinx limit. */
    memset(&r, 0, sizeof r);
    a = stats(10, 3, "timed", EX_OUTCOME_ASSERT, "stopped");
    a.limited = true;
    read_run(&r, &a, 1, false);
    assert_false(r.unreplayed.met);

    /* A summary from a jinx-vmm that does not say how the replay went. */
    memset(&r, 0, sizeof r);
    a = stats(10, 3, "timed", EX_OUTCOME_ASSERT, "");
    read_run(&r, &a, 1, false);
    assert_false(r.unreplayed.met);

    /* Reproduced: the run itself ended in the bug (a found run, read in full). */
    memset(&r, 0, sizeof r);
    a = stats(10, 3, "pct", EX_OUTCOME_ASSERT, "same");
    read_run(&r, &a, 1, false);
    assert_false(r.unreplayed.met);

    /* A verdict already: a bug with a dump, or could not test. */
    memset(&r, 0, sizeof r);
    a = stats(10, 3, "timed", EX_OUTCOME_ASSERT, "stopped");
    read_run(&r, &a, 1, false);
    r.could_not_test = true;
    assert_false(jt_adopt_unreplayed(&r));
    assert_false(r.found);
}

/* A bug met in exploration only, then a run that found a bug for real: the report's
 * strategy and schedule are the found run's (they used to be the first run's). */
static void test_found_run_names_its_own_bug_run(void **s)
{
    (void)s;
    static struct result r;
    memset(&r, 0, sizeof r);
    struct explore_stats a = stats(30, 12, "timed", EX_OUTCOME_ASSERT, "stopped");
    read_run(&r, &a, 1, false);
    struct explore_stats b = stats(9, 9, "pct", EX_OUTCOME_ASSERT, "same");
    r.found = true;
    read_run(&r, &b, 2, true);
    assert_true(r.whole_run);
    assert_true(r.reproduced);
    assert_string_equal(r.strategy, "pct");
    assert_int_equal(r.schedules_to_bug, 39);
    assert_false(jt_adopt_unreplayed(&r));
    char *t = text_of(&r, false);
    assert_null(strstr(t, "exploration only"));
    free(t);
}

/* The program's output shares the log: a summary line it prints before jinx-vmm's own
 * (the last one) does not count, nor does the tail of an overlong line. */
static void test_only_the_last_summary_counts(void **s)
{
    (void)s;
    char js[4096], path[64];
    struct explore_stats forged = stats(99, 5, "timed", EX_OUTCOME_ASSERT, "stopped");
    assert_int_equal(explore_stats_json(&forged, js, sizeof js), 0);
    struct explore_stats real = stats(7, 0, "", EX_OUTCOME_NORMAL, "");
    write_log(path, sizeof path, &real);
    /* Rewrite the log: the program's lines first, then jinx-vmm's summary. */
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    char tail[4096];
    size_t n = fread(tail, 1, sizeof tail - 1, f);
    tail[n] = '\0';
    rewind(f);
    fprintf(f, "jinx-vmm: explore: %s\n", js);
    for (int i = 0; i < 3000; i++) /* 12 KB on one line, the summary at its end */
        fputs("abcd", f);
    fprintf(f, "jinx-vmm: explore: %s\n%s", js, tail);
    fclose(f);
    static struct result r;
    memset(&r, 0, sizeof r);
    r.seed = 1;
    jt_read_log(path, &r, true);
    unlink(path);
    assert_int_equal(r.schedules, 7);
    assert_false(r.unreplayed.met);
}

/* Stress runs (the program free from the snapshot) are counted and shown beside the
 * controlled runs: how much of the budget ran as native stress would. */
static void test_stress_runs_counted(void **s)
{
    (void)s;
    static struct result r;
    memset(&r, 0, sizeof r);
    struct explore_stats a = stats(20, 0, "", EX_OUTCOME_NORMAL, "");
    a.stress = 3;
    a.stress_ns = 1500000000ULL;
    read_run(&r, &a, 1, false);
    a.stress = 1;
    a.stress_ns = 500000000ULL;
    read_run(&r, &a, 2, false);
    assert_int_equal(r.stress, 4);
    assert_true(r.stress_seconds > 1.99 && r.stress_seconds < 2.01);
    char *t = text_of(&r, false);
    assert_non_null(strstr(t, "4 stress runs, free from the snapshot, 500 ms each"));
    free(t);
    t = text_of(&r, true);
    assert_non_null(strstr(t, "\"stress_runs\":4,\"stress_seconds\":2.000"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_carries_outcome_and_replay),
        cmocka_unit_test(test_stopped_timed_find_is_the_verdict),
        cmocka_unit_test(test_timed_differs_first_kept),
        cmocka_unit_test(test_not_adopted),
        cmocka_unit_test(test_found_run_names_its_own_bug_run),
        cmocka_unit_test(test_only_the_last_summary_counts),
        cmocka_unit_test(test_stress_runs_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
