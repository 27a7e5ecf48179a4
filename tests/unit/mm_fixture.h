/* Fixture of test_vmm_mm.c and test_vmm_mm_ops.c: a guest memory and its mm, and checks of
 * page tables, frames and VMAs. */
#ifndef JINX_TEST_MM_FIXTURE_H
#define JINX_TEST_MM_FIXTURE_H
/* After cmocka.h, for its assertions. */
#include "kvm/guestmem.h"
#include "kvm/layout.h"
#include "linux/elfparse.h" /* PROT_R/W/X */
#include "linux/mm.h"
#include "tests/unit/pt_walk.h"
#include <stdlib.h>
#include <string.h>

#define MiB (1ULL << 20)
#define PG PAGE_SIZE
#define RW (PROT_R | PROT_W)
#define POOL_FRAMES (GPA_POOL / PAGE_SIZE)

struct fx {
    struct guestmem gm;
    struct mm mm;
};

static inline int setup_mem(void **state, uint64_t size)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    char err[256];
    if (gm_init(&f->gm, size, err, sizeof err) != 0) {
        fprintf(stderr, "gm_init: %s\n", err);
        free(f);
        return -1;
    }
    mm_init(&f->mm, &f->gm);
    *state = f;
    return 0;
}
static inline int setup16(void **state) { return setup_mem(state, 16 * MiB); }
static inline int teardown(void **state)
{
    struct fx *f = *state;
    mm_destroy(&f->mm);
    gm_destroy(&f->gm);
    free(f);
    return 0;
}

/* Every frame in use is the agent's, a page table or a mapped page: nothing leaked. */
static inline void assert_no_leak(struct guestmem *gm)
{
    uint64_t expect = POOL_FRAMES + count_pt_pages(gm) + count_data_frames(gm);
    if (gm->used != expect)
        fail_msg("gm->used = %llu, but %llu frames are reachable (pool %llu + tables %llu + "
                 "data %llu)", (unsigned long long)gm->used, (unsigned long long)expect,
                 (unsigned long long)POOL_FRAMES, (unsigned long long)count_pt_pages(gm),
                 (unsigned long long)count_data_frames(gm));
}

/* VMAs sorted, disjoint, non-empty, page-aligned, inside user space. */
static inline void assert_vmas_sane(struct mm *mm)
{
    for (size_t i = 0; i < mm->n; i++) {
        assert_true(mm->v[i].start < mm->v[i].end);
        assert_int_equal(mm->v[i].start % PG, 0);
        assert_int_equal(mm->v[i].end % PG, 0);
        assert_true(mm->v[i].start >= USER_MIN && mm->v[i].end <= USER_TOP);
        if (i)
            assert_true(mm->v[i - 1].end <= mm->v[i].start);
    }
}

static inline uint64_t pte_of(struct guestmem *gm, uint64_t va)
{
    uint64_t *p = gm_pte(gm, va, false);
    return p ? *p : 0;
}

#endif
