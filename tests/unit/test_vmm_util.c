/* Unit tests for lib/util.c: parse_size, parse_duration, parse_u64 (command-line input),
 * splitmix64 and mono_ns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/splitmix.h"
#include "lib/util.h"

#define SIZE_OK(str, val)                                                                  \
    do {                                                                                   \
        uint64_t v_ = 0xdeadbeef;                                                          \
        const char *s_ = (str), *p_ = s_ ? s_ : "(null)";                                \
        if (!parse_size(s_, &v_))                                                         \
            fail_msg("parse_size(\"%s\") rejected", p_);                                 \
        if (v_ != (uint64_t)(val))                                                         \
            fail_msg("parse_size(\"%s\") = %llu, expected %llu", p_,                      \
                     (unsigned long long)v_, (unsigned long long)(val));                   \
    } while (0)
#define SIZE_BAD(str)                                                                      \
    do {                                                                                   \
        uint64_t v_ = 0xdeadbeef;                                                          \
        const char *s_ = (str), *p_ = s_ ? s_ : "(null)";                                \
        if (parse_size(s_, &v_))                                                          \
            fail_msg("parse_size(\"%s\") accepted: %llu", p_, (unsigned long long)v_);    \
        assert_int_equal(v_, 0xdeadbeef); /* output untouched on failure */               \
    } while (0)

#define DUR_OK(str, val)                                                                   \
    do {                                                                                   \
        uint64_t v_ = 0xdeadbeef;                                                          \
        const char *s_ = (str), *p_ = s_ ? s_ : "(null)";                                \
        if (!parse_duration(s_, &v_))                                                     \
            fail_msg("parse_duration(\"%s\") rejected", p_);                             \
        if (v_ != (uint64_t)(val))                                                         \
            fail_msg("parse_duration(\"%s\") = %llu ns, expected %llu", p_,               \
                     (unsigned long long)v_, (unsigned long long)(val));                   \
    } while (0)
#define DUR_BAD(str)                                                                       \
    do {                                                                                   \
        uint64_t v_ = 0xdeadbeef;                                                          \
        const char *s_ = (str), *p_ = s_ ? s_ : "(null)";                                \
        if (parse_duration(s_, &v_))                                                      \
            fail_msg("parse_duration(\"%s\") accepted: %llu", p_, (unsigned long long)v_);\
        assert_int_equal(v_, 0xdeadbeef);                                                 \
    } while (0)

#define U64_OK(str, val)                                                                   \
    do {                                                                                   \
        uint64_t v_ = 0xdeadbeef;                                                          \
        const char *s_ = (str), *p_ = s_ ? s_ : "(null)";                                \
        if (!parse_u64(s_, &v_))                                                          \
            fail_msg("parse_u64(\"%s\") rejected", p_);                                  \
        if (v_ != (uint64_t)(val))                                                         \
            fail_msg("parse_u64(\"%s\") = %llu, expected %llu", p_,                       \
                     (unsigned long long)v_, (unsigned long long)(val));                   \
    } while (0)
#define U64_BAD(str)                                                                       \
    do {                                                                                   \
        uint64_t v_ = 0xdeadbeef;                                                          \
        const char *s_ = (str), *p_ = s_ ? s_ : "(null)";                                \
        if (parse_u64(s_, &v_))                                                           \
            fail_msg("parse_u64(\"%s\") accepted: %llu", p_, (unsigned long long)v_);     \
        assert_int_equal(v_, 0xdeadbeef);                                                 \
    } while (0)

static void test_parse_size_units(void **state)
{
    (void)state;
    SIZE_OK("4096", 4096);
    SIZE_OK("0", 0);
    SIZE_OK("1", 1);
    SIZE_OK("64k", 64ULL << 10);
    SIZE_OK("64K", 64ULL << 10);
    SIZE_OK("64KiB", 64ULL << 10);
    SIZE_OK("64kb", 64ULL << 10);
    SIZE_OK("512M", 512ULL << 20);
    SIZE_OK("512m", 512ULL << 20);
    SIZE_OK("512MiB", 512ULL << 20);
    SIZE_OK("1G", 1ULL << 30);
    SIZE_OK("1g", 1ULL << 30);
    SIZE_OK("4GiB", 4ULL << 30);
    SIZE_OK("4GB", 4ULL << 30);
    SIZE_OK("100b", 100);
    SIZE_OK("100B", 100);
    SIZE_OK("0007", 7); /* decimal, not octal */
    SIZE_OK("010M", 10ULL << 20);
}

