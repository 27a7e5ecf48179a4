/* Walks over the user half of a guest's page tables, for the mm tests (mm_fixture.h) and
 * the address-space fuzz harness (tests/fuzz/fuzz_mm.c): no cmocka, no KVM. */
#ifndef JINX_TEST_PT_WALK_H
#define JINX_TEST_PT_WALK_H
#include "kvm/guestmem.h"
#include "kvm/layout.h"

/* Calls fn (if not NULL) for every leaf PTE with a frame in the user half, with its
 * virtual address. Returns the page-table pages reachable there (PDPTs, PDs, PTs) in
 * *tables (if not NULL) and the leaf frames as the result. */
static inline uint64_t pt_walk_user(struct guestmem *gm, uint64_t *tables,
                                    void (*fn)(void *ctx, uint64_t va), void *ctx)
{
    uint64_t frames = 0, nt = 0;
    uint64_t *pml4 = gm_ptr(gm, GPA_PML4);
    for (uint64_t i = 0; i < 256; i++) {
        if (!(pml4[i] & PTE_P))
            continue;
        nt++;
        uint64_t *pdpt = gm_ptr(gm, pml4[i] & PTE_ADDR);
        for (uint64_t j = 0; j < 512; j++) {
            if (!(pdpt[j] & PTE_P))
                continue;
            nt++;
            uint64_t *pd = gm_ptr(gm, pdpt[j] & PTE_ADDR);
            for (uint64_t k = 0; k < 512; k++) {
                if (!(pd[k] & PTE_P))
                    continue;
                nt++;
                uint64_t *pt = gm_ptr(gm, pd[k] & PTE_ADDR);
                for (uint64_t l = 0; l < 512; l++) {
                    if (!(pt[l] & PTE_ADDR))
                        continue;
                    frames++;
                    if (fn)
                        fn(ctx, (i << 39) | (j << 30) | (k << 21) | (l << 12));
                }
            }
        }
    }
    if (tables)
        *tables = nt;
    return frames;
}

/* Page-table pages reachable from the user half of the PML4 (PDPTs, PDs, PTs). */
static inline uint64_t count_pt_pages(struct guestmem *gm)
{
    uint64_t nt;
    pt_walk_user(gm, &nt, NULL, NULL);
    return nt;
}

/* Leaf PTEs with a frame in the user half. */
static inline uint64_t count_data_frames(struct guestmem *gm)
{
    return pt_walk_user(gm, NULL, NULL, NULL);
}

#endif
