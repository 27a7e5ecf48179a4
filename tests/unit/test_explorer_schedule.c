/* Schedules: text and JSON round trips, rejection of bad and hostile input
 * (with line/column), the fuzz entry point, and the cursor's rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdlib.h>
#include <string.h>

static void parse_ok(const char *in, struct ex_schedule *s)
{
    struct ex_parse_error err = { 0 };
    if (ex_schedule_parse(in, strlen(in), s, &err) != 0)
        fail_msg("rejected %s: %s", in, err.msg);
}

/* Expects rejection at line:col with msg containing `what`. */
static void parse_bad_n(const char *in, size_t len, int line, int col, const char *what)
{
    struct ex_schedule s;
    struct ex_parse_error err;
    memset(&err, 0, sizeof err);
    if (ex_schedule_parse(in, len, &s, &err) == 0)
        fail_msg("accepted bad input %.60s", in);
    assert_int_equal(s.nseg, 0);
    assert_null(s.seg);
    if ((line && err.line != line) || (col && err.col != col))
        fail_msg("input %.60s: got %s, expected line %d column %d", in, err.msg, line, col);
    if (what && !strstr(err.msg, what))
        fail_msg("message '%s' lacks '%s'", err.msg, what);
}
static void parse_bad(const char *in, int line, int col, const char *what)
{
    parse_bad_n(in, strlen(in), line, col, what);
}

static void test_text_parse(void **st)
{
    (void)st;
    struct ex_schedule s;
    parse_ok("# circle\nT1 x2\n\n  T2 x4   # b1..b2\nT1\nT1 x3\r\ndefault roundrobin 3\n", &s);
    assert_int_equal(s.nseg, 3);
    assert_int_equal(s.seg[0].thread, 1);
    assert_int_equal(s.seg[0].steps, 2);
    assert_int_equal(s.seg[1].thread, 2);
    assert_int_equal(s.seg[1].steps, 4);
    assert_int_equal(s.seg[2].thread, 1);
    assert_int_equal(s.seg[2].steps, 4); /* T1 + T1 x3 merged */
    assert_int_equal(s.policy, EX_DEFAULT_ROUNDROBIN);
    assert_int_equal(s.quantum, 3);
    assert_int_equal(ex_schedule_length(&s), 10);
    assert_int_equal(ex_schedule_thread_at(&s, 0), 1);
    assert_int_equal(ex_schedule_thread_at(&s, 2), 2);
    assert_int_equal(ex_schedule_thread_at(&s, 9), 1);
    assert_int_equal(ex_schedule_thread_at(&s, 10), 0);
    ex_schedule_free(&s);
    parse_ok("", &s);
    assert_int_equal(s.nseg, 0);
    assert_int_equal(s.policy, EX_DEFAULT_CONTINUE);
    ex_schedule_free(&s);
    parse_ok("T255 x1000000000\nt3 X1 #\n", &s);
    assert_int_equal(s.seg[0].thread, 255);
    assert_int_equal(s.seg[0].steps, EX_MAX_STEPS);
    ex_schedule_free(&s);
}

static void round_trip(const struct ex_schedule *s)
{
    char *text = ex_schedule_to_text(s), *json = ex_schedule_to_json(s);
    struct ex_schedule a, b;
    assert_non_null(text);
    assert_non_null(json);
    parse_ok(text, &a);
    parse_ok(json, &b);
    assert_true(ex_schedule_equal(s, &a));
    assert_true(ex_schedule_equal(s, &b));
    assert_int_equal(b.quantum, s->quantum);
    assert_string_equal(b.note, s->note);
    char *text2 = ex_schedule_to_text(&b);
    assert_string_equal(text, text2); /* canonical */
    free(text);
    free(text2);
    free(json);
    ex_schedule_free(&a);
    ex_schedule_free(&b);
}

