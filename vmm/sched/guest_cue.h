/* Memory cue points taken in the guest (issue 14, item 2): when the schedule's decision
 * at the running thread's next cue points is known to be "the same thread goes on", the
 * guest-agent takes them itself, without an exit.
 *
 * Before each KVM_RUN of the running thread the VMM computes a budget (guest_cue_budget_
 * locked): how many cue points the schedule gives that thread for sure. Today that is the
 * rest of the current schedule segment `Tn xK` (a replay, --schedule, a round's schedule),
 * or, under the default policy, any number while that thread is the only one enabled.
 * Zero (everything exits, exactly as before) with a pick hook (whole-run exploration's
 * strategies decide at every cue point), at or past the cue-point limit, once the wall
 * budget cut the fragment, or when no shared page is trapped. It never reaches the
 * limit, nor the earliest futex or sleep deadline: futex_expire_locked sees virtual time
 * at each replayed pick as it would have. It writes the vCPU's struct agent_cue
 * (kvm/layout.h): the budget, the shared trapped pages (their PTEs, present and trapped
 * values; at most AGENT_CUE_PAGES) and ON.
 *
 * The agent (guest-agent/agent.S, #PF) takes a not-present user fault on a listed page
 * whose PTE is still trapped, with budget and ring room left, no step going on, and an
 * instruction that is neither a rep string nor pushf: it maps the page, logs the cue
 * point (rip, fault address, error code, flags, the user's registers, 16 bytes of the page
 * before the access) in the ring, sets TF; at the #DB it traps the page again. Anything
 * else exits as before.
 *
 * After KVM_RUN (any exit, before anything else looks at the thread) the VMM turns the
 * block off and drains the ring: guest_cue_check validates it against what was given
 * (budget and count, pages, each entry's page, error code, registers, the pending step),
 * then each entry is replayed in order as crew_fault would have made it (capstone
 * decoding, the pick, which must choose the same thread, the trace entry, virtual time,
 * spin detection on the value before the access), and the pages' PTEs are cross-checked.
 * A step the agent had not ended (the thread left the guest before its #DB) becomes the
 * VMM's. Anything wrong stops the VM with an internal error: never a trace accepted that
 * was not checked. The block is supervisor-only; the program cannot write it.
 *
 * Off with --no-guest-cues (vm->opt.no_guest_cues). */
#ifndef JINX_GUEST_CUE_H
#define JINX_GUEST_CUE_H
#include <stdbool.h>
#include <stdint.h>
#include "kvm/layout.h"

struct vm;
struct vcpu;
struct crew_cue;

/* vm_mode_ops.guest_enter / guest_left (kvm/vm.h) of serialized execution: the single
 * step's block (guest_step.h) and the cue block, on v's own thread, no lock held. */
void guest_cues_enter(struct vm *vm, struct vcpu *v);
const char *guest_cues_left(struct vm *vm, struct vcpu *v, bool interrupted, bool *busy);

/* Cue points the running thread v may take in the guest now (<= AGENT_CUE_RING). Caller
 * holds vm->lock. */
uint32_t guest_cue_budget_locked(struct vm *vm, struct vcpu *v);

/* Checks the block d read back after a run in which the agent was given g: returns the
 * number of entries, with page_of[i] the index in g of entry i's page, or -1 with *why. */
int guest_cue_check(const struct agent_cue *d, const struct crew_cue *g,
                    int page_of[AGENT_CUE_RING], const char **why);

#endif
