/* Unit tests for vmm/linux/elfparse.c, second half: section headers and symbols,
 * symbolization, elf_open, the built images, and a mutation loop over valid images.
 * The image builder is elf_fixture.h; test_vmm_elfparse.c has the header checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/elfparse.h"
#include "kvm/layout.h"

#include "elf_fixture.h"

/* ------------------------------------------------------------------------------------ */
/* Section headers and symbols                                                          */
/* ------------------------------------------------------------------------------------ */

static size_t nsyms_of(struct built *b)
{
    struct elf_image img;
    expect_ok(b, &img);
    size_t n = img.nsyms;
    /* every kept name lies inside the file and is terminated there */
    for (size_t i = 0; i < img.nsyms; i++) {
        const uint8_t *nm = (const uint8_t *)img.syms[i].name;
        assert_true(nm >= img.data && nm < img.data + img.size);
        assert_non_null(memchr(nm, 0, (size_t)(img.data + img.size - nm)));
    }
    elf_free(&img);
    return n;
}

static void test_st_name_beyond_strtab(void **state)
{
    (void)state;
    struct built b = build(0, 1);
    SYM(&b, symidx("helper"))->st_name = (uint32_t)b.strtab_size; /* one past the end */
    SYM(&b, symidx("outer"))->st_name = UINT32_MAX;
    SYM(&b, symidx("inner"))->st_name = (uint32_t)b.strtab_size + 100;
    struct elf_image img;
    expect_ok(&b, &img);
    assert_int_equal(img.nsyms, NSYMS_KEPT - 3);
    assert_int_equal(elf_lookup(&img, "main"), 0x401000);
    assert_int_equal(elf_lookup(&img, "helper"), 0);
    elf_free(&img);
    /* the last valid index (the final NUL) is an empty name: ignored, not a crash */
    SYM(&b, symidx("main"))->st_name = (uint32_t)b.strtab_size - 1;
    assert_int_equal(nsyms_of(&b), NSYMS_KEPT - 4);
    free(b.d);
}

static void test_strtab_not_terminated(void **state)
{
    (void)state;
    struct built b = build(0, 1);
    /* strtab ends one byte early: its last name "tlsvar" loses its NUL */
    SH(&b, SH_STRTAB)->sh_size = b.strtab_size - 1;
    struct elf_image img;
    expect_ok(&b, &img);
    assert_int_equal(img.nsyms, 0);
    assert_null(elf_symbolize(&img, 0x401000, NULL));
    assert_int_equal(elf_lookup(&img, "main"), 0);
    elf_free(&img);
    free(b.d);

    /* the same with the string table as the very last bytes of the file, so an unchecked
     * strlen would run off the end of the buffer */
    b = build(0, 1);
    uint8_t *d = realloc(b.d, b.n + 3);
    assert_non_null(d);
    b.d = d;
    memcpy(d + b.n, "abc", 3);
    SH(&b, SH_STRTAB)->sh_offset = b.n;
    SH(&b, SH_STRTAB)->sh_size = 3;
    b.n += 3;
    expect_ok(&b, &img);
    assert_int_equal(img.nsyms, 0);
    elf_free(&img);
    free(b.d);
}

