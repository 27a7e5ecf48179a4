/* Unit tests for the restore's copy (kvm/pagecopy.c, kvm/dirtylog.c's dirtyset_copy):
 * a streamed page equals its source byte for byte and nothing around it changes; a
 * dirty set copies exactly its frames, found through its list of nonzero words, and with
 * tables_kept leaves upper-level page tables and the PML4 alone. KVM's side of the log
 * (dirtylog_collect) is covered by the snapshot selftests (tests/integration/snapshot.sh),
 * which compare every page after each restore. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kvm/dirtylog.h"
#include "kvm/pagecopy.h"
#include "lib/splitmix.h"

#define NFRAMES 1024 /* 16 bitmap words; the PML4 (GPA_PML4) lies inside */

static uint8_t *pages(size_t n, uint64_t seed)
{
    uint8_t *p = aligned_alloc(PAGE_SIZE, n * PAGE_SIZE);
    assert_non_null(p);
    for (size_t i = 0; i < n * PAGE_SIZE; i += 8) {
        uint64_t v = splitmix64(&seed);
        memcpy(p + i, &v, 8);
    }
    return p;
}

static void test_stream_one_page(void **state)
{
    (void)state;
    uint8_t *src = pages(3, 1), *dst = pages(3, 2), *before = pages(3, 2);
    pagecopy_stream(dst + PAGE_SIZE, src + PAGE_SIZE);
    pagecopy_fence();
    assert_memory_equal(dst + PAGE_SIZE, src + PAGE_SIZE, PAGE_SIZE);
    assert_memory_equal(dst, before, PAGE_SIZE);                             /* below */
    assert_memory_equal(dst + 2 * PAGE_SIZE, before + 2 * PAGE_SIZE, PAGE_SIZE); /* above */
    free(src);
    free(dst);
    free(before);
}

/* Marks frame f in d (bits and, for a new word, the word list). */
static void mark(struct dirtyset *d, uint64_t f)
{
    uint64_t w = f / 64;
    if (!d->bits[w])
        d->words[d->nwords++] = (uint32_t)w;
    d->bits[w] |= 1ULL << (f % 64);
}

static void test_copy_exactly_the_set(void **state)
{
    (void)state;
    assert_true(GPA_PML4 / PAGE_SIZE < NFRAMES);
    uint8_t *src = pages(NFRAMES, 3), *dst = pages(NFRAMES, 4), *before = pages(NFRAMES, 4);
    uint8_t level[NFRAMES] = {0};
    struct guestmem gm = {.nframes = NFRAMES, .table_level = level};
    uint64_t bits[NFRAMES / 64] = {0};
    uint32_t words[NFRAMES / 64];
    struct dirtyset d = {.bits = bits, .words = words};
    /* Words listed out of order, both ends of a word, a table of each level, the PML4. */
    uint64_t marked[] = {700, 5, 63, 64, 1023, 300, 301, 302, GPA_PML4 / PAGE_SIZE, 900, 901};
    level[300] = 1; /* a leaf table: data to a snapshot, copied */
    level[301] = 2;
    level[302] = 3;
    for (size_t i = 0; i < sizeof marked / sizeof *marked; i++)
        mark(&d, marked[i]);
    /* A word KVM reported that is not listed must be ignored (only listed words count). */
    bits[8] = 1;

    uint64_t n = dirtyset_copy(&gm, &d, dst, src, true);
    assert_int_equal(n, sizeof marked / sizeof *marked - 3); /* 301, 302, PML4 kept */
    for (uint64_t f = 0; f < NFRAMES; f++) {
        bool copied = false;
        for (size_t i = 0; i < sizeof marked / sizeof *marked; i++)
            copied |= marked[i] == f;
        if (level[f] >= 2 || f == GPA_PML4 / PAGE_SIZE)
            copied = false;
        const uint8_t *want = (copied ? src : before) + f * PAGE_SIZE;
        if (memcmp(dst + f * PAGE_SIZE, want, PAGE_SIZE))
            fail_msg("frame %llu: %s", (unsigned long long)f,
                     copied ? "not copied" : "changed, not in the set");
    }
    /* Without tables_kept (a snapshot take), every frame of the set is copied. */
    assert_int_equal(dirtyset_copy(&gm, &d, dst, src, false), sizeof marked / sizeof *marked);
    assert_memory_equal(dst + 302 * PAGE_SIZE, src + 302 * PAGE_SIZE, PAGE_SIZE);
    free(src);
    free(dst);
    free(before);
}

static void test_copy_empty_set(void **state)
{
    (void)state;
    uint8_t *src = pages(4, 5), *dst = pages(4, 6), *before = pages(4, 6);
    uint8_t level[256] = {0};
    struct guestmem gm = {.nframes = 256, .table_level = level};
    uint64_t bits[4] = {~0ULL, ~0ULL, ~0ULL, ~0ULL}; /* stale bits, no word listed */
    uint32_t words[4];
    struct dirtyset d = {.bits = bits, .words = words, .nwords = 0};
    assert_int_equal(dirtyset_copy(&gm, &d, dst, src, true), 0);
    assert_memory_equal(dst, before, 4 * PAGE_SIZE);
    free(src);
    free(dst);
    free(before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_one_page),
        cmocka_unit_test(test_copy_exactly_the_set),
        cmocka_unit_test(test_copy_empty_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
