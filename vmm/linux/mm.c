#include "linux/mm.h"
#include "kvm/layout.h"
#include "linux/elfparse.h" /* PROT_R/W/X */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAP_LIMIT_VMAS 65536

void mm_init(struct mm *mm, struct guestmem *gm)
{
    memset(mm, 0, sizeof *mm);
    mm->gm = gm;
}

void mm_destroy(struct mm *mm)
{
    free(mm->v);
    mm->v = NULL;
    mm->n = mm->cap = 0;
}

static bool overlaps_any(struct mm *mm, uint64_t s, uint64_t e)
{
    for (size_t i = 0; i < mm->n; i++)
        if (mm->v[i].start < e && s < mm->v[i].end)
            return true;
    return false;
}

bool mm_is_mapped(struct mm *mm, uint64_t s, uint64_t e)
{
    /* VMAs are sorted and disjoint: walk them covering [s,e). */
    for (size_t i = 0; i < mm->n && s < e; i++) {
        if (mm->v[i].end <= s)
            continue;
        if (mm->v[i].start > s)
            return false;
        s = mm->v[i].end;
    }
    return s >= e;
}

static bool same_kind(const struct vma *a, const struct vma *b)
{
    return a->lazy == b->lazy && a->prot == b->prot;
}

static int vma_add_as(struct mm *mm, uint64_t s, uint64_t e, uint32_t lazy, uint32_t prot)
{
    if (mm->n == mm->cap) {
        if (mm->cap >= MAP_LIMIT_VMAS)
            return -ENOMEM;
        size_t cap = mm->cap ? mm->cap * 2 : 64;
        struct vma *nv = realloc(mm->v, cap * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        mm->v = nv;
        mm->cap = cap;
    }
    size_t i = 0;
    while (i < mm->n && mm->v[i].start < s)
        i++;
    memmove(&mm->v[i + 1], &mm->v[i], (mm->n - i) * sizeof *mm->v);
    mm->v[i] = (struct vma){s, e, lazy, lazy ? prot : 0};
    mm->n++;
    /* Merge with neighbours that touch and are of the same kind, so the list stays short
     * (a lazy VMA's protection is its own: it never merges into another's). */
    if (i + 1 < mm->n && mm->v[i].end == mm->v[i + 1].start && same_kind(&mm->v[i], &mm->v[i + 1])) {
        mm->v[i].end = mm->v[i + 1].end;
        memmove(&mm->v[i + 1], &mm->v[i + 2], (mm->n - i - 2) * sizeof *mm->v);
        mm->n--;
    }
    if (i > 0 && mm->v[i - 1].end == mm->v[i].start && same_kind(&mm->v[i - 1], &mm->v[i])) {
        mm->v[i - 1].end = mm->v[i].end;
        memmove(&mm->v[i], &mm->v[i + 1], (mm->n - i - 1) * sizeof *mm->v);
        mm->n--;
    }
    return 0;
}

static int vma_add(struct mm *mm, uint64_t s, uint64_t e)
{
    return vma_add_as(mm, s, e, 0, 0);
}

static int vma_remove(struct mm *mm, uint64_t s, uint64_t e)
{
    for (size_t i = 0; i < mm->n; i++) {
        struct vma *v = &mm->v[i];
        if (v->end <= s || v->start >= e)
            continue;
        if (v->start < s && v->end > e) { /* split: make room first, change nothing on failure */
            if (mm->n == mm->cap) {
                if (mm->cap >= MAP_LIMIT_VMAS)
                    return -ENOMEM;
                struct vma *nv = realloc(mm->v, mm->cap * 2 * sizeof *nv);
                if (!nv)
                    return -ENOMEM;
                mm->v = nv;
                mm->cap *= 2;
                v = &mm->v[i];
            }
            uint64_t tail = v->end;
            uint32_t lazy = v->lazy, prot = v->prot;
            v->end = s;
            return vma_add_as(mm, e, tail, lazy, prot);
        }
        if (v->start < s)
            v->end = s;
        else if (v->end > e)
            v->start = e;
        else {
            memmove(v, v + 1, (mm->n - i - 1) * sizeof *v);
            mm->n--;
            i--;
        }
    }
    return 0;
}

void mm_reserve(struct mm *mm, uint64_t start, uint64_t end)
{
    pthread_mutex_lock(&mm->gm->lock);
    vma_remove(mm, start, end);
    vma_add(mm, start, end);
    pthread_mutex_unlock(&mm->gm->lock);
}

/* Frames whose host calls (free, drop translations) are made per run of neighbours, not
 * per page: each call is a KVM MMU notifier round on the host, whatever its length. */
#define MM_BATCH 512
struct frame_batch {
    uint64_t f[MM_BATCH];
    size_t n;
};

/* Frees frames and clears PTEs in [s,e). Caller holds the lock. */
static void unmap_pages(struct mm *mm, uint64_t s, uint64_t e)
{
    struct frame_batch b;
    b.n = 0;
    for (uint64_t va = s, next; va < e; va = next) {
        uint64_t *pte = gm_pte_scan(mm->gm, va, &next); /* skips absent tables whole */
        if (!pte || !*pte)
            continue;
        uint64_t old = gm_xchg_pte(mm->gm, pte, 0);
        b.f[b.n++] = gm_pte_frame(old);
        if (b.n == MM_BATCH) {
            gm_free_frames(mm->gm, b.f, b.n); /* also drops their translations */
            b.n = 0;
        }
    }
    gm_free_frames(mm->gm, b.f, b.n);
}

/* *pte (was old) becomes nw; a frame that loses write, read or execute permission goes
 * into down, whose cached translations must go (flushed here when the batch is full, by
 * the caller at the end). Caller holds the lock. */
static void set_pte(struct mm *mm, uint64_t *pte, uint64_t old, uint64_t nw,
                    struct frame_batch *down)
{
    gm_set_pte(mm->gm, pte, nw);
    bool downgrade = (old & PTE_P) && (!(nw & PTE_P) || ((old & PTE_W) && !(nw & PTE_W)) ||
                                       (!(old & PTE_NX) && (nw & PTE_NX)));
    if (downgrade)
        down->f[down->n++] = gm_pte_frame(nw);
    if (down->n == MM_BATCH) {
        gm_invalidate_frames(mm->gm, down->f, down->n);
        down->n = 0;
    }
}

/* Sets prot on [s,e), allocating frames that become accessible. Caller holds lock. */
static int protect_pages(struct mm *mm, uint64_t s, uint64_t e, int prot)
{
    uint64_t flags = gm_prot_flags(prot);
    struct frame_batch down; /* downgraded: their cached translations must go */
    down.n = 0;
    int ret = 0;
    for (uint64_t va = s, next; va < e; va = next) {
        uint64_t *pte;
        if (!prot) {
            /* Nothing to keep where no tables exist: a huge PROT_NONE reservation costs
             * no memory, as on Linux. */
            if (!(pte = gm_pte_scan(mm->gm, va, &next)))
                continue;
        } else {
            next = va + PAGE_SIZE;
            if (!(pte = gm_pte(mm->gm, va, true))) {
                ret = -ENOMEM;
                break;
            }
        }
        uint64_t old = *pte, frame = gm_pte_frame(old);
        if (!frame) {
            if (!prot)
                continue; /* stays lazily unbacked */
            frame = gm_alloc_frame(mm->gm);
            if (!frame) {
                ret = -ENOMEM;
                break;
            }
        }
        set_pte(mm, pte, old, frame | flags, &down);
    }
    gm_invalidate_frames(mm->gm, down.f, down.n);
    return ret;
}

static uint64_t find_gap(struct mm *mm, uint64_t len)
{
    uint64_t top = MMAP_TOP;
    /* VMAs sorted ascending: scan from the top down for the first gap that fits. */
    for (size_t i = mm->n; i-- > 0;) {
        if (mm->v[i].start >= top)
            continue;
        if (mm->v[i].end <= top && top - mm->v[i].end >= len)
            return top - len;
        if (mm->v[i].start < top)
            top = mm->v[i].start;
    }
    uint64_t floor = mm->brk_cur + (1ULL << 30);
    if (top >= floor + len)
        return top - len;
    return 0;
}

static bool range_ok(uint64_t addr, uint64_t len)
{
    return len && addr >= USER_MIN && addr < USER_TOP && len <= USER_TOP - addr;
}

int64_t mm_map(struct mm *mm, uint64_t addr, uint64_t len, int prot, bool fixed)
{
    return mm_map_mode(mm, addr, len, prot, fixed ? MM_FIXED : MM_HINT);
}

int64_t mm_map_mode(struct mm *mm, uint64_t addr, uint64_t len, int prot, enum mm_mode mode)
{
    return mm_map_anon(mm, addr, len, prot, mode, false);
}

int64_t mm_map_anon(struct mm *mm, uint64_t addr, uint64_t len, int prot, enum mm_mode mode,
                    bool lazy)
{
    bool fixed = mode != MM_HINT;
    if (len == 0 || len > (1ULL << 46))
        return -EINVAL;
    len = (len + PAGE_SIZE - 1) & PAGE_MASK;
    if (addr & (PAGE_SIZE - 1)) {
        if (fixed)
            return -EINVAL;
        addr = 0;
    }
    pthread_mutex_lock(&mm->gm->lock);
    int64_t ret;
    if (fixed) {
        if (!range_ok(addr, len)) {
            ret = -ENOMEM;
            goto out;
        }
        if (mode == MM_FIXED_NOREPLACE && overlaps_any(mm, addr, addr + len)) {
            ret = -EEXIST;
            goto out;
        }
        if ((ret = vma_remove(mm, addr, addr + len)) < 0)
            goto out;
        unmap_pages(mm, addr, addr + len);
    } else if (!addr || !range_ok(addr, len) || overlaps_any(mm, addr, addr + len)) {
        addr = find_gap(mm, len);
        if (!addr) {
            ret = -ENOMEM;
            goto out;
        }
    }
    if ((ret = vma_add_as(mm, addr, addr + len, lazy, (uint32_t)prot)) < 0)
        goto out;
    if (!lazy && (ret = protect_pages(mm, addr, addr + len, prot)) < 0) {
        unmap_pages(mm, addr, addr + len);
        vma_remove(mm, addr, addr + len);
        goto out;
    }
    ret = (int64_t)addr;
out:
    pthread_mutex_unlock(&mm->gm->lock);
    return ret;
}

int64_t mm_unmap(struct mm *mm, uint64_t addr, uint64_t len)
{
    if ((addr & (PAGE_SIZE - 1)) || len == 0)
        return -EINVAL;
    len = (len + PAGE_SIZE - 1) & PAGE_MASK;
    if (!range_ok(addr, len))
        return -EINVAL;
    pthread_mutex_lock(&mm->gm->lock);
    int ret = vma_remove(mm, addr, addr + len); /* may fail (VMA limit): then change nothing */
    if (ret == 0)
        unmap_pages(mm, addr, addr + len);
    pthread_mutex_unlock(&mm->gm->lock);
    return ret;
}

int64_t mm_protect(struct mm *mm, uint64_t addr, uint64_t len, int prot)
{
    return mm_protect_if(mm, addr, len, prot, NULL, NULL);
}

/* Sets prot on the frames [s,e) already has, making none: a lazy VMA's pages. Caller
 * holds the lock. */
static void protect_present(struct mm *mm, uint64_t s, uint64_t e, int prot)
{
    uint64_t flags = gm_prot_flags(prot);
    struct frame_batch down;
    down.n = 0;
    for (uint64_t va = s, next; va < e; va = next) {
        uint64_t *pte = gm_pte_scan(mm->gm, va, &next);
        if (!pte || !gm_pte_frame(*pte))
            continue;
        set_pte(mm, pte, *pte, gm_pte_frame(*pte) | flags, &down);
    }
    gm_invalidate_frames(mm->gm, down.f, down.n);
}

/* The VMA holding va (sorted, disjoint: a binary search), or NULL. Caller holds the lock. */
static struct vma *vma_at(struct mm *mm, uint64_t va)
{
    size_t lo = 0, hi = mm->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mm->v[mid].end <= va)
            lo = mid + 1;
        else if (mm->v[mid].start > va)
            hi = mid;
        else
            return &mm->v[mid];
    }
    return NULL;
}