static void test_bad_section_tables(void **state)
{
    (void)state;
    struct built b = build(0, 1);
    assert_int_equal(nsyms_of(&b), NSYMS_KEPT);

    /* A stripped shared library keeps only .dynsym: read when there is no .symtab, and
     * with the same checks (a bad one is ignored like a bad .symtab, just below). */
    struct built dyn = build(0, 1);
    SH(&dyn, SH_SYMTAB)->sh_type = SHT_DYNSYM;
    assert_int_equal(nsyms_of(&dyn), NSYMS_KEPT);
    SH(&dyn, SH_SYMTAB)->sh_entsize = 16;
    assert_int_equal(nsyms_of(&dyn), 0);
    free(dyn.d);

    /* each of these makes the symbols disappear, and nothing else */
#define SYMS_IGNORED(stmt)                                   \
    do {                                                     \
        struct built c = build(0, 1);                        \
        struct built *bp = &c;                               \
        (void)bp;                                            \
        stmt;                                                \
        assert_int_equal(nsyms_of(&c), 0);                   \
        free(c.d);                                           \
    } while (0)
    SYMS_IGNORED(EH(bp)->e_shoff = bp->n);
    SYMS_IGNORED(EH(bp)->e_shoff = 0xfffffffffffffff8ULL);
    SYMS_IGNORED(EH(bp)->e_shoff = bp->n - 8);
    SYMS_IGNORED(EH(bp)->e_shentsize = 40);
    SYMS_IGNORED(EH(bp)->e_shentsize = 0);
    SYMS_IGNORED(EH(bp)->e_shnum = 0xffff);
    SYMS_IGNORED(EH(bp)->e_shnum = SH_SYMTAB); /* symtab is cut off */
    SYMS_IGNORED(EH(bp)->e_shnum = SH_STRTAB); /* sh_link beyond e_shnum */
    SYMS_IGNORED(SH(bp, SH_SYMTAB)->sh_link = 0xffffffff);
    SYMS_IGNORED(SH(bp, SH_SYMTAB)->sh_link = 0); /* the null section: empty strtab */
    SYMS_IGNORED(SH(bp, SH_SYMTAB)->sh_entsize = 16);
    SYMS_IGNORED(SH(bp, SH_SYMTAB)->sh_type = SHT_PROGBITS);
    SYMS_IGNORED(SH(bp, SH_SYMTAB)->sh_offset = 0xffffffffffffff00ULL);
    SYMS_IGNORED(SH(bp, SH_SYMTAB)->sh_offset += 4); /* misaligned symbols */
    SYMS_IGNORED(SH(bp, SH_SYMTAB)->sh_size = UINT64_MAX - 0x2000);
    SYMS_IGNORED(SH(bp, SH_SYMTAB)->sh_size = bp->n);
    SYMS_IGNORED(SH(bp, SH_STRTAB)->sh_offset = UINT64_MAX);
    SYMS_IGNORED(SH(bp, SH_STRTAB)->sh_size = UINT64_MAX);
    SYMS_IGNORED(SH(bp, SH_STRTAB)->sh_size = 0);
    SYMS_IGNORED(SH(bp, SH_STRTAB)->sh_offset = bp->n - 1; SH(bp, SH_STRTAB)->sh_size = 2);
#undef SYMS_IGNORED

    /* a symtab size that is not a multiple of the entry size: the partial entry is dropped */
    struct built c = build(0, 1);
    SH(&c, SH_SYMTAB)->sh_size = (uint64_t)(symidx("counter") + 1) * sizeof(Elf64_Sym) - 1;
    assert_int_equal(nsyms_of(&c), NSYMS_KEPT - 1); /* counter's entry is cut in half */
    free(c.d);
    /* an empty symtab */
    c = build(0, 1);
    SH(&c, SH_SYMTAB)->sh_size = 0;
    assert_int_equal(nsyms_of(&c), 0);
    free(c.d);
    /* symbols with value 0 or SHN_UNDEF are not kept */
    c = build(0, 1);
    SYM(&c, symidx("main"))->st_value = 0;
    SYM(&c, symidx("helper"))->st_shndx = SHN_UNDEF;
    assert_int_equal(nsyms_of(&c), NSYMS_KEPT - 2);
    free(c.d);
    free(b.d);
}

/* e_shoff not a multiple of 8: Elf64_Shdr accessed at a misaligned address (UB). */
static void test_shoff_misaligned(void **state)
{
    (void)state;
    if (!known_bugs_enabled()) {
        print_message("VMM BUG (fixed, regressed) (elfparse.c:69-71): misaligned e_shoff -> misaligned "
                      "Elf64_Shdr access; skipped under UBSan (JINX_TEST_KNOWN_BUGS=1 runs it)\n");
        skip();
    }
    struct built b = build(0, 1);
    uint8_t *d = realloc(b.d, b.n + 4);
    assert_non_null(d);
    b.d = d;
    memmove(d + b.shoff + 4, d + b.shoff, NSH * sizeof(Elf64_Shdr));
    EH(&b)->e_shoff = b.shoff + 4;
    b.n += 4;
    struct elf_image img;
    expect_ok(&b, &img); /* symbols may or may not be found; no UB either way */
    elf_free(&img);
    free(b.d);
}

/* ------------------------------------------------------------------------------------ */
/* Symbolization                                                                        */
/* ------------------------------------------------------------------------------------ */

