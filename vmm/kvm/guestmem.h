/* Guest physical memory, its page allocator, the page tables (owned and written only by
 * the VMM) and safe access to guest virtual memory for the syscall layer.
 *
 * Leaf PTE encoding for user pages: a present page has P|U|A|D (+W, +NX). A page that
 * exists but is PROT_NONE keeps its frame with P clear and PTE_SOFT set, so mprotect can
 * bring it back. During serialized execution a watched page may have P clear and PTE_TRAP
 * set instead (crew.h): it is still the program's page. A PTE of 0 means no frame. Page-table pages are never freed, which lets
 * translation walk the tables without holding the lock. */
#ifndef JINX_GUESTMEM_H
#define JINX_GUESTMEM_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kvm/layout.h"

#define PTE_P    0x1ULL
#define PTE_W    0x2ULL
#define PTE_U    0x4ULL
#define PTE_A    0x20ULL
#define PTE_D    0x40ULL
#define PTE_PS   0x80ULL
#define PTE_SOFT 0x200ULL
#define PTE_TRAP 0x400ULL  /* watched by crew.h: frame kept, P clear until granted */
#define PTE_SAMPLE_RO 0x800ULL /* writable, but W clear while a sampled read holds it
                                * (sched/crew_sample.h): the VMM may write it */
#define PTE_NX   (1ULL << 63)
#define PTE_ADDR 0x000FFFFFFFFFF000ULL

struct guestmem {
    uint8_t *host;          /* host mapping of guest physical memory */
    uint64_t size;          /* bytes of guest physical memory */
    pthread_mutex_t lock;   /* allocator and page-table updates */
    uint64_t *bitmap;       /* 1 = frame in use */
    uint64_t nframes;
    uint64_t next;          /* next-fit cursor */
    uint64_t used;          /* frames in use */
    /* Allocations refused because guest RAM (--mem) was full: data frames or page-table
     * pages. The syscall layer turns a rise into a jinx limit (limitlog.h). */
    atomic_uint_fast64_t exhausted;
    /* Page-table pages are a class of their own: taken from the top of RAM, never freed
     * and never given back by a snapshot restore, so the table *structure* only grows.
     * KVM's shadow MMU caches that structure and never sees the VMM's writes to it; only
     * leaf entries change, and a change of a leaf entry reaches KVM through the frame it
     * maps (gm_invalidate_frame). table_level[frame] is 0 for data, else 1 (PT) .. 3. */
    uint8_t *table_level;
    uint64_t *table_bitmap; /* the same as a bitmap: 1 = page-table frame (restores OR it in) */
    uint64_t table_cursor;
    uint64_t invalidations;  /* frames whose cached translations were dropped */
    uint64_t invalidation_calls; /* host calls that did it (one per run of neighbours) */
    /* Snapshot support (snapshot.c). KVM's dirty log sees only the guest's writes; these
     * record the VMM's own: contents it wrote, and frames that got new mappings (whose
     * translations a restore must drop). Off until the first snapshot. */
    bool track;
    uint64_t *vmm_dirty;     /* bitmap over frames */
    uint64_t *vmm_dirty_sum; /* 1 bit per word of vmm_dirty: the words worth reading */
    /* The snapshot whose frame bitmap `bitmap` equals, but in frames allocated or freed
     * since (all marked dirty): a restore to it updates only the dirty words. */
    const void *bitmap_of;
    uint64_t *remapped;      /* frames that became mapped or changed mapping */
    size_t nremapped, capremapped;
    bool remap_overflow;     /* too many to list: a restore drops every translation */
    /* Demand paging (linux/demand.h): gm_user_ptr asks it for a user page that has no
     * frame yet (a lazy mapping the program never touched); true when the page now has
     * one. NULL: no demand paging. Called without gm->lock held. */
    bool (*fault_in)(void *ctx, uint64_t va, bool write);
    void *fault_ctx;
};

/* Maps size bytes of guest RAM on the host and writes the kernel half of the page tables. */
int gm_init(struct guestmem *gm, uint64_t size, char *err, size_t errlen);
void gm_destroy(struct guestmem *gm);

static inline void *gm_ptr(const struct guestmem *gm, uint64_t gpa) { return gm->host + gpa; }

/* A zeroed frame, or 0 when guest memory is exhausted. Caller holds gm->lock. */
uint64_t gm_alloc_frame(struct guestmem *gm);
void gm_free_frame(struct guestmem *gm, uint64_t gpa);
/* The same for a list of frames (sorted in place), one MADV_DONTNEED per run of
 * neighbours: each host call also makes KVM drop the run's translations, and costs that
 * whatever the run's length. Caller holds gm->lock and frees before allocating again. */
void gm_free_frames(struct guestmem *gm, uint64_t *gpas, size_t n);

/* Words of a bitmap over gm's frames (the frame bitmaps, the dirty logs). */
static inline uint64_t gm_bitmap_words(const struct guestmem *gm) { return (gm->nframes + 63) / 64; }

