/* Unit tests for vmm/kvm/guestmem.c and vmm/linux/mm.c: guest physical memory, the VMM-owned page
 * tables, safe user copies, and the mmap/munmap/mprotect/brk/mremap layer on top. Only
 * host memory is mapped: no /dev/kvm needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linux/elfparse.h" /* PROT_R/W/X */
#include "kvm/guestmem.h"
#include "kvm/layout.h"
#include "linux/mm.h"

#define MiB (1ULL << 20)
#define PG PAGE_SIZE
#define RW (PROT_R | PROT_W)
#define POOL_FRAMES (GPA_POOL / PAGE_SIZE)

struct fx {
    struct guestmem gm;
    struct mm mm;
};

static int setup_mem(void **state, uint64_t size)
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
static int setup16(void **state) { return setup_mem(state, 16 * MiB); }
static int teardown(void **state)
{
    struct fx *f = *state;
    mm_destroy(&f->mm);
    gm_destroy(&f->gm);
    free(f);
    return 0;
}

/* Page-table pages reachable from the user half of the PML4 (PDPTs, PDs, PTs). */
static uint64_t count_pt_pages(struct guestmem *gm)
{
    uint64_t n = 0;
    uint64_t *pml4 = gm_ptr(gm, GPA_PML4);
    for (int i = 0; i < 256; i++) {
        if (!(pml4[i] & PTE_P))
            continue;
        n++;
        uint64_t *pdpt = gm_ptr(gm, pml4[i] & PTE_ADDR);
        for (int j = 0; j < 512; j++) {
            if (!(pdpt[j] & PTE_P))
                continue;
            n++;
            uint64_t *pd = gm_ptr(gm, pdpt[j] & PTE_ADDR);
            for (int k = 0; k < 512; k++)
                if (pd[k] & PTE_P)
                    n++;
        }
    }
    return n;
}

/* Leaf PTEs with a frame in the user half. */
static uint64_t count_data_frames(struct guestmem *gm)
{
    uint64_t n = 0;
    uint64_t *pml4 = gm_ptr(gm, GPA_PML4);
    for (int i = 0; i < 256; i++) {
        if (!(pml4[i] & PTE_P))
            continue;
        uint64_t *pdpt = gm_ptr(gm, pml4[i] & PTE_ADDR);
        for (int j = 0; j < 512; j++) {
            if (!(pdpt[j] & PTE_P))
                continue;
            uint64_t *pd = gm_ptr(gm, pdpt[j] & PTE_ADDR);
            for (int k = 0; k < 512; k++) {
                if (!(pd[k] & PTE_P))
                    continue;
                uint64_t *pt = gm_ptr(gm, pd[k] & PTE_ADDR);
                for (int l = 0; l < 512; l++)
                    if (pt[l] & PTE_ADDR)
                        n++;
            }
        }
    }
    return n;
}

/* Every frame in use is the agent's, a page table or a mapped page: nothing leaked. */
static void assert_no_leak(struct guestmem *gm)
{
    uint64_t expect = POOL_FRAMES + count_pt_pages(gm) + count_data_frames(gm);
    if (gm->used != expect)
        fail_msg("gm->used = %llu, but %llu frames are reachable (pool %llu + tables %llu + "
                 "data %llu)", (unsigned long long)gm->used, (unsigned long long)expect,
                 (unsigned long long)POOL_FRAMES, (unsigned long long)count_pt_pages(gm),
                 (unsigned long long)count_data_frames(gm));
}

/* VMAs sorted, disjoint, non-empty, page-aligned, inside user space. */
static void assert_vmas_sane(struct mm *mm)
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

static uint64_t pte_of(struct guestmem *gm, uint64_t va)
{
    uint64_t *p = gm_pte(gm, va, false);
    return p ? *p : 0;
}

/* ------------------------------------------------------------------------------------ */
/* guestmem                                                                             */
/* ------------------------------------------------------------------------------------ */

static void test_gm_init_sizes(void **state)
{
    (void)state;
    struct guestmem gm;
    char err[256];
    const uint64_t bad[] = {0, 2 * MiB, 14 * MiB, 17 * MiB, 16 * MiB + 4096,
                            MAX_GUEST_MEM + 2 * MiB, UINT64_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(gm_init(&gm, bad[i], err, sizeof err), -1);
        assert_non_null(strstr(err, "16M"));
        assert_null(gm.host);
        gm_destroy(&gm); /* harmless after a failed init */
    }
    assert_int_equal(gm_init(&gm, 16 * MiB, err, sizeof err), 0);
    assert_int_equal(gm.size, 16 * MiB);
    assert_int_equal(gm.nframes, 4096);
    assert_int_equal(gm.used, POOL_FRAMES);
    /* kernel half: PML4[256] -> direct map with 2 MiB pages, up to the memory size */
    uint64_t *pml4 = gm_ptr(&gm, GPA_PML4);
    assert_int_equal(pml4[256] & PTE_ADDR, GPA_KPDPT);
    assert_true(pml4[256] & PTE_P);
    assert_false(pml4[256] & PTE_U);
    uint64_t *pd = gm_ptr(&gm, GPA_KPD);
    assert_int_equal(pd[0], PTE_P | PTE_W | PTE_PS | PTE_A | PTE_D);
    assert_int_equal(pd[7] & PTE_ADDR, 7 * 2 * MiB);
    assert_int_equal(pd[8], 0); /* 16 MiB: beyond guest memory */
    for (int i = 0; i < 256; i++)
        assert_int_equal(pml4[i], 0); /* user half empty */
    gm_destroy(&gm);
    assert_null(gm.host);

    /* the largest size reserves (NORESERVE) but commits nothing */
    assert_int_equal(gm_init(&gm, MAX_GUEST_MEM, err, sizeof err), 0);
    assert_int_equal(gm.nframes, MAX_GUEST_MEM / PG);
    const uint64_t last = MAX_GUEST_MEM - 2 * MiB;
    uint64_t *pdl = gm_ptr(&gm, GPA_KPD + (last >> 30) * PG);
    assert_int_equal(pdl[(last >> 21) & 511] & PTE_ADDR, last);
    assert_true(pdl[(last >> 21) & 511] & PTE_P);
    gm_destroy(&gm);
}

static void test_gm_frames(void **state)
{
    struct fx *f = *state;
    struct guestmem *gm = &f->gm;
    uint64_t free_frames = gm->nframes - POOL_FRAMES;
    uint64_t *got = calloc(free_frames, sizeof *got);
    assert_non_null(got);
    for (uint64_t i = 0; i < free_frames; i++) {
        got[i] = gm_alloc_frame(gm);
        assert_true(got[i] >= GPA_POOL && got[i] < gm->size);
        assert_int_equal(got[i] % PG, 0);
        if (i < 4 || i == free_frames - 1) { /* zeroed */
            const uint8_t *p = gm_ptr(gm, got[i]);
            for (size_t k = 0; k < PG; k++)
                assert_int_equal(p[k], 0);
        }
    }
    assert_int_equal(gm->used, gm->nframes);
    assert_int_equal(gm_alloc_frame(gm), 0); /* exhausted */
    assert_int_equal(gm->used, gm->nframes);

    /* a freed frame comes back zeroed */
    uint64_t victim = got[free_frames / 2];
    memset(gm_ptr(gm, victim), 0xab, PG);
    gm_free_frame(gm, victim);
    assert_int_equal(gm->used, gm->nframes - 1);
    gm_free_frame(gm, victim); /* double free is ignored */
    assert_int_equal(gm->used, gm->nframes - 1);
    gm_free_frame(gm, GPA_PML4); /* agent frames are never freed */
    gm_free_frame(gm, 0);
    gm_free_frame(gm, gm->size); /* out of range */
    gm_free_frame(gm, UINT64_MAX & PAGE_MASK);
    assert_int_equal(gm->used, gm->nframes - 1);
    uint64_t again = gm_alloc_frame(gm);
    assert_int_equal(again, victim);
    const uint8_t *p = gm_ptr(gm, again);
    for (size_t k = 0; k < PG; k++)
        assert_int_equal(p[k], 0);

    for (uint64_t i = 0; i < free_frames; i++)
        gm_free_frame(gm, got[i]);
    assert_int_equal(gm->used, POOL_FRAMES);
    free(got);
}

