/* Single steps ended in the guest: arming the agent's block and reading it back
 * (guest_step.h). */
#include "sched/guest_step.h"
#include "kvm/vm.h"
#include "sched/crew.h"

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

const char *guest_step_left(struct vm *vm, struct vcpu *v)
{
    struct crew_step *s = &vm->crew->step[v->index];
    if (!s->armed)
        return NULL;
    s->armed = false;
    struct agent_step *d = block_of(vm, v);
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
