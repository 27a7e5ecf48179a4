/* linux/libsyms.h: the link_map walk over a fake guest memory, names followed only
 * through resolve(), symbols from a real host library, and hostile link maps. */
#include "linux/libsyms.h"
#include <elf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* Guest memory: one flat window [BASE, BASE + sizeof mem). */
#define BASE 0x10000ULL
static uint8_t mem[0x4000];
static int resolves;            /* resolve() calls */
static const char *libc_path;   /* a real libc on this host */

static bool fake_read(void *ctx, uint64_t va, void *dst, size_t len)
{
    (void)ctx;
    if (va < BASE || va - BASE > sizeof mem || len > sizeof mem - (va - BASE))
        return false;
    memcpy(dst, mem + (va - BASE), len);
    return true;
}

/* Only "/granted/libc" is a library the guest may read: it stands for the host libc. */
static bool fake_resolve(void *ctx, const char *path, char *out)
{
    (void)ctx;
    resolves++;
    if (strcmp(path, "/granted/libc"))
        return false;
    snprintf(out, PATH_MAX, "%s", libc_path);
    return true;
}

static void put64(uint64_t va, uint64_t v)
{
    memcpy(mem + (va - BASE), &v, 8);
}

#define DYN    (BASE + 0x100)
#define RDEBUG (BASE + 0x200)
#define LM(i)  (BASE + 0x300 + 0x40 * (i))
#define NAMES  (BASE + 0x1000)
#define LIBC_BIAS 0x7f0000000000ULL

/* DT_DEBUG -> r_debug -> main program, libc, a refused file, an unaligned l_addr. */
static void build_map(void)
{
    memset(mem, 0, sizeof mem);
    put64(DYN, DT_NEEDED);
    put64(DYN + 16, DT_DEBUG);
    put64(DYN + 24, RDEBUG);
    put64(RDEBUG, 1);
    put64(RDEBUG + 8, LM(0));
    strcpy((char *)mem + (NAMES - BASE), "");
    strcpy((char *)mem + (NAMES + 0x10 - BASE), "/granted/libc");
    strcpy((char *)mem + (NAMES + 0x40 - BASE), "/etc/passwd");
    uint64_t lm[4][4] = {{0, NAMES, 0, LM(1)},
                         {LIBC_BIAS, NAMES + 0x10, 0, LM(2)},
                         {0x7f1000000000ULL, NAMES + 0x40, 0, LM(3)},
                         {0x7f2000000123ULL, NAMES + 0x10, 0, 0}};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 4; k++)
            put64(LM(i) + 8 * k, lm[i][k]);
}

static const struct libsyms_mem M = {.read = fake_read, .resolve = fake_resolve,
                                     .dynamic = DYN};

/* abort's link-time address in the host libc, from its own symbols. */
static uint64_t libc_symbol(const char *name)
{
    struct elf_image img = {0};
    char err[256];
    assert_int_equal(elf_read_file(libc_path, &img.data, &img.size, err, sizeof err), 0);
    elf_load_symbols(&img);
    uint64_t a = elf_lookup(&img, name);
    elf_free(&img);
    return a;
}

static void test_walk_and_format(void **state)
{
    (void)state;
    build_map();
    struct libsyms *ls = libsyms_new();
    struct libmap map;
    resolves = 0;
    libsyms_map(ls, &M, &map);
    assert_int_equal(map.n, 1);            /* only libc: "", refused, unaligned left out */
    assert_int_equal(map.e[0].bias, LIBC_BIAS);
    int asked = resolves;
    libsyms_map(ls, &M, &map);
    assert_int_equal(resolves, asked);     /* names are resolved once */
    assert_int_equal(map.n, 1);

    uint64_t ab = libc_symbol("abort");
    assert_true(ab != 0);
    char buf[256];
    assert_true(libmap_format(&map, LIBC_BIAS + ab + 5, false, buf, sizeof buf));
    assert_string_equal(buf, "libc.so.6!abort+0x5");
    assert_true(libmap_format(&map, LIBC_BIAS + ab, false, buf, sizeof buf));
    assert_string_equal(buf, "libc.so.6!abort");
    struct lib_hit h;
    assert_true(libmap_find(&map, LIBC_BIAS + ab, &h));
    assert_true(h.text);
    /* Outside every segment of libc: not a library address. */
    assert_false(libmap_format(&map, LIBC_BIAS - 1, false, buf, sizeof buf));
    assert_false(libmap_format(&map, 0x401000, false, buf, sizeof buf));
    libsyms_free(ls);
}

/* Whatever the guest leaves there, the walk ends, reads only through read(), and asks
 * resolve() only about absolute, terminated names. */
static void test_hostile_maps(void **state)
{
    (void)state;
    struct libsyms *ls = libsyms_new();
    struct libmap map;
    /* A cycle: the list never ends. */
    build_map();
    put64(LM(3) + 24, LM(0));
    libsyms_map(ls, &M, &map);
    assert_true(map.n >= 1 && map.n <= LIBSYMS_MAX_FILES);
    /* A name with no NUL up to the end of memory. */
    build_map();
    memset(mem + (NAMES + 0x10 - BASE), 'a', sizeof mem - (NAMES + 0x10 - BASE));
    libsyms_map(ls, &M, &map);
    assert_int_equal(map.n, 0);
    /* r_map, l_next and l_name pointing outside memory; DT_DEBUG still 0 (before ld.so). */
    build_map();
    put64(LM(1) + 8, 0xdeadbeef000ULL);
    put64(LM(1) + 24, UINT64_MAX - 8);
    libsyms_map(ls, &M, &map);
    assert_int_equal(map.n, 0);
    build_map();
    put64(RDEBUG + 8, UINT64_MAX - 3);
    libsyms_map(ls, &M, &map);
    assert_int_equal(map.n, 0);
    build_map();
    put64(DYN + 24, 0);
    libsyms_map(ls, &M, &map);
    assert_int_equal(map.n, 0);
    /* No DT_NULL: the dynamic section runs off memory. */
    build_map();
    for (uint64_t a = DYN; a + 16 <= BASE + sizeof mem; a += 16)
        put64(a, DT_NEEDED);
    libsyms_map(ls, &M, &map);
    assert_int_equal(map.n, 0);
    /* A static program (no PT_DYNAMIC) and a NULL cache. */
    struct libsyms_mem none = M;
    none.dynamic = 0;
    libsyms_map(ls, &none, &map);
    assert_int_equal(map.n, 0);
    build_map();
    libsyms_map(NULL, &M, &map);
    assert_int_equal(map.n, 0);
    libsyms_free(ls);
    libsyms_free(NULL);
}

static void test_dynamic_of_files(void **state)
{
    (void)state;
    struct elf_image img = {0};
    char err[256];
    assert_int_equal(elf_read_file(libc_path, &img.data, &img.size, err, sizeof err), 0);
    assert_true(libsyms_dynamic(&img) != 0);
    elf_free(&img);
    struct elf_image empty = {0};
    assert_int_equal(libsyms_dynamic(&empty), 0);
}

int main(void)
{
    static const char *const candidates[] = {"/lib/x86_64-linux-gnu/libc.so.6",
                                             "/usr/lib/x86_64-linux-gnu/libc.so.6"};
    for (size_t i = 0; i < 2 && !libc_path; i++)
        if (access(candidates[i], R_OK) == 0)
            libc_path = candidates[i];
    if (!libc_path) {
        fprintf(stderr, "test_vmm_libsyms: no libc.so.6 on this host (apt-get install libc6)\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_and_format),
        cmocka_unit_test(test_hostile_maps),
        cmocka_unit_test(test_dynamic_of_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
