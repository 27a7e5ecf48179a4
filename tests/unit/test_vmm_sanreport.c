/* Unit tests for the sanitizer report parser (vmm/linux/sanreport.c) and the dump's
 * SANREPORT record (vmm/dump/sanrec.c): each tool's header and kind, the SUMMARY's kind,
 * a tail that lost the header, hostile bytes, bounds, and the record's checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/sanrec.h"
#include "linux/sanreport.h"

static bool parse(const char *s, struct san_report *r)
{
    return sanreport_parse(s, strlen(s), r);
}

static void test_asan(void **state)
{
    (void)state;
    struct san_report r;
    assert_true(parse("hello\n=================================================================\n"
                      "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020 at pc 0x55\n"
                      "READ of size 4 at 0x6020 thread T1\n"
                      "    #0 0x555 in worker san_uaf.c:38\n\n"
                      "SUMMARY: AddressSanitizer: heap-use-after-free san_uaf.c:38 in worker\n"
                      "Shadow bytes around the buggy address:\n", &r));
    assert_string_equal(r.tool, "asan");
    assert_string_equal(r.kind, "heap-use-after-free");
    assert_int_equal(r.nlines, 3);
    assert_string_equal(r.lines[0], "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020 at pc 0x55");
    assert_string_equal(r.lines[2], "    #0 0x555 in worker san_uaf.c:38");
    /* "attempting double-free": the SUMMARY's kind */
    assert_true(parse("==7==ERROR: AddressSanitizer: attempting double-free on 0x60 in thread T0:\n"
                      "    #0 free\nSUMMARY: AddressSanitizer: double-free x.cpp:52 in free\n", &r));
    assert_string_equal(r.kind, "double-free");
    /* ... and without a SUMMARY, the word after "attempting" */
    assert_true(parse("==7==ERROR: AddressSanitizer: attempting double-free on 0x60\n", &r));
    assert_string_equal(r.kind, "double-free");
    assert_true(parse("==9==ERROR: AddressSanitizer: SEGV on unknown address 0x0\n", &r));
    assert_string_equal(r.kind, "segv");
}

static void test_other_tools(void **state)
{
    (void)state;
    struct san_report r;
    assert_true(parse("x.c:3:76: runtime error: signed integer overflow: 2147483647 + 1 cannot be\n", &r));
    assert_string_equal(r.tool, "ubsan");
    assert_string_equal(r.kind, "signed-integer-overflow");
    assert_true(parse("x.c:3:1: runtime error: division by zero\n", &r));
    assert_string_equal(r.kind, "division-by-zero");
    assert_true(parse("x.c:3:1: runtime error: index 6 out of bounds for type 'int [4]'\n", &r));
    assert_string_equal(r.kind, "index");
    assert_true(parse("==================\nWARNING: ThreadSanitizer: data race (pid=12)\n"
                      "  Write of size 4 at 0x55 by thread T1:\n", &r));
    assert_string_equal(r.tool, "tsan");
    assert_string_equal(r.kind, "data-race");
    assert_int_equal(r.nlines, 2);
    assert_true(parse("WARNING: ThreadSanitizer: lock-order-inversion (potential deadlock) (pid=1)\n", &r));
    assert_string_equal(r.kind, "lock-order-inversion");
    assert_true(parse("==3==ERROR: LeakSanitizer: detected memory leaks\n", &r));
    assert_string_equal(r.tool, "lsan");
    assert_string_equal(r.kind, "detected-memory-leaks");
    assert_true(parse("==3==WARNING: MemorySanitizer: use-of-uninitialized-value\n", &r));
    assert_string_equal(r.tool, "msan");
    assert_string_equal(r.kind, "use-of-uninitialized-value");
}

/* A long report's header left the tail: its SUMMARY still names it. Nothing else is a
 * report: the program's own words mentioning sanitizers, an empty or NULL text. */
