/* Single steps ended in the guest: arming the agent's block and reading it back
 * (guest_step.h). */
#include "sched/guest_step.h"
#include "kvm/vm.h"
#include "sched/crew.h"
#include <sys/ioctl.h>

static struct agent_step *block_of(struct vm *vm, const struct vcpu *v)
{
    uint64_t gpa = GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE + AGENT_STEP_OFF;
    return gm_ptr(&vm->gm, gpa);
}

/* The block is guest memory: a snapshot restore must bring back what the VMM wrote. */
static void block_dirty(struct vm *vm, const struct vcpu *v)
{
    gm_mark_dirty(&vm->gm, (GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE) & PAGE_MASK);
}

void guest_step_enter(struct vm *vm, struct vcpu *v)
{
    struct crew_step *s = &vm->crew->step[v->index];
    if (vm->opt.no_guest_cues || !s->on || s->armed)
        return;
    struct agent_step *d = block_of(vm, v);
    int n = crew_step_arm(vm, v, d);
    if (n < 0)
        return;
    d->n = (unsigned long long)n;
    __atomic_store_n(&d->state, AGENT_STEP_ARMED, __ATOMIC_RELEASE);
    block_dirty(vm, v);
    s->armed = true;
}

/* Whether v stopped inside the agent's #DB handler: then it may be half-way through the
 * PTE writes, and must finish before anyone changes the step (a pause followed by the
 * end of the fragment would otherwise let the handler trap pages in free execution). */
bool guest_step_in_handler(struct vm *vm, struct vcpu *v)
{
    struct kvm_regs r;
    if (ioctl(v->fd, KVM_GET_REGS, &r) < 0)
        return false;
    uint64_t lo = KVA(GPA_AGENT) + vm->agent.debug_entry, hi = KVA(GPA_AGENT) + vm->agent.debug_end;
    return r.rip >= lo && r.rip < hi;
}

const char *guest_step_left(struct vm *vm, struct vcpu *v, bool interrupted, bool *busy)
{
    struct crew_step *s = &vm->crew->step[v->index];
    if (!s->armed)
        return NULL;
    struct agent_step *d = block_of(vm, v);
    if (interrupted && __atomic_load_n(&d->state, __ATOMIC_ACQUIRE) == AGENT_STEP_ARMED &&
        guest_step_in_handler(vm, v)) {
        *busy = true; /* left armed: the handler goes on where it was */
        __atomic_fetch_add(&vm->crew->guest_busy, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    s->armed = false;
    unsigned long long state = __atomic_exchange_n(&d->state, 0, __ATOMIC_ACQ_REL);
    block_dirty(vm, v);
    if (state == AGENT_STEP_ARMED)
        return NULL; /* the step is still going (another page, a kick): armed again next run */
    if (state != AGENT_STEP_DONE)
        return "the guest-agent's single-step block was overwritten (not ARMED or DONE)";
    pthread_mutex_lock(&vm->lock);
    crew_step_ended_in_guest_locked(vm, v);
    pthread_mutex_unlock(&vm->lock);
    return NULL;
}
