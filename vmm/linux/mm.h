/* The guest program's address space: which user ranges are mapped (VMAs), and the
 * Linux memory syscalls on top of guestmem's page tables: mmap (anonymous), munmap,
 * mprotect, brk, mremap (shrink only). Arguments come from the guest and are untrusted;
 * results are Linux's (address or -errno). Every function takes gm->lock itself. */
#ifndef JINX_MM_H
#define JINX_MM_H
#include "kvm/guestmem.h"
#include <stdbool.h>
#include <stdint.h>

struct vma {
    uint64_t start, end;
};

struct mm {
    struct guestmem *gm;
    struct vma *v;
    size_t n, cap;
    uint64_t brk_base, brk_cur;
};

void mm_init(struct mm *mm, struct guestmem *gm);
void mm_destroy(struct mm *mm);

/* Maps [addr, addr+len) (page-rounded) with prot; when !fixed, addr is a hint and a free
 * range is chosen top-down below MMAP_TOP. Returns the address or -errno. */
int64_t mm_map(struct mm *mm, uint64_t addr, uint64_t len, int prot, bool fixed);
/* The same with MAP_FIXED_NOREPLACE semantics available (-EEXIST on overlap). */
enum mm_mode { MM_HINT, MM_FIXED, MM_FIXED_NOREPLACE };
int64_t mm_map_mode(struct mm *mm, uint64_t addr, uint64_t len, int prot, enum mm_mode mode);
int64_t mm_unmap(struct mm *mm, uint64_t addr, uint64_t len);
int64_t mm_protect(struct mm *mm, uint64_t addr, uint64_t len, int prot);
/* mm_protect only when pred(gm, ctx) holds, asked under the same hold of gm->lock (so
 * what it checked cannot change before the protection does); -EAGAIN when it does not. */
int64_t mm_protect_if(struct mm *mm, uint64_t addr, uint64_t len, int prot,
                      bool (*pred)(struct guestmem *gm, void *ctx), void *ctx);
int64_t mm_brk(struct mm *mm, uint64_t newbrk);
/* madvise(MADV_DONTNEED): the range's pages read back as zeroes. Linux's errors: -EINVAL
 * for an unaligned or non-user range, -ENOMEM when part of it is not mapped. Costs time
 * in the pages that have frames, never in the range's length (a 64 TiB reservation is
 * skipped a missing page table at a time). */
int64_t mm_dontneed(struct mm *mm, uint64_t addr, uint64_t len);
int64_t mm_mremap(struct mm *mm, uint64_t addr, uint64_t old_len, uint64_t new_len, int flags);

/* For the loader: makes [start,end) part of the address space without allocating. */
void mm_reserve(struct mm *mm, uint64_t start, uint64_t end);
bool mm_is_mapped(struct mm *mm, uint64_t start, uint64_t end);

#endif
