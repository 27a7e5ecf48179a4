/* The CPUID_PATCHES dump record (vmm/dump/patchrec.h): round trip, with kinds (version
 * 1) and as older dumps wrote it (version 0), and every malformed form refused with a
 * message (the record is untrusted input). */
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

static void test_kinds(void **state)
{
    (void)state;
    const uint64_t va[] = {0x401000, 0x401002, 0x7effffc2a000};
    const uint8_t kinds[] = {PATCH_RDTSC, PATCH_RDTSCP, PATCH_CPUID};
    struct dbuf b = {0};
    assert_int_equal(patchrec_encode_kinds(va, kinds, 3, &b), 0);
    assert_int_equal(b.len, 8 + 3 * 8);
    struct patch_rec r;
    char err[256];
    assert_int_equal(patchrec_parse(b.p, b.len, &r, err, sizeof err), 0);
    assert_int_equal(r.n, 3);
    assert_memory_equal(r.va, va, sizeof va);
    assert_memory_equal(r.kind, kinds, sizeof kinds);
    patchrec_free(&r);
    /* A reader of version 0 only (it checked each entry as an address below USER_TOP)
     * refuses an rdtsc entry rather than answer it as CPUID. */
    uint64_t e;
    memcpy(&e, b.p + 8, 8);
    assert_true(e >= USER_TOP);
    dbuf_free(&b);
    /* Unknown kinds and a bad address are not encoded. */
    const uint8_t bad_kind[] = {PATCH_NKINDS};
    assert_int_equal(patchrec_encode_kinds(va, bad_kind, 1, &b), -1);
    dbuf_free(&b);
    const uint64_t huge[] = {1ULL << 60};
    assert_int_equal(patchrec_encode_kinds(huge, kinds, 1, &b), -1);
    dbuf_free(&b);
}

/* A record of version v whose entries are raw[0..n) as written. */
static int parse_raw(uint32_t v, const uint64_t *raw, uint32_t n, struct patch_rec *r, char *err)
{
    struct dbuf b = {0};
    bput_u32(&b, n);
    bput_u32(&b, v);
    for (uint32_t i = 0; i < n; i++)
        bput_u64(&b, raw[i]);
    int rc = patchrec_parse(b.p, b.len, r, err, 256);
    dbuf_free(&b);
    return rc;
}

static void test_versions(void **state)
{
    (void)state;
    char err[256];
    struct patch_rec r;
    /* Version 0 (dumps before rdtsc patching): addresses, every one a cpuid site. */
    const uint64_t old[] = {0x401000, 0x401067};
    assert_int_equal(parse_raw(0, old, 2, &r, err), 0);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.kind[0], PATCH_CPUID);
    assert_int_equal(r.kind[1], PATCH_CPUID);
    patchrec_free(&r);
    /* Version 0 has no kinds: an entry with kind bits is no user address. */
    const uint64_t kinded[] = {0x401000 | 1ULL << 56};
    assert_int_equal(parse_raw(0, kinded, 1, &r, err), -1);
    assert_non_null(strstr(err, "not an ascending user address"));
    assert_int_equal(parse_raw(1, kinded, 1, &r, err), 0);
    assert_int_equal(r.kind[0], PATCH_RDTSC);
    assert_int_equal(r.va[0], 0x401000);
    patchrec_free(&r);
    /* Unknown kind; a later version; kinds do not make equal addresses ascending. */
    const uint64_t unknown[] = {0x401000 | 3ULL << 56};
    assert_int_equal(parse_raw(1, unknown, 1, &r, err), -1);
    assert_non_null(strstr(err, "unknown kind 3"));
    assert_int_equal(parse_raw(2, old, 2, &r, err), -1);
    assert_non_null(strstr(err, "version 2"));
    const uint64_t same[] = {0x401000, 0x401000 | 1ULL << 56};
    assert_int_equal(parse_raw(1, same, 2, &r, err), -1);
    assert_non_null(strstr(err, "site 1"));
    /* Bits between the address and the kind are not an address either. */
    const uint64_t mid[] = {0x401000 | 1ULL << 50};
    assert_int_equal(parse_raw(1, mid, 1, &r, err), -1);
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
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
