#include "kvm/layout.h"
#include "sched/crew.h"
#include "sched/crew_int.h"
#include "sched/crew_sample.h"
#include "kvm/decode.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "sched/serialize.h"
#include <stdio.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>

/* A vCPU's trapped access and step (struct crew keeps them, by vCPU index). */
#define ACC(v) (&(v)->vm->crew->acc[(v)->index])
#define STEP(v) (&(v)->vm->crew->step[(v)->index])

static uint64_t trapped_pte(uint64_t present)
{
    return (present & ~PTE_P) | PTE_TRAP;
}

/* Frames to drop translations of, merged into runs (one mprotect pair per run). */
struct frame_batch {
    uint64_t *f;
    size_t n, cap;
};

/* False when out of memory: the frame was not added. */
static bool batch_add(struct frame_batch *b, uint64_t frame)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        uint64_t *nf = realloc(b->f, cap * sizeof *nf);
        if (!nf)
            return false;
        b->f = nf;
        b->cap = cap;
    }
    b->f[b->n++] = frame;
    return true;
}

static void batch_flush(struct guestmem *gm, struct frame_batch *b)
{
    gm_invalidate_frames(gm, b->f, b->n);
    free(b->f);
    memset(b, 0, sizeof *b);
}

/* Present -> trapped: the frame's cached translations must go, now or in b. */
static void trap_pte(struct guestmem *gm, uint64_t *pte, uint64_t present, uint64_t frame,
                     struct frame_batch *b)
{
    gm_set_pte(gm, pte, trapped_pte(present));
    if (!batch_add(b, frame))
        gm_invalidate_frame(gm, frame);
}

/* A slot for the page at va (its frame and present flags), reusing the page's slot if it
 * has one. -1 when out of memory. Caller holds gm->lock. */
static int new_slot(struct crew *c, uint64_t va, uint64_t frame, uint64_t flags)
{
    int known = crew_slot_of(c, va);
    if (known >= 0) {
        c->page[known] = (struct crew_page){.va = va, .frame = frame, .flags = flags};
        return known;
    }
    if (c->npage == c->cappage) {
        size_t cap = c->cappage ? c->cappage * 2 : 1024;
        if (cap > (size_t)INT32_MAX)
            return -1;
        struct crew_page *pg = realloc(c->page, cap * sizeof *pg);
        if (!pg)
            return -1;
        c->page = pg;
        /* Every slot may be owned by the running thread at once: size `owned` with the
         * slots, so granting a page never fails for want of memory. */
        int *ow = realloc(c->owned, cap * sizeof *ow);
        if (!ow)
            return -1;
        c->owned = ow;
        c->cappage = cap;
    }
    int slot = (int)c->npage;
    uint64_t *v = ex_u64map_put(&c->slot_of_va, va, (uint64_t)slot, NULL);
    if (!v)
        return -1;
    *v = (uint64_t)slot;
    c->npage++;
    c->watched++;
    c->page[slot] = (struct crew_page){.va = va, .frame = frame, .flags = flags};
    return slot;
}

uint64_t *crew_slot_pte(struct vm *vm, int slot, bool *trapped)
{
    const struct crew_page *pg = &vm->crew->page[slot];
    uint64_t *pte = gm_pte(&vm->gm, pg->va, false);
    if (!pte)
        return NULL;
    uint64_t present = pg->frame | pg->flags, e = *pte;
    uint64_t sampled_ro = pg->sample_ro ? (present & ~PTE_W) | PTE_SAMPLE_RO : present;
    if (e == present || e == trapped_pte(present) || e == sampled_ro) {
        *trapped = e == trapped_pte(present);
        return pte;
    }
    return NULL;
}

/* Watches va if it is a present, writable, untrapped user page. Caller holds gm->lock. */
static void watch_page(struct vm *vm, uint64_t va, struct frame_batch *b)
{
    struct guestmem *gm = &vm->gm;
    uint64_t *pte = gm_pte(gm, va, false);
    if (!pte)
        return;
    uint64_t e = *pte;
    if (!(e & PTE_P) || !(e & PTE_W) || !(e & PTE_U) || (e & PTE_TRAP))
        return;
    uint64_t frame = e & PTE_ADDR;
    if (frame < GPA_POOL || frame + PAGE_SIZE > gm->size)
        return;
    if (new_slot(vm->crew, va, frame, e & ~PTE_ADDR) < 0)
        return; /* out of memory: the page simply goes unwatched */
    trap_pte(gm, pte, e, frame, b);
}

