/* The CPU model cache (vmm/kvm/cpucache.h): the file round-trips; every kind of damage
 * (each byte flipped, truncation at every length, a forged name, another model, too many
 * names) is refused; the key follows the library file and the CPU database; and
 * cpucache_model_features answers from a valid file, rebuilds a corrupt one from libvirt,
 * and works without a writable directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/cpucache.h"
#include "kvm/cpumodel.h"
#include "kvm/libvirtcpu.h"
#include "lib/sha256.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const NAMES[] = {"fpu", "sse2", "pni", "x2apic", "avx512-vp2intersect"};
#define NN (sizeof NAMES / sizeof NAMES[0])
static const char KEY[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static char *sample(size_t *len)
{
    char *t = cpucache_format("kvm64", KEY, "/usr/lib/libvirt.so.0", (char *const *)NAMES, NN,
                              len);
    assert_non_null(t);
    return t;
}

static int parse(const char *t, size_t len, const char *model, char ***names, size_t *n)
{
    char lib[256], key[65], why[128];
    return cpucache_parse(t, len, model, lib, sizeof lib, key, names, n, why, sizeof why);
}

static void round_trip(void **s)
{
    (void)s;
    size_t len, n;
    char *t = sample(&len), **names, lib[256], key[65], why[128];
    assert_int_equal(cpucache_parse(t, len, "kvm64", lib, sizeof lib, key, &names, &n, why,
                                    sizeof why), 0);
    assert_int_equal(n, NN);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(names[i], NAMES[i]);
    assert_string_equal(lib, "/usr/lib/libvirt.so.0");
    assert_string_equal(key, KEY);
    libvirtcpu_free_names(names, n);
    free(t);
}

/* Any single changed byte and any truncation: refused (the checksum, or the format). */
static void damage_refused(void **s)
{
    (void)s;
    size_t len, n;
    char *t = sample(&len), **names;
    for (size_t i = 0; i < len; i++) {
        char *c = malloc(len);
        memcpy(c, t, len);
        c[i] ^= (i % 3 == 0) ? 0x01 : (i % 3 == 1) ? 0x20 : 0x80;
        assert_int_equal(parse(c, len, "kvm64", &names, &n), -1);
        assert_null(names);
        free(c);
    }
    for (size_t k = 0; k < len; k++)
        assert_int_equal(parse(t, k, "kvm64", &names, &n), -1);
    assert_int_equal(parse(t, len, "Haswell", &names, &n), -1); /* another model's file */
    free(t);
}

/* Consistent files (checksum right) with bad content: refused all the same. */
static char *resum(const char *body)
{
    size_t bl = strlen(body);
    char *t = malloc(bl + 80), hex[65];
    uint8_t d[SHA256_LEN];
    memcpy(t, body, bl);
    sha256(body, bl, d);
    sha256_hex(d, hex);
    snprintf(t + bl, 80, "sha256 %s\n", hex);
    return t;
}

