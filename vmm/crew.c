#include "crew.h"
#include "cpu.h"
#include "decode.h"
#include "util.h"
#include "vm.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool crew_is_trap(uint64_t gpa)
{
    return gpa >= GPA_TRAP_BASE && gpa < GPA_TRAP_BASE + (uint64_t)TRAP_SLOTS_MAX * PAGE_SIZE;
}

static uint64_t *slot_pte(struct vm *vm, int slot, bool *trapped);

#define KEEP_FLAGS (PTE_P | PTE_U | PTE_W | PTE_A | PTE_D | PTE_NX)

static uint64_t trapped_pte(int slot, uint64_t flags)
{
    return (GPA_TRAP_BASE + (uint64_t)slot * PAGE_SIZE) | (flags & KEEP_FLAGS) | PTE_TRAP;
}

/* Caller holds gm->lock. -1 when out of slots or memory. */
static int new_slot(struct vm *vm, uint64_t va, uint64_t frame, uint64_t flags)
{
    struct guestmem *gm = &vm->gm;
    struct crew *c = &vm->crew;
    uint64_t *known = ex_u64map_get(&c->slot_of_va, va);
    if (known && *known < gm->ntrap && gm->trap_frame[*known] == frame) {
        int slot = (int)*known;
        c->page[slot] = (struct crew_page){.va = va, .flags = flags};
        return slot;
    }
    if (gm->ntrap == gm->captrap) {
        size_t cap = gm->captrap ? gm->captrap * 2 : 1024;
        if (cap > TRAP_SLOTS_MAX)
            return -1;
        uint64_t *tf = realloc(gm->trap_frame, cap * sizeof *tf);
        if (!tf)
            return -1;
        gm->trap_frame = tf;
        struct crew_page *pg = realloc(c->page, cap * sizeof *pg);
        if (!pg)
            return -1;
        c->page = pg;
        gm->captrap = cap;
    }
    int slot = (int)gm->ntrap++;
    gm->trap_frame[slot] = frame;
    c->page[slot] = (struct crew_page){.va = va, .flags = flags};
    uint64_t *v = ex_u64map_put(&c->slot_of_va, va, (uint64_t)slot, NULL);
    if (v)
        *v = (uint64_t)slot;
    return slot;
}

/* Frames to drop translations of, merged into runs (one mprotect pair per run). */
struct frame_batch {
    uint64_t *f;
    size_t n, cap;
};

static void batch_add(struct frame_batch *b, uint64_t frame)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        uint64_t *nf = realloc(b->f, cap * sizeof *nf);
        if (!nf)
            return;
        b->f = nf;
        b->cap = cap;
    }
    b->f[b->n++] = frame;
}

static void batch_flush(struct guestmem *gm, struct frame_batch *b)
{
    gm_invalidate_frames(gm, b->f, b->n);
    free(b->f);
    memset(b, 0, sizeof *b);
}

/* Watches va if it is a present, writable, untrapped user page. Caller holds gm->lock. */
static void watch_page(struct vm *vm, uint64_t va, struct frame_batch *b)
{
    struct guestmem *gm = &vm->gm;
    uint64_t *pte = gm_pte(gm, va, false);
    if (!pte)
        return;
    uint64_t e = *pte;
    if (!(e & PTE_P) || !(e & PTE_W) || (e & PTE_TRAP))
        return;
    uint64_t frame = e & PTE_ADDR;
    if (frame < GPA_POOL || frame + PAGE_SIZE > gm->size)
        return;
    int slot = new_slot(vm, va, frame, e & ~PTE_ADDR);
    if (slot < 0)
        return; /* out of slots: the page simply goes unwatched */
    gm_set_pte(gm, pte, trapped_pte(slot, e));
    batch_add(b, frame);
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
    vm->crew.on = true;
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
    /* MMIO translations KVM cached in an earlier fragment would turn accesses to pages
     * owned in this one into extra cue points, depending on history: start clean. */
    cpu_flush_mmio_cache(vm);
    return 0;
}

void crew_stop(struct vm *vm)
{
    struct crew *c = &vm->crew;
    if (!c->on)
        return;
    pthread_mutex_lock(&vm->gm.lock);
    for (size_t slot = 0; slot < vm->gm.ntrap; slot++) {
        bool trapped;
        uint64_t *pte = slot_pte(vm, (int)slot, &trapped);
        if (pte && trapped)
            gm_set_pte(&vm->gm, pte, vm->gm.trap_frame[slot] | c->page[slot].flags);
        c->page[slot].owner = 0;
        c->page[slot].shared = false;
    }
    c->nowned = 0;
    c->on = false;
    pthread_mutex_unlock(&vm->gm.lock);
    cpu_flush_mmio_cache(vm); /* pages that trapped are plain memory again */
}