static void watch(struct vm *vm, uint64_t start, uint64_t end)
{
    struct frame_batch b = {0};
    pthread_mutex_lock(&vm->gm.lock);
    for (uint64_t va = start & PAGE_MASK, next; va < end; va = next) {
        if (!gm_pte_scan(&vm->gm, va, &next))
            continue;
        watch_page(vm, va, &b);
    }
    pthread_mutex_unlock(&vm->gm.lock);
    batch_flush(&vm->gm, &b);
}

int crew_start(struct vm *vm)
{
    vm->crew->on = true;
    crew_sample_start(vm);
    size_t n = vm->mm.n;
    struct vma *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy)
        return -1;
    pthread_mutex_lock(&vm->gm.lock);
    memcpy(copy, vm->mm.v, n * sizeof *copy);
    pthread_mutex_unlock(&vm->gm.lock);
    for (size_t i = 0; i < n; i++)
        watch(vm, copy[i].start, copy[i].end);
    free(copy);
    return 0;
}

/* Whether the rest of a rep string instruction (count rcx, elements of esz bytes, from
 * rsi and rdi, backwards if DF) could read the page of va. */
static bool rep_touches(uint64_t va, const struct kvm_regs *r, unsigned esz)
{
    uint64_t page = va & PAGE_MASK, len = r->rcx * esz + esz;
    if (r->rcx > (1ULL << 40))
        return true;
    const uint64_t base[2] = {r->rsi, r->rdi};
    for (int i = 0; i < 2; i++) {
        uint64_t lo = (r->rflags & 0x400) ? base[i] - len : base[i], hi = lo + 2 * len;
        if (page + PAGE_SIZE > lo && page < hi)
            return true;
    }
    return false;
}

/* Ends a rep string instruction's step with an int3 at the next instruction instead of
 * a trap per iteration (this host's guests cannot use hardware breakpoints). Only the
 * stepping thread runs until it returns to the VMM, which undoes the patch at once
 * (crew_breakpoint, crew_unpatch), so no one else can meet the byte. */
static bool patch(struct vm *vm, struct vcpu *v, const struct kvm_regs *r)
{
    uint64_t at = STEP(v)->rip + STEP(v)->len;
    uint8_t *b = gm_code_byte(&vm->gm, at);
    if (!b || *b == 0xCC || rep_touches(at, r, STEP(v)->esz ? STEP(v)->esz : 8))
        return false;
    STEP(v)->bp_saved = *b;
    STEP(v)->bp_addr = at;
    *b = 0xCC;
    gm_mark_dirty(&vm->gm, (uint64_t)(b - vm->gm.host) & PAGE_MASK);
    STEP(v)->bp = true;
    return true;
}

static void unpatch(struct vm *vm, struct vcpu *v)
{
    if (!STEP(v)->bp)
        return;
    uint8_t *b = gm_code_byte(&vm->gm, STEP(v)->bp_addr);
    if (b && *b == 0xCC)
        *b = STEP(v)->bp_saved;
    STEP(v)->bp = false;
}

static void step_clear(struct vm *vm, struct vcpu *v)
{
    struct crew_step *s = STEP(v);
    unpatch(vm, v);
    s->on = s->rep = s->bp = s->pushf = false;
    s->n = 0;
    /* An armed block goes at the vCPU's next guest_left (guest_step.c), before anyone
     * looks at the step again. */
}

