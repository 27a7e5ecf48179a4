/* Unit tests for `jinx campaign`'s pure parts: tasks.tsv (vmm/campaign_tasks.c), the
 * results files (campaign_result.c), de-duplication by signature and the choice of the
 * smallest reproducer (campaign_merge.c), the report's determinism (campaign_report.c)
 * and the racing pair of a trace (race_pair.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "dump/race_pair.h"
#include "explorer/explorer.h"

#define HASH "1012427bdbe802b388bbc7041e322d3265eac664b68896de79cfa39e40d06eba"

static struct camp_task task_of(uint32_t index, const char *image, uint64_t a, uint64_t b)
{
    struct camp_task t;
    memset(&t, 0, sizeof t);
    t.index = index;
    snprintf(t.image, sizeof t.image, "%s", image);
    snprintf(t.sha256, sizeof t.sha256, "%s", HASH);
    t.first_seed = a;
    t.last_seed = b;
    snprintf(t.budget, sizeof t.budget, "60s");
    snprintf(t.strategy, sizeof t.strategy, "portfolio");
    return t;
}

static void test_task_roundtrip(void **state)
{
    (void)state;
    static struct camp_task t, u;
    t = task_of(7, "/imgs/my prog", 11, 20);
    const char *args[] = {"plain", "two words", "tab\there", "back\\slash", "-", "-x",
                          "nl\nx", "a\\sb"};
    t.nargs = 8;
    for (int i = 0; i < t.nargs; i++)
        snprintf(t.args[i], sizeof t.args[i], "%s", args[i]);
    char line[CAMP_MAX_LINE], err[300];
    assert_int_equal(campaign_task_format(&t, line, sizeof line), 0);
    assert_null(strchr(line, '\n'));
    assert_int_equal(campaign_task_parse(line, &u, err, sizeof err), 0);
    assert_int_equal(u.index, 7);
    assert_string_equal(u.image, "/imgs/my prog");
    assert_string_equal(u.sha256, HASH);
    assert_int_equal(u.first_seed, 11);
    assert_int_equal(u.last_seed, 20);
    assert_string_equal(u.budget, "60s");
    assert_string_equal(u.strategy, "portfolio");
    assert_int_equal(u.nargs, 8);
    for (int i = 0; i < 8; i++)
        assert_string_equal(u.args[i], args[i]);
    /* No arguments: "-". */
    t.nargs = 0;
    assert_int_equal(campaign_task_format(&t, line, sizeof line), 0);
    assert_non_null(strstr(line, "\tportfolio\t-"));
    assert_int_equal(campaign_task_parse(line, &u, err, sizeof err), 0);
    assert_int_equal(u.nargs, 0);
    /* A tab in the image path cannot be written. */
    snprintf(t.image, sizeof t.image, "a\tb");
    assert_int_equal(campaign_task_format(&t, line, sizeof line), -1);
}