static void test_parse_size_limits(void **state)
{
    (void)state;
    SIZE_OK("18446744073709551615", UINT64_MAX);
    SIZE_OK("17179869183G", 17179869183ULL << 30); /* the largest that fits */
    SIZE_BAD("17179869184G");                      /* 2^34 G = 2^64: overflow */
    SIZE_BAD("18446744073709551616");              /* 2^64 */
    SIZE_BAD("99999999999999999999G");
    SIZE_BAD("99999999999999999999");
    SIZE_BAD("18014398509481984K");                /* 2^54 K */
    SIZE_OK("18014398509481983K", 18014398509481983ULL << 10);
}

static void test_parse_size_garbage(void **state)
{
    (void)state;
    SIZE_BAD("");
    SIZE_BAD(NULL);
    SIZE_BAD("-1");
    SIZE_BAD("-1G");
    SIZE_BAD("+1G");
    SIZE_BAD(" 1G");
    SIZE_BAD("1G ");
    SIZE_BAD("1 G");
    SIZE_BAD("G");
    SIZE_BAD("M1");
    SIZE_BAD("1T");
    SIZE_BAD("1GG");
    SIZE_BAD("1.5G");
    SIZE_BAD("0x1000");
    SIZE_BAD("1e6");
    SIZE_BAD("12abc");
    SIZE_BAD("1Gi");
    SIZE_BAD("1gibx");
    SIZE_BAD("\t5");
}

static void test_parse_duration(void **state)
{
    (void)state;
    DUR_OK("10s", 10ULL * 1000000000ULL);
    DUR_OK("500ms", 500ULL * 1000000ULL);
    DUR_OK("2m", 120ULL * 1000000000ULL);
    DUR_OK("2min", 120ULL * 1000000000ULL);
    DUR_OK("100us", 100000ULL);
    DUR_OK("250ns", 250);
    DUR_OK("3", 3ULL * 1000000000ULL); /* bare number: seconds */
    DUR_OK("0", 0);
    DUR_OK("0ms", 0);
    DUR_OK("18446744073s", 18446744073ULL * 1000000000ULL); /* largest whole seconds */
    DUR_BAD("18446744074s");
    DUR_BAD("18446744074");
    DUR_BAD("307445734561m"); /* > UINT64_MAX ns */
    DUR_BAD("99999999999999999999ns");
    DUR_BAD("10x");
    DUR_BAD("");
    DUR_BAD(NULL);
    DUR_BAD("s");
    DUR_BAD("ms");
    DUR_BAD("-1s");
    DUR_BAD("+1s");
    DUR_BAD(" 1s");
    DUR_BAD("1 s");
    DUR_BAD("1s ");
    DUR_BAD("1.5s");
    DUR_BAD("10S");  /* units are case-sensitive: M would be ambiguous */
    DUR_BAD("10MS");
    DUR_BAD("1h");
    DUR_BAD("10sec");
    DUR_BAD("10mss");
    DUR_BAD("0x10s");
}

static void test_parse_u64(void **state)
{
    (void)state;
    U64_OK("0", 0);
    U64_OK("1", 1);
    U64_OK("42", 42);
    U64_OK("18446744073709551615", UINT64_MAX);
    U64_OK("0x10", 16);
    U64_OK("0X10", 16);
    U64_OK("0xffffffffffffffff", UINT64_MAX);
    U64_OK("0xDEADbeef", 0xdeadbeef);
    U64_BAD("");
    U64_BAD(NULL);
    U64_BAD("-1");
    U64_BAD("-0");
    U64_BAD(" 1");
    U64_BAD("\n1");
    U64_BAD("1 ");
    U64_BAD("18446744073709551616");
    U64_BAD("0x10000000000000000");
    U64_BAD("99999999999999999999");
    U64_BAD("0x");
    U64_BAD("x10");
    U64_BAD("12abc");
    U64_BAD("1.0");
    U64_BAD("abc");
    U64_BAD("0xg");
}

