/* The code-scan cache (linux/scancache.h): a whole-file scan filtered to a range equals
 * the range's own scan (on real libraries, many ranges); the file format round-trips; the
 * key follows every field of the file's identity, the kinds and the engine; the parser
 * refuses each kind of bad file and leaves nothing; scancache_scan misses, then hits with
 * the same result, and a corrupted entry is rescanned and rewritten. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cachedir.h"
#include "lib/sha256.h"
#include "linux/cpuidscan.h"
#include "linux/scancache.h"

struct file {
    const uint8_t *data;
    size_t size;
    struct stat st;
};

/* The first of these that exists (Debian's ld.so is always there). */
static const char *const libs[] = {"/lib64/ld-linux-x86-64.so.2",
                                   "/usr/lib/x86_64-linux-gnu/libc.so.6",
                                   "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"};

static bool open_file(const char *path, struct file *f)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = fstat(fd, &f->st) == 0 && f->st.st_size > 0;
    void *p = ok ? mmap(NULL, (size_t)f->st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (p == MAP_FAILED)
        return false;
    f->data = p;
    f->size = (size_t)f->st.st_size;
    return true;
}

static void close_file(struct file *f) { munmap((void *)f->data, f->size); }

static void assert_same(const struct cpuidscan *a, const struct cpuidscan *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->nu, b->nu);
    assert_int_equal(a->unsure, b->unsure);
    for (int k = 0; k < PATCH_NKINDS; k++)
        assert_int_equal(a->unsure_kind[k], b->unsure_kind[k]);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->sites[i], b->sites[i]);
        assert_int_equal(a->kind[i], b->kind[i]);
    }
    for (size_t i = 0; i < a->nu; i++) {
        assert_int_equal(a->unsure_at[i], b->unsure_at[i]);
        assert_int_equal(a->unsure_at_kind[i], b->unsure_at_kind[i]);
    }
}

static void test_select_equals_range_scan(void **state)
{
    (void)state;
    size_t tried = 0, with_sites = 0;
    for (size_t l = 0; l < sizeof libs / sizeof libs[0]; l++) {
        struct file f;
        if (!open_file(libs[l], &f))
            continue;
        tried++;
        struct cpuidscan whole = {0};
        assert_int_equal(cpuidscan_file_kinds(f.data, f.size, 0, f.size, PATCH_KINDS_ALL, &whole), 0);
        with_sites += whole.n > 0;
        /* Ranges: the whole file, halves, and pseudo-random ones (some cutting a site). */
        uint64_t x = 0x9e3779b97f4a7c15ULL;
        for (int i = 0; i < 24; i++) {
            uint64_t off, len;
            if (i == 0)
                off = 0, len = f.size;
            else if (i <= 2)
                off = i == 1 ? 0 : f.size / 2, len = f.size / 2;
            else if (i <= 4 && whole.n)
                off = whole.sites[whole.n / 2] + (i == 3), len = f.size / 4;
            else {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                off = (x >> 11) % f.size;
                len = (x >> 3) % (f.size - off + 1);
            }
            struct cpuidscan a = {0}, b = {0};
            assert_int_equal(cpuidscan_file_kinds(f.data, f.size, off, len, PATCH_KINDS_ALL, &a), 0);
            assert_int_equal(cpuidscan_select(&whole, off, len, &b), 0);
            assert_same(&a, &b);
            cpuidscan_free(&a);
            cpuidscan_free(&b);
        }
        cpuidscan_free(&whole);
        close_file(&f);
    }
    assert_true(tried > 0);
    assert_true(with_sites > 0);
}

static void test_format_parse_round_trip(void **state)
{
    (void)state;
    struct file f;
    assert_true(open_file(libs[0], &f));
    struct cpuidscan r = {0}, back;
    assert_int_equal(cpuidscan_file_kinds(f.data, f.size, 0, f.size, PATCH_KINDS_ALL, &r), 0);
    char key[65], why[128];
    scancache_key(&f.st, PATCH_KINDS_ALL, cpuidscan_engine(), key);
    size_t len;
    char *t = scancache_format(key, &r, &len);
    assert_non_null(t);
    assert_int_equal(scancache_parse(t, len, key, f.data, f.size, PATCH_KINDS_ALL, &back, why,
                                     sizeof why), 0);
    assert_same(&r, &back);
    cpuidscan_free(&back);
    /* Another key (another file version): refused, nothing left. */
    char other[65];
    memcpy(other, key, 65);
    other[0] = other[0] == 'a' ? 'b' : 'a';
    assert_int_equal(scancache_parse(t, len, other, f.data, f.size, PATCH_KINDS_ALL, &back,
                                     why, sizeof why), -1);
    assert_int_equal(back.n + back.nu, 0);
    assert_non_null(strstr(why, "key"));
    free(t);
    cpuidscan_free(&r);
    close_file(&f);
}