static void test_round_trips(void **st)
{
    (void)st;
    struct ex_schedule s;
    ex_schedule_init(&s);
    round_trip(&s);
    uint32_t tids[] = { 1, 1, 2, 2, 2, 2, 1, 3, 3, 1 };
    assert_int_equal(ex_schedule_from_choices(&s, tids, 10), 0);
    assert_int_equal(s.nseg, 5);
    ex_schedule_set_note(&s, "jinx \"quoted\" \\ tab\there\nnewline \xc3\xa9");
    round_trip(&s);
    s.policy = EX_DEFAULT_ROUNDROBIN;
    s.quantum = 7;
    round_trip(&s);
    /* Many segments, extreme values. */
    ex_schedule_reset(&s);
    for (uint32_t i = 0; i < 5000; i++)
        assert_int_equal(ex_schedule_push(&s, 1 + i % 255, 1 + (i * 7919) % EX_MAX_STEPS), 0);
    round_trip(&s);
    assert_int_equal(ex_schedule_push(&s, 0, 1), -1);
    assert_int_equal(ex_schedule_push(&s, 256, 1), -1);
    assert_int_equal(ex_schedule_push(&s, 1, 0), -1);
    assert_int_equal(ex_schedule_push(&s, 1, EX_MAX_STEPS + 1), -1);
    /* Merging stops at EX_MAX_STEPS instead of overflowing. */
    ex_schedule_reset(&s);
    assert_int_equal(ex_schedule_push(&s, 2, EX_MAX_STEPS), 0);
    assert_int_equal(ex_schedule_push(&s, 2, 5), 0);
    assert_int_equal(s.nseg, 2);
    round_trip(&s);
    ex_schedule_free(&s);
}

