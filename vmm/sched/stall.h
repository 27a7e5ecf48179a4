/* A serialized fragment that stalled: the thread with the turn made no cue point for the
 * whole wall guard (SERIALIZE_WALL_GUARD_NS), so nobody else could run. Page ownership
 * (crew.h) maps a page for the one thread that touched it first in the fragment, without
 * traps; a thread that spins on such a page, waiting for a value only another thread
 * will store (correct's reader waiting for its channel's `open` before the writer has
 * touched the page), then loops for ever: nothing it does is a cue point.
 *
 * The remedy is deterministic: the stalled thread's own pages are learnt and, from the
 * next fragment on, shared from their first touch (crew_preshare), so every access to
 * them is a cue point, spin detection sees the spin, and the others run. The fragment
 * is then run again from its snapshot. Which pages are learnt depends only on the cue
 * points before the stall (ownership changes only at cue points; the stall itself claims
 * nothing), so every simulation of one snapshot learns the same. The thread's stack
 * (CREW_STACK_BELOW/ABOVE around its rsp) is learnt only when nothing else is left: a
 * shared stack makes every push and pop a cue point. (The rsp is where the guard stopped
 * the thread: a spin that calls functions may put a page at the window's edge either
 * side. The set is learnt once and then used by every simulation compared, so they
 * still agree.) */
#ifndef JINX_STALL_H
#define JINX_STALL_H
#include <stddef.h>
#include <stdint.h>

struct vm;

/* The pages learnt so far (page-aligned, no duplicates), in the order learnt. */
struct stall_set {
    uint64_t *page;
    size_t n, cap;
};

void stall_set_init(struct stall_set *s);
void stall_set_free(struct stall_set *s);

/* After a fragment the guard stopped (vm->ser->stopped), on a paused VM, before
 * crew_stop: adds to s the pages that the thread whose turn it was (vm->ser->guard_turn)
 * owns alone and s lacks (its stack pages only when there are no others) and makes s the
 * VM's pre-shared set. Returns how many it added: 0 when there is nothing to learn (no
 * thread had the turn, or it owns nothing new: a computation, not a spin on its pages),
 * -1 out of memory (s unchanged, the VM's pre-shared set maybe emptied). Caller holds
 * no locks. */
int stall_learn(struct vm *vm, struct stall_set *s);

#endif