static void test_summary_only_and_none(void **state)
{
    (void)state;
    struct san_report r;
    assert_true(parse("...  Heap left redzone: fa\nSUMMARY: AddressSanitizer: stack-buffer-overflow "
                      "x.c:3 in main\n==1==ABORTING\n", &r));
    assert_string_equal(r.tool, "asan");
    assert_string_equal(r.kind, "stack-buffer-overflow");
    assert_int_equal(r.nlines, 1);
    assert_false(parse("AddressSanitizer is great\nruntime error without colon\n", &r));
    assert_string_equal(r.tool, "");
    assert_false(parse("", &r));
    assert_false(sanreport_parse(NULL, 5, &r));
    /* A header with no kind at all */
    assert_true(parse("==1==ERROR: AddressSanitizer: \n", &r));
    assert_string_equal(r.kind, "unknown");
}

/* Hostile bytes: kept lines are printable and cut; at most SANREPORT_LINES; no NUL needed
 * at the end of the text (len bounds it). */
static void test_hostile(void **state)
{
    (void)state;
    struct san_report r;
    static char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text, "==1==ERROR: AddressSanitizer: heap-buffer-overflow \x01\xff\x1b[31m");
    memset(text + n, 'A', 1000);
    n += 1000;
    for (int i = 0; i < 20; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "\nline %d \x7f", i);
    text[n] = 'Z'; /* no terminating NUL within len */
    assert_true(sanreport_parse(text, n, &r));
    assert_int_equal(r.nlines, SANREPORT_LINES);
    assert_int_equal(strlen(r.lines[0]), SANREPORT_LINE_LEN - 1);
    for (int i = 0; i < r.nlines; i++)
        for (const char *c = r.lines[i]; *c; c++)
            assert_true(*c == '\t' || (*c >= 0x20 && *c < 0x7f));
    assert_string_equal(r.kind, "heap-buffer-overflow");
    /* a kind made of an endless word is cut, never overrun */
    memset(text, 'a', sizeof text);
    memcpy(text, "WARNING: ThreadSanitizer: ", 26);
    assert_true(sanreport_parse(text, sizeof text, &r));
    assert_true(strlen(r.kind) < SANREPORT_KIND_LEN);
    assert_true(sanreport_valid(r.tool, r.kind));
}

static void test_record(void **state)
{
    (void)state;
    struct san_report r, b;
    char err[256];
    assert_true(parse("x.c:1:2: runtime error: signed integer overflow: 1\nnext\n", &r));
    struct dumpfile d;
    memset(&d, 0, sizeof d);
    assert_int_equal(sanrec_find(&d, &b, err, sizeof err), 0); /* none */
    assert_int_equal(sanrec_add(&d, &r), 0);
    assert_int_equal(sanrec_find(&d, &b, err, sizeof err), 1);
    assert_memory_equal(&r, &b, sizeof r);
    /* Tampered: a bad kind, a control byte, too many lines, a short record */
    uint8_t *p = d.extra[0].data;
    size_t len = d.extra[0].len;
    uint8_t *t = malloc(len);
    assert_non_null(t);
    memcpy(t, p, len);
    t[4 + 4 + 5 + 4] = 'S'; /* "ubsan" then kind "Signed-..." */
    assert_int_equal(sanrec_decode(t, len, &b, err, sizeof err), -1);
    memcpy(t, p, len);
    t[len - 1] = 0x07;
    assert_int_equal(sanrec_decode(t, len, &b, err, sizeof err), -1);
    assert_int_equal(sanrec_decode(p, len - 1, &b, err, sizeof err), -1);
    assert_int_equal(sanrec_decode(p, 3, &b, err, sizeof err), -1);
    const uint8_t many[] = {1, 0, 0, 0, 4, 0, 0, 0, 'a', 's', 'a', 'n', 1, 0, 0, 0, 'x', 99, 0, 0, 0};
    assert_int_equal(sanrec_decode(many, sizeof many, &b, err, sizeof err), -1);
    assert_true(strstr(err, "lines") != NULL);
    assert_false(sanreport_valid("gdb", "x"));
    assert_false(sanreport_valid("asan", ""));
    assert_false(sanreport_valid("asan", "A"));
    free(t);
    for (size_t i = 0; i < d.nextra; i++)
        free(d.extra[i].data);
    free(d.extra);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_asan),
        cmocka_unit_test(test_other_tools),
        cmocka_unit_test(test_summary_only_and_none),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