static void test_key_covers_identity(void **state)
{
    (void)state;
    struct stat st = {.st_dev = 1, .st_ino = 2, .st_size = 3};
    st.st_mtim.tv_sec = 4, st.st_mtim.tv_nsec = 5, st.st_ctim.tv_sec = 6, st.st_ctim.tv_nsec = 7;
    char base[65], k[65];
    scancache_key(&st, PATCH_KINDS_ALL, 0x10004, base);
    assert_int_equal(strlen(base), 64);
    scancache_key(&st, PATCH_KINDS_ALL, 0x10004, k);
    assert_string_equal(base, k);
#define CHANGED(stmt)                                                                      \
    do {                                                                                   \
        struct stat s2 = st;                                                               \
        unsigned kinds = PATCH_KINDS_ALL, eng = 0x10004;                                   \
        stmt;                                                                              \
        scancache_key(&s2, kinds, eng, k);                                                 \
        assert_string_not_equal(base, k);                                                  \
    } while (0)
    CHANGED(s2.st_dev++);
    CHANGED(s2.st_ino++);
    CHANGED(s2.st_size++);
    CHANGED(s2.st_mtim.tv_sec++);
    CHANGED(s2.st_mtim.tv_nsec++);
    CHANGED(s2.st_ctim.tv_sec++);
    CHANGED(s2.st_ctim.tv_nsec++);
    CHANGED(kinds = PATCH_KINDS_TSC);
    CHANGED(eng++);
#undef CHANGED
}

/* A cache file: body and a right checksum line. */
static char *sealed(const char *body, size_t *len)
{
    size_t bl = strlen(body);
    char *t = malloc(bl + 73);
    memcpy(t, body, bl);
    uint8_t d[SHA256_LEN];
    char hex[65];
    sha256(t, bl, d);
    sha256_hex(d, hex);
    snprintf(t + bl, 73, "sha256 %s\n", hex);
    *len = bl + 72;
    return t;
}

