/* Unit tests for vmm/linux/limitlog.c (jinx's limits met by a run) and vmm/linux/tail.c (the guest's
 * last stderr lines): deduplication, bounds, text and JSON output, sanitising. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "linux/limitlog.h"
#include "linux/tail.h"

static char *print_all(struct limits *ls, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (json)
        limits_json(ls, f);
    else
        limits_print(ls, f, "P: ");
    fclose(f);
    return buf;
}

static void test_limits_dedup(void **st)
{
    (void)st;
    struct limits ls;
    limits_init(&ls);
    assert_int_equal(limits_count(&ls), 0);
    assert_true(limits_note(&ls, LIMIT_THREADS, 0, "raise it with --vcpus N", "cap %d", 16));
    assert_false(limits_note(&ls, LIMIT_THREADS, 0, "other", "cap %d", 99)); /* counted */
    assert_true(limits_note(&ls, LIMIT_SYSCALL, 22, NULL, "syscall %d", 22));
    assert_true(limits_note(&ls, LIMIT_SYSCALL, 41, NULL, "syscall %d", 41));
    assert_int_equal(limits_count(&ls), 3);
    assert_int_equal(ls.l[0].count, 2);
    assert_string_equal(ls.l[0].what, "cap 16"); /* the first note's text stays */
    char *t = print_all(&ls, 0);
    assert_non_null(strstr(t, "P: jinx limit: cap 16 (2 times); raise it with --vcpus N\n"));
    assert_non_null(strstr(t, "P: jinx limit: syscall 22; no option raises it\n"));
    free(t);
    /* Beyond LIMITS_MAX pairs: counted, not kept. */
    for (int i = 0; i < 2 * LIMITS_MAX; i++)
        limits_note(&ls, LIMIT_SYSCALL, 100 + i, NULL, "s%d", i);
    assert_int_equal(limits_count(&ls), LIMITS_MAX);
    assert_true(ls.dropped > 0);
    limits_destroy(&ls);
}

static void test_limits_json(void **st)
{
    (void)st;
    struct limits ls;
    limits_init(&ls);
    char *j = print_all(&ls, 1);
    assert_string_equal(j, "[]");
    free(j);
    limits_note(&ls, LIMIT_MEMORY, 0, "raise it with --mem SIZE", "quote \" and \x01 and \xff");
    limits_note(&ls, LIMIT_SIGNAL, 10, NULL, "sig");
    j = print_all(&ls, 1);
    /* Valid JSON that the reader gets back. */
    char doc[1024];
    snprintf(doc, sizeof doc, "{\"limits\":%s}", j);
    const char *raw, *el;
    size_t len, elen, pos = 0;
    char err[128];
    assert_int_equal(json_find(doc, strlen(doc), "limits", &raw, &len, err, sizeof err), 1);
    static struct json_obj o;
    assert_int_equal(json_array_next(raw, len, &pos, &el, &elen), 1);
    assert_int_equal(json_parse_object(el, elen, 0, &o, err, sizeof err), 0);
    const char *s;
    assert_int_equal(json_get_str(&o, "kind", &s), 1);
    assert_string_equal(s, "memory");
    assert_int_equal(json_get_str(&o, "what", &s), 1);
    assert_string_equal(s, "quote \" and \x01 and \xc3\xbf"); /* \xff escaped as U+00FF */
    assert_int_equal(json_array_next(raw, len, &pos, &el, &elen), 1);
    assert_int_equal(json_parse_object(el, elen, 0, &o, err, sizeof err), 0);
    assert_int_equal(json_get_str(&o, "kind", &s), 1);
    assert_string_equal(s, "signal-handler");
    assert_int_equal(json_get_str(&o, "option", &s), 1);
    assert_string_equal(s, "");
    free(j);
    limits_destroy(&ls);
    /* Every kind has its JSON name; a refused file operation's is "files". */
    for (int k = 0; k < LIMIT_KIND_COUNT_; k++)
        assert_string_not_equal(limit_kind_name((enum limit_kind)k), "?");
    assert_string_equal(limit_kind_name(LIMIT_FILES), "files");
}