/* util.h documents parse_u64 as "Decimal or 0x-hex": a leading zero must not switch to
 * octal, and a sign is not part of either format. */
static void test_parse_u64_decimal_with_leading_zero(void **state)
{
    (void)state;
    uint64_t v = 0;
    bool ok010 = parse_u64("010", &v);
    uint64_t v010 = ok010 ? v : 0;
    bool ok08 = parse_u64("08", &v);
    uint64_t v08 = ok08 ? v : 0;
    bool okplus = parse_u64("+5", &v);
    if (!ok010 || v010 != 10 || !ok08 || v08 != 8 || okplus) {
        print_message("VMM BUG (fixed, regressed) (util.c:30, strtoull base 0): parse_u64(\"010\") -> %s "
                      "%llu, parse_u64(\"08\") -> %s %llu, parse_u64(\"+5\") -> %s\n",
                      ok010 ? "ok" : "rejected", (unsigned long long)v010,
                      ok08 ? "ok" : "rejected", (unsigned long long)v08,
                      okplus ? "accepted" : "rejected");
        fail_msg("VMM bug is back");
    }
}

static void test_splitmix64(void **state)
{
    (void)state;
    /* Reference values of splitmix64 seeded with 0 (Vigna's reference implementation). */
    uint64_t s = 0;
    assert_int_equal(splitmix64(&s), 0xe220a8397b1dcdafULL);
    assert_int_equal(splitmix64(&s), 0x6e789e6aa1b965f4ULL);
    assert_int_equal(splitmix64(&s), 0x06c45d188009454fULL);
    /* deterministic per seed, different across seeds */
    uint64_t a = 1, b = 1, c = 2;
    for (int i = 0; i < 100; i++) {
        uint64_t x = splitmix64(&a), y = splitmix64(&b);
        assert_int_equal(x, y);
    }
    uint64_t a2 = 1;
    assert_true(splitmix64(&a2) != splitmix64(&c));
}

static void test_mono_ns(void **state)
{
    (void)state;
    uint64_t t0 = mono_ns();
    uint64_t t1 = mono_ns();
    assert_true(t0 > 0);
    assert_true(t1 >= t0);
}

static void test_jx_err(void **state)
{
    (void)state;
    /* must not crash on long messages (it formats into a fixed buffer) */
    char big[4000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    assert_true(saved >= 0 && null >= 0);
    dup2(null, 2);
    jx_set_progname("test_vmm_util");
    jx_err("long message test: %s", big);
    jx_set_progname("jinx-vmm");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(null);
}

static void verr_into(char *out, size_t cap, const char *what, const char *fmt, ...)
{
    /* stderr into a file, read back */
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    va_list ap;
    va_start(ap, fmt);
    jx_verr(what, fmt, ap);
    va_end(ap);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
}

/* One prefix convention: "<program>: [<what>: ]<message>" (util.h). */
static void test_jx_verr_prefix(void **state)
{
    (void)state;
    char got[256];
    jx_set_progname("jinxctl");
    verr_into(got, sizeof got, "inspect", "cannot open %s", "x.jinxdump");
    assert_string_equal(got, "jinxctl: inspect: cannot open x.jinxdump\n");
    verr_into(got, sizeof got, NULL, "%d threads", 3);
    assert_string_equal(got, "jinxctl: 3 threads\n");
    jx_set_progname("jinx-vmm");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size_units),
        cmocka_unit_test(test_parse_size_limits),
        cmocka_unit_test(test_parse_size_garbage),
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_parse_u64_decimal_with_leading_zero),
        cmocka_unit_test(test_splitmix64),
        cmocka_unit_test(test_mono_ns),
        cmocka_unit_test(test_jx_err),
        cmocka_unit_test(test_jx_verr_prefix),
    };
    /* JINX_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards * and ?) */
    const char *filter = getenv("JINX_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("vmm/util", tests, NULL, NULL);
}
