/* Sparse execution's preemption points (sparse.h). */
#include "sched/sparse.h"
#include "sched/serialize.h"
#include "kvm/vm.h"
#include <string.h>

bool sparse_insn_ok(const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i < n; i++) {
        uint8_t c = b[i];
        if (c == 0xF3 && i + 1 < n && b[i + 1] == 0x90)
            return true; /* pause: a spin loop's, one step */
        if (c == 0xF2 || c == 0xF3)
            return false; /* rep/repne: a string instruction traps per iteration */
        if (c == 0x66 || c == 0x67 || c == 0x2E || c == 0x3E || c == 0x26 || c == 0x36 ||
            c == 0x64 || c == 0x65 || c == 0xF0 || (c >= 0x40 && c <= 0x4F))
            continue;
        break;
    }
    if (i >= n)
        return false;
    uint8_t op = b[i];
    if (op == 0xCC || op == 0xCD || op == 0xCE || op == 0x9C)
        return false; /* int3, int n, into, pushf (it would store TF) */
    if (op == 0x0F && (i + 1 >= n || b[i + 1] == 0x05 || b[i + 1] == 0x34 || b[i + 1] == 0x07))
        return false; /* syscall, sysenter, sysret */
    return true;
}

void sparse_end_steps_locked(struct vm *vm)
{
    struct sparse *sp = &vm->ser->sparse;
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (v->index < 0 || v->index >= MAX_VCPUS || !sp->stepping[v->index])
            continue;
        /* Paused out of KVM_RUN: kvm_run holds its registers (kvm_valid_regs). */
        v->run->s.regs.regs.rflags &= ~RFLAGS_TF;
        v->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
        sp->stepping[v->index] = false;
    }
}

void sparse_forget_steps_locked(struct vm *vm)
{
    memset(vm->ser->sparse.stepping, 0, sizeof vm->ser->sparse.stepping);
}

void sparse_begin_locked(struct vm *vm, const struct ex_schedule *s)
{
    struct sparse *sp = &vm->ser->sparse;
    sparse_unplant_all_locked(vm);
    memset(sp->stepping, 0, sizeof sp->stepping);
    sp->decisions = sp->hits = sp->yields = 0;
    sp->n = 0;
    /* The timed decisions set for this fragment, once (sparse_set_timed_locked). */
    sp->ntimed_at = s->sparse ? sp->npending_at : 0;
    memcpy(sp->timed_at, sp->pending_at, sp->ntimed_at * sizeof sp->timed_at[0]);
    sp->npending_at = sp->timed_next = sp->ntimed = 0;
    sp->timed_due = false;
    __atomic_store_n(&sp->on, s->sparse, __ATOMIC_RELEASE);
    if (!s->sparse)
        return;
    for (uint32_t i = 0; i < s->npreempt && i < EX_MAX_PREEMPTS; i++)
        sp->pt[sp->n++] = (struct sparse_point){.rip = s->preempt[i].rip,
                                                .xid = s->preempt[i].thread,
                                                .any = !s->preempt[i].thread,
                                                .count = s->preempt[i].count,
                                                .match = s->preempt[i].match,
                                                .after = s->preempt[i].match_after,
                                                .chain = s->preempt[i].chain};
    for (uint32_t i = 0; i < s->nyield && i < EX_MAX_YIELDS; i++)
        sp->pt[sp->n++] = (struct sparse_point){.rip = s->yield[i], .xid = 0, .count = 1};
}

static void unplant(struct vm *vm, struct sparse_point *p)
{
    if (!p->planted)
        return;
    uint8_t *b = gm_code_byte(&vm->gm, p->rip);
    if (b && *b == 0xCC)
        *b = p->saved;
    p->planted = false;
}

void sparse_unplant_all_locked(struct vm *vm)
{
    struct sparse *sp = &vm->ser->sparse;
    for (uint32_t i = 0; i < sp->n; i++)
        unplant(vm, &sp->pt[i]);
}

/* Plants p for the running thread on vCPU `by`: false when it never can (done from now
 * on). */
/* The code byte at rip, where an int3 may go (the program's code, no int3 there yet, an
 * instruction sparse_insn_ok takes), or NULL. */
static uint8_t *plantable(struct vm *vm, uint64_t rip)
{
    uint8_t *b = gm_code_byte(&vm->gm, rip);
    if (!b || *b == 0xCC)
        return NULL;
    uint64_t room = PAGE_SIZE - (rip & (PAGE_SIZE - 1));
    return sparse_insn_ok(b, room < 15 ? (size_t)room : 15) ? b : NULL;
}