/* mprotect of a mapped [s,e), VMA by VMA: an eager one's frames are made or reprotected
 * (protect_pages); a lazy one keeps being lazy, with the new protection in its VMA (split
 * off as needed) and on the frames it already has. Caller holds the lock. */
static int protect_range(struct mm *mm, uint64_t s, uint64_t e, int prot)
{
    for (uint64_t cur = s; cur < e;) {
        struct vma *v = vma_at(mm, cur);
        if (!v)
            return -ENOMEM;
        uint64_t piece = v->end < e ? v->end : e;
        if (!v->lazy) {
            int r = protect_pages(mm, cur, piece, prot);
            if (r < 0)
                return r;
        } else if (v->prot != (uint32_t)prot) {
            /* Make room for a three-way split first, so that failing changes nothing. */
            if (mm->n + 2 > mm->cap) {
                if (mm->cap >= MAP_LIMIT_VMAS)
                    return -ENOMEM;
                struct vma *nv = realloc(mm->v, (mm->cap + 2) * 2 * sizeof *nv);
                if (!nv)
                    return -ENOMEM;
                mm->v = nv;
                mm->cap = (mm->cap + 2) * 2;
            }
            int r = vma_remove(mm, cur, piece);
            if (r == 0)
                r = vma_add_as(mm, cur, piece, 1, (uint32_t)prot);
            if (r < 0)
                return r;
            protect_present(mm, cur, piece, prot);
        }
        cur = piece;
    }
    return 0;
}

