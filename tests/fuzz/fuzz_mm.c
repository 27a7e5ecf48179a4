/* libFuzzer harness for the guest's address space (vmm/linux/mm.c over vmm/kvm/guestmem.c):
 * the memory syscalls' arguments come from the guest (untrusted). The input is a program
 * of operations (mmap with a hint, MAP_FIXED or MAP_FIXED_NOREPLACE, eager or lazy;
 * munmap; mprotect; madvise(MADV_DONTNEED); mremap; first-touch faults), each with
 * addresses near one another (so that mappings overlap, split and merge) or, now and
 * then, raw 64-bit values (unaligned, zero, huge, wrapping), in 16 MiB of guest RAM (so
 * that it runs out). Beyond "no crash, no leak", after every operation:
 *  - the VMAs are sorted, disjoint, page-aligned and inside user space;
 *  - every frame is accounted for: the page pool, page tables, or a page mapped by a
 *    leaf PTE, and no leaf PTE with a frame lies outside a VMA;
 *  - after a successful map, unmap or mremap, the mapped ranges are exactly those of a
 *    reference model of the same operations (a failed one may differ from the model, as
 *    Linux's may: the model then takes the VMAs as they are). */
#include "kvm/guestmem.h"
#include "kvm/layout.h"
#include "linux/elfparse.h"
#include "linux/mm.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/unit/pt_walk.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PG PAGE_SIZE
#define BASE 0x10000000ULL /* the window most operations work in: 64 pages from here */
#define MAXR 512

/* The reference model: mapped ranges, sorted and disjoint. */
static struct range {
    uint64_t s, e;
} model[MAXR], tmp[MAXR];
static size_t nmodel;

static void model_cut(uint64_t s, uint64_t e)
{
    size_t n = 0;
    for (size_t i = 0; i < nmodel; i++) {
        struct range r = model[i];
        if (r.e <= s || r.s >= e) {
            tmp[n++] = r;
            continue;
        }
        if (r.s < s && n < MAXR)
            tmp[n++] = (struct range){r.s, s};
        if (r.e > e && n < MAXR)
            tmp[n++] = (struct range){e, r.e};
    }
    memcpy(model, tmp, n * sizeof *tmp);
    nmodel = n;
}

static void model_add(uint64_t s, uint64_t e)
{
    model_cut(s, e);
    size_t i = 0;
    while (i < nmodel && model[i].s < s)
        i++;
    if (nmodel == MAXR)
        abort(); /* never: the guest RAM runs out long before */
    memmove(&model[i + 1], &model[i], (nmodel - i) * sizeof *model);
    model[i] = (struct range){s, e};
    nmodel++;
}

static void model_from(const struct mm *mm)
{
    nmodel = 0;
    for (size_t i = 0; i < mm->n && nmodel < MAXR; i++)
        model[nmodel++] = (struct range){mm->v[i].start, mm->v[i].end};
}

static bool model_has(uint64_t va)
{
    for (size_t i = 0; i < nmodel; i++)
        if (va >= model[i].s && va < model[i].e)
            return true;
    return false;
}

static bool in_vma(const struct mm *mm, uint64_t va)
{
    for (size_t i = 0; i < mm->n; i++)
        if (va >= mm->v[i].start && va < mm->v[i].end)
            return true;
    return false;
}

/* A page mapped where no VMA is aborts (the guest's own pages sit below USER_TOP). */
static void in_some_vma(void *ctx, uint64_t va)
{
    if (va < USER_TOP && !in_vma(ctx, va))
        abort();
}

static void check(struct guestmem *gm, struct mm *mm, bool exact)
{
    for (size_t i = 0; i < mm->n; i++) {
        const struct vma *v = &mm->v[i];
        if (v->start >= v->end || v->start % PG || v->end % PG || v->start < USER_MIN ||
            v->end > USER_TOP || (i && mm->v[i - 1].end > v->start))
            abort();
    }
    uint64_t tables, frames = pt_walk_user(gm, &tables, in_some_vma, mm);
    if (gm->used != GPA_POOL / PG + tables + frames)
        abort(); /* a frame leaked, or counted twice */
    if (!exact) {
        model_from(mm);
        return;
    }
    /* The mapped ranges are the model's: compare at every edge of either, and a page
     * each side of it. */
    for (int side = 0; side < 2; side++) {
        size_t n = side ? mm->n : nmodel;
        for (size_t i = 0; i < n; i++) {
            uint64_t edges[2] = {side ? mm->v[i].start : model[i].s,
                                 side ? mm->v[i].end : model[i].e};
            for (int k = 0; k < 2; k++)
                for (int d = -1; d <= 0; d++) {
                    uint64_t va = edges[k] + (uint64_t)(int64_t)d * PG;
                    if (va < USER_MIN || va >= USER_TOP)
                        continue;
                    if (mm_is_mapped(mm, va, va + PG) != model_has(va))
                        abort();
                }
        }
    }
}

static uint64_t raw(struct cur *c)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | take(c);
    return v;
}

/* An address: mostly a page of the window; sometimes a raw value. */
static uint64_t addr(struct cur *c)
{
    unsigned b = take(c);
    return b < 240 ? BASE + (b % 64) * PG : raw(c);
}

static uint64_t length(struct cur *c)
{
    unsigned b = take(c);
    return b < 240 ? (b % 16 + 1) * PG : b < 250 ? (b % 16 + 1) * PG - 1 : raw(c);
}

static uint64_t end_of(uint64_t a, uint64_t len)
{
    return a + ((len + PG - 1) & ~(PG - 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct guestmem gm;
    static struct mm mm;
    char err[256];
    if (gm_init(&gm, 16ULL << 20, err, sizeof err) != 0)
        abort();
    mm_init(&mm, &gm);
    nmodel = 0;
    struct cur c = {data, size};
    for (int steps = 0; c.n && steps < 256; steps++) {
        unsigned op = take(&c) % 8;
        uint64_t a = addr(&c), len = length(&c);
        int prot = (int)(take(&c) % 8);
        bool exact = true;
        int64_t r;
        switch (op) {
        case 0:
        case 1: { /* mmap */
            enum mm_mode mode = (enum mm_mode)(take(&c) % 3);
            r = mm_map_anon(&mm, a, len, prot, mode, op == 1);
            if (r >= 0)
                model_add((uint64_t)r, end_of((uint64_t)r, len));
            else
                exact = false;
            break;
        }
        case 2:
            r = mm_unmap(&mm, a, len);
            if (r == 0)
                model_cut(a, end_of(a, len));
            else
                exact = false;
            break;
        case 3:
            r = mm_protect(&mm, a, len, prot);
            break;
        case 4:
            r = mm_dontneed(&mm, a, len);
            break;
        case 5: {
            uint64_t nl = length(&c);
            r = mm_mremap(&mm, a, len, nl, 0);
            if (r >= 0 && end_of(a, nl) < end_of(a, len))
                model_cut(end_of(a, nl), end_of(a, len));
            else if (r < 0)
                exact = false;
            break;
        }
        default: /* a first touch, as the exception handler asks */
            r = mm_fault(&mm, a + (take(&c) % PG), prot & 2, prot & 4);
            if (r < -ENOMEM || r > 2)
                abort();
            break;
        }
        check(&gm, &mm, exact);
    }
    mm_destroy(&mm);
    gm_destroy(&gm);
    return 0;
}
