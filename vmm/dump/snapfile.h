/* The SNAPSHOT record of a .jinxdump (type 16): the whole machine state a retired
 * fragment started from, compact enough to keep with every crash dump, complete enough
 * for `jinx-vmm replay` to rebuild it in a fresh VM (snapshot_load_into, snapshot.h).
 *
 * What it holds: every vCPU (registers, system registers, XSAVE trimmed of its trailing
 * zeros, the VMM's view of the thread on it: tid, state, futex wait, start state), the
 * VMM state of struct snapshot (VMAs, brk, frame allocator, live/blocked counts, virtual
 * time, rng, signal actions), and guest memory as the frames in use (the allocator's
 * bitmap) plus the page-table frames, each stored only when it is not all zeros, plus
 * the user half of the PML4. The agent's low memory is not stored: a fresh VM sets it up.
 *
 * Payload layout (little-endian; docs/dumps.md is the reference):
 *   u64 guest memory size, u32 vCPUs, u32 0
 *   u32 next_tid, u32 live, u32 blocked, u32 0, u64 wait_counter, u64 vtime, u64 rng,
 *   65 x u64 sigact, u64 brk_base, u64 brk_cur, u32 VMAs, u32 0, VMAs x (u64 start, end)
 *   u64 frames_used, u64 frames_next, u64 bitmap words, words...
 *   u64 table_cursor, u32 tables, u32 0, tables x (u64 frame, u64 level)
 *   256 x u64: PML4 entries 0..255
 *   per vCPU: u32 flags (SNAPF_*), u32 tid, u32 state, u32 wait_bitset, u64 clear_child_tid,
 *     sigmask, wait_addr, wait_deadline, wait_seq, wait_result, 18 x u64 blocked_regs;
 *     if HAS_KVM: 18 x u64 regs, u32 sregs length + bytes, u32 xsave length + bytes;
 *     if START: 18 x u64 start_regs, u32 + start_sregs, u32 + start_xsave (length 0: none)
 *   u64 pages, pages x (u64 frame, 4096 bytes), frames strictly ascending
 *
 * The record is untrusted: snapfile_parse checks every count, range and enum, that the
 * VMAs are sorted and disjoint user ranges, that every stored page is a frame in use,
 * and walks the page tables (every present entry of a table points to a recorded table
 * of the next level, every leaf to a data frame in use), so that loading it can never
 * make the VMM write outside guest memory or treat a data frame as a table. Pure code,
 * no KVM: unit-tested and fuzzed. */
#ifndef JINX_SNAPFILE_H
#define JINX_SNAPFILE_H
#include "dump/dumpfile.h"
#include "linux/mm.h"
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#define SNAP_SIGACTS 65
#define SNAP_MAX_VMAS (1u << 16)
#define SNAP_MAX_TID 0x3FFFFFFF

enum { SNAP_T_FREE = 0, SNAP_T_RUNNING = 1, SNAP_T_BLOCKED = 2 }; /* == enum tstate */

enum {
    SNAPF_EXISTS = 1u << 0,
    SNAPF_WOKEN = 1u << 1,
    SNAPF_RESULT_IN_RAX = 1u << 2,
    SNAPF_START = 1u << 3,     /* start_pending: start_* apply before it first runs */
    SNAPF_HAS_KVM = 1u << 4,   /* regs/sregs/xsave: it has run */
    SNAPF_ALL_ = 0x1F
};

struct snapimg_vcpu {
    uint32_t flags, tid, state, wait_bitset;
    uint64_t clear_child_tid, sigmask, wait_addr, wait_deadline, wait_seq;
    int64_t wait_result;
    struct kvm_regs blocked_regs, regs, start_regs;
    struct kvm_sregs sregs, start_sregs;
    const uint8_t *xsave, *start_xsave;   /* borrowed; NULL: none */
    uint32_t xsave_len, start_xsave_len;  /* at most sizeof(struct kvm_xsave) */
};

struct snapimg_table {
    uint64_t frame;
    uint8_t level;             /* 1 (page table) .. 3 (PDPT) */
};

struct snapimg_page {
    uint64_t frame;
    const uint8_t *data;       /* borrowed: PAGE_SIZE bytes */
};

struct snap_image {
    uint64_t mem;              /* bytes of guest memory */
    uint32_t nvcpus;
    struct snapimg_vcpu *v;    /* owned, nvcpus entries */
    int32_t next_tid, live, blocked;
    uint64_t wait_counter, vtime, rng;
    uint64_t sigact[SNAP_SIGACTS];
    struct vma *vmas;          /* owned */
    size_t nvmas;
    uint64_t brk_base, brk_cur;
    uint64_t frames_used, frames_next;
    uint64_t *frame_bitmap;    /* owned, (mem / PAGE_SIZE + 63) / 64 words */
    uint64_t table_cursor;
    struct snapimg_table *tables; /* owned, ascending */
    size_t ntables;
    uint64_t pml4_user[256];
    struct snapimg_page *pages;   /* owned array; data borrowed */
    size_t npages;
};

void snapimg_free(struct snap_image *s);
/* Appends the record payload. Returns 0, or -1 out of memory or on an invalid image. */
int snapfile_encode(const struct snap_image *s, struct dbuf *b);
/* Parses and validates a payload. Page data and XSAVE areas point into buf, which must
 * outlive s. 0, or -1 with a message. */
int snapfile_parse(const uint8_t *buf, size_t len, struct snap_image *s, char *err,
                   size_t errlen);
/* The checks snapfile_parse makes, for an image built in memory. */
int snapfile_validate(const struct snap_image *s, char *err, size_t errlen);
/* Bytes of guest memory the image stores (pages x PAGE_SIZE). */
uint64_t snapimg_bytes(const struct snap_image *s);

#endif
