/* Snapshot and restore of the whole VM, in memory: every vCPU's registers, system
 * registers, FPU/XSAVE state (FS/GS bases ride in the segment state), the VMM's thread,
 * futex, time and address-space state, and guest memory.
 *
 * Memory is tracked, not copied: the first snapshot copies the frames in use; from then
 * on KVM's dirty log (the guest's writes) and guestmem's own log (the VMM's writes) say
 * which pages changed, and a restore copies back only those. A restore also drops the
 * cached translations of every frame that gained a mapping since the snapshot, so no
 * vCPU can reach memory through a mapping the snapshot did not have.
 *
 * Both take a paused VM (vm_pause). */
#ifndef JINX_SNAPSHOT_H
#define JINX_SNAPSHOT_H
#include "kvm/dirtylog.h"
#include "kvm/vm.h"

struct snap_vcpu;
struct files_state;

struct snapshot {
    struct vm *vm;
    uint8_t *mem;               /* copy of guest RAM as of the snapshot */
    bool have_mem;
    int nvcpus;
    struct snap_vcpu *v;        /* MAX_VCPUS entries */
    /* VMM state */
    int next_tid, live, blocked;
    uint64_t wait_counter, vtime, rng;
    uint64_t sigact[65];
    uint64_t sig_shared;        /* signals pending for the process (linux/signals.h) */
    struct vma *vmas;
    size_t nvmas;
    uint64_t brk_base, brk_cur;
    uint64_t *frame_bitmap;
    uint64_t frames_used, frames_next;
    uint64_t *changed;          /* snapshot_track_changes: frames taken since the last sync */
    struct dirtyset dirty;      /* scratch for take and restore: the frames to copy */
    struct files_state *files;  /* the descriptor table and offsets (linux/files.h) */
};

struct restore_stats {
    uint64_t dirty_guest, dirty_vmm, pages_copied, frames_invalidated;
    uint64_t ns_dirty_log, ns_copy, ns_invalidate, ns_vcpus, ns_total;
};

int snapshot_init(struct snapshot *s, struct vm *vm, char *err, size_t errlen);
void snapshot_free(struct snapshot *s);
/* Takes a snapshot of the paused VM into s (reusing its memory copy). */
int snapshot_take(struct snapshot *s, char *err, size_t errlen);
/* Brings the paused VM back to s exactly. */
int snapshot_restore(struct snapshot *s, struct restore_stats *st, char *err, size_t errlen);

/* The snapshot as a SNAPSHOT record's image (snapfile.h), for a crash dump: borrows
 * page data and XSAVE areas from s and from guest memory, so the VM must still be
 * stopped and s alive while img is used. The upper page-table levels come from guest
 * memory (a restore never reverts them and they only ever gain entries, so they hold the
 * snapshot's), leaf tables and data from the snapshot's copy; all-zero pages are left
 * out. 0, or -1 with a message; free img with snapimg_free. */
struct snap_image;
int snapshot_export(const struct snapshot *s, struct snap_image *img, char *err, size_t errlen);

/* Rebuilds a snapshot image in a fresh VM (`jinx-vmm replay`): after vm_create and
 * vm_load, before any thread ran (no vm_run). Pauses the VM, replaces guest memory above
 * the agent's area, the page tables, the frame allocator and the address space with the
 * image's, creates the image's vCPUs and sets each one's registers, system registers,
 * XSAVE and thread state, and sets the VMM state (thread counts, virtual time from
 * vm->start_ns, rng, signal actions). The VM stays paused (vm_resume, or a serialized
 * fragment, lets it run). 0, or -1 with a message. */
int snapshot_load_into(struct vm *vm, const struct snap_image *img, char *err, size_t errlen);

/* Completes pending syscall MMIO reads of blocked threads so that no vCPU holds state
 * KVM cannot save (called by take and restore; the result reaches rax on wake). */
int snapshot_settle_vcpus(struct vm *vm);

/* Worker VMs (worker.h) at the same snapshot, kept in step by copying only what changed.
 *
 * snapshot_track_changes starts recording, in s->changed, every frame a later
 * snapshot_take copies (what the VM changed between snapshots).
 *
 * snapshot_sync brings dst, another VM that was at src's previous snapshot (built from
 * it by snapshot_load_into, or synced, then restored to its own snapshot after its
 * simulations), to src's current one: it copies the changed frames from src's memory
 * copy (dropping the translations of frames whose leaf page-table entry changed), marks
 * them dirty in dst's own log (so dst's next snapshot_take takes them), creates vCPUs up
 * to src's count and sets every vCPU's state and the VMM's state as a restore would, and
 * clears s->changed. The caller then takes dst's own snapshot. Both VMs paused; src's VM
 * unchanged. Returns 0; 1 (nothing done) when the two page-table structures differ,
 * which only rebuilding dst settles; -1 with a message. *pages: frames copied. */
int snapshot_track_changes(struct snapshot *s);
int snapshot_sync(struct vm *dst, struct snapshot *src, uint64_t *pages, char *err,
                  size_t errlen);

#endif
