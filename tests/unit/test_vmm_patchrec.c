/* The CPUID_PATCHES dump record (vmm/dump/patchrec.h): round trip, and every malformed
 * form refused with a message (the record is untrusted input). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dump/patchrec.h"
#include "kvm/layout.h"
#include "lib/bytes.h"

static void test_round_trip(void **state)
{
    (void)state;
    const uint64_t va[] = {0x401000, 0x401067, 0x7effffc2a000};
    struct dbuf b = {0};
    assert_int_equal(patchrec_encode(va, 3, &b), 0);
    assert_int_equal(b.len, 8 + 3 * 8);
    struct patch_rec r;
    char err[256];
    assert_int_equal(patchrec_parse(b.p, b.len, &r, err, sizeof err), 0);
    assert_true(r.present);
    assert_int_equal(r.n, 3);
    assert_memory_equal(r.va, va, sizeof va);
    patchrec_free(&r);
    dbuf_free(&b);
    /* No sites is a valid record. */
    assert_int_equal(patchrec_encode(NULL, 0, &b), 0);
    assert_int_equal(patchrec_parse(b.p, b.len, &r, err, sizeof err), 0);
    assert_int_equal(r.n, 0);
    patchrec_free(&r);
    dbuf_free(&b);
}

static int parse_sites(const uint64_t *va, uint32_t n, uint32_t claimed, char *err)
{
    struct dbuf b = {0};
    bput_u32(&b, claimed);
    bput_u32(&b, 0);
    for (uint32_t i = 0; i < n; i++)
        bput_u64(&b, va[i]);
    struct patch_rec r;
    int rc = patchrec_parse(b.p, b.len, &r, err, 256);
    patchrec_free(&r);
    dbuf_free(&b);
    return rc;
}

static void test_malformed(void **state)
{
    (void)state;
    char err[256];
    const uint64_t desc[] = {0x402000, 0x401000};
    assert_int_equal(parse_sites(desc, 2, 2, err), -1);
    assert_non_null(strstr(err, "site 1"));
    const uint64_t dup[] = {0x401000, 0x401000};
    assert_int_equal(parse_sites(dup, 2, 2, err), -1);
    const uint64_t low[] = {0x10};
    assert_int_equal(parse_sites(low, 1, 1, err), -1);
    const uint64_t kernel[] = {0xffff800000001000ULL};
    assert_int_equal(parse_sites(kernel, 1, 1, err), -1);
    const uint64_t top[] = {USER_TOP - 1};
    assert_int_equal(parse_sites(top, 1, 1, err), -1);
    const uint64_t ok[] = {0x401000};
    assert_int_equal(parse_sites(ok, 1, 2, err), -1); /* more claimed than present */
    assert_non_null(strstr(err, "count 2"));
    assert_int_equal(parse_sites(ok, 1, 0xFFFFFFFFu, err), -1);
    struct patch_rec r;
    const uint8_t cut[3] = {1, 0, 0};
    assert_int_equal(patchrec_parse(cut, sizeof cut, &r, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