static void check_sym(const struct elf_image *img, uint64_t addr, const char *name, uint64_t off)
{
    uint64_t got = 0xdeadbeef;
    const struct elf_symbol *s = elf_symbolize(img, addr, &got);
    if (!name) {
        if (s)
            fail_msg("0x%llx: expected no symbol, got %s+0x%llx", (unsigned long long)addr,
                     s->name, (unsigned long long)got);
        return;
    }
    if (!s)
        fail_msg("0x%llx: expected %s+0x%llx, got none", (unsigned long long)addr, name,
                 (unsigned long long)off);
    if (strcmp(s->name, name) || got != off)
        fail_msg("0x%llx: expected %s+0x%llx, got %s+0x%llx", (unsigned long long)addr, name,
                 (unsigned long long)off, s->name, (unsigned long long)got);
    /* off may be NULL */
    assert_ptr_equal(elf_symbolize(img, addr, NULL), s);
}

static void test_symbolize(void **state)
{
    (void)state;
    struct built b = build(0, 1);
    struct elf_image img;
    expect_ok(&b, &img);
    check_sym(&img, 0, NULL, 0);
    check_sym(&img, 0x400000, NULL, 0);
    check_sym(&img, 0x400fff, NULL, 0);
    check_sym(&img, 0x401000, "main", 0);
    check_sym(&img, 0x401001, "main", 1);
    check_sym(&img, 0x40103f, "main", 0x3f);
    check_sym(&img, 0x401040, "helper", 0);
    check_sym(&img, 0x40105f, "helper", 0x1f);
    check_sym(&img, 0x401060, NULL, 0);      /* gap after helper (ignored $x / .L here) */
    check_sym(&img, 0x40107f, NULL, 0);
    check_sym(&img, 0x401080, "label", 0);   /* unsized: up to the next symbol */
    check_sym(&img, 0x4010ff, "label", 0x7f);
    check_sym(&img, 0x401100, "outer", 0);
    check_sym(&img, 0x40110f, "outer", 0xf);
    check_sym(&img, 0x401110, "inner", 0);   /* the innermost symbol wins */
    check_sym(&img, 0x40111f, "inner", 0xf);
    check_sym(&img, 0x401120, "outer", 0x20); /* past inner, still in outer */
    check_sym(&img, 0x4011ff, "outer", 0xff);
    check_sym(&img, 0x401200, NULL, 0);
    check_sym(&img, 0x404000, "counter", 0);
    check_sym(&img, 0x404007, "counter", 7);
    check_sym(&img, 0x404008, NULL, 0);      /* past the last symbol */
    check_sym(&img, UINT64_MAX, NULL, 0);
    elf_free(&img);
    free(b.d);
}

static void test_symbolize_edge_cases(void **state)
{
    (void)state;
    struct elf_image img;
    /* no symbols at all (zeroed image) */
    memset(&img, 0, sizeof img);
    assert_null(elf_symbolize(&img, 0x401000, NULL));
    assert_int_equal(elf_lookup(&img, "main"), 0);

    /* an unsized last symbol covers exactly one byte */
    struct built b = build(0, 1);
    SYM(&b, symidx("counter"))->st_size = 0;
    expect_ok(&b, &img);
    check_sym(&img, 0x404000, "counter", 0);
    check_sym(&img, 0x404001, NULL, 0);
    elf_free(&img);
    free(b.d);

    /* ... also at UINT64_MAX, where its end (addr + 1) wraps to 0 (the fuzz_elf crash
     * tests/fuzz/corpus/elf/crash-unsized-last-symbol-at-top) */
    b = build(0, 1);
    SYM(&b, symidx("counter"))->st_size = 0;
    SYM(&b, symidx("counter"))->st_value = UINT64_MAX;
    expect_ok(&b, &img);
    check_sym(&img, UINT64_MAX, "counter", 0);
    check_sym(&img, UINT64_MAX - 1, NULL, 0);
    elf_free(&img);
    free(b.d);

    /* a symbol whose end wraps around 2^64: never found, never a crash */
    b = build(0, 1);
    SYM(&b, symidx("counter"))->st_size = UINT64_MAX;
    expect_ok(&b, &img);
    (void)elf_symbolize(&img, 0x404000, NULL);
    (void)elf_symbolize(&img, UINT64_MAX, NULL);
    elf_free(&img);
    free(b.d);

    /* very large function: addresses far into it are still found when it is the
     * nearest symbol */
    b = build(0, 1);
    SYM(&b, symidx("counter"))->st_size = 0x100000;
    expect_ok(&b, &img);
    check_sym(&img, 0x404000 + 0xfffff, "counter", 0xfffff);
    elf_free(&img);
    free(b.d);
}