void crew_stop(struct vm *vm)
{
    struct crew *c = vm->crew;
    if (!c->on)
        return;
    struct frame_batch b = {0};
    pthread_mutex_lock(&vm->lock);
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        v->acc_pending = false; /* the instruction runs again, on a present page */
        if (c->cue[v->index].armed) {
            /* Left armed by a vCPU stopped inside the agent's handler: off, so that
             * nothing of it outlives the fragment (guest_cue.h). */
            uint64_t gpa = GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE + AGENT_CUE_OFF;
            struct agent_cue *d = gm_ptr(&vm->gm, gpa);
            d->state = 0;
            d->step_pte = 0;
            gm_mark_dirty(&vm->gm, gpa & PAGE_MASK);
            c->cue[v->index].armed = false;
        }
        if (STEP(v)->on) {
            v->run->s.regs.regs.rflags &= ~RFLAGS_TF;
            v->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
            step_clear(vm, v);
        }
    }
    pthread_mutex_lock(&vm->gm.lock);
    for (size_t slot = 0; slot < c->npage; slot++) {
        bool trapped;
        uint64_t *pte = crew_slot_pte(vm, (int)slot, &trapped);
        if (pte && (trapped || c->page[slot].sample_ro))
            gm_set_pte(&vm->gm, pte, c->page[slot].frame | c->page[slot].flags);
        if (pte && c->page[slot].sample_ro && !batch_add(&b, c->page[slot].frame))
            gm_invalidate_frame(&vm->gm, c->page[slot].frame); /* read-only -> writable */
    }
    c->npage = 0;
    c->nowned = 0;
    ex_u64map_free(&c->slot_of_va);
    c->on = c->sample = false;
    pthread_mutex_unlock(&vm->gm.lock);
    pthread_mutex_unlock(&vm->lock);
    batch_flush(&vm->gm, &b);
}

void crew_free(struct vm *vm)
{
    for (int i = 0; i < MAX_VCPUS; i++)
        free(vm->crew->step[i].slot);
    ex_u64map_free(&vm->crew->slot_of_va);
    ex_u64map_free(&vm->crew->preshared);
    free(vm->crew->page);
    free(vm->crew->owned);
    memset(vm->crew, 0, sizeof *vm->crew);
}

void crew_watch_range(struct vm *vm, uint64_t start, uint64_t end)
{
    if (vm->crew->on && start < end && end <= USER_TOP)
        watch(vm, start, end);
}

/* Maps a trapped slot for the running thread. Caller holds gm->lock. */
static void grant(struct vm *vm, int slot)
{
    struct crew *c = vm->crew;
    bool trapped;
    uint64_t *pte = crew_slot_pte(vm, slot, &trapped);
    if (!pte || !trapped)
        return;
    gm_set_pte(&vm->gm, pte, c->page[slot].frame | c->page[slot].flags);
    c->owned[c->nowned++] = slot; /* sized with the slots: always room */
}

/* Traps a granted slot again. Caller holds gm->lock. */
static void revoke(struct vm *vm, int slot, struct frame_batch *b)
{
    bool trapped;
    uint64_t *pte = crew_slot_pte(vm, slot, &trapped);
    struct crew_page *pg = &vm->crew->page[slot];
    if (pte && !trapped)
        trap_pte(&vm->gm, pte, pg->frame | pg->flags, pg->frame, b);
    pg->sample_ro = false;
}

static struct vcpu *vcpu_of(struct vm *vm, int tid)
{
    for (int i = 0; tid && i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid == tid)
            return vm->vcpus[i];
    return NULL;
}

void crew_switch_locked(struct vm *vm, int next)
{
    struct crew *c = vm->crew;
    if (!c->on || c->sample_full)
        return; /* a sampled fragment that sampled enough keeps its pages mapped */
    struct frame_batch b = {0};
    c->turn++; /* the pages claimed in the outgoing turn are its own from now on */
    pthread_mutex_lock(&vm->gm.lock);
    /* Take back what the outgoing thread was given... */
    for (size_t i = 0; i < c->nowned; i++)
        revoke(vm, c->owned[i], &b);
    c->nowned = 0;
    /* ...and give the incoming thread the pages its half-done instruction was given. Its
     * own pages it gets at first touch (crew_fault, no cue point): mapping them all here
     * cost xz -T2 ~2 ms a switch, thousands of buffer pages mapped and flushed. */
    struct vcpu *w = vcpu_of(vm, next);
    if (w && STEP(w)->on)
        for (size_t i = 0; i < STEP(w)->n; i++)
            grant(vm, STEP(w)->slot[i]);
    pthread_mutex_unlock(&vm->gm.lock);
    batch_flush(&vm->gm, &b);
}