static void test_parse_refuses(void **state)
{
    (void)state;
    /* A small "file": rdtsc at 4, cpuid at 8, 0F 31 at 12 (unsure), nothing at 0. */
    uint8_t data[16] = {0x90, 0x90, 0x90, 0x90, 0x0f, 0x31, 0x90, 0x90,
                        0x0f, 0xa2, 0x90, 0x90, 0x0f, 0x31, 0x90, 0x90};
    const char *key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char head[128];
    snprintf(head, sizeof head, "jinx-scan-cache 1\nkey %s\n", key);
    struct {
        const char *rest;
        unsigned kinds;
        const char *why;
    } cases[] = {
        {"s 4 1\ns 8 0\nu 12 1\ncount 2 1\n", PATCH_KINDS_ALL, NULL},
        {"s 4 1\ncount 2 0\n", PATCH_KINDS_ALL, "count"},
        {"s 4 1\n", PATCH_KINDS_ALL, "no count"},
        {"s 4 1\ncount 1 0\ns 8 0\n", PATCH_KINDS_ALL, "after the count"},
        {"s 0 1\ncount 1 0\n", PATCH_KINDS_ALL, "no such instruction"},
        {"s 15 1\ncount 1 0\n", PATCH_KINDS_ALL, "no such instruction"},
        {"s 99999999999 1\ncount 1 0\n", PATCH_KINDS_ALL, "no such instruction"},
        {"s 8 0\ncount 1 0\n", PATCH_KINDS_TSC, "kind"},
        {"s 4 7\ncount 1 0\n", PATCH_KINDS_ALL, "kind"},
        {"s 4  1\ncount 1 0\n", PATCH_KINDS_ALL, "malformed"},
        {"s +4 1\ncount 1 0\n", PATCH_KINDS_ALL, "malformed"},
        {"x 4 1\ncount 1 0\n", PATCH_KINDS_ALL, "malformed"},
        {"s 4 1\ncount 1 0", PATCH_KINDS_ALL, "unterminated"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[512];
        snprintf(body, sizeof body, "%s%s", head, cases[i].rest);
        size_t len;
        char *t = sealed(body, &len), why[128] = "";
        struct cpuidscan r;
        int rc = scancache_parse(t, len, key, data, sizeof data, cases[i].kinds, &r, why,
                                 sizeof why);
        if (!cases[i].why) {
            assert_int_equal(rc, 0);
            assert_int_equal(r.n, 2);
            assert_int_equal(r.nu, 1);
            assert_int_equal(r.unsure_kind[PATCH_RDTSC], 1);
            cpuidscan_free(&r); /* the parses below start from a zeroed r */
        } else {
            if (rc != -1 || !strstr(why, cases[i].why))
                fail_msg("case %zu: rc %d, why '%s', want '%s'", i, rc, why, cases[i].why);
            assert_int_equal(r.n + r.nu + r.unsure, 0);
        }
        /* A flipped checksum byte, the magic, and a truncation: always refused. */
        t[len - 2] ^= 1;
        assert_int_equal(scancache_parse(t, len, key, data, sizeof data, cases[i].kinds, &r, why,
                                         sizeof why), -1);
        assert_non_null(strstr(why, "checksum"));
        t[len - 2] ^= 1;
        assert_int_equal(scancache_parse(t, len - 1, key, data, sizeof data, cases[i].kinds, &r,
                                         why, sizeof why), -1);
        free(t);
    }
}

static void test_scan_miss_hit_repair(void **state)
{
    (void)state;
    char dir[] = "/tmp/jinx-scancache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("JINX_CACHE_DIR", dir, 1);
    struct file f;
    assert_true(open_file(libs[0], &f));
    unsigned h0, m0, h, m;
    scancache_counts(&h0, &m0);
    struct cpuidscan fresh = {0}, a, b, c;
    assert_int_equal(cpuidscan_file_kinds(f.data, f.size, 0, f.size, PATCH_KINDS_ALL, &fresh), 0);
    assert_int_equal(scancache_scan(&f.st, f.data, f.size, PATCH_KINDS_ALL, &a), 0);
    scancache_counts(&h, &m);
    assert_int_equal(h - h0, 0);
    assert_int_equal(m - m0, 1);
    assert_same(&fresh, &a);
    assert_int_equal(scancache_scan(&f.st, f.data, f.size, PATCH_KINDS_ALL, &b), 0);
    scancache_counts(&h, &m);
    assert_int_equal(h - h0, 1);
    assert_same(&fresh, &b);
    /* Corrupt the entry: a miss (a fresh scan, the same answer), then rewritten. */
    char key[65], path[4200];
    scancache_key(&f.st, PATCH_KINDS_ALL, cpuidscan_engine(), key);
    snprintf(path, sizeof path, "%s/scan-%.32s.txt", dir, key);
    FILE *w = fopen(path, "r+");
    assert_non_null(w);
    fseek(w, 20, SEEK_SET);
    fputc('#', w);
    fclose(w);
    assert_int_equal(scancache_scan(&f.st, f.data, f.size, PATCH_KINDS_ALL, &c), 0);
    scancache_counts(&h, &m);
    assert_int_equal(m - m0, 2);
    assert_same(&fresh, &c);
    cpuidscan_free(&c);
    assert_int_equal(scancache_scan(&f.st, f.data, f.size, PATCH_KINDS_ALL, &c), 0);
    scancache_counts(&h, &m);
    assert_int_equal(h - h0, 2);
    /* Another kind set is another entry. */
    struct cpuidscan t;
    assert_int_equal(scancache_scan(&f.st, f.data, f.size, PATCH_KINDS_TSC, &t), 0);
    scancache_counts(&h, &m);
    assert_int_equal(m - m0, 3);
    for (size_t i = 0; i < t.n; i++)
        assert_int_not_equal(t.kind[i], PATCH_CPUID);
    /* No directory at all: scanned, counted as a miss, nothing fails. */
    unsetenv("JINX_CACHE_DIR");
    setenv("HOME", "relative", 1);
    unsetenv("XDG_CACHE_HOME");
    struct cpuidscan n;
    assert_int_equal(scancache_scan(&f.st, f.data, f.size, PATCH_KINDS_ALL, &n), 0);
    assert_same(&fresh, &n);
    cpuidscan_free(&n);
    cpuidscan_free(&t);
    cpuidscan_free(&a);
    cpuidscan_free(&b);
    cpuidscan_free(&c);
    cpuidscan_free(&fresh);
    close_file(&f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_equals_range_scan),
        cmocka_unit_test(test_format_parse_round_trip),
        cmocka_unit_test(test_key_covers_identity),
        cmocka_unit_test(test_parse_refuses),
        cmocka_unit_test(test_scan_miss_hit_repair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