static void bad_line(const char *line, const char *want)
{
    static struct camp_task t;
    char err[300] = "";
    assert_int_equal(campaign_task_parse(line, &t, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("'%s': error '%s' lacks '%s'", line, err, want);
}

static void test_task_parse_errors(void **state)
{
    (void)state;
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tportfolio", "6 tab-separated fields");
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tportfolio\t-\textra", "more than 7");
    bad_line("x\t/x\t" HASH "\t1-1\t60s\tportfolio\t-", "INDEX");
    bad_line("0\t\t" HASH "\t1-1\t60s\tportfolio\t-", "IMAGE");
    bad_line("0\t/x\tABC\t1-1\t60s\tportfolio\t-", "SHA256");
    bad_line("0\t/x\t" HASH "\t2-1\t60s\tportfolio\t-", "SEEDS");
    bad_line("0\t/x\t" HASH "\t0-1\t60s\tportfolio\t-", "SEEDS");
    bad_line("0\t/x\t" HASH "\t1-x\t60s\tportfolio\t-", "SEEDS");
    bad_line("0\t/x\t" HASH "\t0x1-2\t60s\tportfolio\t-", "SEEDS");
    bad_line("0\t/x\t" HASH "\t1-1\tsoon\tportfolio\t-", "BUDGET");
    bad_line("0\t/x\t" HASH "\t1-1\t0s\tportfolio\t-", "BUDGET");
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tPCT;rm\t-", "STRATEGY");
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tportfolio\t", "empty argument");
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tportfolio\ta  b", "empty argument");
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tportfolio\ta ", "empty argument");
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tportfolio\ta\\q", "unknown escape");
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tportfolio\ta\\", "unknown escape");
    bad_line("0\t/x\t" HASH "\t1-1\t60s\tportfolio\t\\-x", "whole argument");
}

static void test_tasks_file(void **state)
{
    (void)state;
    struct camp_tasks ts;
    char err[400];
    const char *good = "# a comment\n\n0\t/a\t" HASH "\t1-5\t10s\tpct\t-\r\n"
                       "# another\n1\t/b\t" HASH "\t6-10\t10s\tpct\tx y";
    assert_int_equal(campaign_tasks_parse(good, strlen(good), &ts, err, sizeof err), 0);
    assert_int_equal(ts.n, 2);
    assert_string_equal(ts.t[0].image, "/a");
    assert_string_equal(ts.t[1].args[1], "y");
    campaign_tasks_free(&ts);
    /* Indexes out of order, a bad line (named by number), nothing at all, a NUL. */
    const char *skip = "0\t/a\t" HASH "\t1-5\t10s\tpct\t-\n2\t/b\t" HASH "\t1-5\t10s\tpct\t-\n";
    assert_int_equal(campaign_tasks_parse(skip, strlen(skip), &ts, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 2: INDEX 2, expected 1"));
    const char *bad = "# x\n0\t/a\t" HASH "\t1-5\t10s\tpct\n";
    assert_int_equal(campaign_tasks_parse(bad, strlen(bad), &ts, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 2:"));
    assert_int_equal(campaign_tasks_parse("# only\n", 7, &ts, err, sizeof err), -1);
    assert_non_null(strstr(err, "no tasks"));
    assert_int_equal(campaign_tasks_parse("0\0", 2, &ts, err, sizeof err), -1);
    assert_null(ts.t);
}

static struct camp_result found(uint32_t task, const char *image, const char *fn,
                                const char *ra, const char *rb, uint64_t cues, bool replayable)
{
    struct camp_result r;
    memset(&r, 0, sizeof r);
    r.task = task;
    snprintf(r.image, sizeof r.image, "%s", image);
    snprintf(r.sha256, sizeof r.sha256, "%s", HASH);
    r.first_seed = r.last_seed = r.seed = task + 1;
    r.runs = 1;
    r.seconds = 1.5;
    r.status = CAMP_FOUND;
    snprintf(r.outcome, sizeof r.outcome, "SIGABRT");
    snprintf(r.function, sizeof r.function, "%s", fn);
    if (ra) {
        r.has_race = true;
        snprintf(r.race[0], RACE_SIDE_LEN, "%s", ra);
        snprintf(r.race[1], RACE_SIDE_LEN, "%s", rb);
    }
    r.cues = cues;
    r.replayable = replayable;
    snprintf(r.dump, sizeof r.dump, "dumps/%u/bug.jinxdump", task);
    return r;
}

static void roundtrip(const struct camp_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(campaign_result_write(f, r), 0);
    fclose(f);
    static struct camp_result u;
    char err[300];
    if (campaign_result_parse(buf, len, &u, err, sizeof err) < 0)
        fail_msg("%s: %s", buf, err);
    char *again = NULL;
    size_t alen = 0;
    f = open_memstream(&again, &alen);
    campaign_result_write(f, &u);
    fclose(f);
    assert_string_equal(buf, again); /* write(parse(write(r))) == write(r) */
    assert_int_equal(u.task, r->task);
    assert_int_equal(u.status, r->status);
    if (r->status == CAMP_FOUND)
        assert_int_equal(u.cues, r->cues);
    assert_int_equal(u.has_race, r->has_race);
    free(buf);
    free(again);
}

static void test_result_roundtrip(void **state)
{
    (void)state;
    struct camp_result r = found(3, "/i/circle", "raise+0x40", "a+0x1 W", "b+0x2 R", 312, true);
    roundtrip(&r);
    r.has_race = false;
    r.dump[0] = '\0';
    roundtrip(&r);
    r.status = CAMP_NONE;
    roundtrip(&r);
    r.status = CAMP_NOTEST;
    snprintf(r.reason, sizeof r.reason, "threads: more than 254 \"at once\", --vcpus");
    roundtrip(&r);
}

static void bad_result(const char *text, const char *want)
{
    static struct camp_result r;
    char err[300] = "";
    assert_int_equal(campaign_result_parse(text, strlen(text), &r, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("'%s': error '%s' lacks '%s'", text, err, want);
}

#define HEAD "{\"version\":1,\"task\":2,\"image\":\"/i\",\"sha256\":\"" HASH "\",\"seeds\":\"1-1\","
#define FOUND HEAD "\"status\":\"found\",\"runs\":1,\"seed\":1,\"seconds\":1,\"outcome\":\"SIGSEGV\"," \
              "\"function\":\"f\",\"race\":null,\"cues\":3,\"replayable\":true,"

static void test_result_errors(void **state)
{
    (void)state;
    bad_result("", "not a JSON object");
    bad_result("[1]", "not a JSON object");
    bad_result("{\"version\":2}", "this jinx reads 1");
    bad_result(HEAD "\"status\":\"maybe\",\"runs\":1,\"seed\":1,\"seconds\":1}", "none of");
    bad_result(HEAD "\"status\":\"nothing\",\"runs\":-1,\"seed\":1,\"seconds\":1}", "\"runs\"");
    bad_result(HEAD "\"status\":\"nothing\",\"runs\":1,\"seed\":1}", "\"seconds\"");
    bad_result(HEAD "\"status\":\"could_not_test\",\"runs\":1,\"seed\":1,\"seconds\":1}",
               "\"reason\": missing");
    bad_result(FOUND "\"dump\":\"../../etc/passwd\"}", "not dumps/2/bug.jinxdump");
    bad_result(FOUND "\"dump\":\"dumps/3/bug.jinxdump\"}", "not dumps/2/bug.jinxdump");
    bad_result(FOUND "\"dump\":\"dumps/2/\\u001b[31m\"}", "printable ASCII");
    bad_result(FOUND "\"dump\":\"dumps/2/bug.jinxdump....................................................\"}", "longer than");
    bad_result(FOUND "\"dump\":7}", "not a string");
    bad_result(FOUND "\"dump\":null,\"race\":1}", "duplicate"); /* the JSON lexer's word */
    static char big[CAMP_MAX_RESULT + 100];
    memset(big, ' ', sizeof big - 1);
    big[0] = '{';
    big[sizeof big - 2] = '}';
    bad_result(big, "larger than");
    /* A race that is not two strings. */
    const char *one = HEAD "\"status\":\"found\",\"runs\":1,\"seed\":1,\"seconds\":1,"
                      "\"outcome\":\"SIGSEGV\",\"function\":\"f\",\"race\":[\"a\"],\"cues\":3,"
                      "\"replayable\":true,\"dump\":null}";
    bad_result(one, "\"race\"");
}

static void test_signature(void **state)
{
    (void)state;
    struct camp_result a = found(0, "/x/circle", "raise+0x40", "f+0x1 W", "g+0x2 R", 9, true);
    struct camp_result b = found(1, "/y/circle", "raise+0x52", "f+0x1 W", "g+0x2 R", 9, true);
    char sa[1024], sb[1024];
    campaign_signature(&a, sa, sizeof sa);
    campaign_signature(&b, sb, sizeof sb);
    assert_string_equal(sa, "circle: SIGABRT in raise, race f W / g R");
    assert_string_equal(sa, sb); /* the crash function's offset and the directory drop out */
    snprintf(b.race[1], RACE_SIDE_LEN, "g+0x6 R"); /* another instruction of g */
    campaign_signature(&b, sb, sizeof sb);
    assert_string_equal(sa, sb);
    snprintf(b.race[1], RACE_SIDE_LEN, "g+0x6 W"); /* another kind of access */
    campaign_signature(&b, sb, sizeof sb);
    assert_string_not_equal(sa, sb);
    snprintf(b.race[0], RACE_SIDE_LEN, "0x401000 W"); /* no symbol: the rip stays */
    snprintf(b.race[1], RACE_SIDE_LEN, "a+0x1 R");
    campaign_signature(&b, sb, sizeof sb);
    assert_string_equal(sb, "circle: SIGABRT in raise, race 0x401000 W / a R");
    b.has_race = false;
    b.function[0] = '\0';
    snprintf(b.outcome, sizeof b.outcome, "deadlock");
    campaign_signature(&b, sb, sizeof sb);
    assert_string_equal(sb, "circle: deadlock in -, no race");
}

static struct camp_result R[6];

static void make_results(void)
{
    R[0] = found(0, "/i/circle", "raise+0x40", "f+0x1 W", "g+0x2 R", 500, true);
    R[1] = found(1, "/i/circle", "raise+0x40", "f+0x1 W", "g+0x2 R", 120, true);
    R[2] = found(2, "/i/circle", "raise+0x40", "f+0x1 W", "g+0x2 R", 0, false);
    R[3] = found(3, "/i/abba", "", NULL, NULL, 40, true);
    R[4] = found(4, "/i/circle", "raise+0x40", "f+0x1 W", "g+0x2 R", 120, true);
    R[5] = R[0];
    R[5].task = 5;
    R[5].status = CAMP_NONE;
}

static void test_merge_dedup_and_smallest(void **state)
{
    (void)state;
    make_results();
    const struct camp_result *in[6] = {&R[4], &R[2], &R[0], &R[5], &R[3], &R[1]};
    struct camp_merge m;
    assert_int_equal(campaign_merge_bugs(in, 6, &m), 0);
    assert_int_equal(m.nbugs, 2);
    /* Sorted by signature: abba before circle. */
    assert_string_equal(m.bugs[0].signature, "abba: SIGABRT in -, no race");
    assert_int_equal(m.bugs[0].hits, 1);
    assert_ptr_equal(m.bugs[0].best, &R[3]);
    assert_int_equal(m.bugs[1].hits, 4);
    assert_int_equal(m.bugs[1].ntasks, 4);
    uint32_t want[] = {0, 1, 2, 4};
    for (int i = 0; i < 4; i++)
        assert_int_equal(m.bugs[1].tasks[i], want[i]);
    /* Fewest cue points among the replayable ones (task 2 has 0 but cannot replay); the
     * tie between tasks 1 and 4 goes to the lower index, whatever the reading order. */
    assert_ptr_equal(m.bugs[1].best, &R[1]);
    campaign_merge_free(&m);
    assert_true(campaign_better_reproducer(&R[1], &R[0]));
    assert_false(campaign_better_reproducer(&R[2], &R[0]));
    assert_true(campaign_better_reproducer(&R[1], &R[4]));
    assert_false(campaign_better_reproducer(&R[4], &R[1]));
}

static void test_merge_folds_unknown_race(void **state)
{
    (void)state;
    static struct camp_result F[5];
    F[0] = found(0, "/i/flag", "user+0x10", "opener+0x100 W", "user+0x175 R", 300, true);
    F[1] = found(1, "/i/flag", "user+0x10", NULL, NULL, 50, true);   /* pair not seen */
    F[2] = found(2, "/i/flag", "user+0x10", "opener+0x150 W", "user+0x171 R", 200, true);
    F[3] = found(3, "/i/lockx", "thread2+0xf7", NULL, NULL, 10, true);
    F[4] = found(4, "/i/lockx", "thread2+0xf7", "main+0x15b W", "thread2+0xc1 R", 900, true);
    const struct camp_result *in[5] = {&F[1], &F[0], &F[3], &F[2], &F[4]};
    struct camp_merge m;
    assert_int_equal(campaign_merge_bugs(in, 5, &m), 0);
    /* flag: both pairs are "opener W / user R" by function: one bug, which the pairless
     * hit joins; lockx: the pairless hit joins the only bug with a pair. */
    assert_int_equal(m.nbugs, 2);
    assert_string_equal(m.bugs[0].signature, "flag: SIGABRT in user, race opener W / user R");
    assert_int_equal(m.bugs[0].hits, 3);
    assert_ptr_equal(m.bugs[0].best, &F[1]);     /* fewest cue points, pair or not */
    assert_true(m.bugs[0].named->has_race);
    assert_string_equal(m.bugs[1].signature, "lockx: SIGABRT in thread2, race main W / thread2 R");
    assert_int_equal(m.bugs[1].ntasks, 2);
    assert_int_equal(m.bugs[1].tasks[0], 3);
    assert_int_equal(m.bugs[1].tasks[1], 4);
    campaign_merge_free(&m);
    /* Two different pairs: the pairless hit would be a guess, it stays apart. */
    snprintf(F[2].race[0], RACE_SIDE_LEN, "closer+0x1 W");
    assert_int_equal(campaign_merge_bugs(in, 5, &m), 0);
    assert_int_equal(m.nbugs, 4);
    assert_string_equal(m.bugs[0].signature, "flag: SIGABRT in user, no race");
    assert_int_equal(m.bugs[0].hits, 1);
    campaign_merge_free(&m);
}

/* The report's bytes for the results in a given reading order. */
static char *report_for(const int *order, int n)
{
    static struct camp_task tk[6];
    static struct camp_entry e[6];
    struct camp_tasks ts = {tk, 6};
    for (int i = 0; i < 6; i++) {
        tk[i] = task_of((uint32_t)i, R[i].image, R[i].first_seed, R[i].last_seed);
        memset(&e[i], 0, sizeof e[i]);
        e[i].state = CAMP_E_OK;
        e[i].r = R[i];
    }
    e[5].state = CAMP_E_MISSING;
    const struct camp_result *in[6];
    int k = 0;
    for (int i = 0; i < n; i++)
        if (e[order[i]].state == CAMP_E_OK)
            in[k++] = &e[order[i]].r;
    struct camp_merge m;
    assert_int_equal(campaign_merge_bugs(in, (size_t)k, &m), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    campaign_report_json(f, &ts, e, &m);
    campaign_report_junit(f, &ts, e, &m);
    campaign_report_table(f, &ts, e, &m);
    fclose(f);
    campaign_merge_free(&m);
    return buf;
}

static void test_report_deterministic(void **state)
{
    (void)state;
    make_results();
    int a[] = {0, 1, 2, 3, 4, 5}, b[] = {5, 4, 3, 2, 1, 0}, c[] = {2, 4, 0, 5, 1, 3};
    char *ra = report_for(a, 6), *rb = report_for(b, 6), *rc = report_for(c, 6);
    assert_string_equal(ra, rb);
    assert_string_equal(ra, rc);
    assert_non_null(strstr(ra, "\"bugs\":2,\"duplicates\":3"));
    assert_non_null(strstr(ra, "\"hits\":4,\"tasks\":[0,1,2,4],\"task\":1,"));
    assert_non_null(strstr(ra, "\"dump\":\"dumps/1/bug.jinxdump\""));
    assert_non_null(strstr(ra, "\"no_result\":[5]"));
    free(ra);
    free(rb);
    free(rc);
}

static struct ex_event *acc(struct ex_trace *t, uint32_t tid, enum ex_kind k, uint64_t addr,
                            uint8_t flags, uint64_t rip, const char *sym)
{
    struct ex_event *e = ex_trace_access(t, tid, k, addr, 8, flags, rip);
    assert_non_null(e);
    if (sym)
        snprintf(e->sym, sizeof e->sym, "%s", sym);
    return e;
}

static void test_race_pair(void **state)
{
    (void)state;
    struct ex_trace t;
    ex_trace_init(&t);
    char a[RACE_SIDE_LEN], b[RACE_SIDE_LEN];
    ex_trace_sync(&t, 1, EX_THREAD_CREATE, 0, 2);                   /* 0 */
    assert_int_equal(race_pair_of_trace(&t, 0, a, b, sizeof a), 0);
    acc(&t, 2, EX_RMW, 0x2000, EX_F_ATOMIC, 0x403000, "worker+0x8");  /* 1: atomic side */
    acc(&t, 1, EX_READ, 0x2000, 0, 0x404000, "main+0x20");           /* 2 */
    acc(&t, 2, EX_WRITE, 0x3000, 0, 0x405000, "pthread_mutex_lock+0x3"); /* 3: libc lock */
    acc(&t, 1, EX_READ, 0x3000, 0, 0x406000, "main+0x30");           /* 4 */
    assert_int_equal(race_pair_of_trace(&t, 0, a, b, sizeof a), 0); /* neither counts */
    acc(&t, 2, EX_WRITE, 0x1000, 0, 0x401000, "writer+0x10");         /* 5 */
    acc(&t, 1, EX_READ, 0x1000, 0, 0x402000, "reader+0x4");           /* 6 */
    acc(&t, 1, EX_WRITE, 0x4000, 0, 0x407000, NULL);                  /* 7 */
    acc(&t, 2, EX_READ, 0x4000, 0, 0x408000, NULL);                   /* 8 */
    assert_int_equal(race_pair_of_trace(&t, 0, a, b, sizeof a), 1);
    assert_string_equal(a, "reader+0x4 R");   /* the first one; text order, whoever ran first */
    assert_string_equal(b, "writer+0x10 W");
    /* From the first difference on: the later race, its sides named by rip. */
    assert_int_equal(race_pair_of_trace(&t, 7, a, b, sizeof a), 1);
    assert_string_equal(a, "0x407000 W");
    assert_string_equal(b, "0x408000 R");
    assert_int_equal(race_pair_of_trace(&t, 9, a, b, sizeof a), 0);
    /* A round whose recording is the same up to event 7: the race of 5-6 happened there
     * too (and did no harm), so 7-8 is the schedule's doing. */
    struct ex_trace rec;
    ex_trace_init(&rec);
    for (size_t i = 0; i < 7; i++)
        assert_non_null(ex_trace_append(&rec, &t.ev[i]));
    acc(&rec, 2, EX_WRITE, 0x9000, 0, 0x409000, NULL);
    assert_int_equal(race_pair_of_round(&t, &rec, a, b, sizeof a), 1);
    assert_string_equal(a, "0x407000 W");
    ex_trace_free(&rec);
    ex_trace_init(&rec);
    for (size_t i = 0; i < 5; i++)
        assert_non_null(ex_trace_append(&rec, &t.ev[i]));
    acc(&rec, 1, EX_READ, 0x9000, 0, 0x409000, NULL);
    assert_int_equal(race_pair_of_round(&t, &rec, a, b, sizeof a), 1);
    assert_string_equal(a, "reader+0x4 R");
    /* Identical traces: the schedule changed nothing, no race is its doing. */
    assert_int_equal(race_pair_of_round(&t, &t, a, b, sizeof a), 0);
    ex_trace_free(&rec);
    /* An invalid trace is refused. */
    t.ev[2].tid = 0;
    assert_int_equal(race_pair_of_trace(&t, 0, a, b, sizeof a), -1);
    ex_trace_free(&t);
}

static void test_crash_function(void **state)
{
    (void)state;
    char out[CAMP_BT_LEN];
    const char bt[][CAMP_BT_LEN] = {"raise+0x40", "fprintf+0x94", "abort+0x1e",
                                    "__pthread_mutex_timedlock+0x98", "__assert_fail+0x2a",
                                    "reader+0x190", "__clone+0x2f"};
    campaign_crash_function("raise+0x40", bt, 7, out, sizeof out);
    assert_string_equal(out, "reader+0x190");
    campaign_crash_function("raise+0x40", bt, 5, out, sizeof out); /* nothing after it */
    assert_string_equal(out, "raise+0x40");
    const char seg[][CAMP_BT_LEN] = {"push+0x12", "worker+0x40"};
    campaign_crash_function("push+0x12", seg, 2, out, sizeof out);
    assert_string_equal(out, "push+0x12");
    campaign_crash_function("", NULL, 0, out, sizeof out);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_roundtrip),
        cmocka_unit_test(test_task_parse_errors),
        cmocka_unit_test(test_tasks_file),
        cmocka_unit_test(test_result_roundtrip),
        cmocka_unit_test(test_result_errors),
        cmocka_unit_test(test_signature),
        cmocka_unit_test(test_merge_dedup_and_smallest),
        cmocka_unit_test(test_merge_folds_unknown_race),
        cmocka_unit_test(test_report_deterministic),
        cmocka_unit_test(test_race_pair),
        cmocka_unit_test(test_crash_function),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