static bool plant(struct vm *vm, struct sparse_point *p, int by)
{
    uint8_t *b = plantable(vm, p->rip);
    if (!b)
        return false;
    struct sparse *sp = &vm->ser->sparse;
    bool known = false;
    for (uint32_t i = 0; i < SPARSE_RECENT && i < sp->nrecent && !known; i++)
        known = sp->recent[i] == p->rip;
    if (!known)
        sp->recent[sp->nrecent++ % SPARSE_RECENT] = p->rip;
    p->saved = *b;
    *b = 0xCC;
    /* A restore puts the page back whatever happens to the byte. */
    gm_mark_dirty(&vm->gm, (uint64_t)(b - vm->gm.host) & PAGE_MASK);
    p->planted = true;
    p->planted_by = by;
    return true;
}

void sparse_enter(struct vm *vm, struct vcpu *v)
{
    struct sparse *sp = &vm->ser->sparse;
    if (!__atomic_load_n(&sp->on, __ATOMIC_ACQUIRE) || sp->stepping[v->index])
        return; /* a step over a point's instruction runs it first, unplanted */
    pthread_mutex_lock(&vm->lock);
    if (vm->ser->on && vm->ser->current == v->tid && v->xid > 0)
        for (uint32_t i = 0; i < sp->n; i++) {
            struct sparse_point *p = &sp->pt[i];
            if ((p->xid == (uint32_t)v->xid || !p->xid) && !p->done && !p->planted &&
                !(p->chain && sp->pt[p->chain - 1].hits < sp->pt[p->chain - 1].count) &&
                !plant(vm, p, v->index))
                p->done = true; /* the same in every run: nothing else decides it */
        }
    pthread_mutex_unlock(&vm->lock);
}