void crew_describe(struct vm *vm, uint64_t cr2, uint64_t errcode, uint64_t rip, uint64_t rsp,
                   const struct kvm_regs *r, const struct kvm_sregs *s, struct crew_access *a,
                   struct insn_info *info)
{
    uint8_t code[15];
    size_t got = vm_read_code(vm, rip, code, sizeof code);
    const struct insn_regs ir = {
        .gpr = {r->rax, r->rcx, r->rdx, r->rbx, rsp, r->rbp, r->rsi, r->rdi,
                r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15},
        .fs_base = s->fs.base, .gs_base = s->gs.base};
    decode_insn_regs(code, got, rip, &ir, info);
    uint64_t page = cr2 & PAGE_MASK, end = page + PAGE_SIZE;
    const struct insn_mem *op = NULL;
    for (int i = 0; i < info->nmem && !op; i++) {
        const struct insn_mem *m = &info->op[i];
        uint64_t sz = m->size ? m->size : 1;
        if (m->known && cr2 >= m->ea && cr2 - m->ea < sz)
            op = m;
    }
    uint64_t addr = cr2, size;
    if (op) {
        addr = op->ea < page ? page : op->ea; /* the part of an access that is in this page */
        size = op->ea + (op->size ? op->size : 1) - addr;
    } else {
        size = info->mem_size ? (uint64_t)info->mem_size : info->stack ? 8 : 1;
    }
    if (addr + size > end)
        size = end - addr;
    bool write = (errcode & PF_WRITE) != 0;
    bool rmw = op ? op->reads && op->writes : info->reads && info->writes;
    a->addr = addr;
    a->size = (uint16_t)size;
    a->kind = (errcode & PF_FETCH) ? EX_READ : rmw ? EX_RMW : write ? EX_WRITE : EX_READ;
    a->flags = (uint8_t)((info->atomic ? EX_F_ATOMIC : 0) | crew_stack_flag(addr, size, rsp));
    a->rip = rip;
    size_t tl = strnlen(info->text, sizeof a->insn - 1);
    memcpy(a->insn, info->text, tl);
    a->insn[tl] = '\0';
}

/* Adds a shared slot to the thread's step; the oldest goes when full (a long rep string
 * instruction has moved past it). Caller holds vm->lock and gm->lock. */
static void step_add(struct vm *vm, struct vcpu *v, int slot, struct frame_batch *b)
{
    struct crew_step *s = STEP(v);
    for (size_t i = 0; i < s->n; i++)
        if (s->slot[i] == slot)
            return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        int *ns = cap <= 64 ? realloc(s->slot, cap * sizeof *ns) : NULL;
        if (ns) {
            s->slot = ns;
            s->cap = cap;
        } else {
            revoke(vm, s->slot[0], b);
            memmove(s->slot, s->slot + 1, (s->n - 1) * sizeof *s->slot);
            s->n--;
        }
    }
    s->slot[s->n++] = slot;
}

/* v's access (ACC) as the cue point it is: its trace entry, its time, spin detection
 * (value: what a read is about to get), ownership. Returns true when the page was claimed
 * in this turn (stepped like a shared page). Caller holds vm->lock. */
static bool record_locked(struct vm *vm, struct vcpu *v, uint64_t value)
{
    struct crew *c = vm->crew;
    const struct crew_access *a = ACC(v);
    struct crew_page *pg = &c->page[a->slot];
    c->accesses++;
    struct ex_event *e = ex_trace_access(&vm->ser->trace, (uint32_t)v->xid, a->kind, a->addr,
                                         a->size, a->flags, a->rip);
    if (e) {
        vm_symbolize(vm, a->rip, e->sym, sizeof e->sym);
        memcpy(e->insn, a->insn, sizeof e->insn);
    }
    vm->ser->cues++;
    ex_spin_observe(&vm->ser->spin, (uint32_t)v->xid, (enum ex_kind)a->kind, a->addr, a->size,
                    value);
    /* Ownership: the first toucher owns the page; a second thread makes it shared. */
    if (!pg->shared && ((pg->owner && pg->owner != v->tid) ||
                        (c->preshared.n && !pg->handed && ex_u64map_get(&c->preshared, pg->va)))) {
        pg->shared = true;
        c->shared_pages++;
    } else if (!pg->shared && !pg->owner) {
        pg->owner = v->tid;
        pg->claim_turn = c->turn;
    }
    /* Claimed in this turn: trapped again after the instruction, like a shared page
     * (the thread's own stack is its own at once). */
    bool fresh = !pg->shared && vm->ser->turn_claims && pg->claim_turn == c->turn &&
                 !a->near_sp;
    c->fresh_accesses += fresh;
    return fresh;
}