void crew_free(struct vm *vm)
{
    ex_u64map_free(&vm->crew.slot_of_va);
    free(vm->crew.page);
    free(vm->crew.owned);
    memset(&vm->crew, 0, sizeof vm->crew);
}

void crew_watch_range(struct vm *vm, uint64_t start, uint64_t end)
{
    if (vm->crew.on && start < end && end <= USER_TOP)
        watch(vm, start, end);
}

/* The PTE of a slot's page, if it still stands for that slot's frame. */
static uint64_t *slot_pte(struct vm *vm, int slot, bool *trapped)
{
    struct crew_page *pg = &vm->crew.page[slot];
    uint64_t *pte = gm_pte(&vm->gm, pg->va, false);
    if (!pte)
        return NULL;
    uint64_t e = *pte;
    if (e == trapped_pte(slot, pg->flags)) {
        *trapped = true;
        return pte;
    }
    if ((e & PTE_P) && !(e & PTE_TRAP) && (e & PTE_ADDR) == vm->gm.trap_frame[slot]) {
        *trapped = false;
        return pte;
    }
    return NULL; /* unmapped or remapped since: the slot is dead */
}

void crew_switch_locked(struct vm *vm, int next)
{
    struct crew *c = &vm->crew;
    if (!c->on)
        return;
    struct frame_batch b = {0};
    pthread_mutex_lock(&vm->gm.lock);
    /* Take back what the outgoing thread was given... */
    for (size_t i = 0; i < c->nowned; i++) {
        int slot = c->owned[i];
        bool trapped;
        uint64_t *pte = slot_pte(vm, slot, &trapped);
        if (pte && !trapped) {
            gm_set_pte(&vm->gm, pte, trapped_pte(slot, c->page[slot].flags));
            batch_add(&b, vm->gm.trap_frame[slot]);
        }
    }
    c->nowned = 0;
    /* ...and give the incoming thread the pages it owns (no flush needed for that). */
    for (size_t slot = 0; next && slot < vm->gm.ntrap; slot++) {
        struct crew_page *pg = &c->page[slot];
        bool trapped;
        uint64_t *pte;
        if (pg->owner != next || pg->shared || !(pte = slot_pte(vm, (int)slot, &trapped)) || !trapped)
            continue;
        gm_set_pte(&vm->gm, pte, vm->gm.trap_frame[slot] | pg->flags);
        if (c->nowned == c->capowned) {
            size_t cap = c->capowned ? c->capowned * 2 : 64;
            int *no = realloc(c->owned, cap * sizeof *no);
            if (!no) {
                gm_set_pte(&vm->gm, pte, trapped_pte((int)slot, pg->flags));
                continue;
            }
            c->owned = no;
            c->capowned = cap;
        }
        c->owned[c->nowned++] = (int)slot;
    }
    pthread_mutex_unlock(&vm->gm.lock);
    batch_flush(&vm->gm, &b);
    if (c->nowned)
        cpu_flush_mmio_cache(vm); /* the granted pages trapped before */
}

