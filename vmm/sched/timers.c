/* Timers that end early in serialized execution (timers.h). */
#include "sched/timers.h"
#include "sched/crew.h"
#include "sched/serialize.h"
#include "kvm/vm.h"
#include "linux/futex.h"
#include "linux/syscall.h"
#include <stdio.h>
#include <string.h>

static struct vcpu *timed_vcpu(struct vm *vm, uint32_t xid, uint64_t now)
{
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *w = vm->vcpus[i];
        if (w->tid && w->xid == (int)xid && w->state == T_BLOCKED && !w->woken &&
            w->wait_deadline != NO_DEADLINE && w->wait_deadline > now)
            return w;
    }
    return NULL;
}

void timers_timed_locked(struct vm *vm, struct ex_tidset *out)
{
    ex_tidset_clear(out);
    uint64_t now = serialize_vtime(vm);
    for (int i = 0; i < vm->nvcpus; i++) {
        const struct vcpu *w = vm->vcpus[i];
        if (w->tid && w->xid > 0 && w->state == T_BLOCKED && !w->woken &&
            w->wait_deadline != NO_DEADLINE && w->wait_deadline > now &&
            w->wait_deadline - now <= EX_TIMER_EARLY_MAX_NS)
            ex_tidset_add(out, (uint32_t)w->xid);
    }
}

/* The record: which call, what it asked, and who was where (the trace's last cue point,
 * when it is by_tid's). */
static void note_ending(struct vm *vm, const struct vcpu *w, int by_tid)
{
    struct serializer *s = vm->ser;
    struct ex_timer_end t;
    memset(&t, 0, sizeof t);
    t.step = s->picks;
    t.thread = (uint32_t)w->xid;
    t.ns = w->wait_ns <= EX_MAX_TIMER_NS ? w->wait_ns : 0;
    const char *name = syscall_name((unsigned)w->blocked_regs.rax);
    if (name && strlen(name) < sizeof t.call &&
        strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(name))
        snprintf(t.call, sizeof t.call, "%s", name);
    const struct vcpu *by = NULL;
    for (int i = 0; by_tid > 0 && i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid == by_tid && vm->vcpus[i]->xid > 0 &&
            vm->vcpus[i]->xid <= EX_SCHED_MAX_TID)
            by = vm->vcpus[i];
    t.by = by ? (uint32_t)by->xid : 0;
    /* Where it was: the access it waits to make (a memory cue point's event is traced
     * when it is made), else its cue point just traced (a syscall, a preemption point). */
    const struct ex_trace *tr = &s->trace;
    if (by && by->acc_pending && vm->crew)
        t.rip = vm->crew->acc[by->index].rip;
    else if (t.by && tr->n && tr->ev[tr->n - 1].tid == t.by)
        t.rip = tr->ev[tr->n - 1].rip;
    if (t.rip > EX_MAX_PREEMPT_RIP)
        t.rip = 0;
    char sym[EX_SYM_LEN];
    if (t.rip) { /* libraries too (once an ending: the link_map walk is no per-cue cost) */
        vm_symbolize_frame(vm, t.rip, false, sym, sizeof sym);
        size_t k = 0;
        for (size_t i = 0; sym[i] && k + 1 < sizeof t.sym; i++)
            if (sym[i] >= 0x20 && sym[i] <= 0x7e && sym[i] != '"' && sym[i] != '\\')
                t.sym[k++] = sym[i];
        t.sym[k] = 0;
    }
    s->ended[s->nended++] = t;
}

bool timers_end_locked(struct vm *vm, uint32_t xid, int by_tid)
{
    struct serializer *s = vm->ser;
    uint64_t now = serialize_vtime(vm);
    struct vcpu *w = timed_vcpu(vm, xid, now);
    if (!w || s->nended >= EX_MAX_TIMERS || xid > EX_SCHED_MAX_TID)
        return false;
    note_ending(vm, w, by_tid);
    vm->skipped_ns += (int64_t)(w->wait_deadline - now); /* the clock reaches its deadline */
    futex_expire_locked(vm); /* it, and every wait due by then, in vCPU order */
    s->timers_ended++;
    return true;
}

bool timers_follow_locked(struct vm *vm, int by_tid)
{
    struct serializer *s = vm->ser;
    const struct ex_schedule *sc = &s->sched;
    while (s->timer_next < sc->ntimers && sc->timer[s->timer_next].step < s->picks)
        s->timer_next++; /* a choice never made (the run went elsewhere) */
    if (s->timer_next >= sc->ntimers || sc->timer[s->timer_next].step != s->picks)
        return false;
    uint32_t xid = sc->timer[s->timer_next++].thread;
    if (timers_end_locked(vm, xid, by_tid))
        return true;
    s->timer_diverged++;
    return false;
}

uint64_t timers_next_step_locked(const struct vm *vm)
{
    const struct serializer *s = vm->ser;
    if (s->pick)
        return UINT64_MAX; /* a strategy decides at each pick: no guest cue points then */
    uint32_t i = ex_schedule_timer_from(&s->sched, s->picks);
    return i < s->sched.ntimers ? s->sched.timer[i].step : UINT64_MAX;
}