/* The access goes ahead: record it, settle ownership, map the page for the thread.
 * Returns true when the instruction must be single-stepped. Caller holds vm->lock. */
static bool perform_locked(struct vm *vm, struct vcpu *v)
{
    struct crew *c = vm->crew;
    const struct crew_access *a = ACC(v);
    struct crew_page *pg = &c->page[a->slot];
    /* Spin detection sees the value a read is about to get: nobody else runs before it. */
    uint64_t value = 0;
    size_t vlen = a->size < 8 ? a->size : 8;
    if (a->addr >= pg->va && a->addr - pg->va + vlen <= PAGE_SIZE)
        memcpy(&value, vm->gm.host + pg->frame + (a->addr - pg->va), vlen);
    bool fresh = record_locked(vm, v, value);
    struct frame_batch b = {0};
    pthread_mutex_lock(&vm->gm.lock);
    grant(vm, a->slot);
    if (pg->shared || fresh) {
        if (!STEP(v)->on) {
            STEP(v)->on = true;
            STEP(v)->rip = a->rip;
            STEP(v)->rep = a->rep;
            STEP(v)->pushf = a->pushf;
            STEP(v)->len = a->len;
            STEP(v)->esz = a->esz;
        }
        step_add(vm, v, a->slot, &b);
    }
    pthread_mutex_unlock(&vm->gm.lock);
    batch_flush(&vm->gm, &b);
    return STEP(v)->on && !STEP(v)->bp; /* TF wanted */
}

void crew_perform_pending_locked(struct vm *vm, struct vcpu *v)
{
    if (!v->acc_pending)
        return;
    v->acc_pending = false;
    if (!vm->crew->on)
        return;
    if (perform_locked(vm, v)) {
        v->run->s.regs.regs.rflags |= RFLAGS_TF;
        v->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
    }
}

/* v's own page (not shared, not claimed in this turn: turn claims keep those trapping)
 * is mapped for the rest of its turn. True when it was. Caller holds vm->lock. */
static bool own_page_locked(struct vm *vm, struct vcpu *v, int slot)
{
    struct crew *c = vm->crew;
    const struct crew_page *pg = &c->page[slot];
    if (pg->owner != v->tid || pg->shared || (vm->ser->turn_claims && pg->claim_turn == c->turn))
        return false;
    pthread_mutex_lock(&vm->gm.lock);
    grant(vm, slot); /* into c->owned: trapped again when the turn ends */
    pthread_mutex_unlock(&vm->gm.lock);
    c->lazy_grants++;
    return true;
}

enum crew_verdict crew_fault(struct vm *vm, struct vcpu *v, uint64_t cr2, uint64_t errcode,
                             uint64_t rip, const struct kvm_regs *regs,
                             const struct kvm_sregs *sregs)
{
    struct crew *c = vm->crew;
    if (c->sample) /* set and cleared on a paused VM */
        return crew_sample_fault(vm, v, cr2, errcode, rip, regs, sregs);
    if (errcode & PF_PRESENT)
        return CREW_NOT_WATCHED;
    pthread_mutex_lock(&vm->lock);
    if (!c->on) {
        pthread_mutex_unlock(&vm->lock);
        return CREW_NOT_WATCHED;
    }
    pthread_mutex_lock(&vm->gm.lock);
    bool trapped = false;
    int slot = crew_slot_of(c, cr2 & PAGE_MASK);
    bool ours = slot >= 0 && crew_slot_pte(vm, slot, &trapped) && trapped;
    pthread_mutex_unlock(&vm->gm.lock);
    if (!ours) {
        pthread_mutex_unlock(&vm->lock);
        return CREW_NOT_WATCHED;
    }
    if (own_page_locked(vm, v, slot)) { /* not a cue point: mapped for its turn */
        pthread_mutex_unlock(&vm->lock);
        return CREW_GO;
    }
    struct insn_info info;
    crew_describe(vm, cr2, errcode, rip, regs->rsp, regs, sregs, ACC(v), &info);
    ACC(v)->slot = slot;
    ACC(v)->rep = info.rep;
    ACC(v)->pushf = info.pushf;
    ACC(v)->len = (uint8_t)info.len;
    ACC(v)->esz = (uint8_t)(info.mem_size > 0 && info.mem_size <= 8 ? info.mem_size : 0);
    uint64_t page = cr2 & PAGE_MASK, sp = regs->rsp;
    ACC(v)->near_sp = page + PAGE_SIZE + CREW_STACK_BELOW > sp &&
                      page <= sp + CREW_STACK_ABOVE;
    enum crew_verdict verdict;
    /* Pending while the pick decides, so that a whole-run strategy sees it as this
     * thread's next event (explore.c). */
    v->acc_pending = true;
    if (serialize_pick_locked(vm, v->tid) == v->tid) {
        v->acc_pending = false;
        verdict = perform_locked(vm, v) ? CREW_GO_STEP : CREW_GO;
    } else {
        verdict = CREW_WAIT;
    }
    pthread_mutex_unlock(&vm->lock);
    return verdict;
}