static void test_json_parse(void **st)
{
    (void)st;
    struct ex_schedule s;
    parse_ok("{\"version\":1,\"segments\":[{\"thread\":2,\"steps\":3},{\"steps\":1,\"thread\":1,"
             "\"why\":[1,{\"a\":null}]}],\"extra\":{\"x\":[true,false,-1.5e3]}}",
             &s);
    assert_int_equal(s.nseg, 2);
    assert_int_equal(s.seg[0].thread, 2);
    assert_int_equal(s.seg[0].steps, 3);
    assert_int_equal(s.seg[1].thread, 1);
    assert_int_equal(s.policy, EX_DEFAULT_CONTINUE);
    ex_schedule_free(&s);
    parse_ok(" \n{ \"segments\" : [ ] , \"version\" : 1, \"default\": \"roundrobin\", "
             "\"quantum\": 2, \"note\": \"caf\\u00e9 \\ud83d\\ude00\" }\n",
             &s);
    assert_int_equal(s.nseg, 0);
    assert_int_equal(s.policy, EX_DEFAULT_ROUNDROBIN);
    assert_int_equal(s.quantum, 2);
    assert_string_equal(s.note, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    ex_schedule_free(&s);
    /* A long note is cut at a character boundary. */
    char big[600];
    strcpy(big, "{\"version\":1,\"segments\":[],\"note\":\"");
    for (int i = 0; i < 100; i++)
        strcat(big, "\xc3\xa9");
    strcat(big, "\"}");
    parse_ok(big, &s);
    assert_int_equal(strlen(s.note), 126);
    ex_schedule_free(&s);
}

static void test_text_rejects(void **st)
{
    (void)st;
    parse_bad("T1 x2\nT0 x1\n", 2, 2, "at least 1");
    parse_bad("T256\n", 1, 2, "too large");
    parse_bad("T1 x0\n", 1, 5, "at least 1");
    parse_bad("T1 x-3\n", 1, 5, "decimal");
    parse_bad("T1 x+3\n", 1, 5, "decimal");
    parse_bad("T-1\n", 1, 2, "decimal");
    parse_bad("T1 x99999999999999999999999999999\n", 1, 5, "too large");
    parse_bad("T1 x1000000001\n", 1, 5, "too large");
    parse_bad("T1 x\n", 1, 5, "expected a number");
    parse_bad("T\n", 1, 2, "expected a number");
    parse_bad("T1 y2\n", 1, 4, "xN");
    parse_bad("T1 x2 x3\n", 1, 7, "unexpected");
    parse_bad("T1 x2 a b c d e\n", 1, 7, "unexpected");
    parse_bad("garbage\n", 1, 1, "expected");
    parse_bad("\n\n   hello\n", 3, 4, "expected");
    parse_bad("default\n", 1, 8, "continue");
    parse_bad("default sometimes\n", 1, 9, "unknown default");
    parse_bad("default continue\ndefault continue\n", 2, 1, "duplicate");
    parse_bad("default continue 3\n", 1, 18, "unexpected");
    parse_bad("default roundrobin 0\n", 1, 20, "at least 1");
    parse_bad("default roundrobin 2 2\n", 1, 22, "unexpected");
    parse_bad("T1x2\n", 1, 3, "decimal");
    parse_bad("T1 x2\xff\n", 1, 6, "decimal");
    parse_bad_n("T1 x2\nT2\0 x1\n", 13, 2, 3, "NUL");
    /* A very long line. */
    size_t n = EX_MAX_LINE + 100;
    char *longl = malloc(n + 1);
    memset(longl, ' ', n);
    longl[n] = 0;
    parse_bad(longl, 1, EX_MAX_LINE + 1, "longer");
    /* ... but a line of exactly the limit is fine. */
    longl[EX_MAX_LINE] = 0;
    memcpy(longl, "T1 x1", 5);
    struct ex_schedule s;
    parse_ok(longl, &s);
    ex_schedule_free(&s);
    free(longl);
}

static void test_json_rejects(void **st)
{
    (void)st;
    parse_bad("{", 1, 2, "end of input");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":1,\"steps\":2}", 1, 0, "end of input");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":1,\"steps\":2}]", 1, 0, "end of input");
    parse_bad("{\"version\":1}", 1, 0, "missing \"segments\"");
    parse_bad("{\"segments\":[]}", 1, 0, "missing \"version\"");
    parse_bad("{\"version\":2,\"segments\":[]}", 1, 12, "unsupported version");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":-2,\"steps\":1}]}", 1, 36, "negative");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":2.5,\"steps\":1}]}", 1, 37, "integer");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":1e3,\"steps\":1}]}", 1, 0, "integer");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":0,\"steps\":1}]}", 1, 36, "at least 1");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":256,\"steps\":1}]}", 1, 36, "too large");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":1,\"steps\":184467440737095516160}]}", 1,
              46, "too large");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":01,\"steps\":1}]}", 1, 0, "leading zeros");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":\"1\",\"steps\":1}]}", 1, 0, "number");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":1}]}", 1, 26, "needs");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":1,\"thread\":2,\"steps\":1}]}", 1, 0,
              "duplicate");
    parse_bad("{\"version\":1,\"version\":1,\"segments\":[]}", 1, 0, "duplicate");
    /* Every key, once each: the message names the repeated one. */
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":1,\"steps\":1,\"steps\":2}]}", 1, 0,
              "duplicate key \"steps\"");
    parse_bad("{\"version\":1,\"segments\":[{\"thread\":1,\"thread\":2,\"steps\":1}]}", 1, 0,
              "duplicate key \"thread\"");
    parse_bad("{\"version\":1,\"segments\":[],\"segments\":[]}", 1, 0,
              "duplicate key \"segments\"");
    parse_bad("{\"version\":1,\"segments\":[],\"default\":\"continue\",\"default\":\"continue\"}",
              1, 0, "duplicate key \"default\"");
    parse_bad("{\"version\":1,\"segments\":[],\"quantum\":2,\"quantum\":2}", 1, 0,
              "duplicate key \"quantum\"");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"a\",\"note\":\"a\"}", 1, 0,
              "duplicate key \"note\"");
    parse_bad("{\"version\":1,\"segments\":[],\"shared_pages\":[],\"shared_pages\":[]}", 1, 0,
              "duplicate key \"shared_pages\"");
    parse_bad("{\"version\":1,\"segments\":[],\"version\":1}", 1, 0, "duplicate key \"version\"");
    parse_bad("{\"version\":1,\"segments\":[],}", 1, 0, NULL);
    parse_bad("{\"version\":1,\"segments\":[1]}", 1, 26, "expected '{'");
    parse_bad("{\"version\":1,\"segments\":{}}", 1, 25, "expected '['");
    parse_bad("{\"version\":1,\"segments\":[]} x", 1, 29, "after the schedule");
    parse_bad("{\"version\":1,\"segments\":[]}{}", 1, 28, "after the schedule");
    parse_bad("{\"version\":1,\"segments\":[],\"default\":\"never\"}", 1, 38, "unknown default");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"a\nb\"}", 1, 0, "control character");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"\\x\"}", 1, 0, "unknown escape");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"\\u12\"}", 1, 0, "hex");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"\\ud800\"}", 1, 0, "surrogate");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"\\udc00\"}", 1, 0, "surrogate");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"\\u0000\"}", 1, 0, "not allowed");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"\xc0\xaf\"}", 1, 0, "UTF-8");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"\xed\xa0\x80\"}", 1, 0, "UTF-8");
    parse_bad("{\"version\":1,\"segments\":[],\"note\":\"\xe2\x82\"}", 1, 0, "UTF-8");
    parse_bad("{\"version\":1,\"segments\":[],\"x\":tru}", 1, 0, NULL);
    parse_bad("{\"version\":1,\"segments\":[],\"x\":-}", 1, 0, "bad number");
    parse_bad("{\"version\":1,\n\"segments\":\n  [{\"thread\":1,\"steps\":x}]}", 3, 24, NULL);
    parse_bad_n("{\"version\":1,\"segments\":[]\0}", 28, 1, 27, NULL);
    /* Deep nesting in an ignored value is bounded, not a stack overflow. */
    size_t depth = 100000;
    char *deep = malloc(depth * 2 + 64);
    strcpy(deep, "{\"version\":1,\"segments\":[],\"x\":");
    size_t k = strlen(deep);
    memset(deep + k, '[', depth);
    memset(deep + k + depth, ']', depth);
    strcpy(deep + k + 2 * depth, "}");
    parse_bad(deep, 1, 0, "nested");
    free(deep);
}

