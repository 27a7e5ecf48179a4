/* Schedules' pre-shared pages (schedule.h: "shared_pages"): a whole run's
 * cue points depend on them, so they travel with the schedule into the dump
 * and must survive printing and parsing; malformed lists are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "explorer/explorer.h"
#include <stdlib.h>
#include <string.h>

static void test_set_shared_sorts_and_rounds(void **state)
{
    (void)state;
    struct ex_schedule s;
    ex_schedule_init(&s);
    const uint64_t pages[] = { 0x409abc, 0x7f0000001000, 0x409000, 0x1000, 0x409fff };
    assert_int_equal(ex_schedule_set_shared(&s, pages, 5), 0);
    assert_int_equal(s.nshared, 3);
    assert_true(s.shared[0] == 0x1000 && s.shared[1] == 0x409000 &&
                s.shared[2] == 0x7f0000001000);
    /* A copy carries them; an empty list clears them. */
    struct ex_schedule c;
    assert_int_equal(ex_schedule_copy(&c, &s), 0);
    assert_int_equal(c.nshared, 3);
    assert_true(c.shared != s.shared && memcmp(c.shared, s.shared, 3 * sizeof *c.shared) == 0);
    assert_int_equal(ex_schedule_set_shared(&c, NULL, 0), 0);
    assert_int_equal(c.nshared, 0);
    ex_schedule_free(&c);
    ex_schedule_free(&s);
}

static void test_too_many_pages_refused(void **state)
{
    (void)state;
    size_t n = EX_MAX_SHARED_PAGES + 1;
    uint64_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint64_t)(i + 1) * EX_SCHED_PAGE;
    struct ex_schedule s;
    ex_schedule_init(&s);
    assert_int_equal(ex_schedule_set_shared(&s, v, 2), 0);
    assert_int_equal(ex_schedule_set_shared(&s, v, n), -1);
    assert_int_equal(s.nshared, 2); /* unchanged */
    /* The same count of one page repeated is one page. */
    for (size_t i = 0; i < n; i++)
        v[i] = 0x5000;
    assert_int_equal(ex_schedule_set_shared(&s, v, n), 0);
    assert_int_equal(s.nshared, 1);
    ex_schedule_free(&s);
    free(v);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    struct ex_schedule s, back;
    const uint32_t choices[] = { 1, 1, 2, 1, 3 };
    ex_schedule_init(&s);
    assert_int_equal(ex_schedule_from_choices(&s, choices, 5), 0);
    const uint64_t pages[] = { 0x7ffffffff000, 0x409000 };
    assert_int_equal(ex_schedule_set_shared(&s, pages, 2), 0);
    char *js = ex_schedule_to_json(&s);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"shared_pages\":[4231168,140737488351232]"));
    struct ex_parse_error err;
    assert_int_equal(ex_schedule_parse_json(js, strlen(js), &back, &err), 0);
    assert_true(ex_schedule_equal(&s, &back));
    assert_int_equal(back.nshared, 2);
    assert_true(back.shared[0] == 0x409000 && back.shared[1] == 0x7ffffffff000);
    free(js);
    ex_schedule_free(&back);
    /* Without pages nothing is printed, so older readers see what they always saw. */
    assert_int_equal(ex_schedule_set_shared(&s, NULL, 0), 0);
    js = ex_schedule_to_json(&s);
    assert_null(strstr(js, "shared_pages"));
    assert_int_equal(ex_schedule_parse_json(js, strlen(js), &back, &err), 0);
    assert_int_equal(back.nshared, 0);
    free(js);
    ex_schedule_free(&back);
    ex_schedule_free(&s);
}

static void test_json_refuses_bad_lists(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"version\":1,\"shared_pages\":[4097],\"segments\":[]}",          /* not aligned */
        "{\"version\":1,\"shared_pages\":[8192,4096],\"segments\":[]}",     /* descending */
        "{\"version\":1,\"shared_pages\":[4096,4096],\"segments\":[]}",     /* repeated */
        "{\"version\":1,\"shared_pages\":[-4096],\"segments\":[]}",
        "{\"version\":1,\"shared_pages\":[18446744073709551616],\"segments\":[]}", /* 2^64 */
        "{\"version\":1,\"shared_pages\":[4096,\"x\"],\"segments\":[]}",
        "{\"version\":1,\"shared_pages\":4096,\"segments\":[]}",
        "{\"version\":1,\"shared_pages\":[],\"shared_pages\":[],\"segments\":[]}",
        "{\"version\":1,\"shared_pages\":[4096,\"segments\":[]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ex_schedule s;
        struct ex_parse_error err;
        assert_int_equal(ex_schedule_parse_json(bad[i], strlen(bad[i]), &s, &err), -1);
        assert_int_equal(s.nshared, 0);
        assert_null(s.shared);
    }
    /* The largest page-aligned address is fine. */
    const char *ok = "{\"version\":1,\"shared_pages\":[0,18446744073709547520],\"segments\":[]}";
    struct ex_schedule s;
    assert_int_equal(ex_schedule_parse_json(ok, strlen(ok), &s, NULL), 0);
    assert_int_equal(s.nshared, 2);
    assert_true(s.shared[1] == 0xfffffffffffff000ull);
    ex_schedule_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_shared_sorts_and_rounds),
        cmocka_unit_test(test_too_many_pages_refused),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_refuses_bad_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