/* A step is over: its pages are trapped again and taken from the running thread, the
 * step is cleared. Caller holds vm->lock; b collects the frames to flush. */
static void step_end_locked(struct vm *vm, struct vcpu *v, struct frame_batch *b, uint64_t keep_pte)
{
    struct crew *c = vm->crew;
    pthread_mutex_lock(&vm->gm.lock);
    for (size_t i = 0; i < STEP(v)->n; i++) {
        int slot = STEP(v)->slot[i];
        bool trapped;
        uint64_t *pte = keep_pte ? crew_slot_pte(vm, slot, &trapped) : NULL;
        if (!pte || KVA((uint64_t)((uint8_t *)pte - vm->gm.host)) != keep_pte)
            revoke(vm, slot, b);
        for (size_t j = 0; j < c->nowned; j++)
            if (c->owned[j] == slot) {
                c->owned[j] = c->owned[--c->nowned];
                break;
            }
    }
    pthread_mutex_unlock(&vm->gm.lock);
    step_clear(vm, v);
    c->steps++;
}

bool crew_step_done(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *r,
                    bool *keep_tf)
{
    uint64_t rsp = r->rsp;
    struct crew *c = vm->crew;
    *keep_tf = false;
    pthread_mutex_lock(&vm->lock);
    if (!STEP(v)->on) {
        pthread_mutex_unlock(&vm->lock);
        return false;
    }
    c->step_traps++;
    if (STEP(v)->rep && rip == STEP(v)->rip) {
        /* A rep string instruction traps after every iteration: it goes on, with the
         * pages it has, until rip moves past it; a breakpoint there saves an exit per
         * iteration. */
        *keep_tf = !STEP(v)->len || !patch(vm, v, r);
        pthread_mutex_unlock(&vm->lock);
        return true;
    }
    if (STEP(v)->pushf) {
        /* pushf stored RFLAGS with our TF in it: the program must see its own flags. */
        uint16_t w;
        if (copy_from_user(&vm->gm, &w, rsp, sizeof w)) {
            w &= (uint16_t)~RFLAGS_TF;
            copy_to_user(&vm->gm, rsp, &w, sizeof w);
        }
    }
    struct frame_batch b = {0};
    step_end_locked(vm, v, &b, 0);
    pthread_mutex_unlock(&vm->lock);
    batch_flush(&vm->gm, &b);
    return true;
}

void crew_step_ended_in_guest_locked(struct vm *vm, struct vcpu *v)
{
    if (!STEP(v)->on)
        return;
    vm->crew->step_traps++;
    vm->crew->guest_steps++;
    struct frame_batch b = {0};
    /* The agent trapped the pages: normally nothing to flush. But a cue point it took
     * after this step's end may have mapped one again, whose own step is still going
     * (keep_pte, guest_cue.c): that one stays. */
    step_end_locked(vm, v, &b, vm->crew->cue[v->index].keep_pte);
    batch_flush(&vm->gm, &b);
}

