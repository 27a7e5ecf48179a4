/* Sampled sparse runs (crew_sample.h). */
#include "sched/crew_sample.h"
#include "kvm/decode.h"
#include "kvm/vm.h"
#include "sched/crew_int.h"
#include "sched/serialize.h"

void crew_sample_start(struct vm *vm)
{
    struct crew *c = vm->crew;
    c->sample = vm->ser->sampling;
    c->sample_at = c->sample_n = 0;
    c->sample_full = false;
}

enum crew_verdict crew_sample_fault(struct vm *vm, struct vcpu *v, uint64_t cr2,
                                    uint64_t errcode, uint64_t rip, const struct kvm_regs *regs,
                                    const struct kvm_sregs *sregs)
{
    struct crew *c = vm->crew;
    pthread_mutex_lock(&vm->lock);
    if (!c->on || !c->sample) {
        pthread_mutex_unlock(&vm->lock);
        return CREW_NOT_WATCHED;
    }
    pthread_mutex_lock(&vm->gm.lock);
    int slot = crew_slot_of(c, cr2 & PAGE_MASK);
    bool trapped = false;
    uint64_t *pte = slot >= 0 ? crew_slot_pte(vm, slot, &trapped) : NULL;
    struct crew_page *pg = slot >= 0 ? &c->page[slot] : NULL;
    /* Ours: a trapped page, or the first write to a page a sampled read mapped
     * read-only. A trapped page may have taken a protection fault: the write to the
     * read-only page was on its way when a re-trap (crew_sample_tick_locked) came. A
     * page writable by now (the other way round) is not ours: the fault went away
     * (kvm/exception.c). Anything else is the program's own fault. */
    bool first = pte && trapped;
    bool upgrade = pte && !trapped && pg->sample_ro && (errcode & PF_PRESENT) &&
                   (errcode & PF_WRITE);
    pthread_mutex_unlock(&vm->gm.lock);
    if (!first && !upgrade) {
        pthread_mutex_unlock(&vm->lock);
        return CREW_NOT_WATCHED;
    }
    struct crew_access a;
    struct insn_info info;
    crew_describe(vm, cr2, errcode, rip, regs->rsp, regs, sregs, &a, &info);
    c->sample_full = c->sample_n >= CREW_SAMPLE_MAX;
    if (!c->sample_full && v->xid > 0 && vm->ser->on &&
        ex_trace_access(&vm->ser->samples, (uint32_t)v->xid, a.kind, a.addr, a.size, a.flags,
                        a.rip))
        c->sample_n++; /* a full trace (EX_MAX_EVENTS) or no memory: sampled less */
    bool read = a.kind == EX_READ && !(errcode & PF_WRITE) && !c->sample_full;
    pthread_mutex_lock(&vm->gm.lock);
    if (crew_slot_pte(vm, slot, &trapped) == pte) {
        uint64_t present = pg->frame | pg->flags;
        gm_set_pte(&vm->gm, pte, read ? (present & ~PTE_W) | PTE_SAMPLE_RO : present);
        if (first && c->nowned < c->cappage)
            c->owned[c->nowned++] = slot; /* trapped again when the turn passes */
        pg->sample_ro = read;
    }
    pthread_mutex_unlock(&vm->gm.lock);
    if (upgrade)
        gm_invalidate_frame(&vm->gm, pg->frame); /* no read-only translation may stay */
    pthread_mutex_unlock(&vm->lock);
    return CREW_GO;
}

uint64_t crew_sample_tick_locked(struct vm *vm, uint64_t now)
{
    struct crew *c = vm->crew;
    if (!c->on || !c->sample || c->sample_full)
        return UINT64_MAX;
    if (c->sample_at && now >= c->sample_at && vm->ser->current > 0)
        crew_switch_locked(vm, vm->ser->current); /* the same thread goes on: re-trapped */
    if (!c->sample_at || now >= c->sample_at)
        c->sample_at = now + CREW_SAMPLE_PERIOD_NS;
    return c->sample_at;
}