static void test_gm_pte_and_prot_flags(void **state)
{
    struct fx *f = *state;
    struct guestmem *gm = &f->gm;
    assert_null(gm_pte(gm, USER_TOP, true));
    assert_null(gm_pte(gm, KBASE, true));
    assert_null(gm_pte(gm, 0x0000800000000000ULL, true));
    assert_null(gm_pte(gm, UINT64_MAX, true));
    assert_null(gm_pte(gm, 0x10000, false)); /* no tables yet */
    pthread_mutex_lock(&gm->lock);
    uint64_t *p = gm_pte(gm, USER_TOP - 1, true);
    pthread_mutex_unlock(&gm->lock);
    assert_non_null(p);
    assert_int_equal(*p, 0);
    assert_int_equal(gm->used, POOL_FRAMES + 3); /* PDPT, PD, PT */
    assert_ptr_equal(gm_pte(gm, USER_TOP - PG, false), p);
    /* The table bitmap (what a snapshot restore ORs in) lists exactly the table frames. */
    uint64_t tables = 0;
    for (uint64_t fr = 0; fr < gm->nframes; fr++) {
        bool bit = (gm->table_bitmap[fr / 64] >> (fr % 64)) & 1;
        assert_int_equal(bit, gm->table_level[fr] != 0);
        tables += bit;
    }
    assert_int_equal(tables, 3);

    assert_int_equal(gm_prot_flags(0), PTE_SOFT);
    assert_int_equal(gm_prot_flags(PROT_R), PTE_P | PTE_U | PTE_A | PTE_D | PTE_NX);
    assert_int_equal(gm_prot_flags(RW), PTE_P | PTE_U | PTE_A | PTE_D | PTE_W | PTE_NX);
    assert_int_equal(gm_prot_flags(PROT_R | PROT_X), PTE_P | PTE_U | PTE_A | PTE_D);
    assert_int_equal(gm_prot_flags(7), PTE_P | PTE_U | PTE_A | PTE_D | PTE_W);
    assert_int_equal(gm_prot_flags(PROT_W), PTE_P | PTE_U | PTE_A | PTE_D | PTE_W | PTE_NX);
}

/* ------------------------------------------------------------------------------------ */
/* mm_map                                                                               */
/* ------------------------------------------------------------------------------------ */

static void test_map_topdown(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    int64_t a = mm_map(mm, 0, 3 * PG, RW, false);
    assert_int_equal(a, MMAP_TOP - 3 * PG);
    int64_t b = mm_map(mm, 0, 1, RW, false); /* rounded up to a page */
    assert_int_equal(b, MMAP_TOP - 4 * PG);
    int64_t c = mm_map(mm, 0x12345, PG, RW, false); /* unaligned hint: ignored */
    assert_int_equal(c, MMAP_TOP - 5 * PG);
    assert_int_equal(mm->n, 1); /* adjacent ranges merge */
    assert_true(mm_is_mapped(mm, (uint64_t)c, MMAP_TOP));
    assert_false(mm_is_mapped(mm, (uint64_t)c - PG, MMAP_TOP));
    assert_false(mm_is_mapped(mm, (uint64_t)c, MMAP_TOP + PG));

    /* fresh anonymous memory is zero and writable */
    for (uint64_t va = (uint64_t)c; va < MMAP_TOP; va += PG) {
        uint8_t *p = gm_user_ptr(&f->gm, va, true);
        assert_non_null(p);
        for (size_t k = 0; k < PG; k++)
            assert_int_equal(p[k], 0);
        p[0] = 0x5a;
    }
    /* a hole is reused, top-down: unmap b, the next page-sized map lands there */
    assert_int_equal(mm_unmap(mm, (uint64_t)b, PG), 0);
    assert_int_equal(mm->n, 2);
    assert_int_equal(mm_map(mm, 0, PG, RW, false), b);
    uint8_t *p = gm_user_ptr(&f->gm, (uint64_t)b, false);
    assert_non_null(p);
    assert_int_equal(p[0], 0); /* new frame, not the old contents */
    /* a bigger one does not fit the hole and goes below */
    assert_int_equal(mm_unmap(mm, (uint64_t)b, PG), 0);
    assert_int_equal(mm_map(mm, 0, 2 * PG, RW, false), c - 2 * (int64_t)PG);
    assert_vmas_sane(mm);
    assert_no_leak(&f->gm);
}

static void test_map_topdown_skips_high_vmas(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    /* a stack above MMAP_TOP and a mapping straddling MMAP_TOP */
    assert_int_equal(mm_map(mm, STACK_TOP - 4 * PG, 4 * PG, RW, true), STACK_TOP - 4 * PG);
    assert_int_equal(mm_map(mm, MMAP_TOP - PG, 2 * PG, RW, true), MMAP_TOP - PG);
    assert_int_equal(mm_map(mm, 0, PG, RW, false), MMAP_TOP - 2 * PG);
    assert_vmas_sane(mm);
}

static void test_map_hint(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    const uint64_t hint = 0x10000000;
    assert_int_equal(mm_map(mm, hint, 2 * PG, RW, false), hint); /* free: respected */
    /* overlapping the first: placed top-down instead, the first is untouched */
    uint8_t *p = gm_user_ptr(&f->gm, hint + PG, true);
    assert_non_null(p);
    *p = 7;
    assert_int_equal(mm_map(mm, hint + PG, 2 * PG, RW, false), MMAP_TOP - 2 * PG);
    assert_int_equal(*(uint8_t *)gm_user_ptr(&f->gm, hint + PG, false), 7);
    /* hints outside user space are ignored too */
    assert_int_equal(mm_map(mm, 0x1000, PG, RW, false), MMAP_TOP - 3 * PG);
    assert_int_equal(mm_map(mm, USER_TOP, PG, RW, false), MMAP_TOP - 4 * PG);
    assert_int_equal(mm_map(mm, USER_TOP - PG, 2 * PG, RW, false), MMAP_TOP - 6 * PG);
    assert_int_equal(mm_map(mm, KBASE, PG, RW, false), MMAP_TOP - 7 * PG);
    /* right after the first mapping is free */
    assert_int_equal(mm_map(mm, hint + 2 * PG, PG, RW, false), hint + 2 * PG);
    assert_vmas_sane(mm);
    assert_no_leak(&f->gm);
}

