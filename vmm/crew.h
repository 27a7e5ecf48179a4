/* Page-ownership recording for serialized execution (CREW: concurrent read, exclusive
 * write), the source of memory cue points.
 *
 * Every writable user page is watched. A watched page that the running thread does not
 * own has its PTE pointing at a trap slot (an unbacked guest-physical page), so any
 * access to it is an MMIO exit that says exactly where, how wide, which direction and
 * what value. The first thread to touch a page gets it: its PTE maps the frame again
 * while that thread runs, and is trapped again when another thread runs. A page touched
 * by a second thread becomes shared: from then on every access to it traps, so spin loops
 * and fine-grained interleavings are all visible. Each trapped access is a cue point:
 * the scheduler decides who runs before the access happens, and jinx-vmm performs the
 * access itself when its thread runs (KVM then completes the instruction).
 *
 * On PVM a trapped -> mapped change needs no flush (KVM re-walks), and mapped -> trapped
 * drops the frame's translations through gm_invalidate_range. */
#ifndef JINX_CREW_H
#define JINX_CREW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "u64map.h"

struct vm;
struct vcpu;

struct crew_page {
    uint64_t va;
    uint64_t flags;     /* the PTE's bits other than the address, when mapped */
    int owner;          /* tid, 0 = nobody yet */
    bool shared;
};

struct crew {
    bool on;
    struct crew_page *page; /* indexed by trap slot */
    int *owned;             /* slots granted to the running thread (to revoke on switch) */
    size_t nowned, capowned;
    uint64_t accesses, shared_pages;
    /* Page -> its trap slot, kept across fragments: a page whose frame is unchanged gets
     * the same slot again, so rounds do not run out of slots, and a translation to a slot
     * that KVM may still cache always leads to the right frame. */
    struct ex_u64map slot_of_va;
};

/* Starts watching every writable user page. Caller holds no locks. */
int crew_start(struct vm *vm);
/* Stops watching: every trapped page maps its frame again; ownership is forgotten. */
void crew_stop(struct vm *vm);
/* Watches writable pages that appeared in [start,end) (after mmap/mprotect/brk). */
void crew_watch_range(struct vm *vm, uint64_t start, uint64_t end);
/* An MMIO exit at gpa in the trap range on thread v: a cue point. Returns false when the
 * thread must not go on now (another thread was chosen; the access waits). */
bool crew_access(struct vm *vm, struct vcpu *v);
/* Performs v's pending access (its turn came). Caller holds vm->lock. */
void crew_perform_pending_locked(struct vm *vm, struct vcpu *v);
/* The running thread changes to next: revoke what the old one was granted. Caller holds
 * vm->lock. */
void crew_switch_locked(struct vm *vm, int next);
bool crew_is_trap(uint64_t gpa);
void crew_free(struct vm *vm);

#endif