/* Two symbols at one address, one sized and one unsized (an assembler alias):
 * elfparse.c:41 says "Prefer sized symbols when addresses tie". */
static void test_symbolize_alias_prefers_sized(void **state)
{
    (void)state;
    struct built b = build(0, 1);
    Elf64_Sym *s = SYM(&b, symidx(".Ltmp0"));
    /* turn the ignored .Ltmp0 entry into an unsized alias of main called "Ltmp0" */
    s->st_name += 1;
    s->st_value = 0x401000;
    struct elf_image img;
    expect_ok(&b, &img);
    assert_int_equal(img.nsyms, NSYMS_KEPT + 1);
    const struct elf_symbol *sym = elf_symbolize(&img, 0x401010, NULL);
    assert_non_null(sym);
    if (strcmp(sym->name, "main")) {
        print_message("VMM BUG (fixed, regressed) (elfparse.c:285-288): elf_symbolize picked unsized "
                      "alias %s over sized main at the same address\n", sym->name);
        elf_free(&img);
        free(b.d);
        fail_msg("VMM bug is back");
    }
    /* and past main's end (0x401040) the alias must not claim helper's bytes either */
    check_sym(&img, 0x401040, "helper", 0);
    elf_free(&img);
    free(b.d);
}

static void test_lookup(void **state)
{
    (void)state;
    struct built b = build(0, 1);
    struct elf_image img;
    expect_ok(&b, &img);
    assert_int_equal(elf_lookup(&img, "main"), 0x401000);
    assert_int_equal(elf_lookup(&img, "helper"), 0x401040);
    assert_int_equal(elf_lookup(&img, "label"), 0x401080);
    assert_int_equal(elf_lookup(&img, "inner"), 0x401110);
    assert_int_equal(elf_lookup(&img, "counter"), 0x404000);
    assert_int_equal(elf_lookup(&img, "printf"), 0);   /* undefined */
    assert_int_equal(elf_lookup(&img, ".Ltmp0"), 0);   /* local label */
    assert_int_equal(elf_lookup(&img, "$x"), 0);
    assert_int_equal(elf_lookup(&img, ".text"), 0);    /* section symbol */
    assert_int_equal(elf_lookup(&img, "tlsvar"), 0);
    assert_int_equal(elf_lookup(&img, "circle.c"), 0); /* file symbol */
    assert_int_equal(elf_lookup(&img, ""), 0);
    assert_int_equal(elf_lookup(&img, "mai"), 0);      /* no prefix matches */
    assert_int_equal(elf_lookup(&img, "main2"), 0);
    elf_free(&img);
    free(b.d);
}

/* ------------------------------------------------------------------------------------ */
/* elf_open                                                                             */
/* ------------------------------------------------------------------------------------ */

