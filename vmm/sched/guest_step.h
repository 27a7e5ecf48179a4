/* Single steps ended in the guest (issue 14, item 2's first step): the #DB that ends the
 * single step of an access to a shared page (crew.h) is handled by the guest-agent
 * instead of an exit to the VMM, halving the exits of a serialized memory cue point.
 *
 * The VMM keeps the policy and the state: before each KVM_RUN of a vCPU whose step may
 * end in the guest (a plain step: not a rep string instruction, pushf or breakpoint; at
 * most AGENT_STEP_MAX pages) it writes the vCPU's struct agent_step (kvm/layout.h) with
 * the PTE writes that end it, exactly those crew_step_done would make, and ARMED. The
 * agent's #DB handler, for a user-mode #DB with TF set and an ARMED block, makes those
 * writes with an invlpg each, clears TF and marks the block DONE; anything else exits as
 * before. After KVM_RUN the VMM reads the block back, disarms it and, for DONE, does
 * its bookkeeping (crew_step_ended_in_guest_locked), re-trapping any page whose PTE is
 * not what it asked for. The trace, the schedule and virtual time are the same either
 * way: a step's end is no cue point. The block lives in supervisor-only memory, so only
 * the agent and the VMM can write it; still a value other than 0, ARMED or DONE stops
 * the VM with an internal error rather than being trusted. A vCPU kicked (a pause, the
 * fragment's end) while inside the agent's handler is run on until it is out, so that no
 * half-done step end outlives the step.
 *
 * Off with --no-guest-cues (vm->opt.no_guest_cues): every step ends by an exit. */
#ifndef JINX_GUEST_STEP_H
#define JINX_GUEST_STEP_H
#include <stdbool.h>

struct vm;
struct vcpu;

/* vm_mode_ops.guest_enter / guest_left (kvm/vm.h), on v's own thread, no lock held. */
void guest_step_enter(struct vm *vm, struct vcpu *v);
const char *guest_step_left(struct vm *vm, struct vcpu *v, bool interrupted, bool *busy);
/* Whether v stopped inside the agent's #DB or #PF handler (KVM_GET_REGS). */
bool guest_step_in_handler(struct vm *vm, struct vcpu *v);

#endif
