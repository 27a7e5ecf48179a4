/* Unit tests for vmm/linux/santext.c: a sanitizer runtime linked into the program, found
 * by its symbols. Layouts as clang's and gcc's -static-libasan builds have them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "linux/santext.h"

static const uint64_t text[1][2] = {{0x1000, 0x100000}};

static void test_names(void **state)
{
    (void)state;
    assert_true(santext_is_runtime_name("__asan_report_load4"));
    assert_true(santext_is_runtime_name("__interceptor_pthread_create"));
    assert_true(santext_is_runtime_name("_ZN6__tsan11ThreadStateC2Ev"));
    assert_true(santext_is_runtime_name("_ZN11__sanitizer15internal_memsetEPvim"));
    assert_true(santext_is_runtime_name("_Z19ubsan_GetStackTracePN11__sanitizer18BufferedStackTraceE"));
    assert_true(santext_is_runtime_name("AnnotateHappensBefore"));
    assert_false(santext_is_runtime_name("main"));
    assert_false(santext_is_runtime_name("worker"));
    assert_false(santext_is_runtime_name("pthread_create"));
    assert_false(santext_is_runtime_name("sanitize_input")); /* a program's own name */
}

/* clang: the runtime first, a few helpers without a namespace inside it, the program after. */
static void test_runtime_then_program(void **state)
{
    (void)state;
    const struct elf_symbol s[] = {
        {0x2000, 0x100, "__asan_init"},
        {0x2100, 0x40, "_ZL8UbsanDiev"},          /* the runtime's, no namespace */
        {0x2140, 0x40, "atfork_prepare"},
        {0x2180, 0x200, "_ZN6__asan9AllocatorC2Ev"},
        {0x2380, 0x10, "__interceptor_malloc"},
        {0x2380, 0x10, "malloc"},                  /* an alias of an interceptor */
        {0x3000, 0x80, "worker"},                  /* the program's own */
        {0x3080, 0x80, "main"},
    };
    uint64_t out[4][2];
    size_t k = santext_ranges(s, sizeof s / sizeof s[0], text, 1, out, 4);
    assert_int_equal(k, 1);
    assert_int_equal(out[0][0], 0x2000);
    assert_int_equal(out[0][1], 0x2390);
}

/* gcc -static-libasan: the program first; main ends any range; a long run of other
 * functions (more than SANTEXT_GAP_SYMS) splits the runtime in two. */
static void test_borders(void **state)
{
    (void)state;
    struct elf_symbol s[40];
    size_t n = 0;
    s[n++] = (struct elf_symbol){0x1800, 0x10, "__asan_stub"};
    s[n++] = (struct elf_symbol){0x1810, 0x10, "main"};
    s[n++] = (struct elf_symbol){0x1820, 0x10, "__asan_after_main"};
    for (unsigned i = 0; i < SANTEXT_GAP_SYMS + 1; i++)
        s[n++] = (struct elf_symbol){0x1900 + 0x10 * i, 0x10, "program_function"};
    s[n++] = (struct elf_symbol){0x2000, 0x10, "__tsan_read4"};
    s[n++] = (struct elf_symbol){0x2010, 0x10, "other"};
    s[n++] = (struct elf_symbol){0x2010 + SANTEXT_GAP_BYTES + 0x100, 0x10, "__tsan_write4"};
    s[n++] = (struct elf_symbol){0x200000, 0x10, "__tsan_outside_text"};
    uint64_t out[8][2];
    size_t k = santext_ranges(s, n, text, 1, out, 8);
    assert_int_equal(k, 4);
    assert_int_equal(out[0][0], 0x1800); /* before main */
    assert_int_equal(out[0][1], 0x1810);
    assert_int_equal(out[1][0], 0x1820); /* after main, not across the program's nine */
    assert_int_equal(out[1][1], 0x1830);
    assert_int_equal(out[2][0], 0x2000); /* not across a gap of more than 16 KiB */
    assert_int_equal(out[2][1], 0x2010);
    assert_int_equal(out[3][0], 0x2010 + SANTEXT_GAP_BYTES + 0x100);
    /* Room for two: the two largest, in address order. */
    s[0].size = 0x8;
    k = santext_ranges(s, n, text, 1, out, 2);
    assert_int_equal(k, 2);
    assert_int_equal(out[0][0], 0x1820);
    assert_int_equal(out[1][0], 0x2000);
}

/* A program without a runtime, or without symbols: nothing. */
static void test_none(void **state)
{
    (void)state;
    const struct elf_symbol s[] = {{0x2000, 0x10, "worker"}, {0x2010, 0x10, "main"}};
    uint64_t out[2][2];
    assert_int_equal(santext_ranges(s, 2, text, 1, out, 2), 0);
    assert_int_equal(santext_ranges(NULL, 0, text, 1, out, 2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_runtime_then_program),
        cmocka_unit_test(test_borders),
        cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