static void test_open(void **state)
{
    (void)state;
    struct elf_image img;
    char err[512];

    assert_int_equal(elf_open("/nonexistent/jinx-test", &img, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/jinx-test"));
    assert_non_null(strcasestr(err, "no such file"));
    assert_null(img.data);

    assert_int_equal(elf_open("/", &img, err, sizeof err), -1);
    assert_non_null(strcasestr(err, "not a regular file"));

    char path[] = "/tmp/jinx-test-elf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    /* empty file */
    assert_int_equal(elf_open(path, &img, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strcasestr(err, "truncated"));
    /* a valid image */
    struct built b = build(0, 1);
    assert_int_equal(write(fd, b.d, b.n), (ssize_t)b.n);
    if (elf_open(path, &img, err, sizeof err) != 0)
        fail_msg("elf_open of a valid image: %s", err);
    assert_int_equal(img.size, b.n);
    assert_int_equal(elf_lookup(&img, "outer"), 0x401100);
    elf_free(&img);
    /* a broken one: the path prefixes the parser's message */
    EH(&b)->e_machine = EM_AARCH64;
    assert_int_equal(pwrite(fd, b.d, b.n, 0), (ssize_t)b.n);
    assert_int_equal(elf_open(path, &img, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strcasestr(err, "machine"));
    assert_null(img.data);
    close(fd);
    unlink(path);
    free(b.d);

    /* this test program itself is dynamically linked: its interpreter is recorded */
    assert_int_equal(elf_open("/proc/self/exe", &img, err, sizeof err), 0);
    assert_non_null(strstr(img.interp, "ld-linux"));
    elf_free(&img);
}

/* The images in images/bin (musl-gcc -static) when they are built. */
static void test_real_static_binaries(void **state)
{
    (void)state;
    static const char *const names[] = {"images/bin/circle", "images/bin/correct",
                                        "images/bin/throughput", "images/bin/deadlock-abba"};
    int found = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct stat st;
        if (stat(names[i], &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        struct elf_image img;
        char err[512];
        if (elf_open(names[i], &img, err, sizeof err) != 0)
            fail_msg("%s rejected: %s", names[i], err);
        found++;
        assert_true(img.nseg >= 2);
        assert_true(img.lo >= USER_MIN || img.pie);
        assert_true(img.phdr_vaddr != 0);
        uint64_t main_addr = elf_lookup(&img, "main");
        assert_true(main_addr != 0);
        uint64_t off = 1;
        const struct elf_symbol *s = elf_symbolize(&img, main_addr, &off);
        assert_non_null(s);
        assert_int_equal(off, 0);
        assert_int_equal(s->addr, main_addr);
        assert_non_null(elf_symbolize(&img, img.entry, NULL)); /* _start */
        elf_free(&img);
    }
    if (!found) {
        print_message("no images/bin/* built: skipped\n");
        skip();
    }
}

/* ------------------------------------------------------------------------------------ */
/* Mutation loop                                                                        */
/* ------------------------------------------------------------------------------------ */

static uint64_t rng_state = 20240601;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Checks what an accepted image promises to the loader. */
static void check_invariants(const struct elf_image *img)
{
    assert_true(img->nseg >= 1 && img->nseg <= ELF_MAX_SEGMENTS);
    int entry_ok = 0;
    for (int i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        assert_true(s->filesz <= s->memsz);
        assert_true(s->memsz > 0 && s->memsz <= ELF_MAX_SPAN);
        assert_true(s->offset <= img->size && s->filesz <= img->size - s->offset);
        assert_true((s->vaddr & 0xfff) == (s->offset & 0xfff));
        assert_true(s->vaddr < MMAP_TOP && s->memsz <= MMAP_TOP - s->vaddr);
        if (i > 0)
            assert_true(img->seg[i - 1].vaddr + img->seg[i - 1].memsz <= s->vaddr);
        if ((s->prot & PROT_X) && img->entry >= s->vaddr && img->entry - s->vaddr < s->memsz)
            entry_ok = 1;
    }
    assert_true(entry_ok);
    assert_true(img->lo <= img->hi && img->hi - img->lo <= ELF_MAX_SPAN);
    assert_true(img->pie ? img->lo == 0 : img->lo >= USER_MIN);
    for (size_t i = 0; i < img->nsyms; i++) {
        const uint8_t *nm = (const uint8_t *)img->syms[i].name;
        assert_true(nm >= img->data && nm < img->data + img->size);
        assert_non_null(memchr(nm, 0, (size_t)(img->data + img->size - nm)));
        if (i)
            assert_true(img->syms[i - 1].addr <= img->syms[i].addr);
    }
    /* symbolize and look up whatever is there */
    for (int k = 0; k < 4; k++) {
        uint64_t a = img->nsyms ? img->syms[rnd() % img->nsyms].addr + rnd() % 0x200 : rnd();
        uint64_t off;
        const struct elf_symbol *s = elf_symbolize(img, a, &off);
        if (s)
            assert_int_equal(s->addr + off, a);
    }
    if (img->nsyms)
        assert_true(elf_lookup(img, img->syms[rnd() % img->nsyms].name) != 0);
}

/* Does the mutated header hit the misaligned-table bug (see test_phoff_misaligned)? */
static int hits_misaligned_bug(const uint8_t *d, size_t n)
{
    if (n < sizeof(Elf64_Ehdr))
        return 0;
    const Elf64_Ehdr *eh = (const void *)d;
    return (eh->e_phoff % 8) != 0 || (eh->e_shoff % 8) != 0;
}

static void test_mutation_loop(void **state)
{
    (void)state;
    /* JINX_FUZZ_ITERS / JINX_FUZZ_SEED: longer or different runs by hand */
    const char *ei = getenv("JINX_FUZZ_ITERS"), *es = getenv("JINX_FUZZ_SEED");
    const int iters = ei && atoi(ei) > 0 ? atoi(ei) : 20000;
    if (es && *es)
        rng_state = strtoull(es, NULL, 0);
    int accepted = 0, skipped = 0;
    struct built base[2] = {build(0, 1), build(1, 1)};
    size_t maxn = base[0].n > base[1].n ? base[0].n : base[1].n;
    uint8_t *buf = malloc(maxn);
    assert_non_null(buf);
    int known = known_bugs_enabled();
    for (int it = 0; it < iters; it++) {
        struct built *b = &base[it & 1];
        memcpy(buf, b->d, b->n);
        size_t n = b->n;
        int flips = 1 + (int)(rnd() % 8);
        for (int f = 0; f < flips; f++) {
            uint64_t r = rnd();
            size_t pos;
            switch (r % 6) {
            case 0: /* anywhere */
                pos = (size_t)(rnd() % n);
                break;
            case 1: case 2: /* ELF header + program headers */
                pos = (size_t)(rnd() % (0x40 + NPH * sizeof(Elf64_Phdr)));
                break;
            case 3: /* section headers */
                pos = b->shoff + (size_t)(rnd() % (NSH * sizeof(Elf64_Shdr)));
                break;
            default: /* symbols and strings */
                pos = b->symtab_off + (size_t)(rnd() % (b->shoff - b->symtab_off));
                break;
            }
            switch ((r >> 8) % 4) {
            case 0: buf[pos] ^= (uint8_t)(1u << ((r >> 16) % 8)); break;
            case 1: buf[pos] = (uint8_t)(r >> 24); break;
            case 2: buf[pos] = (r >> 24) & 1 ? 0xff : 0x00; break;
            default: { /* an extreme 64-bit value at an 8-aligned field */
                size_t p8 = pos & ~(size_t)7;
                static const uint64_t vals[] = {0, 1, 0x1000, 0x7fffffffffffffffULL,
                                                0x8000000000000000ULL, 0xffffffffffffff00ULL,
                                                UINT64_MAX, 1ULL << 30, MMAP_TOP};
                uint64_t v = vals[(r >> 24) % (sizeof vals / sizeof vals[0])];
                if (p8 + 8 <= n)
                    memcpy(buf + p8, &v, 8);
                break;
            }
            }
        }
        if ((rnd() % 16) == 0)
            n = (size_t)(rnd() % (n + 1)); /* and sometimes truncate */
        if (!known && hits_misaligned_bug(buf, n)) {
            skipped++;
            continue;
        }
        struct elf_image img;
        char err[512];
        int rc = parse_n(buf, n, &img, err, sizeof err);
        if (rc == 0) {
            accepted++;
            check_invariants(&img);
        } else {
            assert_int_equal(rc, -1);
            assert_true(err[0] != '\0');
        }
        elf_free(&img);
    }
    print_message("mutation loop: %d iterations, %d accepted, %d rejected, %d skipped "
                  "(misaligned e_phoff/e_shoff, known bug, sanitized build only)\n",
                  iters, accepted, iters - accepted - skipped, skipped);
    /* the mix must exercise both paths */
    assert_true(accepted > iters / 50);
    assert_true(iters - accepted - skipped > iters / 5);
    free(buf);
    free(base[0].d);
    free(base[1].d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_st_name_beyond_strtab),
        cmocka_unit_test(test_strtab_not_terminated),
        cmocka_unit_test(test_bad_section_tables),
        cmocka_unit_test(test_shoff_misaligned),
        cmocka_unit_test(test_symbolize),
        cmocka_unit_test(test_symbolize_edge_cases),
        cmocka_unit_test(test_symbolize_alias_prefers_sized),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_open),
        cmocka_unit_test(test_real_static_binaries),
        cmocka_unit_test(test_mutation_loop),
    };
    /* JINX_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards * and ?) */
    const char *filter = getenv("JINX_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("vmm/elfparse symbols", tests, NULL, NULL);
}