int crew_step_arm(struct vm *vm, struct vcpu *v, struct agent_step *d)
{
    const struct crew_step *s = STEP(v);
    if (!vm->crew->on || !s->on || s->rep || s->pushf || s->bp || s->n > AGENT_STEP_MAX)
        return -1;
    int n = 0;
    pthread_mutex_lock(&vm->gm.lock);
    for (size_t i = 0; i < s->n; i++) {
        bool trapped;
        uint64_t *pte = crew_slot_pte(vm, s->slot[i], &trapped);
        if (!pte || trapped)
            continue; /* revoke would leave it alone too */
        d->e[n].pte = KVA((uint64_t)((uint8_t *)pte - vm->gm.host));
        d->e[n].value = trapped_pte(*pte);
        d->e[n].va = vm->crew->page[s->slot[i]].va;
        n++;
    }
    pthread_mutex_unlock(&vm->gm.lock);
    return n;
}

bool crew_breakpoint(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *r)
{
    if (!STEP(v)->bp || rip != STEP(v)->bp_addr + 1)
        return false;
    bool keep_tf;
    crew_step_done(vm, v, STEP(v)->bp_addr, r, &keep_tf); /* unpatches */
    return true;
}

bool crew_unpatch(struct vm *vm, struct vcpu *v)
{
    if (!STEP(v)->bp)
        return false;
    pthread_mutex_lock(&vm->lock);
    unpatch(vm, v);
    pthread_mutex_unlock(&vm->lock);
    return true;
}

void crew_hand_stack_locked(struct vm *vm, int child, uint64_t rsp, uint64_t tls)
{
    struct crew *c = vm->crew;
    if (!c || !c->on || !child || rsp > USER_TOP - CREW_STACK_ABOVE)
        return;
    uint64_t top = tls > rsp && tls < rsp + CREW_STACK_ABOVE ? tls : rsp + 15;
    struct frame_batch b = {0};
    pthread_mutex_lock(&vm->gm.lock);
    for (uint64_t page = rsp & PAGE_MASK; page <= (top & PAGE_MASK); page += PAGE_SIZE) {
        int slot = crew_slot_of(c, page);
        if (slot < 0)
            continue;
        struct crew_page *pg = &c->page[slot];
        pg->owner = child;
        pg->shared = false;
        pg->handed = true;
        pg->claim_turn = c->turn;
        revoke(vm, slot, &b); /* the parent runs on: its next touch is a cue point */
    }
    pthread_mutex_unlock(&vm->gm.lock);
    batch_flush(&vm->gm, &b);
}

int crew_preshare(struct vm *vm, const uint64_t *pages, size_t n)
{
    struct crew *c = vm->crew;
    pthread_mutex_lock(&vm->lock);
    ex_u64map_clear(&c->preshared);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (!ex_u64map_put(&c->preshared, pages[i] & PAGE_MASK, 1, NULL))
            rc = -1;
    if (rc < 0)
        ex_u64map_clear(&c->preshared);
    pthread_mutex_unlock(&vm->lock);
    return rc;
}

void crew_each_shared(struct vm *vm, void (*fn)(void *ctx, uint64_t page), void *ctx)
{
    struct crew *c = vm->crew;
    pthread_mutex_lock(&vm->lock);
    for (size_t slot = 0; c->on && slot < c->npage; slot++)
        if (c->page[slot].shared)
            fn(ctx, c->page[slot].va);
    pthread_mutex_unlock(&vm->lock);
}

int crew_cue_pages(struct vm *vm, struct agent_cue *d, int *slots, int max)
{
    struct crew *c = vm->crew;
    int n = 0;
    pthread_mutex_lock(&vm->gm.lock);
    for (size_t slot = 0; c->on && slot < c->npage && n < max; slot++) {
        bool trapped;
        /* Present ones too: those of v's step, trapped again when it ends (the agent
         * maps only a page whose PTE is the trapped value). */
        uint64_t *pte = c->page[slot].shared ? crew_slot_pte(vm, (int)slot, &trapped) : NULL;
        if (!pte)
            continue;
        uint64_t present = c->page[slot].frame | c->page[slot].flags;
        d->page[n].va = c->page[slot].va;
        d->page[n].pte = KVA((uint64_t)((uint8_t *)pte - vm->gm.host));
        d->page[n].present = present;
        d->page[n].trapped = trapped_pte(present);
        slots[n++] = (int)slot;
    }
    pthread_mutex_unlock(&vm->gm.lock);
    return n;
}

