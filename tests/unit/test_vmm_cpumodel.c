/* CPU models (vmm/kvm/cpumodel.h, libvirtcpu.h): libvirt's model -> the CPUID table, with
 * known bits of three models checked against the Intel/AMD manuals' bit positions, the
 * XSAVE leaf, the missing-feature check, and the feature file parser on bad input. Uses
 * libvirt's test driver (test:///default) and its installed cpu_map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/cpumodel.h"
#include "kvm/libvirtcpu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(n) (1u << (n))
#define IDX KVM_CPUID_FLAG_SIGNIFCANT_INDEX

/* A host that supports everything: every feature register all ones, and a leaf 0xD
 * with x87, SSE, AVX, the three AVX-512 components and PKRU (offsets as on Skylake). */
static struct kvm_cpuid2 *full_host(void)
{
    static const struct kvm_cpuid_entry2 ents[] = {
        {.function = 0, .eax = 0xD, .ebx = 0x756e6547},
        {.function = 1, .eax = 0x50654, .ecx = ~0u, .edx = ~0u},
        {.function = 7, .index = 0, .flags = IDX, .ebx = ~0u, .ecx = ~0u, .edx = ~0u},
        {.function = 0xD, .index = 0, .flags = IDX, .eax = 0x2E7, .ebx = 2696, .ecx = 2696},
        {.function = 0xD, .index = 1, .flags = IDX, .eax = 0xF, .ebx = 2696},
        {.function = 0xD, .index = 2, .flags = IDX, .eax = 256, .ebx = 576},
        {.function = 0xD, .index = 5, .flags = IDX, .eax = 64, .ebx = 1088},
        {.function = 0xD, .index = 6, .flags = IDX, .eax = 512, .ebx = 1152},
        {.function = 0xD, .index = 7, .flags = IDX, .eax = 1024, .ebx = 1664},
        {.function = 0xD, .index = 9, .flags = IDX, .eax = 8, .ebx = 2688},
        {.function = 0x80000001, .ecx = ~0u, .edx = ~0u},
    };
    size_t n = sizeof ents / sizeof ents[0];
    struct kvm_cpuid2 *c = calloc(1, sizeof *c + n * sizeof ents[0]);
    assert_non_null(c);
    c->nent = (uint32_t)n;
    memcpy(c->entries, ents, sizeof ents);
    return c;
}

static struct cpufeat_map map;

static int setup(void **s)
{
    (void)s;
    char err[256];
    int r = cpufeat_load(CPUFEAT_XML_PATH, &map, err, sizeof err);
    if (r < 0)
        fprintf(stderr, "%s\n", err);
    return r;
}

static int teardown(void **s)
{
    (void)s;
    cpufeat_free(&map);
    return 0;
}

/* host table restricted to libvirt's `model`; xcr0 out. */
static struct kvm_cpuid2 *model_table(const char *model, uint64_t *xcr0)
{
    char **names, err[4096];
    size_t n;
    int r = libvirtcpu_model_features(NULL, model, &names, &n, err, sizeof err);
    if (r < 0)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(r, 0);
    assert_true(n > 10);
    struct kvm_cpuid2 *c = full_host();
    cpumodel_apply(c, &map, (const char *const *)names, n, xcr0);
    libvirtcpu_free_names(names, n);
    return c;
}

static const struct kvm_cpuid_entry2 *ent(const struct kvm_cpuid2 *c, uint32_t l, uint32_t s)
{
    const struct kvm_cpuid_entry2 *e = cpumodel_entry(c, l, s);
    assert_non_null(e);
    return e;
}