int64_t mm_protect_if(struct mm *mm, uint64_t addr, uint64_t len, int prot,
                      bool (*pred)(struct guestmem *gm, void *ctx), void *ctx)
{
    if (addr & (PAGE_SIZE - 1))
        return -EINVAL;
    if (prot & ~7)
        return -EINVAL;
    if (len == 0)
        return 0;
    len = (len + PAGE_SIZE - 1) & PAGE_MASK;
    if (!range_ok(addr, len))
        return -ENOMEM;
    pthread_mutex_lock(&mm->gm->lock);
    int64_t ret = -ENOMEM;
    if (mm_is_mapped(mm, addr, addr + len))
        ret = !pred || pred(mm->gm, ctx) ? protect_range(mm, addr, addr + len, prot) : -EAGAIN;
    pthread_mutex_unlock(&mm->gm->lock);
    return ret;
}

/* Whether prot lets an access of this kind happen (x86: any protection reads). */
static bool prot_allows(uint32_t prot, bool write, bool exec)
{
    if (!prot)
        return false;
    if (write)
        return prot & PROT_W;
    if (exec)
        return prot & PROT_X;
    return true;
}

int mm_fault(struct mm *mm, uint64_t va, bool write, bool exec)
{
    if (va < USER_MIN || va >= USER_TOP)
        return 0;
    va &= PAGE_MASK;
    pthread_mutex_lock(&mm->gm->lock);
    int ret = 0;
    struct vma *v = vma_at(mm, va);
    if (v && v->lazy && prot_allows(v->prot, write, exec)) {
        uint64_t *pte = gm_pte(mm->gm, va, true);
        if (!pte) {
            ret = -ENOMEM; /* no room for the page table */
        } else if (gm_pte_frame(*pte)) {
            /* Another thread's fault (or a syscall's copy) made it first: 1. A frame that
             * is there but not present (trapped by serialized execution) is not this
             * function's to change: 0, the mode's fault handler has it. */
            ret = (*pte & PTE_P) ? 1 : 0;
        } else {
            uint64_t frame = gm_alloc_frame(mm->gm);
            if (!frame) {
                ret = -ENOMEM;
            } else {
                gm_set_pte(mm->gm, pte, frame | gm_prot_flags((int)v->prot));
                mm->faulted++;
                ret = 2;
            }
        }
    }
    pthread_mutex_unlock(&mm->gm->lock);
    return ret;
}