void crew_perform_pending_locked(struct vm *vm, struct vcpu *v)
{
    struct crew *c = &vm->crew;
    if (!v->acc_pending)
        return;
    v->acc_pending = false;
    int slot = (int)((v->acc_gpa - GPA_TRAP_BASE) / PAGE_SIZE);
    uint64_t off = v->acc_gpa & (PAGE_SIZE - 1);
    uint64_t frame = vm->gm.trap_frame[slot];
    uint8_t *host = vm->gm.host + frame + off;
    int len = v->acc_len;
    if (v->acc_write) {
        memcpy(host, v->acc_data, (size_t)len);
        gm_mark_dirty(&vm->gm, frame);
    } else {
        memcpy(v->run->mmio.data, host, (size_t)len);
    }
    c->accesses++;
    struct crew_page *pg = &c->page[slot];
    /* The instruction: an access that both reads and writes (cmpxchg, add [m]...) exits
     * twice; the second half must follow without a cue point in between. */
    uint64_t rip = v->run->s.regs.regs.rip;
    uint8_t code[15];
    struct insn_info info;
    memset(&info, 0, sizeof info);
    size_t got = 0;
    while (got < sizeof code && copy_from_user(&vm->gm, code + got, rip + got, 1))
        got++;
    decode_insn(code, got, rip, &info);
    if (!v->acc_write && info.reads && info.writes)
        v->acc_rmw_rip = v->acc_gpa; /* its write half comes next, to the same place */
    if (!v->acc_second_half) {
        enum ex_kind kind = info.reads && info.writes ? EX_RMW : v->acc_write ? EX_WRITE : EX_READ;
        struct ex_event *e = ex_trace_access(&vm->serial.trace, (uint32_t)v->tid, kind,
                                             pg->va + off, (uint16_t)len,
                                             info.atomic ? EX_F_ATOMIC : 0, rip);
        if (e) {
            vm_symbolize(vm, rip, e->sym, sizeof e->sym);
            size_t tl = strnlen(info.text, sizeof e->insn - 1);
            memcpy(e->insn, info.text, tl);
            e->insn[tl] = '\0';
        }
        vm->serial.cues++;
        /* Spin detection sees what a read returned (or a write stored). */
        uint64_t value = 0;
        memcpy(&value, v->acc_write ? v->acc_data : v->run->mmio.data, (size_t)len);
        ex_spin_observe(&vm->serial.spin, (uint32_t)v->tid, kind, pg->va + off, (uint16_t)len,
                        value);
    }
    v->acc_second_half = false;
    /* Ownership: the first toucher owns the page; a second thread makes it shared. */
    if (pg->shared)
        return;
    if (pg->owner && pg->owner != v->tid) {
        pg->shared = true;
        c->shared_pages++;
        return;
    }
    pg->owner = v->tid;
    pthread_mutex_lock(&vm->gm.lock);
    bool trapped;
    uint64_t *pte = slot_pte(vm, slot, &trapped);
    if (pte && trapped && !(v->acc_rmw_rip && !v->acc_write)) {
        gm_set_pte(&vm->gm, pte, frame | pg->flags);
        if (c->nowned == c->capowned) {
            size_t cap = c->capowned ? c->capowned * 2 : 64;
            int *no = realloc(c->owned, cap * sizeof *no);
            if (no) {
                c->owned = no;
                c->capowned = cap;
            }
        }
        if (c->nowned < c->capowned) {
            c->owned[c->nowned++] = slot;
            cpu_flush_mmio_cache(vm); /* the page trapped until now */
        } else {
            gm_set_pte(&vm->gm, pte, trapped_pte(slot, pg->flags));
        }
    }
    pthread_mutex_unlock(&vm->gm.lock);
}

bool crew_access(struct vm *vm, struct vcpu *v)
{
    struct kvm_run *run = v->run;
    uint64_t gpa = run->mmio.phys_addr;
    uint64_t slot = (gpa - GPA_TRAP_BASE) / PAGE_SIZE;
    uint64_t off = gpa & (PAGE_SIZE - 1);
    if (slot >= vm->gm.ntrap || run->mmio.len == 0 || run->mmio.len > 8 ||
        off + run->mmio.len > PAGE_SIZE) {
        struct kvm_regs *r = &run->s.regs.regs;
        vm_fatal_signal(vm, v, SIGSEGV, r, r->rip, "access to a stale or invalid trap slot");
        return false;
    }
    v->acc_pending = true;
    v->acc_gpa = gpa;
    v->acc_len = (int)run->mmio.len;
    v->acc_write = run->mmio.is_write;
    memcpy(v->acc_data, run->mmio.data, run->mmio.len);
    pthread_mutex_lock(&vm->lock);
    bool go_on = true;
    if (!vm->crew.on) {
        /* Recording has ended but a translation to the slot was still cached: just do
         * the access. */
        uint8_t *host = vm->gm.host + vm->gm.trap_frame[slot] + off;
        if (v->acc_write) {
            memcpy(host, v->acc_data, (size_t)v->acc_len);
            gm_mark_dirty(&vm->gm, vm->gm.trap_frame[slot]);
        } else {
            memcpy(run->mmio.data, host, (size_t)v->acc_len);
        }
        v->acc_pending = false;
    } else if (v->acc_rmw_rip && v->acc_rmw_rip == gpa && v->acc_write) {
        /* The write half of an instruction whose read was the cue point (KVM has
         * already moved rip past the instruction by now, so match the address). */
        v->acc_second_half = true;
        v->acc_rmw_rip = 0;
    } else {
        v->acc_rmw_rip = 0;
        go_on = serial_pick_locked(vm, v->tid) == v->tid;
    }
    if (go_on)
        crew_perform_pending_locked(vm, v);
    pthread_mutex_unlock(&vm->lock);
    return go_on;
}