static void test_kvm64(void **s)
{
    (void)s;
    uint64_t xcr0 = 0;
    struct kvm_cpuid2 *c = model_table("kvm64", &xcr0);
    /* Leaf 1 EDX: fpu de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36
     * clflush mmx fxsr sse sse2; bits 10 and 20 (reserved: no feature) stay. */
    uint32_t edx = BIT(0) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(8) |
                   BIT(9) | BIT(11) | BIT(12) | BIT(13) | BIT(14) | BIT(15) | BIT(16) |
                   BIT(17) | BIT(19) | BIT(23) | BIT(24) | BIT(25) | BIT(26);
    assert_int_equal(ent(c, 1, 0)->edx, edx | BIT(10) | BIT(20));
    /* Leaf 1 ECX: pni (SSE3), cx16, and xsave which jinx always keeps; no SSSE3 (9),
     * SSE4.1/4.2 (19, 20), POPCNT (23), AVX (28), RDRAND (30), hypervisor (31). */
    assert_int_equal(ent(c, 1, 0)->ecx & ~(BIT(11) | BIT(16)), BIT(0) | BIT(13) | BIT(26));
    assert_int_equal(ent(c, 7, 0)->ebx & (BIT(5) | BIT(16) | BIT(3) | BIT(8)), 0);
    assert_true(ent(c, 0x80000001, 0)->edx & BIT(29));   /* lm */
    assert_true(ent(c, 0x80000001, 0)->edx & BIT(20));   /* nx */
    assert_false(ent(c, 0x80000001, 0)->ecx & BIT(2));   /* svm: only qemu64 has it */
    assert_int_equal(xcr0, 0x3);
    assert_int_equal(ent(c, 0xD, 0)->eax, 0x3);
    assert_int_equal(ent(c, 0xD, 0)->ebx, 576);
    assert_int_equal(ent(c, 0xD, 0)->ecx, 576);
    assert_int_equal(ent(c, 0xD, 1)->eax & 0xF, 0);     /* no xsaveopt/xsavec/xgetbv1/xsaves */
    assert_int_equal(ent(c, 0xD, 2)->eax, 0);           /* AVX state hidden */
    assert_int_equal(ent(c, 0xD, 7)->eax, 0);
    assert_int_equal(ent(c, 1, 0)->eax, 0x50654);       /* family/model: KVM's */
    free(c);
}

static void test_nehalem(void **s)
{
    (void)s;
    uint64_t xcr0 = 0;
    struct kvm_cpuid2 *c = model_table("Nehalem", &xcr0);
    uint32_t ecx = ent(c, 1, 0)->ecx;
    assert_true(ecx & BIT(9));    /* ssse3 */
    assert_true(ecx & BIT(19));   /* sse4.1 */
    assert_true(ecx & BIT(20));   /* sse4.2 */
    assert_true(ecx & BIT(23));   /* popcnt */
    assert_false(ecx & BIT(28));  /* avx */
    assert_false(ecx & BIT(25));  /* aes: Westmere's */
    assert_int_equal(xcr0, 0x3);
    assert_int_equal(ent(c, 7, 0)->ebx & BIT(5), 0);
    free(c);
}

static void test_haswell(void **s)
{
    (void)s;
    uint64_t xcr0 = 0;
    struct kvm_cpuid2 *c = model_table("Haswell-noTSX", &xcr0);
    assert_true(ent(c, 1, 0)->ecx & BIT(28));    /* avx */
    assert_true(ent(c, 1, 0)->ecx & BIT(12));    /* fma */
    assert_false(ent(c, 1, 0)->ecx & BIT(30));   /* rdrand: masked later by cpu.c, not here */
    assert_true(ent(c, 7, 0)->ebx & BIT(5));     /* avx2 */
    assert_true(ent(c, 7, 0)->ebx & BIT(8));     /* bmi2 */
    assert_false(ent(c, 7, 0)->ebx & BIT(16));   /* avx512f */
    assert_false(ent(c, 7, 0)->ebx & BIT(11));   /* rtm: noTSX */
    assert_int_equal(xcr0, 0x7);
    assert_int_equal(ent(c, 0xD, 0)->ebx, 576 + 256);
    assert_int_equal(ent(c, 0xD, 2)->eax, 256);
    assert_int_equal(ent(c, 0xD, 5)->eax, 0);
    assert_int_equal(ent(c, 0xD, 9)->eax, 0);     /* PKRU: never in a model's XCR0 */
    free(c);
}

static void test_skylake_server(void **s)
{
    (void)s;
    uint64_t xcr0 = 0;
    struct kvm_cpuid2 *c = model_table("Skylake-Server-noTSX-IBRS", &xcr0);
    assert_true(ent(c, 7, 0)->ebx & BIT(16));    /* avx512f */
    assert_int_equal(xcr0, 0xE7);
    assert_int_equal(ent(c, 0xD, 0)->ebx, 1664 + 1024);
    free(c);
}