bool mm_is_lazy(struct mm *mm, uint64_t start, uint64_t end)
{
    pthread_mutex_lock(&mm->gm->lock);
    struct vma *v = vma_at(mm, start);
    bool lazy = v && v->lazy && end <= v->end;
    pthread_mutex_unlock(&mm->gm->lock);
    return lazy;
}

int64_t mm_brk(struct mm *mm, uint64_t newbrk)
{
    pthread_mutex_lock(&mm->gm->lock);
    uint64_t cur = mm->brk_cur;
    if (newbrk < mm->brk_base || newbrk > mm->brk_base + (1ULL << 30))
        goto out;
    uint64_t old_end = (cur + PAGE_SIZE - 1) & PAGE_MASK;
    uint64_t new_end = (newbrk + PAGE_SIZE - 1) & PAGE_MASK;
    if (new_end > old_end) {
        if (overlaps_any(mm, old_end, new_end))
            goto out;
        if (vma_add(mm, old_end, new_end) < 0)
            goto out;
        if (protect_pages(mm, old_end, new_end, 3) < 0) {
            unmap_pages(mm, old_end, new_end);
            vma_remove(mm, old_end, new_end);
            goto out;
        }
    } else if (new_end < old_end) {
        unmap_pages(mm, new_end, old_end);
        vma_remove(mm, new_end, old_end);
    }
    mm->brk_cur = newbrk;
out:
    cur = mm->brk_cur;
    pthread_mutex_unlock(&mm->gm->lock);
    return (int64_t)cur;
}

