/* Memory cue points taken in the guest: the budget, arming the agent's block, and the
 * drain (guest_cue.h). */
#include "kvm/layout.h"
#include "sched/guest_cue.h"
#include "sched/timers.h"
#include "kvm/vm.h"
#include "linux/futex.h"
#include "sched/crew.h"
#include "sched/guest_step.h"
#include "sched/serialize.h"
#include <string.h>

#define PF_PRESENT 0x1ULL
#define PF_USER 0x4ULL

static struct agent_cue *block_of(struct vm *vm, const struct vcpu *v)
{
    return gm_ptr(&vm->gm, GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE + AGENT_CUE_OFF);
}

/* The block is guest memory: a snapshot restore must bring back what the VMM wrote. */
static void block_dirty(struct vm *vm, const struct vcpu *v)
{
    uint64_t gpa = GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE + AGENT_CUE_OFF;
    for (uint64_t p = gpa & PAGE_MASK; p < gpa + sizeof(struct agent_cue); p += PAGE_SIZE)
        gm_mark_dirty(&vm->gm, p);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

uint32_t guest_cue_budget_locked(struct vm *vm, struct vcpu *v)
{
    struct serializer *s = vm->ser;
    const struct crew_step *st = &vm->crew->step[v->index];
    if (!s->on || !vm->crew->on || s->pick || s->cut || s->current != v->tid || v->xid <= 0 ||
        v->acc_pending || (st->on && !st->armed) || atomic_load(&vm->stopping) ||
        atomic_load(&vm->paused))
        return 0;
    uint64_t b;
    const struct ex_cursor *c = &s->cursor;
    if (c->seg < c->s->nseg) {
        /* A segment names its thread whatever else is enabled or spinning (cursor.h). */
        const struct ex_segment *g = &c->s->seg[c->seg];
        b = g->thread == (uint32_t)v->xid ? g->steps - c->used : 0;
    } else {
        /* The default policy picks among the enabled threads: sure only if v is alone. */
        int enabled = 0;
        for (int i = 0; i < vm->nvcpus; i++) {
            const struct vcpu *w = vm->vcpus[i];
            enabled += w->tid && w->state == T_RUNNING && w->xid > 0;
        }
        b = enabled == 1 ? AGENT_CUE_RING : 0;
    }
    /* The k-th cue point's pick sees cues + k - 1: below the limit, and at a virtual
     * time before every deadline (futex_expire_locked would wake someone there). */
    if (s->limit)
        b = s->cues >= s->limit ? 0 : min64(b, s->limit - s->cues);
    uint64_t ts = timers_next_step_locked(vm); /* a timer the schedule ends: a VMM pick */
    if (ts != UINT64_MAX)
        b = ts <= s->picks ? 0 : min64(b, ts - s->picks);
    uint64_t now = serialize_vtime(vm);
    for (int i = 0; b && i < vm->nvcpus; i++) {
        const struct vcpu *w = vm->vcpus[i];
        if (!w->tid || w->state != T_BLOCKED || w->woken || w->wait_deadline == NO_DEADLINE)
            continue;
        b = w->wait_deadline <= now ? 0
                                    : min64(b, (w->wait_deadline - now - 1) / SERIALIZE_CUE_NS + 1);
    }
    return (uint32_t)min64(b, AGENT_CUE_RING);
}

void guest_cues_enter(struct vm *vm, struct vcpu *v)
{
    guest_step_enter(vm, v);
    struct crew_cue *g = &vm->crew->cue[v->index];
    if (vm->opt.no_guest_cues || !vm->opt.guest_cue_points || g->armed)
        return;
    struct agent_cue *d = block_of(vm, v);
    pthread_mutex_lock(&vm->lock);
    uint32_t b = guest_cue_budget_locked(vm, v);
    int n = b ? crew_cue_pages(vm, d, g->slot, AGENT_CUE_PAGES) : 0;
    if (n > 0) {
        for (int i = 0; i < n; i++) {
            g->va[i] = d->page[i].va;
            g->pte[i] = d->page[i].pte;
        }
        g->budget = b;
        g->npages = (uint32_t)n;
        d->budget = b;
        d->n = 0;
        d->cap = AGENT_CUE_RING;
        d->npages = (unsigned long long)n;
        d->step_pte = d->step_value = d->step_va = d->step_rip = 0;
        d->pml4 = 0;
        __atomic_store_n(&d->state, AGENT_CUE_ON, __ATOMIC_RELEASE);
        block_dirty(vm, v);
        g->armed = true;
        vm->crew->guest_cue_runs++;
    }
    pthread_mutex_unlock(&vm->lock);
}

int guest_cue_check(const struct agent_cue *d, const struct crew_cue *g,
                    int page_of[AGENT_CUE_RING], const char **why)
{
    *why = NULL;
    if (d->state != AGENT_CUE_ON)
        *why = "the guest-agent's cue block was overwritten (not ON)";
    else if (d->cap != AGENT_CUE_RING || d->npages != g->npages)
        *why = "the guest-agent's cue block was overwritten (its size or pages changed)";
    else if (d->n > AGENT_CUE_RING || d->n > g->budget || d->budget != g->budget - d->n)
        *why = "the guest-agent's cue ring does not add up with its budget";
    for (uint32_t j = 0; !*why && j < g->npages; j++)
        if (d->page[j].va != g->va[j] || d->page[j].pte != g->pte[j])
            *why = "the guest-agent's page list was overwritten";
    int n = *why ? 0 : (int)d->n;
    for (int i = 0; !*why && i < n; i++) {
        const struct agent_cue_entry *e = &d->ring[i];
        page_of[i] = -1;
        for (uint32_t j = 0; j < g->npages && page_of[i] < 0; j++)
            if ((e->cr2 & PAGE_MASK) == g->va[j])
                page_of[i] = (int)j;
        if (page_of[i] < 0)
            *why = "an in-guest cue point names a page the agent was not given";
        else if ((e->err & PF_PRESENT) || !(e->err & PF_USER) || e->rip >= USER_TOP ||
                 e->gpr[4] != e->rsp || (e->rflags & RFLAGS_TF))
            *why = "an in-guest cue point's fault is not one the agent may take";
    }
    if (!*why && d->step_pte) {
        int j = n > 0 ? page_of[n - 1] : -1;
        if (j < 0 || d->step_pte != g->pte[j] || d->step_va != g->va[j] ||
            d->step_value != d->page[j].trapped || d->step_rip != d->ring[n - 1].rip)
            *why = "the guest-agent's pending step is not its last cue point's";
    }
    return *why ? -1 : n;
}

/* Replays the checked entries and cross-checks the pages. Caller holds vm->lock. */
static const char *drain_locked(struct vm *vm, struct vcpu *v, const struct agent_cue *d,
                                const struct crew_cue *g, const int *page_of, int n)
{
    struct serializer *s = vm->ser;
    /* The cue points happened: a cut or stop since the run began comes after them. */
    bool cut = s->cut;
    int current = s->current;
    s->cut = false;
    if (current != v->tid)
        s->current = v->tid;
    const char *err = NULL;
    for (int i = 0; i < n && !err; i++)
        err = crew_guest_cue_locked(vm, v, g->slot[page_of[i]], &d->ring[i],
                                    i == n - 1 && d->step_pte);
    s->cut = s->cut || cut;
    if (current != v->tid)
        s->current = current;
    /* Every page the ring names is trapped again, but that of a pending step. */
    for (int i = 0; !err && i < n; i++) {
        bool pending = d->step_pte && page_of[i] == page_of[n - 1];
        if (crew_cue_page_state(vm, g->slot[page_of[i]]) != (pending ? 0 : 1))
            err = "a page the guest-agent was given is not mapped as its cue ring says";
    }
    return err;
}

static const char *cue_left(struct vm *vm, struct vcpu *v, bool interrupted, bool *busy)
{
    struct crew_cue *g = &vm->crew->cue[v->index];
    if (!g->armed)
        return NULL;
    if (interrupted && guest_step_in_handler(vm, v)) {
        *busy = true; /* mid-way through a cue point: run on until the handler is out */
        __atomic_fetch_add(&vm->crew->guest_busy, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    struct agent_cue *live = block_of(vm, v);
    g->armed = false;
    struct agent_cue d;
    memcpy(&d, live, sizeof d);
    live->state = 0;
    live->step_pte = 0; /* a pending step is the VMM's from here on */
    block_dirty(vm, v);
    int page_of[AGENT_CUE_RING];
    const char *why;
    int n = guest_cue_check(&d, g, page_of, &why);
    if (n < 0)
        return why;
    if (n == 0 && !d.step_pte)
        return NULL;
    pthread_mutex_lock(&vm->lock);
    why = drain_locked(vm, v, &d, g, page_of, n);
    pthread_mutex_unlock(&vm->lock);
    return why;
}

const char *guest_cues_left(struct vm *vm, struct vcpu *v, bool interrupted, bool *busy)
{
    /* The single step's end came first: its bookkeeping must leave alone a page that an
     * in-guest cue point mapped again after it (the page of a pending step). */
    struct crew_cue *g = &vm->crew->cue[v->index];
    g->keep_pte = g->armed ? block_of(vm, v)->step_pte : 0;
    const char *err = guest_step_left(vm, v, interrupted, busy);
    g->keep_pte = 0;
    if (err || *busy)
        return err;
    return cue_left(vm, v, interrupted, busy);
}