static void test_fuzz_entry(void **st)
{
    (void)st;
    static const char json_seed[] =
        "{\"version\":1,\"default\":\"roundrobin\",\"quantum\":4,\"note\":\"n\\u00e9\","
        "\"segments\":[{\"thread\":2,\"steps\":3},{\"thread\":1,\"steps\":1}]}";
    const char *seeds[] = {
        "T1 x2\nT2 x3\ndefault roundrobin 2\n",
        json_seed,
        "# only a comment",
        "{\"version\":1,\"segments\":[],\"x\":[[[{\"y\":\"\\ud83d\\ude00\"}]]]}",
    };
    struct ex_rng r;
    ex_rng_seed(&r, 12345);
    uint8_t buf[512];
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        size_t len = strlen(seeds[s]);
        assert_int_equal(explorer_fuzz_schedule((const uint8_t *)seeds[s], len), 0);
        /* Mutations: flip, insert, delete, truncate -- must never crash or leak. */
        for (int it = 0; it < 3000; it++) {
            size_t n = len < sizeof buf ? len : sizeof buf;
            memcpy(buf, seeds[s], n);
            int muts = 1 + (int)ex_rng_below(&r, 4);
            for (int m = 0; m < muts && n > 0; m++) {
                size_t at = ex_rng_below(&r, n);
                switch (ex_rng_below(&r, 4)) {
                case 0: buf[at] = (uint8_t)ex_rng_next(&r); break;
                case 1:
                    if (n < sizeof buf) {
                        memmove(buf + at + 1, buf + at, n - at);
                        buf[at] = (uint8_t)"{}[],:\"\\0123456789Tx#\n -.eu"[ex_rng_below(&r, 28)];
                        n++;
                    }
                    break;
                case 2: memmove(buf + at, buf + at + 1, n - at - 1); n--; break;
                default: n = at; break;
                }
            }
            assert_int_equal(explorer_fuzz_schedule(buf, n), 0);
        }
    }
    /* Pure noise. */
    for (int it = 0; it < 2000; it++) {
        size_t n = ex_rng_below(&r, sizeof buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)ex_rng_next(&r);
        assert_int_equal(explorer_fuzz_schedule(buf, n), 0);
    }
    assert_int_equal(explorer_fuzz_schedule(NULL, 0), 0);
}

static struct ex_tidset set_of(const char *tids)
{
    struct ex_tidset s;
    ex_tidset_clear(&s);
    for (; *tids; tids++)
        ex_tidset_add(&s, (uint32_t)(*tids - '0'));
    return s;
}