static void test_map_fixed_replaces(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    const uint64_t a = 0x20000000;
    assert_int_equal(mm_map(mm, a, 4 * PG, RW, true), a);
    for (int i = 0; i < 4; i++)
        *(uint8_t *)gm_user_ptr(&f->gm, a + i * PG, true) = (uint8_t)(0x10 + i);
    uint64_t used = f->gm.used;
    /* replace the middle two pages with a read-only mapping */
    assert_int_equal(mm_map(mm, a + PG, 2 * PG, PROT_R, true), a + PG);
    assert_int_equal(f->gm.used, used); /* two frames freed, two allocated */
    assert_int_equal(mm->n, 1);          /* still one contiguous range */
    assert_int_equal(*(uint8_t *)gm_user_ptr(&f->gm, a, false), 0x10);
    assert_int_equal(*(uint8_t *)gm_user_ptr(&f->gm, a + PG, false), 0); /* fresh */
    assert_int_equal(*(uint8_t *)gm_user_ptr(&f->gm, a + 2 * PG, false), 0);
    assert_int_equal(*(uint8_t *)gm_user_ptr(&f->gm, a + 3 * PG, false), 0x13);
    assert_null(gm_user_ptr(&f->gm, a + PG, true));
    assert_non_null(gm_user_ptr(&f->gm, a + 3 * PG, true));
    /* fixed over a range that is half mapped, half free */
    assert_int_equal(mm_map(mm, a + 3 * PG, 3 * PG, RW, true), a + 3 * PG);
    assert_int_equal(*(uint8_t *)gm_user_ptr(&f->gm, a + 3 * PG, false), 0);
    assert_true(mm_is_mapped(mm, a, a + 6 * PG));
    assert_int_equal(mm->n, 1);
    assert_vmas_sane(mm);
    assert_no_leak(&f->gm);
}

static void test_map_invalid(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    uint64_t used = f->gm.used;
    assert_int_equal(mm_map(mm, 0, 0, RW, false), -EINVAL);
    assert_int_equal(mm_map(mm, 0, (1ULL << 46) + 1, RW, false), -EINVAL);
    assert_int_equal(mm_map(mm, 0, UINT64_MAX, RW, false), -EINVAL);
    assert_int_equal(mm_map(mm, 0x20000001, PG, RW, true), -EINVAL);
    assert_int_equal(mm_map(mm, 0, PG, RW, true), -ENOMEM);           /* page 0 */
    assert_int_equal(mm_map(mm, USER_MIN - PG, PG, RW, true), -ENOMEM);
    assert_int_equal(mm_map(mm, USER_TOP, PG, RW, true), -ENOMEM);
    assert_int_equal(mm_map(mm, USER_TOP - PG, 2 * PG, RW, true), -ENOMEM);
    assert_int_equal(mm_map(mm, KBASE, PG, RW, true), -ENOMEM);
    assert_int_equal(mm_map(mm, 0xfffffffffffff000ULL, PG, RW, true), -ENOMEM);
    assert_int_equal(mm->n, 0);
    assert_int_equal(f->gm.used, used);
    /* the highest page is fine */
    assert_int_equal(mm_map(mm, USER_TOP - PG, PG, RW, true), USER_TOP - PG);
    assert_int_equal(mm_map(mm, USER_MIN, PG, RW, true), USER_MIN);
}

static void test_map_enomem_no_leak(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    /* 16 MiB guest, 12 MiB in the pool: 32 MiB cannot be backed */
    int64_t r = mm_map(mm, 0, 32 * MiB, RW, false);
    assert_int_equal(r, -ENOMEM);
    assert_int_equal(mm->n, 0);
    assert_false(mm_is_mapped(mm, MMAP_TOP - PG, MMAP_TOP));
    assert_no_leak(gm);
    assert_int_equal(count_data_frames(gm), 0);
    /* again: the page tables now exist, so nothing at all changes */
    uint64_t used = gm->used;
    assert_int_equal(mm_map(mm, 0, 32 * MiB, RW, false), -ENOMEM);
    assert_int_equal(gm->used, used);
    /* fixed: the same */
    assert_int_equal(mm_map(mm, 0x40000000, 32 * MiB, RW, true), -ENOMEM);
    assert_int_equal(mm->n, 0);
    assert_no_leak(gm);
    assert_int_equal(count_data_frames(gm), 0);
    /* memory is still usable afterwards */
    int64_t a = mm_map(mm, 0, 4 * MiB, RW, false);
    assert_true(a > 0);
    assert_int_equal(count_data_frames(gm), 1024);
    assert_no_leak(gm);
    used = gm->used;
    assert_int_equal(mm_unmap(mm, (uint64_t)a, 4 * MiB), 0);
    assert_int_equal(gm->used, used - 1024);
    /* map + unmap again at the same place: gm->used returns exactly to where it was */
    used = gm->used;
    assert_int_equal(mm_map(mm, 0, 4 * MiB, RW, false), a);
    assert_int_equal(mm_unmap(mm, (uint64_t)a, 4 * MiB), 0);
    assert_int_equal(gm->used, used);
    /* PROT_NONE reservations take no data frames (only page tables) */
    int64_t big = mm_map(mm, 0, 256 * MiB, 0, false);
    assert_true(big > 0);
    assert_int_equal(count_data_frames(gm), 0);
    assert_no_leak(gm);
    assert_int_equal(mm_unmap(mm, (uint64_t)big, 256 * MiB), 0);
    assert_no_leak(gm);
}

/* ------------------------------------------------------------------------------------ */
/* PTE flags                                                                            */
/* ------------------------------------------------------------------------------------ */