int crew_cue_page_state(struct vm *vm, int slot)
{
    bool trapped;
    pthread_mutex_lock(&vm->gm.lock);
    int st = slot >= 0 && (size_t)slot < vm->crew->npage && crew_slot_pte(vm, slot, &trapped)
                 ? trapped : -1;
    pthread_mutex_unlock(&vm->gm.lock);
    return st;
}

/* The 16 bytes an in-guest cue point's entry carries start here (agent.S). */
static uint64_t value_window(uint64_t cr2)
{
    uint64_t w = cr2 & ~7ULL;
    return (w & ~PAGE_MASK) > PAGE_SIZE - 16 ? (cr2 & PAGE_MASK) + PAGE_SIZE - 16 : w;
}

const char *crew_guest_cue_locked(struct vm *vm, struct vcpu *v, int slot,
                                  const struct agent_cue_entry *e, bool pending)
{
    struct crew *c = vm->crew;
    if (!c->on || slot < 0 || (size_t)slot >= c->npage || !c->page[slot].shared ||
        (e->cr2 & PAGE_MASK) != c->page[slot].va)
        return "an in-guest cue point names a page that is not a shared page it was given";
    struct kvm_regs r = {.rax = e->gpr[0], .rcx = e->gpr[1], .rdx = e->gpr[2],
                         .rbx = e->gpr[3], .rsp = e->rsp, .rbp = e->gpr[5], .rsi = e->gpr[6],
                         .rdi = e->gpr[7], .r8 = e->gpr[8], .r9 = e->gpr[9], .r10 = e->gpr[10],
                         .r11 = e->gpr[11], .r12 = e->gpr[12], .r13 = e->gpr[13],
                         .r14 = e->gpr[14], .r15 = e->gpr[15], .rip = e->rip,
                         .rflags = e->rflags};
    struct insn_info info;
    struct crew_access *a = ACC(v);
    crew_describe(vm, e->cr2, e->err, e->rip, e->rsp, &r, &v->run->s.regs.sregs, a, &info);
    if (info.rep || info.pushf)
        return "the guest-agent took a rep string or pushf cue point (the VMM must step those)";
    a->slot = slot;
    a->rep = false;
    a->pushf = false;
    a->len = (uint8_t)info.len;
    a->esz = (uint8_t)(info.mem_size > 0 && info.mem_size <= 8 ? info.mem_size : 0);
    a->near_sp = false; /* decides only a claim's step: a shared page steps anyway */
    /* The pick the VMM would have made at the fault: the budget said it is v again. */
    v->acc_pending = true;
    int next = serialize_pick_locked(vm, v->tid);
    v->acc_pending = false;
    if (next != v->tid)
        return "an in-guest cue point's budget was wrong: the schedule picked another thread";
    uint64_t w = value_window(e->cr2), value = 0;
    size_t vlen = a->size < 8 ? a->size : 8;
    if (a->addr < w || a->addr + vlen > w + 16)
        return "an in-guest cue point's access lies outside the bytes the agent kept";
    memcpy(&value, (const uint8_t *)e->value + (a->addr - w), vlen);
    record_locked(vm, v, value); /* shared: no claim, ownership unchanged */
    c->guest_cues++;
    if (!pending) { /* the agent stepped it and trapped the page again */
        c->steps++;
        c->step_traps++;
        c->guest_steps++;
        return NULL;
    }
    /* Its step goes on (v left the guest before the #DB): the VMM's from now on, as if
     * perform_locked had set it up. The page is mapped: v owns it until the step ends. */
    struct crew_step *st = STEP(v);
    st->on = true;
    st->rip = a->rip;
    st->rep = st->pushf = false;
    st->len = a->len;
    st->esz = a->esz;
    struct frame_batch b = {0};
    pthread_mutex_lock(&vm->gm.lock);
    step_add(vm, v, slot, &b);
    bool owned = false;
    for (size_t i = 0; i < c->nowned && !owned; i++)
        owned = c->owned[i] == slot;
    if (!owned)
        c->owned[c->nowned++] = slot;
    pthread_mutex_unlock(&vm->gm.lock);
    batch_flush(&vm->gm, &b);
    return NULL;
}