int64_t mm_dontneed(struct mm *mm, uint64_t addr, uint64_t len)
{
    if (addr & (PAGE_SIZE - 1))
        return -EINVAL;
    if (len == 0)
        return 0;
    if (len > USER_TOP)
        return -EINVAL;
    len = (len + PAGE_SIZE - 1) & PAGE_MASK;
    if (!range_ok(addr, len))
        return addr < USER_TOP ? -ENOMEM : -EINVAL;
    pthread_mutex_lock(&mm->gm->lock);
    int64_t ret = -ENOMEM;
    if (mm_is_mapped(mm, addr, addr + len)) {
        for (uint64_t va = addr, next; va < addr + len; va = next) {
            uint64_t *pte = gm_pte_scan(mm->gm, va, &next);
            uint64_t frame = pte ? gm_pte_frame(*pte) : 0;
            if (!frame || frame + PAGE_SIZE > mm->gm->size)
                continue;
            /* Anonymous memory reads back as zeroes; the VMM's write is recorded for
             * snapshot restore like any other. */
            memset(gm_ptr(mm->gm, frame), 0, PAGE_SIZE);
            gm_mark_dirty(mm->gm, frame);
        }
        ret = 0;
    }
    pthread_mutex_unlock(&mm->gm->lock);
    return ret;
}

int64_t mm_mremap(struct mm *mm, uint64_t addr, uint64_t old_len, uint64_t new_len, int flags)
{
    (void)flags;
    if ((addr & (PAGE_SIZE - 1)) || new_len == 0 || new_len > (1ULL << 46) ||
        old_len > (1ULL << 46))
        return -EINVAL;
    old_len = (old_len + PAGE_SIZE - 1) & PAGE_MASK;
    new_len = (new_len + PAGE_SIZE - 1) & PAGE_MASK;
    if (new_len <= old_len) {
        if (new_len < old_len)
            mm_unmap(mm, addr + new_len, old_len - new_len);
        return (int64_t)addr;
    }
    /* Growing in place or moving is not offered; callers (musl realloc) fall back to
     * allocate-copy-free, exactly as on a kernel that refuses. */
    return -ENOMEM;
}
