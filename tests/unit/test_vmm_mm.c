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

#include "mm_fixture.h"

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

/* Whether a faulting access would go through a PTE as it is now (exception.c's
 * fault_went_away: a fault whose page was mapped since it was taken runs again). */
static void test_gm_pte_allows(void **state)
{
    (void)state;
    const uint64_t frame = 0x123000, rw = frame | gm_prot_flags(RW);
    const uint64_t rx = frame | gm_prot_flags(PROT_R | PROT_X);
    const uint64_t ro = frame | gm_prot_flags(PROT_R);
    const uint64_t rd = 4, wr = 6, fetch = 0x14; /* user read, write, instruction fetch */
    assert_true(gm_pte_allows(rw, rd));
    assert_true(gm_pte_allows(rw, wr));
    assert_false(gm_pte_allows(rw, fetch)); /* NX */
    assert_true(gm_pte_allows(rx, fetch));
    assert_false(gm_pte_allows(ro, wr));
    assert_true(gm_pte_allows(ro, rd));
    /* Still trapped by page ownership, PROT_NONE, unmapped, supervisor: a real fault. */
    assert_false(gm_pte_allows((rw & ~PTE_P) | PTE_TRAP, rd));
    assert_false(gm_pte_allows(frame | gm_prot_flags(0), rd));
    assert_false(gm_pte_allows(0, rd));
    assert_false(gm_pte_allows(rw & ~PTE_U, rd));
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
    uint64_t calls = gm->invalidation_calls;
    assert_int_equal(mm_protect(mm, a, 4 * PG, PROT_R | PROT_X), 0); /* loses W */
    assert_int_equal(gm->invalidations, inv + 4);
    /* four neighbouring frames (a fresh mapping's): one host call, not one per page */
    assert_int_equal(gm->invalidation_calls, calls + 1);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gm_init_sizes),
        cmocka_unit_test_setup_teardown(test_gm_frames, setup16, teardown),
        cmocka_unit_test_setup_teardown(test_gm_pte_and_prot_flags, setup16, teardown),
        cmocka_unit_test(test_gm_pte_allows),
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
    };
    /* JINX_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards * and ?) */
    const char *filter = getenv("JINX_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("vmm/guestmem+mm", tests, NULL, NULL);
}