/* Records that the VMM wrote the frame at gpa (for snapshot restore). The summary bit
 * is set after the frame's, with release order: a reader that takes the summary word
 * (acquire) then sees every frame bit it stands for. */
static inline void gm_mark_dirty(struct guestmem *gm, uint64_t gpa)
{
    if (gm->track && gpa < gm->size) {
        uint64_t w = gpa / 4096 / 64;
        __atomic_fetch_or(&gm->vmm_dirty[w], 1ULL << ((gpa / 4096) % 64), __ATOMIC_RELAXED);
        __atomic_fetch_or(&gm->vmm_dirty_sum[w / 64], 1ULL << (w % 64), __ATOMIC_RELEASE);
    }
}
/* Writes a page-table entry: marks its table dirty and, while a snapshot is active,
 * remembers the frame it now maps. All PTE writes go through here. */
void gm_set_pte(struct guestmem *gm, uint64_t *pte, uint64_t val);
uint64_t gm_xchg_pte(struct guestmem *gm, uint64_t *pte, uint64_t val);

/* Drops every cached translation (guest TLBs, KVM's shadow or EPT/NPT entries) of the
 * frame at gpa on every vCPU. Needed after the VMM downgrades a present PTE: KVM never
 * sees the VMM's own writes to guest page tables, but it does see changes to the host
 * mapping behind a frame, through its MMU notifier, and then zaps the frame's mappings
 * and flushes. Works the same under VMX, SVM and PVM. Freed frames need no call:
 * gm_free_frame's MADV_DONTNEED has the same effect. */
void gm_invalidate_frame(struct guestmem *gm, uint64_t gpa);
/* The same for a run of frames [gpa, gpa+len), in one step. */
void gm_invalidate_range(struct guestmem *gm, uint64_t gpa, uint64_t len);
/* The same for a list of frames (sorted in place), one step per run of neighbours. */
void gm_invalidate_frames(struct guestmem *gm, uint64_t *frames, size_t n);

/* Leaf PTE slot for va, creating intermediate tables if create. NULL if va is not a
 * user address, or tables could not be allocated. Caller holds gm->lock when creating. */
uint64_t *gm_pte(struct guestmem *gm, uint64_t va, bool create);

/* For walks over big ranges: the leaf PTE slot for va if its tables exist, else NULL;
 * either way *next is the next address worth looking at (past a missing table). */
/* The host byte of a user code address where the VMM may write an int3: a present,
 * read-only, executable user page (a writable one may be watched or shared data);
 * NULL otherwise. */
uint8_t *gm_code_byte(struct guestmem *gm, uint64_t va);
uint64_t *gm_pte_scan(struct guestmem *gm, uint64_t va, uint64_t *next);

/* Maps the agent's syscall entry page (UVA_AGENT) and the syscall MMIO page (UVA_MMIO)
 * for user mode, above USER_TOP where the program's own mappings never go. */
int gm_map_agent_pages(struct guestmem *gm);

/* PTE flags for a protection (PROT_R/W/X from elf.h). */
uint64_t gm_prot_flags(int prot);

/* The frame a leaf PTE stands for (present, PROT_NONE or trapped); 0 if none. */
static inline uint64_t gm_pte_frame(uint64_t e)
{
    return e & PTE_ADDR;
}

/* A leaf PTE the program can use: present, or present but for a serialized-execution
 * trap (which the VMM may read and write through). */
static inline int gm_pte_usable(uint64_t e)
{
    return (e & (PTE_P | PTE_TRAP)) != 0;
}

/* Whether the program may write through e (a sampled read's read-only grant is still
 * its writable page). */
static inline bool gm_pte_writable(uint64_t e)
{
    return (e & (PTE_W | PTE_SAMPLE_RO)) != 0;
}

/* Whether a user access that took a #PF with error code err (bit 1 write, bit 4 fetch)
 * would go through the leaf PTE e as it is now: present, user, writable for a write,
 * executable for a fetch. */
static inline bool gm_pte_allows(uint64_t e, uint64_t err)
{
    return (e & PTE_P) && (e & PTE_U) && (!(err & 2) || (e & PTE_W)) &&
           (!(err & 16) || !(e & PTE_NX));
}

/* Translates a user virtual address; NULL unless mapped present with user access (and
 * writable when write). Lock-free: reads PTEs atomically and validates frame addresses;
 * a page without a frame is first offered to fault_in (which takes gm->lock: callers
 * must not hold it). */
void *gm_user_ptr(struct guestmem *gm, uint64_t va, bool write);

/* Copies to/from guest user memory; false (nothing guaranteed) on any unmapped byte. */
bool copy_from_user(struct guestmem *gm, void *dst, uint64_t va, size_t len);
bool copy_to_user(struct guestmem *gm, uint64_t va, const void *src, size_t len);
/* NUL-terminated string of at most max bytes (including the NUL); -1 fault, -2 too long. */
int strncpy_from_user(struct guestmem *gm, char *dst, uint64_t va, size_t max);

#endif