static void forged_refused(void **s)
{
    (void)s;
    static const char *const bodies[] = {
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures 1\nfpu sse\n",
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures 1\n../x\n",
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures 2\nfpu\n",
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures 1\nfpu\nsse\n",
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures 99999\nfpu\n",
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures 5000\nfpu\n",
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt rel\nfeatures 1\nfpu\n",
        "jinx-cpu-model-cache 2\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures 1\nfpu\n",
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %sZ\nlibvirt /l\nfeatures 1\nfpu\n",
        "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures -1\nfpu\n",
        ("jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\nfeatures 1\n"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"),
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char body[512], **names;
        size_t n;
        snprintf(body, sizeof body, bodies[i], KEY);
        char *t = resum(body);
        assert_int_equal(parse(t, strlen(t), "kvm64", &names, &n), -1);
        free(t);
    }
    /* The control: the same construction with good content parses. */
    char body[512], **names;
    size_t n;
    snprintf(body, sizeof body, "jinx-cpu-model-cache 1\nmodel kvm64\nkey %s\nlibvirt /l\n"
             "features 1\nfpu\n", KEY);
    char *t = resum(body);
    assert_int_equal(parse(t, strlen(t), "kvm64", &names, &n), 0);
    assert_int_equal(n, 1);
    libvirtcpu_free_names(names, n);
    free(t);
}

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The key changes with the library file, the database's files and the model. */
static void key_follows_inputs(void **s)
{
    (void)s;
    char dir[] = "/tmp/jinx-cpucache-XXXXXX", lib[64], map[64], f[96];
    assert_non_null(mkdtemp(dir));
    snprintf(lib, sizeof lib, "%s/libvirt.so", dir);
    snprintf(map, sizeof map, "%s/cpu_map", dir);
    assert_int_equal(mkdir(map, 0700), 0);
    snprintf(f, sizeof f, "%s/x86_kvm64.xml", map);
    write_file(lib, "v1");
    write_file(f, "<cpus/>");
    char k1[65], k2[65], k3[65], k4[65], k5[65];
    assert_int_equal(cpucache_key("kvm64", lib, map, k1), 0);
    assert_int_equal(cpucache_key("kvm64", lib, map, k2), 0);
    assert_string_equal(k1, k2);
    write_file(lib, "v2-longer");
    assert_int_equal(cpucache_key("kvm64", lib, map, k3), 0);
    assert_string_not_equal(k1, k3);
    write_file(f, "<cpus><model/></cpus>");
    assert_int_equal(cpucache_key("kvm64", lib, map, k4), 0);
    assert_string_not_equal(k3, k4);
    assert_int_equal(cpucache_key("qemu64", lib, map, k5), 0);
    assert_string_not_equal(k4, k5);
    unlink(lib);
    assert_int_equal(cpucache_key("kvm64", lib, map, k5), -1); /* no library: no cache */
    unlink(f);
    rmdir(map);
    rmdir(dir);
}

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "r");
    if (!f)
        return NULL;
    char *t = calloc(1, CPUCACHE_MAX_BYTES + 1);
    size_t n = fread(t, 1, CPUCACHE_MAX_BYTES, f);
    fclose(f);
    t[n] = 0;
    return t;
}

/* Through libvirt: miss (written), hit (the same names), corrupt -> rebuilt, forged key ->
 * rebuilt, unwritable -> still answers. */
static void end_to_end(void **s)
{
    (void)s;
    char dir[] = "/tmp/jinx-cpucache-XXXXXX", p[128], err[512];
    assert_non_null(mkdtemp(dir));
    setenv("JINX_CACHE_DIR", dir, 1);
    snprintf(p, sizeof p, "%s/cpu-model-kvm64.txt", dir);
    char **a, **b;
    size_t na, nb;
    assert_int_equal(cpucache_model_features("kvm64", &a, &na, err, sizeof err), 0);
    assert_string_equal(cpucache_last(), "miss");
    char *good = slurp(p);
    assert_non_null(good);
    assert_int_equal(cpucache_model_features("kvm64", &b, &nb, err, sizeof err), 0);
    assert_string_equal(cpucache_last(), "hit");
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        assert_string_equal(a[i], b[i]);
    libvirtcpu_free_names(b, nb);
    /* Corrupt: a feature renamed without fixing the checksum. */
    char *bad = strdup(good), *fpu = strstr(bad, "\nfpu\n");
    assert_non_null(fpu);
    memcpy(fpu + 1, "avx", 3);
    write_file(p, bad);
    assert_int_equal(cpucache_model_features("kvm64", &b, &nb, err, sizeof err), 0);
    assert_string_equal(cpucache_last(), "miss");
    char *again = slurp(p);
    assert_string_equal(again, good);
    libvirtcpu_free_names(b, nb);
    free(again);
    /* Consistent but for another host (key): rebuilt too. */
    char *k = strstr(bad, "\nkey ");
    memcpy(bad, good, strlen(good) + 1);
    k[5] = k[5] == '0' ? '1' : '0';
    char *body = strndup(bad, strlen(bad) - 72), *forged = resum(body);
    write_file(p, forged);
    assert_int_equal(cpucache_model_features("kvm64", &b, &nb, err, sizeof err), 0);
    assert_string_equal(cpucache_last(), "miss");
    libvirtcpu_free_names(b, nb);
    free(body);
    free(forged);
    free(bad);
    /* A directory that cannot be made: libvirt answers, nothing fails. */
    unlink(p);
    rmdir(dir);
    setenv("JINX_CACHE_DIR", "/proc/jinx-no-such-dir", 1);
    assert_int_equal(cpucache_model_features("kvm64", &b, &nb, err, sizeof err), 0);
    assert_string_equal(cpucache_last(), "unwritable");
    assert_int_equal(nb, na);
    libvirtcpu_free_names(b, nb);
    libvirtcpu_free_names(a, na);
    free(good);
    unsetenv("JINX_CACHE_DIR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(damage_refused),
        cmocka_unit_test(forged_refused),
        cmocka_unit_test(key_follows_inputs),
        cmocka_unit_test(end_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
