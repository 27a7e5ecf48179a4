/* The guest program's address space: which user ranges are mapped (VMAs), and the
 * Linux memory syscalls on top of guestmem's page tables: mmap (anonymous), munmap,
 * mprotect, brk, mremap (shrink only). Arguments come from the guest and are untrusted;
 * results are Linux's (address or -errno). Every function takes gm->lock itself.
 *
 * Most mappings get their frames at mmap time (the page tables are the only record of
 * their protection). A *lazy* mapping (MAP_NORESERVE, or at least MM_LAZY_MIN bytes and
 * at most guest RAM, past which Linux's heuristic overcommit refuses one: syscall.c) gets
 * none: its VMA keeps the protection, and a frame comes at the first touch
 * (mm_fault, from the exception handler and from the syscall layer's copies), as Linux
 * backs anonymous memory. That is what lets a sanitizer reserve terabytes of shadow and
 * use a few megabytes of it within --mem (docs/sanitizers.md). */
#ifndef JINX_MM_H
#define JINX_MM_H
#include "kvm/guestmem.h"
#include <stdbool.h>
#include <stdint.h>

struct vma {
    uint64_t start, end;
    uint32_t lazy;   /* 1: frames come at first touch (mm_fault); 0: at mmap time */
    uint32_t prot;   /* a lazy VMA's protection (PROT_R/W/X); 0 when not lazy */
};

/* Anonymous mappings this large are lazy even without MAP_NORESERVE: Linux overcommits,
 * and a program that reserves much and touches little must not exhaust --mem. */
#define MM_LAZY_MIN (64ULL << 20)

struct mm {
    struct guestmem *gm;
    struct vma *v;
    size_t n, cap;
    uint64_t brk_base, brk_cur;
    uint64_t faulted;   /* frames given to lazy pages at first touch (for reports) */
};

void mm_init(struct mm *mm, struct guestmem *gm);
void mm_destroy(struct mm *mm);

/* Maps [addr, addr+len) (page-rounded) with prot; when !fixed, addr is a hint and a free
 * range is chosen top-down below MMAP_TOP. Returns the address or -errno. */
int64_t mm_map(struct mm *mm, uint64_t addr, uint64_t len, int prot, bool fixed);
/* The same with MAP_FIXED_NOREPLACE semantics available (-EEXIST on overlap). */
enum mm_mode { MM_HINT, MM_FIXED, MM_FIXED_NOREPLACE };
int64_t mm_map_mode(struct mm *mm, uint64_t addr, uint64_t len, int prot, enum mm_mode mode);
/* The same, lazy (no frame until the first touch) when lazy. */
int64_t mm_map_anon(struct mm *mm, uint64_t addr, uint64_t len, int prot, enum mm_mode mode,
                    bool lazy);
/* A not-present fault at user address va (write: a store; exec: an instruction fetch):
 * 2 when va lies in a lazy VMA whose protection allows the access and its page got a
 * frame (zeroed, present with the VMA's protection); 1 when another thread made it
 * meanwhile; 0 when it is no such page (a real fault: Linux's SIGSEGV; or a page
 * serialized execution trapped); -ENOMEM when guest memory is exhausted (gm->exhausted
 * rises). Takes gm->lock. */
int mm_fault(struct mm *mm, uint64_t va, bool write, bool exec);
/* Whether [start,end) is wholly inside one lazy VMA (for tests). */
bool mm_is_lazy(struct mm *mm, uint64_t start, uint64_t end);
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
