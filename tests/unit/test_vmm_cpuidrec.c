/* The dump's CPUID record (vmm/dump/cpuidrec.h): encode/parse round trip, and every
 * malformed payload refused with a message (never a crash or an over-read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "dump/cpuidrec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct kvm_cpuid_entry2 E[3] = {
    {.function = 0, .eax = 0xD, .ebx = 1, .ecx = 2, .edx = 3},
    {.function = 7, .index = 0, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .ebx = 0x20},
    {.function = 7, .index = 1, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 0x10}};

/* The table of E (struct kvm_cpuid2 ends in a flexible array). */
static struct kvm_cpuid2 *table(void)
{
    static struct kvm_cpuid2 *c;
    if (!c) {
        c = calloc(1, sizeof *c + sizeof E);
        assert_non_null(c);
        c->nent = 3;
        memcpy(c->entries, E, sizeof E);
    }
    return c;
}

static void encode(const char *model, struct dbuf *b)
{
    memset(b, 0, sizeof *b);
    assert_int_equal(cpuidrec_encode(model, table(), b), 0);
}

static void test_roundtrip(void **s)
{
    (void)s;
    struct dbuf b;
    encode("Haswell-noTSX", &b);
    assert_int_equal(b.len, 4 + 13 + 8 + 3 * CPUIDREC_ENTRY_LEN);
    struct cpuid_rec r;
    char err[256];
    assert_int_equal(cpuidrec_parse(b.p, b.len, &r, err, sizeof err), 0);
    assert_true(r.present);
    assert_string_equal(r.model, "Haswell-noTSX");
    assert_int_equal(r.table->nent, 3);
    assert_memory_equal(r.table->entries, E, sizeof E);
    cpuidrec_free(&r);
    assert_null(r.table);
    /* Through a dumpfile's extra records; absent is fine, two are refused. */
    struct dumpfile d;
    memset(&d, 0, sizeof d);
    assert_int_equal(cpuidrec_find(&d, &r, err, sizeof err), 0);
    assert_false(r.present);
    assert_int_equal(dumpfile_add_record(&d, DREC_CPUID, 0, b.p, b.len), 0);
    assert_int_equal(cpuidrec_find(&d, &r, err, sizeof err), 0);
    assert_true(r.present);
    cpuidrec_free(&r);
    assert_int_equal(dumpfile_add_record(&d, DREC_CPUID, 0, b.p, b.len), 0);
    assert_int_equal(cpuidrec_find(&d, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "two CPUID records"));
    dumpfile_free(&d);
    dbuf_free(&b);
}

static void test_encode_refuses(void **s)
{
    (void)s;
    struct dbuf b = {0};
    assert_int_equal(cpuidrec_encode("bad name", table(), &b), -1);
    assert_int_equal(cpuidrec_encode("kvm64", NULL, &b), -1);
    struct kvm_cpuid2 empty = {.nent = 0};
    assert_int_equal(cpuidrec_encode("kvm64", &empty, &b), -1);
    dbuf_free(&b);
}

/* A copy of the good record with one u32 at `off` replaced. */
static int parse_patched(size_t off, uint32_t v, char *err, size_t errlen)
{
    struct dbuf b;
    encode("kvm64", &b);
    memcpy(b.p + off, &v, 4);
    struct cpuid_rec r;
    int rc = cpuidrec_parse(b.p, b.len, &r, err, errlen);
    if (rc == 0)
        cpuidrec_free(&r);
    else
        assert_null(r.table);
    dbuf_free(&b);
    return rc;
}

static void test_malformed(void **s)
{
    (void)s;
    char err[256];
    const size_t ents = 4 + 5 + 8; /* str "kvm64", count, pad */
    assert_int_equal(parse_patched(ents - 8, 0, err, sizeof err), -1);       /* no entries */
    assert_non_null(strstr(err, "entry count"));
    assert_int_equal(parse_patched(ents - 8, 4, err, sizeof err), -1);       /* more than given */
    assert_int_equal(parse_patched(ents - 8, 0xFFFFFFFF, err, sizeof err), -1);
    assert_int_equal(parse_patched(ents + 8, 0x80, err, sizeof err), -1);    /* unknown flag */
    assert_non_null(strstr(err, "flags"));
    assert_int_equal(parse_patched(ents + CPUIDREC_ENTRY_LEN * 2 + 4, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "twice"));                                   /* 7.1 -> 7.0 */
    assert_int_equal(parse_patched(0, 64, err, sizeof err), -1);             /* name length */
    assert_non_null(strstr(err, "model name"));
    /* A name with characters a model cannot have. */
    struct dbuf b;
    encode("kvm64", &b);
    b.p[6] = '<';
    struct cpuid_rec r;
    assert_int_equal(cpuidrec_parse(b.p, b.len, &r, err, sizeof err), -1);
    /* Every truncation is refused. */
    b.p[6] = '6';
    for (size_t len = 0; len < b.len; len++)
        assert_int_equal(cpuidrec_parse(b.p, len, &r, err, sizeof err), -1);
    assert_int_equal(cpuidrec_parse(b.p, b.len, &r, err, sizeof err), 0);
    cpuidrec_free(&r);
    dbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_encode_refuses),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
