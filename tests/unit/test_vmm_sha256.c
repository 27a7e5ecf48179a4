/* Unit tests for lib/sha256.c: FIPS 180-4 / NIST known-answer vectors, streaming in odd
 * chunk sizes (the core writer feeds it page by page and in zero-filled holes), files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/sha256.h"

static void check(const void *msg, size_t len, const char *hex)
{
    uint8_t d[SHA256_LEN];
    char got[65];
    sha256(msg, len, d);
    sha256_hex(d, got);
    assert_string_equal(got, hex);
}

static void test_vectors(void **state)
{
    (void)state;
    check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check(m448, strlen(m448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
                       "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    check(m896, strlen(m896), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_million_a_streamed(void **state)
{
    (void)state;
    /* One million 'a' fed in chunks of varying, awkward sizes. */
    static char buf[1000];
    memset(buf, 'a', sizeof buf);
    struct sha256 s;
    sha256_init(&s);
    size_t left = 1000000, step = 1;
    while (left) {
        size_t n = step < left ? step : left;
        if (n > sizeof buf)
            n = sizeof buf;
        sha256_update(&s, buf, n);
        left -= n;
        step = step * 7 % 997 + 1;
    }
    uint8_t d[SHA256_LEN];
    char hex[65];
    sha256_final(&s, d);
    sha256_hex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_padding_boundaries(void **state)
{
    (void)state;
    /* Lengths around the 56-byte padding boundary: one shot equals byte-at-a-time. */
    uint8_t msg[130];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 31 + 7);
    for (size_t len = 50; len <= 130; len++) {
        uint8_t a[SHA256_LEN], b[SHA256_LEN];
        sha256(msg, len, a);
        struct sha256 s;
        sha256_init(&s);
        for (size_t i = 0; i < len; i++)
            sha256_update(&s, msg + i, 1);
        sha256_final(&s, b);
        assert_memory_equal(a, b, SHA256_LEN);
    }
}

static void test_file(void **state)
{
    (void)state;
    char path[] = "/tmp/jinx-sha-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "abc", 3), 3);
    close(fd);
    uint8_t d[SHA256_LEN];
    char hex[65];
    assert_int_equal(sha256_file(path, d), 0);
    sha256_hex(d, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    unlink(path);
    assert_int_equal(sha256_file(path, d), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_million_a_streamed),
        cmocka_unit_test(test_padding_boundaries),
        cmocka_unit_test(test_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