static void test_pte_flags(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    struct {
        int prot;
        int w, nx;
    } cases[] = {{PROT_R, 0, 1}, {RW, 1, 1}, {PROT_R | PROT_X, 0, 0}, {7, 1, 0},
                 {PROT_X, 0, 0}, {PROT_W, 1, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t va = 0x30000000 + i * 0x10000;
        assert_int_equal(mm_map(mm, va, PG, cases[i].prot, true), va);
        uint64_t e = pte_of(gm, va);
        assert_true(e & PTE_P);
        assert_true(e & PTE_U);
        assert_int_equal(!!(e & PTE_W), cases[i].w);
        assert_int_equal(!!(e & PTE_NX), cases[i].nx);
        assert_true((e & PTE_ADDR) >= GPA_POOL && (e & PTE_ADDR) < gm->size);
        assert_false(e & PTE_SOFT);
        /* the same through mprotect from PROT_NONE */
        assert_int_equal(mm_protect(mm, va, PG, 0), 0);
        assert_int_equal(mm_protect(mm, va, PG, cases[i].prot), 0);
        uint64_t e2 = pte_of(gm, va);
        assert_int_equal(e2, e);
    }
    /* intermediate tables are user-accessible (the leaf decides), never NX */
    uint64_t *pml4 = gm_ptr(gm, GPA_PML4);
    uint64_t top = pml4[(0x30000000ULL >> 39) & 511];
    assert_true(top & PTE_U);
    assert_false(top & PTE_NX);
}

/* ------------------------------------------------------------------------------------ */
/* mm_unmap                                                                             */
/* ------------------------------------------------------------------------------------ */

static void test_unmap_split(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0x50000000;
    assert_int_equal(mm_map(mm, a, 8 * PG, RW, true), a);
    for (int i = 0; i < 8; i++)
        *(uint8_t *)gm_user_ptr(gm, a + i * PG, true) = (uint8_t)(0xa0 + i);
    uint64_t used = gm->used;
    /* hole in the middle: one VMA becomes two */
    assert_int_equal(mm_unmap(mm, a + 3 * PG, 2 * PG), 0);
    assert_int_equal(mm->n, 2);
    assert_int_equal(mm->v[0].start, a);
    assert_int_equal(mm->v[0].end, a + 3 * PG);
    assert_int_equal(mm->v[1].start, a + 5 * PG);
    assert_int_equal(mm->v[1].end, a + 8 * PG);
    assert_int_equal(gm->used, used - 2);
    assert_int_equal(pte_of(gm, a + 3 * PG), 0);
    assert_int_equal(pte_of(gm, a + 4 * PG), 0);
    assert_null(gm_user_ptr(gm, a + 3 * PG, false));
    assert_null(gm_user_ptr(gm, a + 4 * PG + 123, false));
    for (int i = 0; i < 8; i++) {
        if (i == 3 || i == 4)
            continue;
        uint8_t *p = gm_user_ptr(gm, a + i * PG, false);
        assert_non_null(p);
        assert_int_equal(*p, 0xa0 + i);
    }
    /* trim the head of the first and the tail of the second; unaligned length rounds up */
    assert_int_equal(mm_unmap(mm, a, PG - 100), 0);
    assert_int_equal(mm_unmap(mm, a + 7 * PG, PG), 0);
    assert_int_equal(mm->n, 2);
    assert_int_equal(mm->v[0].start, a + PG);
    assert_int_equal(mm->v[1].end, a + 7 * PG);
    assert_int_equal(gm->used, used - 4);
    /* one call spanning both VMAs and the hole */
    assert_int_equal(mm_unmap(mm, a + 2 * PG, 4 * PG), 0);
    assert_int_equal(mm->n, 2);
    assert_int_equal(mm->v[0].end, a + 2 * PG);
    assert_int_equal(mm->v[1].start, a + 6 * PG);
    /* unmapping nothing is fine (as on Linux) */
    assert_int_equal(mm_unmap(mm, 0x60000000, 16 * PG), 0);
    /* all of it */
    assert_int_equal(mm_unmap(mm, a, 8 * PG), 0);
    assert_int_equal(mm->n, 0);
    assert_int_equal(count_data_frames(gm), 0);
    assert_no_leak(gm);
}

static void test_unmap_invalid(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    const uint64_t a = 0x50000000;
    assert_int_equal(mm_map(mm, a, 2 * PG, RW, true), a);
    assert_int_equal(mm_unmap(mm, a + 1, PG), -EINVAL);
    assert_int_equal(mm_unmap(mm, a, 0), -EINVAL);
    assert_int_equal(mm_unmap(mm, 0, PG), -EINVAL);
    assert_int_equal(mm_unmap(mm, USER_TOP, PG), -EINVAL);
    assert_int_equal(mm_unmap(mm, KBASE, PG), -EINVAL);
    assert_int_equal(mm_unmap(mm, a, UINT64_MAX), -EINVAL);       /* rounds to 0 */
    assert_int_equal(mm_unmap(mm, a, UINT64_MAX - PG * 2), -EINVAL); /* past USER_TOP */
    assert_true(mm_is_mapped(mm, a, a + 2 * PG));
}

/* ------------------------------------------------------------------------------------ */
/* mm_protect                                                                           */
/* ------------------------------------------------------------------------------------ */

static void test_protect_none_keeps_frame(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0x70000000;
    assert_int_equal(mm_map(mm, a, 2 * PG, RW, true), a);
    uint8_t *p = gm_user_ptr(gm, a + 100, true);
    assert_non_null(p);
    *p = 0x42;
    uint64_t frame = pte_of(gm, a) & PTE_ADDR;
    uint64_t used = gm->used;
    assert_int_equal(mm_protect(mm, a, PG, 0), 0);
    assert_null(gm_user_ptr(gm, a + 100, false));
    assert_null(gm_user_ptr(gm, a + 100, true));
    uint64_t e = pte_of(gm, a);
    assert_false(e & PTE_P);
    assert_true(e & PTE_SOFT);
    assert_int_equal(e & PTE_ADDR, frame);
    assert_int_equal(gm->used, used);
    assert_non_null(gm_user_ptr(gm, a + PG, true)); /* the other page is untouched */
    uint8_t buf[4];
    assert_false(copy_from_user(gm, buf, a + 100, 1));
    assert_false(copy_to_user(gm, a + 100, buf, 1));
    /* back to RW: the same frame, the byte is still there */
    assert_int_equal(mm_protect(mm, a, PG, RW), 0);
    p = gm_user_ptr(gm, a + 100, true);
    assert_non_null(p);
    assert_int_equal(*p, 0x42);
    assert_int_equal(pte_of(gm, a) & PTE_ADDR, frame);
    assert_int_equal(gm->used, used);
    /* NONE -> R: readable, not writable, content kept */
    assert_int_equal(mm_protect(mm, a, PG, 0), 0);
    assert_int_equal(mm_protect(mm, a, PG, PROT_R), 0);
    assert_null(gm_user_ptr(gm, a + 100, true));
    assert_int_equal(*(uint8_t *)gm_user_ptr(gm, a + 100, false), 0x42);
    /* unmapping a PROT_NONE page frees its frame */
    assert_int_equal(mm_protect(mm, a, PG, 0), 0);
    assert_int_equal(mm_unmap(mm, a, PG), 0);
    assert_int_equal(gm->used, used - 1);
    assert_int_equal(pte_of(gm, a), 0);
    assert_no_leak(gm);
}

static void test_protect_downgrade_invalidates(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0x70000000;
    assert_int_equal(mm_map(mm, a, 4 * PG, RW, true), a);
    uint64_t inv = gm->invalidations;
    assert_int_equal(mm_protect(mm, a, 4 * PG, RW), 0); /* no change */
    assert_int_equal(gm->invalidations, inv);
    assert_int_equal(mm_protect(mm, a, 4 * PG, 7), 0); /* upgrade */
    assert_int_equal(gm->invalidations, inv);
    assert_int_equal(mm_protect(mm, a, 4 * PG, PROT_R | PROT_X), 0); /* loses W */
    assert_int_equal(gm->invalidations, inv + 4);
    assert_int_equal(mm_protect(mm, a, 2 * PG, PROT_R), 0); /* loses X */
    assert_int_equal(gm->invalidations, inv + 6);
    assert_int_equal(mm_protect(mm, a, PG, 0), 0); /* loses P */
    assert_int_equal(gm->invalidations, inv + 7);
    assert_int_equal(mm_protect(mm, a, PG, 0), 0); /* already not present */
    assert_int_equal(gm->invalidations, inv + 7);
    /* the host mapping is writable again after an invalidation */
    assert_int_equal(mm_protect(mm, a, 4 * PG, RW), 0);
    for (int i = 0; i < 4; i++)
        *(uint8_t *)gm_user_ptr(gm, a + i * PG, true) = 1;
}

static void test_protect_errors(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0x70000000;
    assert_int_equal(mm_protect(mm, a, PG, PROT_R), -ENOMEM); /* nothing mapped */
    assert_null(gm_pte(gm, a, false));                         /* and nothing created */
    assert_int_equal(mm_map(mm, a, 2 * PG, RW, true), a);
    /* partly unmapped: ENOMEM, and the mapped part is not changed */
    assert_int_equal(mm_protect(mm, a, 3 * PG, PROT_R), -ENOMEM);
    assert_int_equal(mm_protect(mm, a - PG, 2 * PG, PROT_R), -ENOMEM);
    assert_non_null(gm_user_ptr(gm, a, true));
    assert_non_null(gm_user_ptr(gm, a + PG, true));
    assert_int_equal(pte_of(gm, a + 2 * PG), 0);
    assert_int_equal(mm_protect(mm, a + 1, PG, PROT_R), -EINVAL);
    assert_int_equal(mm_protect(mm, a, PG, 8), -EINVAL);
    assert_int_equal(mm_protect(mm, a, PG, -1), -EINVAL);
    assert_int_equal(mm_protect(mm, a, 0, PROT_R), 0);
    assert_int_equal(mm_protect(mm, 0, PG, PROT_R), -ENOMEM);
    assert_int_equal(mm_protect(mm, USER_TOP, PG, PROT_R), -ENOMEM);
    assert_int_equal(mm_protect(mm, KBASE, PG, PROT_R), -ENOMEM);
    assert_int_equal(mm_protect(mm, a, UINT64_MAX, PROT_R), -ENOMEM);
    assert_non_null(gm_user_ptr(gm, a, true));
    /* len rounds up to whole pages */
    assert_int_equal(mm_protect(mm, a, PG + 1, PROT_R), 0);
    assert_null(gm_user_ptr(gm, a + PG, true));
}

static void test_map_none_then_protect_allocates(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0x80000000;
    assert_int_equal(mm_map(mm, a, 256 * PG, 0, true), a);
    assert_int_equal(count_data_frames(gm), 0);
    assert_null(gm_user_ptr(gm, a, false));
    assert_int_equal(mm_protect(mm, a + 16 * PG, 16 * PG, RW), 0);
    assert_int_equal(count_data_frames(gm), 16);
    assert_non_null(gm_user_ptr(gm, a + 16 * PG, true));
    assert_null(gm_user_ptr(gm, a + 32 * PG, false));
    assert_no_leak(gm);
    assert_int_equal(mm_unmap(mm, a, 256 * PG), 0);
    assert_int_equal(count_data_frames(gm), 0);
    assert_no_leak(gm);
}

static void test_protect_enomem(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    /* a 32 MiB reservation that cannot be made accessible on a 16 MiB guest */
    int64_t a = mm_map(mm, 0, 32 * MiB, 0, false);
    assert_true(a > 0);
    assert_int_equal(mm_protect(mm, (uint64_t)a, 32 * MiB, RW), -ENOMEM);
    assert_no_leak(gm);
    /* the frames that did get allocated are returned by munmap */
    assert_int_equal(mm_unmap(mm, (uint64_t)a, 32 * MiB), 0);
    assert_int_equal(count_data_frames(gm), 0);
    assert_no_leak(gm);
    assert_true(mm_map(mm, 0, 8 * MiB, RW, false) > 0);
}

/* ------------------------------------------------------------------------------------ */
/* mm_brk, mm_mremap, mm_reserve                                                        */
/* ------------------------------------------------------------------------------------ */

static void test_brk(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t base = 0x405000; /* as the loader sets it: the image's page-rounded end */
    mm->brk_base = mm->brk_cur = base;
    assert_int_equal(mm_brk(mm, 0), base); /* query */
    assert_int_equal(mm_brk(mm, base), base);
    assert_int_equal(mm->n, 0);
    /* grow by 1.5 pages: two pages mapped RW, zeroed */
    assert_int_equal(mm_brk(mm, base + PG + PG / 2), base + PG + PG / 2);
    assert_true(mm_is_mapped(mm, base, base + 2 * PG));
    assert_false(mm_is_mapped(mm, base, base + 3 * PG));
    uint8_t *p = gm_user_ptr(gm, base + 2 * PG - 1, true);
    assert_non_null(p);
    assert_int_equal(*p, 0);
    *p = 9;
    uint64_t e = pte_of(gm, base);
    assert_true(e & PTE_W);
    assert_true(e & PTE_NX);
    /* growing within the same page allocates nothing */
    uint64_t used = gm->used;
    assert_int_equal(mm_brk(mm, base + 2 * PG), base + 2 * PG);
    assert_int_equal(gm->used, used);
    assert_int_equal(*(uint8_t *)gm_user_ptr(gm, base + 2 * PG - 1, false), 9);
    /* shrink: the second page goes away */
    assert_int_equal(mm_brk(mm, base + 10), base + 10);
    assert_true(mm_is_mapped(mm, base, base + PG));
    assert_false(mm_is_mapped(mm, base + PG, base + 2 * PG));
    assert_null(gm_user_ptr(gm, base + PG, false));
    assert_int_equal(gm->used, used - 1);
    /* grow back: fresh zero page */
    assert_int_equal(mm_brk(mm, base + 2 * PG), base + 2 * PG);
    assert_int_equal(*(uint8_t *)gm_user_ptr(gm, base + 2 * PG - 1, false), 0);
    /* below the base or beyond 1 GiB: refused, current break returned */
    assert_int_equal(mm_brk(mm, base - 1), base + 2 * PG);
    assert_int_equal(mm_brk(mm, 1), base + 2 * PG);
    assert_int_equal(mm_brk(mm, base + (1ULL << 30) + 1), base + 2 * PG);
    assert_int_equal(mm_brk(mm, UINT64_MAX), base + 2 * PG);
    /* a mapping in the way stops growth */
    assert_int_equal(mm_map(mm, base + 8 * PG, PG, RW, true), base + 8 * PG);
    assert_int_equal(mm_brk(mm, base + 9 * PG), base + 2 * PG);
    assert_false(mm_is_mapped(mm, base + 2 * PG, base + 8 * PG));
    assert_int_equal(mm_brk(mm, base + 8 * PG), base + 8 * PG); /* up to it is fine */
    /* back to the base: everything released */
    assert_int_equal(mm_brk(mm, base), base);
    assert_false(mm_is_mapped(mm, base, base + PG));
    assert_vmas_sane(mm);
    assert_no_leak(gm);
}

static void test_brk_enomem(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t base = 0x405000;
    mm->brk_base = mm->brk_cur = base;
    assert_int_equal(mm_brk(mm, base + 64 * MiB), base); /* cannot be backed */
    assert_false(mm_is_mapped(mm, base, base + PG));
    assert_int_equal(count_data_frames(gm), 0);
    assert_no_leak(gm);
    assert_int_equal(mm_brk(mm, base + MiB), base + MiB);
}

static void test_mremap(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0x90000000;
    assert_int_equal(mm_map(mm, a, 4 * PG, RW, true), a);
    *(uint8_t *)gm_user_ptr(gm, a + PG, true) = 3;
    uint64_t used = gm->used;
    assert_int_equal(mm_mremap(mm, a, 4 * PG, 2 * PG, 0), a); /* shrink in place */
    assert_true(mm_is_mapped(mm, a, a + 2 * PG));
    assert_false(mm_is_mapped(mm, a + 2 * PG, a + 3 * PG));
    assert_int_equal(gm->used, used - 2);
    assert_int_equal(*(uint8_t *)gm_user_ptr(gm, a + PG, false), 3);
    assert_int_equal(mm_mremap(mm, a, 2 * PG, 2 * PG, 0), a);      /* same size */
    assert_int_equal(mm_mremap(mm, a, 2 * PG, PG + 1, 0), a);      /* rounds to 2 pages */
    assert_int_equal(mm_mremap(mm, a, 2 * PG, 3 * PG, 0), -ENOMEM); /* growing: refused */
    assert_int_equal(mm_mremap(mm, a, 2 * PG, 3 * PG, 1 /* MREMAP_MAYMOVE */), -ENOMEM);
    assert_true(mm_is_mapped(mm, a, a + 2 * PG));
    assert_int_equal(mm_mremap(mm, a + 1, 2 * PG, PG, 0), -EINVAL);
    assert_int_equal(mm_mremap(mm, a, 2 * PG, 0, 0), -EINVAL);
    assert_int_equal(mm_mremap(mm, a, 2 * PG, PG, 0), a);
    assert_false(mm_is_mapped(mm, a + PG, a + 2 * PG));
    assert_int_equal(gm->used, used - 3);
    assert_no_leak(gm);
}

/* new_len close to 2^64 wraps to 0 when rounded to pages, after the new_len == 0 check. */
static void test_mremap_huge_new_len(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    const uint64_t a = 0x90000000;
    assert_int_equal(mm_map(mm, a, 2 * PG, RW, true), a);
    int64_t r = mm_mremap(mm, a, 2 * PG, UINT64_MAX, 0);
    if (r == (int64_t)a && !mm_is_mapped(mm, a, a + PG)) {
        print_message("VMM BUG (fixed, regressed) (mm.c:276-279): mremap(a, 8192, 0xffffffffffffffff) "
                      "returned a and unmapped the whole mapping\n");
        fail_msg("VMM bug is back");
    }
    assert_true(r < 0);
    assert_true(mm_is_mapped(mm, a, a + 2 * PG));
}

/* A PROT_NONE reservation needs no frames, but protect_pages() creates page tables for
 * every page of it (gm_pte(create=true) before looking at prot), and page tables are
 * never freed. A reservation too big for guest memory fails and leaves all of guest
 * memory in page tables: every later mmap fails. Linux would grant it. */
static void test_big_prot_none_reservation(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    int64_t r = mm_map(mm, 0, 64ULL << 30, 0, false); /* 64 GiB: 32768 page tables */
    int64_t after = mm_map(mm, 0, PG, RW, false);
    if (r == -ENOMEM && after == -ENOMEM) {
        print_message("VMM BUG (fixed, regressed) (mm.c:124 protect_pages/gm_pte create for PROT_NONE): "
                      "mmap(NULL, 64 GiB, PROT_NONE) -> -ENOMEM and left %llu of %llu frames "
                      "in page tables; mmap(NULL, 4096, RW) then fails\n",
                      (unsigned long long)gm->used, (unsigned long long)gm->nframes);
        fail_msg("VMM bug is back");
    }
    assert_true(after > 0);
    assert_no_leak(gm);
}

/* madvise(MADV_DONTNEED) zeroes what is mapped and answers Linux's errors. It used to
 * live in syscall.c as a page-by-page loop over the guest's length with no range check:
 * madvise(addr, 1 TiB, MADV_DONTNEED) kept a vCPU thread busy for 30 s (64 TiB: half an
 * hour) and a kernel-half or unmapped range returned 0 (found by images/src/guestfuzz.c).
 * The time bound below is generous: the walk skips missing page tables in one step. */
static void test_dontneed(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    int64_t a = mm_map(mm, 0, 3 * PG, RW, false);
    assert_true(a > 0);
    for (int i = 0; i < 3; i++)
        assert_true(copy_to_user(gm, (uint64_t)a + i * PG, "xyz", 3));
    assert_int_equal(mm_dontneed(mm, (uint64_t)a + PG, PG), 0);
    char b[3];
    assert_true(copy_from_user(gm, b, (uint64_t)a + PG, 3));
    assert_memory_equal(b, "\0\0\0", 3);
    assert_true(copy_from_user(gm, b, (uint64_t)a, 3));
    assert_memory_equal(b, "xyz", 3);
    assert_true(copy_from_user(gm, b, (uint64_t)a + 2 * PG, 3));
    assert_memory_equal(b, "xyz", 3);
    assert_int_equal(mm_dontneed(mm, (uint64_t)a + 1, PG), -EINVAL);
    assert_int_equal(mm_dontneed(mm, KBASE, 1ULL << 46), -EINVAL);
    assert_int_equal(mm_dontneed(mm, 0x0000800000000000ULL, PG), -EINVAL);
    assert_int_equal(mm_dontneed(mm, (uint64_t)a, ~0ULL), -EINVAL);
    assert_int_equal(mm_dontneed(mm, (uint64_t)a, 4 * PG), -ENOMEM); /* runs off the end */
    assert_int_equal(mm_dontneed(mm, 0x100000000ULL, PG), -ENOMEM);  /* nothing there */
    assert_int_equal(mm_dontneed(mm, (uint64_t)a, 0), 0);
    int64_t big = mm_map(mm, 0, 1ULL << 46, 0, false); /* 64 TiB PROT_NONE */
    assert_true(big > 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(mm_dontneed(mm, (uint64_t)big, 1ULL << 46), 0);
    assert_int_equal(mm_dontneed(mm, 0x100000000000ULL, 1ULL << 40), -ENOMEM);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (s > 2.0)
        fail_msg("MADV_DONTNEED over 64 TiB took %.1f s: it walks the length, not the tables", s);
}

/* At the VMA limit, munmap of a page inside a VMA needs a split, vma_add fails, and
 * vma_remove (mm.c:81-85) has already cut the VMA short: the tail pages stay in the page
 * tables (still accessible to the guest) but no VMA covers them, and a later mmap there
 * reuses their frames with the old contents instead of fresh zero pages. */
static void test_split_at_vma_limit(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t base = 0x100000000ULL;
    size_t i = 0;
    /* 3-page PROT_NONE VMAs with 1-page gaps until the list is full */
    for (;; i++) {
        int64_t r = mm_map(mm, base + i * 4 * PG, 3 * PG, 0, true);
        if (r < 0) {
            assert_int_equal(r, -ENOMEM);
            break;
        }
        assert_true(i < 1000000);
    }
    assert_true(mm->n >= 1024);
    uint64_t v = base + (i - 1) * 4 * PG; /* the last VMA that exists */
    assert_int_equal(mm_protect(mm, v, 3 * PG, RW), 0);
    assert_true(copy_to_user(gm, v + 2 * PG, "\x77", 1));
    int64_t r = mm_unmap(mm, v + PG, PG);
    bool tracked = mm_is_mapped(mm, v + 2 * PG, v + 3 * PG);
    bool accessible = gm_user_ptr(gm, v + 2 * PG, false) != NULL;
    assert_no_leak(gm);
    if (r < 0 && !tracked && accessible) {
        /* free one VMA and map a fresh page where the untracked one is */
        assert_int_equal(mm_unmap(mm, base, 3 * PG), 0);
        int64_t m = mm_map(mm, v + 2 * PG, PG, RW, false);
        uint8_t byte = 0;
        if (m > 0)
            assert_true(copy_from_user(gm, &byte, (uint64_t)m, 1));
        print_message("VMM BUG (fixed, regressed) (mm.c:81-85 vma_remove split at the VMA limit): munmap "
                      "-> %lld, tail page untracked but accessible; new mmap -> 0x%llx whose "
                      "first byte is 0x%02x (fresh memory must be 0)\n", (long long)r,
                      (unsigned long long)m, byte);
        fail_msg("VMM bug is back");
    }
    /* fixed: either the split works, or munmap fails and changes nothing */
    if (r == 0) {
        assert_false(gm_user_ptr(gm, v + PG, false));
        assert_true(tracked && accessible);
    } else {
        assert_true(mm_is_mapped(mm, v, v + 3 * PG));
    }
}

static void test_reserve(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    uint64_t used = gm->used;
    mm_reserve(mm, 0x400000, 0x405000);
    assert_true(mm_is_mapped(mm, 0x400000, 0x405000));
    assert_int_equal(gm->used, used); /* nothing allocated */
    mm_reserve(mm, 0x402000, 0x407000); /* overlapping: merged */
    assert_int_equal(mm->n, 1);
    assert_true(mm_is_mapped(mm, 0x400000, 0x407000));
    /* mmap hints avoid reserved ranges */
    assert_int_equal(mm_map(mm, 0x404000, PG, RW, false), MMAP_TOP - PG);
    /* pages inside a reservation can be made accessible */
    assert_int_equal(mm_protect(mm, 0x401000, PG, PROT_R | PROT_X), 0);
    assert_non_null(gm_user_ptr(gm, 0x401000, false));
    assert_vmas_sane(mm);
}

/* ------------------------------------------------------------------------------------ */
/* user copies                                                                          */
/* ------------------------------------------------------------------------------------ */

static void test_user_ptr_rejects(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    assert_int_equal(mm_map(mm, USER_MIN, PG, RW, true), USER_MIN);
    assert_int_equal(mm_map(mm, USER_TOP - PG, PG, RW, true), USER_TOP - PG);
    assert_non_null(gm_user_ptr(gm, USER_MIN, true));
    assert_non_null(gm_user_ptr(gm, USER_TOP - 1, true));
    assert_null(gm_user_ptr(gm, 0, false)); /* its page table exists now, the page does not */
    assert_null(gm_user_ptr(gm, 1, false));
    assert_null(gm_user_ptr(gm, USER_MIN - 1, false));
    assert_null(gm_user_ptr(gm, USER_TOP, false));
    assert_null(gm_user_ptr(gm, USER_TOP + PG, false));
    assert_null(gm_user_ptr(gm, 0x00007FFFFFFFFFFFULL, false));
    assert_null(gm_user_ptr(gm, 0x0000800000000000ULL, false));
    assert_null(gm_user_ptr(gm, KBASE, false));
    assert_null(gm_user_ptr(gm, KVA(GPA_POOL), false));
    assert_null(gm_user_ptr(gm, KVA(GPA_AGENT), false));
    assert_null(gm_user_ptr(gm, UINT64_MAX, false));
    uint8_t b[8] = {0};
    assert_false(copy_from_user(gm, b, KVA(GPA_AGENT), 1));
    assert_false(copy_to_user(gm, KVA(GPA_POOL), b, 1));
    assert_false(copy_from_user(gm, b, 0, 1));
    char s[8];
    assert_int_equal(strncpy_from_user(gm, s, KBASE, sizeof s), -1);
    assert_int_equal(strncpy_from_user(gm, s, 0, sizeof s), -1);
}

static void test_user_ptr_rejects_bad_frames(void **state)
{
    /* A PTE that points outside the pool (e.g. at the page tables themselves) is never
     * handed out, even if it is marked present and user. */
    struct fx *f = *state;
    struct guestmem *gm = &f->gm;
    pthread_mutex_lock(&gm->lock);
    uint64_t *pte = gm_pte(gm, 0x10000000, true);
    pthread_mutex_unlock(&gm->lock);
    assert_non_null(pte);
    *pte = GPA_PML4 | gm_prot_flags(RW);
    assert_null(gm_user_ptr(gm, 0x10000000, false));
    *pte = (gm->size - PG) | gm_prot_flags(RW); /* last frame: fine */
    assert_non_null(gm_user_ptr(gm, 0x10000000, false));
    *pte = gm->size | gm_prot_flags(RW); /* just past the end */
    assert_null(gm_user_ptr(gm, 0x10000000, false));
    *pte = (PTE_ADDR & ~(PG - 1)) | gm_prot_flags(RW);
    assert_null(gm_user_ptr(gm, 0x10000000, false));
    *pte = GPA_POOL | (gm_prot_flags(RW) & ~PTE_U); /* supervisor page */
    assert_null(gm_user_ptr(gm, 0x10000000, false));
    *pte = 0;
}

static void test_copy_across_pages(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0xa0000000;
    assert_int_equal(mm_map(mm, a, 3 * PG, RW, true), a);
    uint8_t src[3 * 4096], dst[3 * 4096];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    /* straddling one boundary, then two */
    assert_true(copy_to_user(gm, a + PG - 10, src, 100));
    memset(dst, 0, sizeof dst);
    assert_true(copy_from_user(gm, dst, a + PG - 10, 100));
    assert_memory_equal(dst, src, 100);
    /* the bytes landed in two different frames */
    assert_int_equal(*(uint8_t *)gm_user_ptr(gm, a + PG - 10, false), src[0]);
    assert_int_equal(*(uint8_t *)gm_user_ptr(gm, a + PG, false), src[10]);
    assert_true(copy_to_user(gm, a + 1, src, 3 * PG - 1));
    assert_true(copy_from_user(gm, dst, a + 1, 3 * PG - 1));
    assert_memory_equal(dst, src, 3 * PG - 1);
    assert_true(copy_to_user(gm, a, src, 3 * PG));
    assert_true(copy_from_user(gm, dst, a, 3 * PG));
    assert_memory_equal(dst, src, 3 * PG);
    /* zero length always succeeds */
    assert_true(copy_from_user(gm, dst, a, 0));
    assert_true(copy_to_user(gm, a, src, 0));
    /* one byte past the end fails */
    assert_false(copy_from_user(gm, dst, a + 1, 3 * PG));
    assert_false(copy_to_user(gm, a + 3 * PG - 1, src, 2));
    assert_false(copy_from_user(gm, dst, a - 1, 2));
    /* wrapping around 2^64 */
    assert_false(copy_from_user(gm, dst, UINT64_MAX - 10, 100));
    assert_false(copy_from_user(gm, dst, a, SIZE_MAX));
}

static void test_copy_to_readonly_and_none(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0xb0000000;
    /* [RW][R][NONE] */
    assert_int_equal(mm_map(mm, a, PG, RW, true), a);
    assert_int_equal(mm_map(mm, a + PG, PG, PROT_R, true), a + PG);
    assert_int_equal(mm_map(mm, a + 2 * PG, PG, 0, true), a + 2 * PG);
    uint8_t buf[64];
    memset(buf, 0xee, sizeof buf);
    assert_true(copy_to_user(gm, a + PG - 32, buf, 32));
    assert_false(copy_to_user(gm, a + PG - 32, buf, 64)); /* runs into the R page */
    assert_false(copy_to_user(gm, a + PG, buf, 1));
    assert_int_equal(*(uint8_t *)gm_user_ptr(gm, a + PG, false), 0); /* not written */
    assert_true(copy_from_user(gm, buf, a + PG - 32, 64)); /* reading is fine */
    assert_false(copy_from_user(gm, buf, a + 2 * PG - 32, 64)); /* runs into NONE */
    assert_false(copy_from_user(gm, buf, a + 2 * PG, 1));
    /* after mprotect(R), writes fail; after RW again they succeed */
    assert_int_equal(mm_protect(mm, a, PG, PROT_R), 0);
    assert_false(copy_to_user(gm, a, buf, 1));
    assert_int_equal(mm_protect(mm, a, PG, RW), 0);
    assert_true(copy_to_user(gm, a, buf, 1));
    /* X-only is readable by the VMM (x86 has no execute-only pages) */
    assert_int_equal(mm_protect(mm, a + PG, PG, PROT_X), 0);
    assert_true(copy_from_user(gm, buf, a + PG, 8));
    assert_false(copy_to_user(gm, a + PG, buf, 8));
}

static void test_strncpy_from_user(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    const uint64_t a = 0xc0000000;
    assert_int_equal(mm_map(mm, a, 2 * PG, RW, true), a);
    /* "hello" straddling the page boundary */
    const uint64_t s = a + PG - 3;
    assert_true(copy_to_user(gm, s, "hello", 6));
    char dst[16];
    memset(dst, 'x', sizeof dst);
    assert_int_equal(strncpy_from_user(gm, dst, s, sizeof dst), 0);
    assert_string_equal(dst, "hello");
    memset(dst, 'x', sizeof dst);
    assert_int_equal(strncpy_from_user(gm, dst, s, 6), 0); /* exactly fits with its NUL */
    assert_string_equal(dst, "hello");
    assert_int_equal(strncpy_from_user(gm, dst, s, 5), -2); /* too long */
    assert_int_equal(strncpy_from_user(gm, dst, s, 0), -2);
    assert_int_equal(strncpy_from_user(gm, dst, s + 5, 1), 0); /* empty string */
    assert_string_equal(dst, "");
    /* a string that runs into an unmapped page */
    const uint64_t end = a + 2 * PG;
    assert_true(copy_to_user(gm, end - 4, "abcd", 4));
    assert_int_equal(strncpy_from_user(gm, dst, end - 4, sizeof dst), -1);
    assert_int_equal(strncpy_from_user(gm, dst, end - 4, 4), -2); /* limit first */
    assert_int_equal(strncpy_from_user(gm, dst, end, sizeof dst), -1);
    /* into a PROT_NONE page */
    assert_int_equal(mm_map(mm, end, PG, 0, true), end);
    assert_int_equal(strncpy_from_user(gm, dst, end - 4, sizeof dst), -1);
    /* wrapping address */
    assert_int_equal(strncpy_from_user(gm, dst, UINT64_MAX, sizeof dst), -1);
}

/* ------------------------------------------------------------------------------------ */
/* Random operations against a model                                                    */
/* ------------------------------------------------------------------------------------ */

#define WPAGES 96
#define WBASE  0x40000000ULL

struct mpage {
    int mapped, prot, frame;
    uint8_t byte; /* content at offset (page index * 37) % PG */
};

static uint64_t rng = 12345;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void model_check(struct fx *f, const struct mpage *m)
{
    struct guestmem *gm = &f->gm;
    for (int i = 0; i < WPAGES; i++) {
        uint64_t va = WBASE + (uint64_t)i * PG;
        uint64_t at = va + ((uint64_t)i * 37) % PG;
        assert_int_equal(mm_is_mapped(&f->mm, va, va + PG), m[i].mapped);
        uint64_t e = pte_of(gm, va);
        assert_int_equal(!!(e & PTE_ADDR), m[i].frame);
        uint8_t *r = gm_user_ptr(gm, at, false), *w = gm_user_ptr(gm, at, true);
        int readable = m[i].mapped && m[i].prot != 0;
        int writable = m[i].mapped && (m[i].prot & PROT_W);
        if (!!r != readable || !!w != writable)
            fail_msg("page %d (mapped %d prot %d): readable %d writable %d, pte 0x%llx", i,
                     m[i].mapped, m[i].prot, !!r, !!w, (unsigned long long)e);
        if (r) {
            if (*r != m[i].byte)
                fail_msg("page %d: byte 0x%x, expected 0x%x", i, *r, m[i].byte);
            assert_int_equal(!!(e & PTE_NX), !(m[i].prot & PROT_X));
        }
        if (e & PTE_ADDR)
            assert_int_equal(!!(e & PTE_SOFT), m[i].prot == 0);
    }
    assert_vmas_sane(&f->mm);
    assert_no_leak(gm);
}

static void test_random_ops_model(void **state)
{
    struct fx *f = *state;
    struct mm *mm = &f->mm;
    struct guestmem *gm = &f->gm;
    struct mpage m[WPAGES];
    memset(m, 0, sizeof m);
    int counts[6] = {0};
    for (int it = 0; it < 4000; it++) {
        int s = (int)(rnd() % WPAGES);
        int n = 1 + (int)(rnd() % 12);
        if (s + n > WPAGES)
            n = WPAGES - s;
        uint64_t va = WBASE + (uint64_t)s * PG, len = (uint64_t)n * PG;
        int prot = (int)(rnd() % 8);
        int op = (int)(rnd() % 6);
        counts[op]++;
        switch (op) {
        case 0: /* mmap fixed */
            assert_int_equal(mm_map(mm, va, len, prot, true), va);
            for (int i = s; i < s + n; i++)
                m[i] = (struct mpage){1, prot, prot != 0, 0};
            break;
        case 1: /* munmap */
            assert_int_equal(mm_unmap(mm, va, len), 0);
            for (int i = s; i < s + n; i++)
                m[i] = (struct mpage){0, 0, 0, 0};
            break;
        case 2: { /* mprotect */
            int all = 1;
            for (int i = s; i < s + n; i++)
                all &= m[i].mapped;
            int64_t r = mm_protect(mm, va, len, prot);
            assert_int_equal(r, all ? 0 : -ENOMEM);
            if (all)
                for (int i = s; i < s + n; i++) {
                    if (prot && !m[i].frame) {
                        m[i].frame = 1;
                        m[i].byte = 0;
                    }
                    m[i].prot = prot;
                }
            break;
        }
        case 3: { /* mremap shrink of a fully mapped range */
            int all = 1;
            for (int i = s; i < s + n; i++)
                all &= m[i].mapped;
            if (!all || n < 2)
                break;
            int keep = 1 + (int)(rnd() % (uint64_t)(n - 1));
            assert_int_equal(mm_mremap(mm, va, len, (uint64_t)keep * PG, 0), va);
            for (int i = s + keep; i < s + n; i++)
                m[i] = (struct mpage){0, 0, 0, 0};
            break;
        }
        default: /* write through the VMM, or fail to */
            for (int i = s; i < s + n; i++) {
                uint8_t b = (uint8_t)rnd();
                uint64_t at = WBASE + (uint64_t)i * PG + ((uint64_t)i * 37) % PG;
                bool ok = copy_to_user(gm, at, &b, 1);
                assert_int_equal(ok, m[i].mapped && (m[i].prot & PROT_W));
                if (ok)
                    m[i].byte = b;
            }
            break;
        }
        model_check(f, m);
    }
    print_message("random ops: %d map, %d unmap, %d protect, %d mremap, %d write; "
                  "%zu VMAs at the end\n", counts[0], counts[1], counts[2], counts[3],
                  counts[4] + counts[5], mm->n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gm_init_sizes),
        cmocka_unit_test_setup_teardown(test_gm_frames, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_gm_pte_and_prot_flags, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_map_topdown, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_map_topdown_skips_high_vmas, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_map_hint, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_map_fixed_replaces, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_map_invalid, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_map_enomem_no_leak, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_pte_flags, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_unmap_split, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_unmap_invalid, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_protect_none_keeps_frame, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_protect_downgrade_invalidates, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_protect_errors, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_map_none_then_protect_allocates, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_protect_enomem, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_brk, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_brk_enomem, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_mremap, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_mremap_huge_new_len, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_big_prot_none_reservation, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_split_at_vma_limit, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_dontneed, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_reserve, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_user_ptr_rejects, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_user_ptr_rejects_bad_frames, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_copy_across_pages, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_copy_to_readonly_and_none, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_strncpy_from_user, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_random_ops_model, setup16, teardown),
    };
    /* JINX_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards * and ?) */
    const char *filter = getenv("JINX_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("vmm/guestmem+mm", tests, NULL, NULL);
}