static void *noter(void *arg)
{
    struct limits *ls = arg;
    for (int i = 0; i < 10000; i++)
        limits_note(ls, LIMIT_SYSCALL, i % 4, NULL, "s%d", i % 4);
    return NULL;
}

static void test_limits_threads(void **st)
{
    (void)st;
    struct limits ls;
    limits_init(&ls);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, noter, &ls);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(limits_count(&ls), 4);
    uint64_t sum = 0;
    for (int i = 0; i < 4; i++)
        sum += ls.l[i].count;
    assert_int_equal(sum, 40000);
    limits_destroy(&ls);
}

static void test_tail_lines(void **st)
{
    (void)st;
    struct tail t;
    tail_init(&t);
    char out[TAIL_BYTES + 8];
    assert_int_equal(tail_lines(&t, TAIL_LINES, out, sizeof out), 0);
    assert_string_equal(out, "");
    tail_add(&t, "one\ntwo\n", 8);
    tail_add(&t, "thr", 3);
    tail_add(&t, "ee\n\n", 4);
    tail_lines(&t, 10, out, sizeof out);
    assert_string_equal(out, "one\ntwo\nthree"); /* trailing newlines dropped */
    tail_lines(&t, 2, out, sizeof out);
    assert_string_equal(out, "two\nthree");
    tail_lines(&t, 1, out, sizeof out);
    assert_string_equal(out, "three");
    /* Control bytes and non-ASCII become '?' (terminal-safe); tabs stay. */
    tail_add(&t, "a\x1b[31m\tb\xc3\xa9\r\n", 12);
    tail_lines(&t, 1, out, sizeof out);
    assert_string_equal(out, "a?[31m\tb???");
    /* A small output buffer cuts, NUL-terminated. */
    assert_int_equal(tail_lines(&t, 3, out, 4), 3);
    assert_int_equal(strlen(out), 3);
    tail_destroy(&t);
}

/* A mark put back: what came after it is gone, what came before is there. */
static void test_tail_mark_rewind(void **st)
{
    (void)st;
    struct tail t;
    tail_init(&t);
    char out[TAIL_BYTES + 8];
    tail_add(&t, "before\n", 7);
    struct tail_mark m;
    tail_mark(&t, &m);
    tail_add(&t, "during\n", 7);
    tail_lines(&t, 10, out, sizeof out);
    assert_string_equal(out, "before\nduring");
    tail_rewind(&t, &m);
    tail_lines(&t, 10, out, sizeof out);
    assert_string_equal(out, "before");
    assert_int_equal(t.total, 7);
    tail_destroy(&t);
}

static void test_tail_ring(void **st)
{
    (void)st;
    struct tail t;
    tail_init(&t);
    char line[64], out[TAIL_BYTES + 8];
    for (int i = 0; i < 3000; i++) { /* 28890 bytes: more than the ring */
        int n = snprintf(line, sizeof line, "line %d\n", i);
        tail_add(&t, line, (size_t)n);
    }
    assert_int_equal(t.len, TAIL_BYTES);
    tail_lines(&t, 3, out, sizeof out);
    assert_string_equal(out, "line 2997\nline 2998\nline 2999");
    /* All that is held: the first line was cut by the ring, so it starts with "...". */
    tail_lines(&t, 100000, out, sizeof out);
    assert_memory_equal(out, "...", 3);
    assert_non_null(strstr(out, "\nline 2999"));
    /* One write longer than the ring keeps its end. */
    char big[3 * TAIL_BYTES];
    memset(big, 'x', sizeof big);
    memcpy(big + sizeof big - 5, "\nEND!", 5);
    tail_add(&t, big, sizeof big);
    tail_lines(&t, 1, out, sizeof out);
    assert_string_equal(out, "END!");
    assert_int_equal(t.total, 28890 + sizeof big);
    tail_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits_dedup),  cmocka_unit_test(test_limits_json),
        cmocka_unit_test(test_limits_threads), cmocka_unit_test(test_tail_lines),
        cmocka_unit_test(test_tail_ring), cmocka_unit_test(test_tail_mark_rewind),
    };
    return cmocka_run_group_tests_name("vmm/limitlog", tests, NULL, NULL);
}
