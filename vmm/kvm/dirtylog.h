/* Which guest pages changed since the last collection: KVM's dirty log (the guest's
 * writes) ORed with guestmem's own log (the VMM's writes, and every frame allocated or
 * freed), for snapshot take and restore (snapshot.h).
 *
 * The result is a bitmap over frames plus the list of its nonzero words, so that the
 * copy and the frame-bitmap update that follow visit only those (a 512 MiB guest has
 * 2048 words; passes over all of them cost ~6-8 us each of cache misses per restore).
 * KVM_GET_DIRTY_LOG itself (re-protecting the pages it reports) stays the one ioctl. */
#ifndef JINX_DIRTYLOG_H
#define JINX_DIRTYLOG_H
#include "kvm/vm.h"

struct dirtyset {
    uint64_t *bits;    /* 1 = frame changed; only the words listed in words[] are valid */
    uint32_t *words;   /* indexes of the nonzero words of bits */
    long nwords;
    uint64_t nguest;   /* frames KVM reported */
    uint64_t nvmm;     /* frames only the VMM's log had */
};

/* Allocates a set for vm's memory and the VMM's log (guestmem's vmm_dirty and its
 * summary) if missing. 0, or -1 when out of memory. */
int dirtyset_init(struct dirtyset *d, struct vm *vm);
void dirtyset_free(struct dirtyset *d);

/* Turns KVM's dirty logging of guest memory on (1 slot, the whole of it). 0 or -1. */
int dirtylog_enable(struct vm *vm);

/* Takes (and clears) both logs into d. 0, or -1 when KVM_GET_DIRTY_LOG failed (errno). */
int dirtylog_collect(struct vm *vm, struct dirtyset *d);

/* Copies d's frames from src to dst (two mappings of guest-physical memory) with
 * streaming stores (pagecopy.h); with tables_kept, upper-level page tables and the PML4
 * are left alone: the table structure survives restores (see guestmem.h). The frames
 * copied. */
uint64_t dirtyset_copy(const struct guestmem *gm, const struct dirtyset *d, uint8_t *dst,
                       const uint8_t *src, bool tables_kept);

#endif