void sparse_unpatch(struct vm *vm, struct vcpu *v)
{
    struct sparse *sp = &vm->ser->sparse;
    if (!__atomic_load_n(&sp->on, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&vm->lock);
    for (uint32_t i = 0; i < sp->n; i++)
        if (sp->pt[i].planted_by == v->index)
            unplant(vm, &sp->pt[i]);
    pthread_mutex_unlock(&vm->lock);
}

uint64_t sparse_state_hash(struct vm *vm, const struct kvm_regs *u)
{
    uint64_t r[17 + SPARSE_HASH_STACK] = {
        u->rax, u->rbx, u->rcx, u->rdx, u->rsi, u->rdi, u->rsp, u->rbp, u->r8, u->r9, u->r10,
        u->r11, u->r12, u->r13, u->r14, u->r15,
        u->rflags & 0xCD5}; /* CF PF AF ZF SF DF OF: not TF, RF, IF */
    /* The top of the stack: its callers' frames (return addresses, the registers they
     * saved: a loop's counter in the caller of a libc call). Zeros if unreadable. */
    if (!copy_from_user(&vm->gm, r + 17, u->rsp, SPARSE_HASH_STACK * sizeof r[0]))
        memset(r + 17, 0, SPARSE_HASH_STACK * sizeof r[0]);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned i = 0; i < 17 + SPARSE_HASH_STACK; i++) {
        h ^= r[i];
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

void sparse_set_timed_locked(struct vm *vm, const uint64_t *at_ns, uint32_t n)
{
    struct sparse *sp = &vm->ser->sparse;
    sp->npending_at = n < SPARSE_MAX_TIMED ? n : SPARSE_MAX_TIMED;
    memcpy(sp->pending_at, at_ns, sp->npending_at * sizeof *at_ns);
}

uint64_t sparse_timed_tick_locked(struct vm *vm, uint64_t start_ns, uint64_t now_ns)
{
    struct sparse *sp = &vm->ser->sparse;
    if (!sp->on || sp->timed_next >= sp->ntimed_at)
        return UINT64_MAX;
    uint64_t due = start_ns + sp->timed_at[sp->timed_next];
    if (now_ns < due)
        return due;
    if (sp->timed_due && now_ns < sp->timed_kick + SPARSE_TIMED_RETRY_NS)
        return sp->timed_kick + SPARSE_TIMED_RETRY_NS;
    sp->timed_due = true;
    sp->timed_kick = now_ns;
    for (int i = 0; i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid && vm->vcpus[i]->tid == vm->ser->current)
            vm_kick(vm->vcpus[i]);
    return now_ns + SPARSE_TIMED_RETRY_NS;
}

/* Whether v, stopped at rip, may be preempted there by a timed decision: the program's
 * user code (not jinx's syscall entry), an instruction a point could carry, and no
 * point of v's at the same place (a replay matches each (thread, rip) once). */
static bool timed_place_ok(struct vm *vm, struct vcpu *v, uint64_t rip)
{
    struct sparse *sp = &vm->ser->sparse;
    if (!rip || rip > EX_MAX_PREEMPT_RIP || uva_in_agent(rip) || !plantable(vm, rip))
        return false;
    for (uint32_t i = 0; i < sp->ntimed; i++)
        if (sp->timed[i].xid == (uint32_t)v->xid && sp->timed[i].rip == rip)
            return false;
    for (uint32_t i = 0; i < sp->n; i++)
        if (sp->pt[i].rip == rip)
            return false;
    return true;
}

void sparse_timed_left(struct vm *vm, struct vcpu *v, bool interrupted)
{
    struct sparse *sp = &vm->ser->sparse;
    if (!interrupted || !__atomic_load_n(&sp->timed_due, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&vm->lock);
    const struct kvm_regs *u = &v->run->s.regs.regs;
    if (sp->on && sp->timed_due && vm->ser->on && vm->ser->current == v->tid && v->xid > 0 &&
        v->index >= 0 && v->index < MAX_VCPUS && !sp->stepping[v->index] &&
        !v->acc_pending && !v->result_pending && sp->ntimed < SPARSE_MAX_TIMED &&
        timed_place_ok(vm, v, u->rip)) {
        sp->timed[sp->ntimed++] = (struct sparse_timed){.xid = (uint32_t)v->xid, .rip = u->rip,
                                                        .hash = sparse_state_hash(vm, u),
                                                        .cue = vm->ser->cues};
        sp->timed_due = false;
        sp->timed_next++;
        sp->decisions++;
        serialize_preempt_locked(vm, v, u->rip); /* v goes on at rip when its turn comes */
    }
    pthread_mutex_unlock(&vm->lock);
}

bool sparse_breakpoint(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *u,
                       bool *step)
{
    struct sparse *sp = &vm->ser->sparse;
    *step = false;
    if (rip == 0)
        return false;
    pthread_mutex_lock(&vm->lock);
    /* Not only while `on`: a #BP on its way when the fragment ended (a retirement's
     * tail stopped, the pause's kick) arrives after its byte was taken out and `on`
     * went, and must not become the program's SIGTRAP (the points stay listed until
     * the next fragment's begin). */
    bool on = __atomic_load_n(&sp->on, __ATOMIC_ACQUIRE);
    struct sparse_point *p = NULL;
    for (uint32_t i = 0; on && i < sp->n && !p; i++)
        if (sp->pt[i].planted && sp->pt[i].planted_by == v->index && sp->pt[i].rip == rip - 1 &&
            (sp->pt[i].xid == (uint32_t)v->xid || !sp->pt[i].xid))
            p = &sp->pt[i];
    if (!p) {
        /* Not one of v's planted points. If a point's rip is there and the byte is no
         * int3 any more, the int3 v met was taken out while its #BP was on the way: run
         * the instruction again (never a SIGTRAP jinx made). Else the program's own. */
        bool stale = false;
        uint8_t *b = gm_code_byte(&vm->gm, rip - 1);
        for (uint32_t i = 0; i < SPARSE_RECENT && i < sp->nrecent && !stale; i++)
            stale = sp->recent[i] == rip - 1 && b && *b != 0xCC;
        pthread_mutex_unlock(&vm->lock);
        return stale;
    }
    unplant(vm, p);
    if (!p->xid && !p->any) {
        /* A yield point: the thread yields here, and steps over the instruction when it
         * runs again (TF stays in its flags while it waits). */
        sp->yields++;
        sp->stepping[v->index] = true;
        *step = true;
        serialize_yield_locked(vm, v, p->rip);
        pthread_mutex_unlock(&vm->lock);
        return true;
    }
    p->hits++;
    sp->hits++;
    if (p->match && u && vm->ser->cues >= p->after && sparse_state_hash(vm, u) == p->match)
        p->count = p->hits; /* a timed decision's place, found: it fires here */
    if (p->hits < p->count) {
        sp->stepping[v->index] = true;
        *step = true;
    } else {
        p->done = true; /* fired: the points chained to it count from now on */
        sp->decisions++;
        serialize_preempt_locked(vm, v, p->rip);
    }
    pthread_mutex_unlock(&vm->lock);
    return true;
}

bool sparse_step_done(struct vm *vm, struct vcpu *v)
{
    struct sparse *sp = &vm->ser->sparse;
    /* Not `on`: a fragment that ended (a retirement's tail, stopped wherever it was)
     * may leave v mid-step, TF in its flags, and free execution then takes the #DB:
     * jinx's own, never the program's SIGTRAP. A restore clears `stepping`
     * (sparse_forget_steps). */
    if (!sp->stepping[v->index])
        return false;
    sp->stepping[v->index] = false; /* planted again at the next entry */
    return true;
}