static void test_missing(void **s)
{
    (void)s;
    uint64_t x;
    struct kvm_cpuid2 *hsw = model_table("Haswell-noTSX", &x), *k64 = model_table("kvm64", &x);
    char out[1024];
    assert_int_equal(cpumodel_missing(hsw, hsw, &map, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(cpumodel_missing(k64, hsw, &map, out, sizeof out), 0);
    size_t k = cpumodel_missing(hsw, k64, &map, out, sizeof out);
    assert_true(k >= 5);
    assert_non_null(strstr(out, "avx2"));
    assert_non_null(strstr(out, "ssse3"));
    assert_non_null(strstr(out, "xsave-component-2"));
    char tiny[8];
    assert_int_equal(cpumodel_missing(hsw, k64, &map, tiny, sizeof tiny), k); /* truncates */
    free(hsw);
    free(k64);
}

static void test_unknown_model(void **s)
{
    (void)s;
    char **names, err[4096];
    size_t n;
    assert_int_equal(libvirtcpu_model_features(NULL, "NoSuchCPU", &names, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "does not know"));
    assert_non_null(strstr(err, "kvm64"));
    assert_int_equal(libvirtcpu_model_features(NULL, "a'/><x", &names, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a CPU model name"));
    assert_true(cpumodel_name_ok("Skylake-Client-noTSX-IBRS"));
    assert_false(cpumodel_name_ok(""));
    assert_false(cpumodel_name_ok("a b"));
    char big[80];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_false(cpumodel_name_ok(big));
}

static void test_parse_bad(void **s)
{
    (void)s;
    static const char *const bad[] = {
        "", "<cpus></cpus>", "<feature name='x'><cpuid eax_in='0x01' ecx='0x0'/></feature>",
        "<feature name='x'><cpuid eax_in='zz' ecx='0x1'/></feature>",
        "<feature name='x'><cpuid ecx='0x1'/></feature>",
        "<feature name='x'><cpuid eax_in='0x1' ecx='0x1'/>", "<feature name='x'",
        "<feature><cpuid eax_in='0x1' ecx='0x1'/></feature>",
        "<feature name='a b'><cpuid eax_in='0x1' ecx='0x1'/></feature>",
        "<feature name='x'><cpuid eax_in='0x1' ecx_in='-1' ecx='0x1'/></feature>",
        "<feature name='x'><cpuid eax_in='0x1' ecx='0x100000000'/></feature>",
    };
    char err[256];
    struct cpufeat_map m;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        assert_int_equal(cpufeat_parse(bad[i], strlen(bad[i]), &m, err, sizeof err), -1);
        assert_true(err[0]);
        assert_null(m.f);
    }
    const char *ok = "<feature name='x'><cpuid eax_in='0x07' ecx_in='0x00' ebx='0x20' "
                     "ecx='0x1'/></feature><feature name='m'><msr index='0x10a' edx='0' "
                     "eax='0x1'/></feature>";
    assert_int_equal(cpufeat_parse(ok, strlen(ok), &m, err, sizeof err), 0);
    assert_int_equal(m.n, 2); /* two registers; the MSR-only feature skipped */
    assert_int_equal(m.f[0].leaf, 7);
    assert_true(m.f[0].has_sub);
    assert_int_equal(m.f[0].reg, CPU_EBX);
    assert_int_equal(m.f[0].mask, 0x20);
    assert_int_equal(m.f[1].reg, CPU_ECX);
    cpufeat_free(&m);
    assert_int_equal(cpufeat_load("/nonexistent/x86_features.xml", &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "libvirt0"));
}

static void test_baseline(void **s)
{
    (void)s;
    const char *caps =
        "<capabilities><host><uuid>x</uuid><cpu><arch>x86_64</arch><model>Skylake-Client-"
        "noTSX-IBRS</model><vendor>Intel</vendor><feature name='avx512f'/></cpu></host>"
        "<guest><cpu><model>ignored</model></cpu></guest></capabilities>";
    const char *xmls[] = {
        "<cpu><arch>x86_64</arch><model>Haswell-noTSX</model><vendor>Intel</vendor></cpu>",
        caps};
    char *model, *xml, err[1024];
    int r = libvirtcpu_baseline(NULL, xmls, 2, &model, &xml, err, sizeof err);
    if (r < 0)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(r, 0);
    assert_string_equal(model, "Haswell-noTSX");
    assert_null(strstr(xml, "avx512f"));
    char **names;
    size_t n;
    assert_int_equal(libvirtcpu_parse_features(xml, "disable", &names, &n, err, sizeof err), 0);
    assert_int_equal(n, 0); /* both hosts present all of Haswell-noTSX */
    libvirtcpu_free_names(names, n);
    free(model);
    free(xml);
    const char *junk[] = {"<cpu><arch>x86_64</arch><model>NoSuch</model></cpu>"};
    assert_int_equal(libvirtcpu_baseline(NULL, junk, 1, &model, &xml, err, sizeof err), -1);
    assert_non_null(strstr(err, "baseline"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kvm64),          cmocka_unit_test(test_nehalem),
        cmocka_unit_test(test_haswell),        cmocka_unit_test(test_skylake_server),
        cmocka_unit_test(test_missing),        cmocka_unit_test(test_unknown_model),
        cmocka_unit_test(test_parse_bad),      cmocka_unit_test(test_baseline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
