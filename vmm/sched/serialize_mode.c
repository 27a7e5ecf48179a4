/* Serialized execution as the exit loop sees it: the hooks (kvm/vm.h, struct
 * vm_mode_ops) through which the core reaches the scheduler (serialize.c) and page
 * ownership (crew.c). Each hook is the call the loop used to make itself, with the same
 * checks, so the synchronization is exactly what it was: only the routing changed. */
#include "kvm/vm.h"
#include "sched/crew.h"
#include "sched/guest_cue.h"
#include "sched/serialize.h"
#include <stdlib.h>

static bool ser_vtime(struct vm *vm, uint64_t *now)
{
    if (!vm->ser->on)
        return false;
    *now = serialize_vtime(vm);
    return true;
}

static bool ser_turn_elsewhere(struct vm *vm, struct vcpu *v)
{
    return vm->ser->on && __atomic_load_n(&vm->ser->current, __ATOMIC_ACQUIRE) != v->tid;
}

static bool ser_has_turn_locked(struct vm *vm, struct vcpu *v)
{
    return vm->ser->current == v->tid;
}

static void ser_fragment_over_locked(struct vm *vm)
{
    __atomic_store_n(&vm->ser->current, -1, __ATOMIC_RELEASE);
}

static enum vm_fault_verdict ser_fault(struct vm *vm, struct vcpu *v, uint64_t cr2,
                                       uint64_t err, uint64_t rip, const struct kvm_regs *u,
                                       const struct kvm_sregs *s)
{
    switch (crew_fault(vm, v, cr2, err, rip, u, s)) {
    case CREW_GO:
        return VM_FAULT_GO;
    case CREW_GO_STEP:
        return VM_FAULT_GO_STEP;
    case CREW_WAIT:
        return VM_FAULT_WAIT;
    case CREW_NOT_WATCHED:
        break;
    }
    return VM_FAULT_NOT_WATCHED;
}

static void ser_after_syscall(struct vm *vm, struct vcpu *v, int tid, uint64_t nr, int64_t ret,
                              bool blocked)
{
    if (vm->ser->on)
        serialize_after_syscall(vm, v, tid, nr, ret, blocked);
}

/* Sparse execution's points first (sparse.h), then the crew's step breakpoint. */
static bool ser_breakpoint(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *u,
                           bool *step)
{
    if (sparse_breakpoint(vm, v, rip, u, step))
        return true;
    *step = false;
    return crew_breakpoint(vm, v, rip, u);
}

static bool ser_step_done(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *u,
                          bool *keep_tf)
{
    if (sparse_step_done(vm, v)) {
        *keep_tf = false;
        return true;
    }
    return crew_step_done(vm, v, rip, u, keep_tf);
}

static bool ser_unpatch(struct vm *vm, struct vcpu *v)
{
    sparse_unpatch(vm, v); /* planted again at the next entry, if v still has the turn */
    return crew_unpatch(vm, v);
}

static void ser_guest_enter(struct vm *vm, struct vcpu *v)
{
    sparse_enter(vm, v);
    guest_cues_enter(vm, v);
}

/* The guest cues' block first (guest_cue.h), then a timed decision (sparse.h). */
static const char *ser_guest_left(struct vm *vm, struct vcpu *v, bool interrupted, bool *busy)
{
    const char *err = guest_cues_left(vm, v, interrupted, busy);
    if (!err && !*busy)
        sparse_timed_left(vm, v, interrupted);
    return err;
}

static void ser_destroy(struct vm *vm)
{
    if (vm->crew)
        crew_free(vm);
    free(vm->crew);
    free(vm->ser);
    vm->crew = NULL;
    vm->ser = NULL;
    vm->mode = NULL;
}

static const struct vm_mode_ops serialize_ops = {
    .vtime = ser_vtime,
    .may_run_locked = serialize_may_run_locked,
    .turn_elsewhere = ser_turn_elsewhere,
    .has_turn_locked = ser_has_turn_locked,
    .perform_pending_locked = crew_perform_pending_locked,
    .fragment_over_locked = ser_fragment_over_locked,
    .breakpoint = ser_breakpoint,
    .fault = ser_fault,
    .step_done = ser_step_done,
    .unpatch = ser_unpatch,
    .after_syscall = ser_after_syscall,
    .mapped = crew_watch_range,
    .destroy = ser_destroy,
    .guest_enter = ser_guest_enter,
    .guest_left = ser_guest_left,
};

int serialize_mode_install(struct vm *vm)
{
    if (vm->mode == &serialize_ops)
        return 0;
    struct serializer *s = calloc(1, sizeof *s);
    struct crew *c = calloc(1, sizeof *c);
    if (!s || !c) {
        free(s);
        free(c);
        return -1;
    }
    vm->ser = s;
    vm->crew = c;
    vm->mode = &serialize_ops;
    return 0;
}