static void test_cursor_segments_and_divergence(void **st)
{
    (void)st;
    struct ex_schedule s;
    struct ex_cursor c;
    parse_ok("T1 x2\nT2 x3\nT3 x1\nT1 x1\n", &s);
    ex_cursor_init(&c, &s);
    struct ex_tidset all = set_of("123");
    assert_int_equal(ex_cursor_next(&c, &all), 1);
    assert_int_equal(ex_cursor_next(&c, &all), 1);
    assert_int_equal(ex_cursor_next(&c, &all), 2);
    /* T2 blocks after one step: the rest of its segment is dropped. */
    struct ex_tidset no2 = set_of("13");
    assert_int_equal(ex_cursor_next(&c, &no2), 3);
    assert_int_equal(c.divergences, 1);
    assert_int_equal(c.skipped, 2);
    assert_true(ex_cursor_in_schedule(&c));
    assert_int_equal(ex_cursor_next(&c, &all), 1);
    assert_false(ex_cursor_in_schedule(&c));
    /* Default continue: T1 again while it can, then the next tid after it. */
    assert_int_equal(ex_cursor_next(&c, &all), 1);
    struct ex_tidset no1 = set_of("23");
    assert_int_equal(ex_cursor_next(&c, &no1), 2);
    assert_int_equal(ex_cursor_next(&c, &all), 2);
    struct ex_tidset only1 = set_of("1");
    assert_int_equal(ex_cursor_next(&c, &only1), 1);  /* wraps around */
    struct ex_tidset none = set_of("");
    assert_int_equal(ex_cursor_next(&c, &none), 0);
    assert_int_equal(c.steps, 9);
    ex_schedule_free(&s);
}

static void test_cursor_roundrobin(void **st)
{
    (void)st;
    struct ex_schedule s;
    struct ex_cursor c;
    parse_ok("T2 x1\ndefault roundrobin 2\n", &s);
    ex_cursor_init(&c, &s);
    struct ex_tidset all = set_of("123");
    uint32_t want[] = { 2, 3, 3, 1, 1, 2, 2, 3, 3 };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(ex_cursor_next(&c, &all), want[i]);
    /* A thread that blocks mid-turn hands over at once. */
    struct ex_tidset no1 = set_of("23");
    assert_int_equal(ex_cursor_next(&c, &no1), 2);
    ex_schedule_free(&s);
    /* Empty schedule, continue: lowest tid first. */
    ex_schedule_init(&s);
    ex_cursor_init(&c, &s);
    struct ex_tidset some = set_of("35");
    assert_int_equal(ex_cursor_next(&c, &some), 3);
    assert_int_equal(ex_cursor_next(&c, &some), 3);
    ex_schedule_free(&s);
}

static void test_schedule_set(void **st)
{
    (void)st;
    struct ex_schedule_set ss;
    struct ex_schedule a, b;
    ex_schedule_set_init(&ss);
    parse_ok("T1 x2\nT2\n", &a);
    parse_ok("T1\nT1\nT2 x1\n", &b);
    assert_true(ex_schedule_equal(&a, &b));
    assert_int_equal(ex_schedule_hash(&a), ex_schedule_hash(&b));
    assert_int_equal(ex_schedule_set_add_unique(&ss, &a), 1);
    assert_int_equal(ex_schedule_set_add_unique(&ss, &b), 0);
    assert_int_equal(ss.n, 1);
    b.policy = EX_DEFAULT_ROUNDROBIN;
    assert_int_equal(ex_schedule_set_add_unique(&ss, &b), 1);
    assert_int_equal(ss.n, 2);
    assert_int_equal(ex_schedule_set_find(&ss, &ss.v[1]), 1);
    ex_schedule_set_free(&ss);
    ex_schedule_free(&a);
    ex_schedule_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_parse),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_json_parse),
        cmocka_unit_test(test_text_rejects),
        cmocka_unit_test(test_json_rejects),
        cmocka_unit_test(test_fuzz_entry),
        cmocka_unit_test(test_cursor_segments_and_divergence),
        cmocka_unit_test(test_cursor_roundrobin),
        cmocka_unit_test(test_schedule_set),
    };
    return cmocka_run_group_tests_name("explorer: schedules", tests, NULL, NULL);
}
