#include "kvm/snapshot.h"
#include "linux/files.h"
#include "kvm/snapimage.h"
#include "kvm/vcpu_events.h"
#include "lib/util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

struct snap_vcpu {
    bool exists;
    int tid;
    enum tstate state;
    uint64_t clear_child_tid, sigmask, sigpending, sigpend_tkill;
    uint64_t wait_addr, wait_deadline, wait_seq, wait_ns;
    uint32_t wait_bitset;
    bool woken, result_in_rax, start_pending;
    int64_t wait_result;
    struct kvm_regs blocked_regs;
    /* Architectural state, when the vCPU has run (else start_* below). */
    bool has_kvm_state;
    struct kvm_regs regs;
    struct kvm_sregs sregs;
    struct kvm_vcpu_events events; /* what KVM holds queued (kvm/vcpu_events.h) */
    struct kvm_xsave *xsave;       /* allocated once, kept across snapshots */
    struct kvm_regs start_regs;
    struct kvm_sregs start_sregs;
    struct kvm_xsave *start_xsave; /* NULL: none */
};

int snapshot_init(struct snapshot *s, struct vm *vm, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->vm = vm;
    s->mem = mmap(NULL, vm->gm.size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s->mem == MAP_FAILED) {
        s->mem = NULL;
        snprintf(err, errlen, "snapshot: cannot reserve host memory: %s", strerror(errno));
        return -1;
    }
    s->v = calloc(MAX_VCPUS, sizeof *s->v);
    s->frame_bitmap = calloc(gm_bitmap_words(&vm->gm), 8);
    if (dirtyset_init(&s->dirty, vm) < 0 || !s->v || !s->frame_bitmap) {
        snprintf(err, errlen, "snapshot: out of host memory");
        return -1;
    }
    return 0;
}

void snapshot_free(struct snapshot *s)
{
    if (s->mem)
        munmap(s->mem, s->vm->gm.size);
    for (int i = 0; s->v && i < MAX_VCPUS; i++) {
        free(s->v[i].xsave);
        free(s->v[i].start_xsave);
    }
    free(s->v);
    free(s->vmas);
    free(s->frame_bitmap);
    free(s->changed);
    dirtyset_free(&s->dirty);
    if (s->vm && s->vm->gm.bitmap_of == s)
        s->vm->gm.bitmap_of = NULL;
    if (s->files) {
        files_state_free(s->files);
        free(s->files);
    }
    memset(s, 0, sizeof *s);
}

int snapshot_settle_vcpus(struct vm *vm)
{
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (vm_settle_stale_io(v) < 0)
            return -1;
        if (!v->result_pending)
            continue;
        if (vm_complete_mmio(v, 0) < 0)
            return -1;
        v->result_pending = false;
        v->result_in_rax = true;
    }
    return 0;
}

static int save_vcpu(struct vcpu *v, struct snap_vcpu *sv)
{
    struct kvm_xsave *xs = sv->xsave, *sxs = sv->start_xsave;
    memset(sv, 0, sizeof *sv);
    sv->xsave = xs;
    sv->start_xsave = sxs;
    sv->exists = true;
    sv->tid = v->tid;
    sv->state = v->state;
    sv->clear_child_tid = v->clear_child_tid;
    sv->sigmask = v->sigmask;
    sv->sigpending = v->sigpending;
    sv->sigpend_tkill = v->sigpend_tkill;
    sv->wait_addr = v->wait_addr;
    sv->wait_deadline = v->wait_deadline;
    sv->wait_seq = v->wait_seq;
    sv->wait_ns = v->wait_ns;
    sv->wait_bitset = v->wait_bitset;
    sv->woken = v->woken;
    sv->wait_result = v->wait_result;
    sv->result_in_rax = v->result_in_rax;
    sv->blocked_regs = v->blocked_regs;
    sv->start_pending = v->start_pending;
    if (v->start_pending) {
        sv->start_regs = v->start_regs;
        sv->start_sregs = v->start_sregs;
        if (v->start_xsave) {
            if (!sv->start_xsave && !(sv->start_xsave = malloc(sizeof *sv->start_xsave)))
                return -1;
            *sv->start_xsave = *v->start_xsave;
        } else {
            free(sv->start_xsave);
            sv->start_xsave = NULL;
        }
    }
    if (v->tid == 0 || v->start_pending)
        return 0;
    sv->has_kvm_state = true;
    /* State written through kvm_run but not applied yet (no KVM_RUN since) is the
     * state: KVM would still report the old one. */
    uint64_t dirty = v->run->kvm_dirty_regs;
    if (dirty & KVM_SYNC_X86_REGS)
        sv->regs = v->run->s.regs.regs;
    else if (ioctl(v->fd, KVM_GET_REGS, &sv->regs) < 0)
        return -1;
    if (dirty & KVM_SYNC_X86_SREGS)
        sv->sregs = v->run->s.regs.sregs;
    else if (ioctl(v->fd, KVM_GET_SREGS, &sv->sregs) < 0)
        return -1;
    if (vcpu_events_save(v, &sv->events) < 0)
        return -1;
    if (!sv->xsave && !(sv->xsave = malloc(sizeof *sv->xsave)))
        return -1;
    if (v->fpu_pending)
        *sv->xsave = *v->fpu_want; /* a restore's FPU state, not applied yet */
    else if (ioctl(v->fd, KVM_GET_XSAVE, sv->xsave) < 0)
        return -1;
    return 0;
}

int snapshot_take(struct snapshot *s, char *err, size_t errlen)
{
    struct vm *vm = s->vm;
    struct guestmem *gm = &vm->gm;
    if (snapshot_settle_vcpus(vm) < 0) {
        snprintf(err, errlen, "snapshot: cannot complete a blocked thread's syscall");
        return -1;
    }
    uint64_t words = gm_bitmap_words(gm);
    if (!s->have_mem) {
        if (dirtylog_enable(vm) < 0) {
            snprintf(err, errlen, "snapshot: KVM dirty logging: %s", strerror(errno));
            return -1;
        }
        gm->track = true;
        /* Start both logs empty, then copy everything that may hold data. */
        dirtylog_collect(vm, &s->dirty);
        memcpy(s->mem, gm->host, GPA_POOL);
        for (uint64_t f = GPA_POOL / PAGE_SIZE; f < gm->nframes; f++)
            if (gm->bitmap[f / 64] & (1ULL << (f % 64)))
                memcpy(s->mem + f * PAGE_SIZE, gm->host + f * PAGE_SIZE, PAGE_SIZE);
        s->have_mem = true;
    } else {
        const struct dirtyset *d = &s->dirty;
        gm->bitmap_of = NULL; /* the logs are taken: until s has the bitmap, none does */
        if (dirtylog_collect(vm, &s->dirty) < 0) {
            snprintf(err, errlen, "snapshot: KVM_GET_DIRTY_LOG: %s", strerror(errno));
            return -1;
        }
        dirtyset_copy(gm, d, s->mem, gm->host, false);
        for (long i = 0; s->changed && i < d->nwords; i++)
            s->changed[d->words[i]] |= d->bits[d->words[i]];
    }
    gm->nremapped = 0;
    gm->remap_overflow = false;

    pthread_mutex_lock(&vm->lock);
    s->nvcpus = vm->nvcpus;
    int rc = 0;
    for (int i = 0; i < vm->nvcpus && rc == 0; i++)
        if ((rc = save_vcpu(vm->vcpus[i], &s->v[i])) == 0) {
            vm->vcpus[i]->ran = false;
            vm->vcpus[i]->clean_snap = s;
        }
    s->next_tid = vm->next_tid;
    s->live = vm->live;
    s->blocked = vm->blocked;
    s->wait_counter = vm->wait_counter;
    vm->progress_wait = vm->wait_counter;
    s->vtime = vm_vtime(vm);
    s->rng = vm->rng;
    memcpy(s->sigact, vm->sigact, sizeof s->sigact);
    s->sig_shared = vm->sig_shared;
    if (vm->files) {
        if (!s->files)
            s->files = calloc(1, sizeof *s->files);
        if (!s->files) {
            pthread_mutex_unlock(&vm->lock);
            return jx_fail(err, errlen, "out of memory (snapshot of the descriptor table)");
        }
        files_save(vm->files, s->files);
    }
    pthread_mutex_lock(&gm->lock);
    free(s->vmas);
    s->vmas = malloc((vm->mm.n ? vm->mm.n : 1) * sizeof *s->vmas);
    if (s->vmas)
        memcpy(s->vmas, vm->mm.v, vm->mm.n * sizeof *s->vmas);
    s->nvmas = vm->mm.n;
    s->brk_base = vm->mm.brk_base;
    s->brk_cur = vm->mm.brk_cur;
    memcpy(s->frame_bitmap, gm->bitmap, words * 8);
    gm->bitmap_of = s;
    s->frames_used = gm->used;
    s->frames_next = gm->next;
    pthread_mutex_unlock(&gm->lock);
    pthread_mutex_unlock(&vm->lock);
    if (rc < 0 || !s->vmas) {
        snprintf(err, errlen, "snapshot: cannot read vCPU state");
        return -1;
    }
    return 0;
}

static int restore_vcpu(struct vm *vm, struct vcpu *v, const struct snap_vcpu *sv,
                        const struct snapshot *s)
{
    (void)vm;
    v->tid = sv->exists ? sv->tid : 0;
    v->state = sv->exists ? sv->state : T_FREE;
    v->clear_child_tid = sv->clear_child_tid;
    v->sigmask = sv->sigmask;
    v->sigpending = sv->sigpending;
    v->sigpend_tkill = sv->sigpend_tkill;
    v->wait_addr = sv->wait_addr;
    v->wait_deadline = sv->wait_deadline;
    v->wait_seq = sv->wait_seq;
    v->wait_ns = sv->wait_ns;
    v->wait_bitset = sv->wait_bitset;
    v->woken = sv->woken;
    v->wait_result = sv->wait_result;
    v->result_in_rax = sv->result_in_rax;
    v->result_pending = false;
    v->blocked_regs = sv->blocked_regs;
    v->start_pending = sv->start_pending;
    free(v->start_xsave);
    v->start_xsave = NULL;
    if (sv->start_pending) {
        v->start_regs = sv->start_regs;
        v->start_sregs = sv->start_sregs;
        if (sv->start_xsave && (v->start_xsave = malloc(sizeof *v->start_xsave)))
            *v->start_xsave = *sv->start_xsave;
    }
    if (!sv->has_kvm_state) {
        v->fpu_pending = false; /* a thread not started yet: its start state has its own */
        v->clean_snap = s;
        return 0;
    }
    /* A vCPU that has not entered the guest since it took or was given this snapshot's
     * state still holds exactly that (pending kvm_run writes and FPU included). */
    bool clean = !v->ran && v->clean_snap == s;
    v->ran = false;
    v->clean_snap = s;
    if (clean)
        return 0;
    /* Registers and segments go through kvm_run and take effect on the next KVM_RUN,
     * costing no ioctl. The FPU state needs one (~25 us on PVM, most of the old restore
     * time): it is deferred to the vCPU's own thread, which applies it before its next
     * KVM_RUN and only if KVM's state differs (vm_apply_fpu). A vCPU that does not run
     * before the next restore never pays for it. */
    v->run->s.regs.regs = sv->regs;
    v->run->s.regs.sregs = sv->sregs;
    v->run->kvm_dirty_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
    vcpu_events_restore(v, &sv->events);
    if (!v->fpu_want && !(v->fpu_want = malloc(sizeof *v->fpu_want)))
        return -1;
    if (!v->fpu_cur)
        v->fpu_cur = malloc(sizeof *v->fpu_cur); /* optional: without it, always set */
    *v->fpu_want = *sv->xsave;
    v->fpu_pending = true;
    return 0;
}

/* The address space as a snapshot recorded it: its VMAs (copied) and break. 0, or -1
 * when out of memory (nothing changed). Caller holds gm->lock. */
static int set_address_space(struct vm *vm, const struct vma *vmas, size_t nvmas,
                             uint64_t brk_base, uint64_t brk_cur)
{
    struct vma *nv = malloc((nvmas ? nvmas : 1) * sizeof *nv);
    if (!nv)
        return -1;
    memcpy(nv, vmas, nvmas * sizeof *nv);
    free(vm->mm.v);
    vm->mm.v = nv;
    vm->mm.cap = nvmas ? nvmas : 1;
    vm->mm.n = nvmas;
    vm->mm.brk_base = brk_base;
    vm->mm.brk_cur = brk_cur;
    return 0;
}

/* The frame bitmap as in s: data frames as in the snapshot; page-table frames stay
 * (they are never given back). When the bitmap was s's at its last take or restore
 * (bitmap_of), only the words with dirty frames can differ (every allocation and free
 * marks its frame dirty): with collected (s->dirty holds what changed since) only its
 * words are redone, else all (a pass over 2048 words at 512 MiB: ~6 us of cache
 * misses). Caller holds gm->lock. */
static void apply_frame_bitmap(struct vm *vm, const struct snapshot *s, bool collected)
{
    struct guestmem *gm = &vm->gm;
    if (collected && gm->bitmap_of == s) {
        uint64_t used = gm->used;
        for (long i = 0; i < s->dirty.nwords; i++) {
            uint64_t w = s->dirty.words[i], want = s->frame_bitmap[w] | gm->table_bitmap[w];
            used -= (uint64_t)__builtin_popcountll(gm->bitmap[w]);
            used += (uint64_t)__builtin_popcountll(want);
            gm->bitmap[w] = want;
        }
        gm->used = used;
        return;
    }
    uint64_t used = 0;
    for (uint64_t w = 0; w < gm_bitmap_words(gm); w++) {
        gm->bitmap[w] = s->frame_bitmap[w] | gm->table_bitmap[w];
        used += (uint64_t)__builtin_popcountll(gm->bitmap[w]);
    }
    gm->used = used;
    gm->bitmap_of = s->vm == vm ? s : NULL; /* another VM's (a worker's sync): none */
}

/* The VMM's state and the vCPUs' as in s (which may be another VM's snapshot, for a
 * worker, snapshot_sync): frame allocator, address space, threads, counters, time.
 * collected: as for apply_frame_bitmap. */
static int apply_state(struct vm *vm, const struct snapshot *s, bool collected)
{
    struct guestmem *gm = &vm->gm;
    pthread_mutex_lock(&vm->lock);
    pthread_mutex_lock(&gm->lock);
    apply_frame_bitmap(vm, s, collected);
    gm->next = s->frames_next;
    int rc = set_address_space(vm, s->vmas, s->nvmas, s->brk_base, s->brk_cur);
    pthread_mutex_unlock(&gm->lock);
    for (int i = 0; i < vm->nvcpus && rc == 0; i++) {
        static const struct snap_vcpu none;
        rc = restore_vcpu(vm, vm->vcpus[i], i < s->nvcpus ? &s->v[i] : &none, s);
    }
    vm->next_tid = s->next_tid;
    vm->live = s->live;
    vm->blocked = s->blocked;
    vm->wait_counter = vm->progress_wait = s->wait_counter;
    vm->skipped_ns = (int64_t)s->vtime - (int64_t)(vm_host_ns(vm) - vm->start_ns);
    vm->paused_at = vm_host_ns(vm); /* vm_resume discounts only the pause from here on */
    vm->rng = s->rng;
    memcpy(vm->sigact, s->sigact, sizeof s->sigact);
    vm->sig_shared = s->sig_shared;
    /* Descriptors, offsets and pipes are guest state; a worker VM gets its own pipes. */
    if (rc == 0 && vm->files && s->files && files_restore(vm->files, s->files) < 0)
        rc = -1;
    pthread_mutex_unlock(&vm->lock);
    return rc;
}

int snapshot_restore(struct snapshot *s, struct restore_stats *st, char *err, size_t errlen)
{
    struct vm *vm = s->vm;
    struct guestmem *gm = &vm->gm;
    struct restore_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    uint64_t t0 = mono_ns();
    if (!s->have_mem) {
        snprintf(err, errlen, "restore: no snapshot taken");
        return -1;
    }
    /* No vCPU may carry a half-done emulation into the restored state. Finishing one
     * costs a KVM_RUN (~30 us on PVM). A blocked thread's syscall read only writes rax
     * and rip, which the restore replaces: that is left to the vCPU's own thread, before
     * it next runs (vm_settle_stale_io), so a thread that stays blocked never pays. A
     * trapped access waiting for its turn (crew.h) has nothing half-done in KVM: the
     * restored registers simply run its instruction again. */
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (v->result_pending) {
            v->io_stale = true;
            v->result_pending = false;
        }
        v->acc_pending = false;
    }
    if (dirtylog_collect(vm, &s->dirty) < 0) {
        snprintf(err, errlen, "restore: KVM_GET_DIRTY_LOG: %s", strerror(errno));
        return -1;
    }
    st->dirty_guest = s->dirty.nguest;
    st->dirty_vmm = s->dirty.nvmm;
    uint64_t t1 = mono_ns();
    st->pages_copied = dirtyset_copy(gm, &s->dirty, gm->host, s->mem, true);
    uint64_t t2 = mono_ns();
    /* Translations made since the snapshot may not exist in it: drop them. Pages written
     * back above were written by the host, so KVM logs nothing for them. */
    if (gm->remap_overflow) {
        gm_invalidate_range(gm, GPA_POOL, gm->size - GPA_POOL);
        st->frames_invalidated = gm->nframes;
    } else {
        gm_invalidate_frames(gm, gm->remapped, gm->nremapped);
        st->frames_invalidated = gm->nremapped;
    }
    gm->nremapped = 0;
    gm->remap_overflow = false;
    uint64_t t3 = mono_ns();

    int rc = apply_state(vm, s, true);
    uint64_t t4 = mono_ns();
    st->ns_dirty_log = t1 - t0;
    st->ns_copy = t2 - t1;
    st->ns_invalidate = t3 - t2;
    st->ns_vcpus = t4 - t3;
    st->ns_total = t4 - t0;
    if (rc < 0) {
        snprintf(err, errlen, "restore: cannot set vCPU state");
        return -1;
    }
    return 0;
}

/* ---- crash dumps and replay ------------------------------------------------------ */

static bool page_is_zero(const uint8_t *p)
{
    static const uint8_t zero[PAGE_SIZE];
    return memcmp(p, zero, PAGE_SIZE) == 0;
}

int snapshot_export(const struct snapshot *s, struct snap_image *img, char *err, size_t errlen)
{
    struct vm *vm = s->vm;
    struct guestmem *gm = &vm->gm;
    memset(img, 0, sizeof *img);
    if (!s->have_mem) {
        snprintf(err, errlen, "snapshot: none taken");
        return -1;
    }
    uint64_t words = gm_bitmap_words(gm), pool = GPA_POOL / PAGE_SIZE;
    img->mem = gm->size;
    img->nvcpus = (uint32_t)s->nvcpus;
    img->v = calloc((size_t)s->nvcpus + 1, sizeof *img->v);
    img->vmas = malloc((s->nvmas ? s->nvmas : 1) * sizeof *img->vmas);
    img->frame_bitmap = calloc(words, 8);
    img->tables = malloc(sizeof *img->tables * 64);
    img->pages = malloc(sizeof *img->pages * 256);
    size_t tcap = 64, pcap = 256;
    if (!img->v || !img->vmas || !img->frame_bitmap || !img->tables || !img->pages)
        goto oom;
    for (int i = 0; i < s->nvcpus; i++) {
        const struct snap_vcpu *sv = &s->v[i];
        struct snapimg_vcpu *v = &img->v[i];
        v->flags = SNAPF_EXISTS | (sv->woken ? SNAPF_WOKEN : 0) |
                   (sv->result_in_rax ? SNAPF_RESULT_IN_RAX : 0) |
                   (sv->start_pending ? SNAPF_START : 0) | (sv->has_kvm_state ? SNAPF_HAS_KVM : 0);
        v->tid = (uint32_t)sv->tid;
        v->state = (uint32_t)sv->state;
        v->wait_bitset = sv->wait_bitset;
        v->clear_child_tid = sv->clear_child_tid;
        v->sigmask = sv->sigmask;
        v->sigpending = sv->sigpending;
        v->sigpend_tkill = sv->sigpend_tkill;
        v->wait_addr = sv->wait_addr;
        v->wait_deadline = sv->wait_deadline;
        v->wait_seq = sv->wait_seq;
        v->wait_result = sv->wait_result;
        v->blocked_regs = sv->blocked_regs;
        if (sv->has_kvm_state) {
            v->regs = sv->regs;
            v->sregs = sv->sregs;
            v->xsave = (const uint8_t *)sv->xsave->region;
            v->xsave_len = sizeof *sv->xsave;
        }
        if (sv->start_pending) {
            v->start_regs = sv->start_regs;
            v->start_sregs = sv->start_sregs;
            if (sv->start_xsave) {
                v->start_xsave = (const uint8_t *)sv->start_xsave->region;
                v->start_xsave_len = sizeof *sv->start_xsave;
            }
        }
    }
    img->next_tid = s->next_tid;
    img->live = s->live;
    img->blocked = s->blocked;
    img->wait_counter = s->wait_counter;
    img->vtime = s->vtime;
    img->rng = s->rng;
    memcpy(img->sigact, s->sigact, sizeof img->sigact);
    img->sig_shared = s->sig_shared;
    memcpy(img->vmas, s->vmas, s->nvmas * sizeof *img->vmas);
    img->nvmas = s->nvmas;
    img->brk_base = s->brk_base;
    img->brk_cur = s->brk_cur;
    img->frames_used = s->frames_used;
    img->frames_next = s->frames_next;
    img->table_cursor = gm->table_cursor;
    memcpy(img->frame_bitmap, s->frame_bitmap, words * 8);
    for (uint64_t f = pool; f < gm->nframes; f++) {
        uint8_t level = gm->table_level[f];
        if (level) {
            if (img->ntables == tcap) {
                struct snapimg_table *t = realloc(img->tables, 2 * tcap * sizeof *t);
                if (!t)
                    goto oom;
                img->tables = t;
                tcap *= 2;
            }
            img->tables[img->ntables++] = (struct snapimg_table){.frame = f, .level = level};
            img->frame_bitmap[f / 64] |= 1ULL << (f % 64);
        }
        if (!(img->frame_bitmap[f / 64] & (1ULL << (f % 64))))
            continue;
        const uint8_t *data = (level >= 2 ? gm->host : s->mem) + f * PAGE_SIZE;
        if (page_is_zero(data))
            continue;
        if (img->npages == pcap) {
            struct snapimg_page *p = realloc(img->pages, 2 * pcap * sizeof *p);
            if (!p)
                goto oom;
            img->pages = p;
            pcap *= 2;
        }
        img->pages[img->npages++] = (struct snapimg_page){.frame = f, .data = data};
    }
    memcpy(img->pml4_user, gm->host + GPA_PML4, sizeof img->pml4_user);
    if (s->files && files_state_export(s->files, img) < 0) /* descriptors are guest state */
        goto oom;
    char why[200];
    if (snapimg_validate(img, why, sizeof why) < 0) {
        snprintf(err, errlen, "snapshot export: %s", why);
        snapimg_free(img);
        return -1;
    }
    return 0;
oom:
    snapimg_free(img);
    snprintf(err, errlen, "snapshot export: out of memory");
    return -1;
}

static int load_xsave(const uint8_t *src, uint32_t len, struct kvm_xsave **out)
{
    struct kvm_xsave *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    memcpy(x->region, src, len);
    *out = x;
    return 0;
}

int snapshot_load_into(struct vm *vm, const struct snap_image *img, char *err, size_t errlen)
{
    struct guestmem *gm = &vm->gm;
    char why[200];
    if (snapimg_validate(img, why, sizeof why) < 0) {
        snprintf(err, errlen, "snapshot: %s", why);
        return -1;
    }
    if (img->mem != gm->size || vm->nvcpus != 0) {
        snprintf(err, errlen, "snapshot of %llu MiB, VM of %llu MiB%s",
                 (unsigned long long)(img->mem >> 20), (unsigned long long)(gm->size >> 20),
                 vm->nvcpus ? " that already runs" : "");
        return -1;
    }
    /* Files first: a file that cannot be reopened refuses the image before any change. */
    if (vm->files && files_import(vm->files, img, why, sizeof why) < 0) {
        snprintf(err, errlen, "snapshot: %s", why);
        return -1;
    }
    atomic_store(&vm->paused, true); /* the vCPU threads created below wait */
    if (!vm->start_ns)
        vm->start_ns = vm_host_ns(vm);
    uint64_t words = gm_bitmap_words(gm);

    /* Memory: everything above the agent's area becomes the image's. */
    pthread_mutex_lock(&gm->lock);
    madvise(gm->host + GPA_POOL, gm->size - GPA_POOL, MADV_DONTNEED);
    for (size_t i = 0; i < img->npages; i++)
        memcpy(gm->host + img->pages[i].frame * PAGE_SIZE, img->pages[i].data, PAGE_SIZE);
    memcpy(gm->host + GPA_PML4, img->pml4_user, sizeof img->pml4_user);
    memset(gm->table_level, 0, gm->nframes);
    for (size_t i = 0; i < img->ntables; i++)
        gm->table_level[img->tables[i].frame] = img->tables[i].level;
    gm->table_cursor = img->table_cursor;
    memset(gm->table_bitmap, 0, words * 8);
    for (size_t i = 0; i < img->ntables; i++)
        gm->table_bitmap[img->tables[i].frame / 64] |= 1ULL << (img->tables[i].frame % 64);
    uint64_t used = 0;
    for (uint64_t w = 0; w < words; w++) {
        gm->bitmap[w] = img->frame_bitmap[w];
        used += (uint64_t)__builtin_popcountll(gm->bitmap[w]);
    }
    gm->used = used;
    gm->bitmap_of = NULL;
    gm->next = img->frames_next;
    int mrc = set_address_space(vm, img->vmas, img->nvmas, img->brk_base, img->brk_cur);
    pthread_mutex_unlock(&gm->lock);
    if (mrc < 0) {
        snprintf(err, errlen, "snapshot: out of memory");
        return -1;
    }

    /* vCPUs: the same number, so each thread keeps its vCPU index (its TSS, its stack). */
    if (vm_add_vcpus(vm, (int)img->nvcpus, err, errlen) < 0)
        return -1;
    pthread_mutex_lock(&vm->lock);
    int rc = 0;
    for (uint32_t i = 0; i < img->nvcpus && rc == 0; i++) {
        const struct snapimg_vcpu *sv = &img->v[i];
        struct vcpu *v = vm->vcpus[i];
        v->tid = (int)sv->tid;
        v->state = (enum tstate)sv->state;
        v->clear_child_tid = sv->clear_child_tid;
        v->sigmask = sv->sigmask;
        v->sigpending = sv->sigpending;
        v->sigpend_tkill = sv->sigpend_tkill;
        v->wait_addr = sv->wait_addr;
        v->wait_deadline = sv->wait_deadline;
        v->wait_seq = sv->wait_seq;
        v->wait_ns = 0; /* not in a dump's snapshot: a report names the wait without it */
        v->wait_bitset = sv->wait_bitset;
        v->woken = sv->flags & SNAPF_WOKEN;
        v->wait_result = sv->wait_result;
        v->result_in_rax = sv->flags & SNAPF_RESULT_IN_RAX;
        v->result_pending = false;
        v->blocked_regs = sv->blocked_regs;
        v->start_pending = sv->flags & SNAPF_START;
        free(v->start_xsave);
        v->start_xsave = NULL;
        if (v->start_pending) {
            v->start_regs = sv->start_regs;
            v->start_sregs = sv->start_sregs;
            if (sv->start_xsave && load_xsave(sv->start_xsave, sv->start_xsave_len,
                                              &v->start_xsave) < 0)
                rc = -1;
        }
        if (rc == 0 && (sv->flags & SNAPF_HAS_KVM)) {
            struct kvm_xsave *xs = NULL;
            struct kvm_regs regs = sv->regs;
            struct kvm_sregs sregs = sv->sregs;
            /* Through the ioctls and kvm_run's synced copy both: the VMM edits the
             * latter (a woken thread's syscall result goes into its rax there). */
            v->run->s.regs.regs = regs;
            v->run->s.regs.sregs = sregs;
            v->run->kvm_dirty_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
            vcpu_events_clear(v); /* a dump records none */
            if (load_xsave(sv->xsave ? sv->xsave : (const uint8_t *)"", sv->xsave_len, &xs) < 0 ||
                ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0 || ioctl(v->fd, KVM_SET_REGS, &regs) < 0 ||
                (sv->xsave_len && ioctl(v->fd, KVM_SET_XSAVE, xs) < 0)) {
                snprintf(err, errlen, "snapshot: KVM refused vCPU %u's state: %s", i,
                         strerror(errno));
                rc = -1;
            }
            free(xs);
        }
        v->ran = false;
    }
    vm->next_tid = img->next_tid;
    vm->live = img->live;
    vm->blocked = img->blocked;
    vm->wait_counter = vm->progress_wait = img->wait_counter;
    vm->skipped_ns = (int64_t)img->vtime - (int64_t)(vm_host_ns(vm) - vm->start_ns);
    vm->paused_at = vm_host_ns(vm);
    vm->rng = img->rng;
    memcpy(vm->sigact, img->sigact, sizeof vm->sigact);
    vm->sig_shared = img->sig_shared;
    pthread_mutex_unlock(&vm->lock);
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "snapshot: out of memory");
    return rc;
}

/* ---- worker VMs ------------------------------------------------------------------ */

int snapshot_track_changes(struct snapshot *s)
{
    uint64_t words = gm_bitmap_words(&s->vm->gm);
    if (!s->changed && !(s->changed = calloc(words, 8)))
        return -1;
    memset(s->changed, 0, words * 8);
    return 0;
}

/* Whether two VMs have the same page-table structure: the same table frames at the same
 * levels, the same allocation cursor, and the same upper levels (the PML4 and every
 * table above the leaves). Leaf tables are data to a snapshot and are synced as such. */
static bool same_tables(const struct guestmem *a, const struct guestmem *b)
{
    uint64_t pool = GPA_POOL / PAGE_SIZE;
    if (a->nframes != b->nframes || a->table_cursor != b->table_cursor ||
        memcmp(a->table_level + pool, b->table_level + pool, a->nframes - pool) != 0 ||
        memcmp(a->host + GPA_PML4, b->host + GPA_PML4, PAGE_SIZE) != 0)
        return false;
    for (uint64_t f = a->table_cursor; f < a->nframes; f++)
        if (a->table_level[f] >= 2 &&
            memcmp(a->host + f * PAGE_SIZE, b->host + f * PAGE_SIZE, PAGE_SIZE) != 0)
            return false;
    return true;
}

int snapshot_sync(struct vm *dst, struct snapshot *src, uint64_t *pages, char *err,
                  size_t errlen)
{
    struct vm *vm = src->vm;
    struct guestmem *gm = &dst->gm, *sgm = &vm->gm;
    *pages = 0;
    if (!src->have_mem || !src->changed || gm->size != sgm->size) {
        snprintf(err, errlen, "worker sync: no snapshot with change tracking");
        return -1;
    }
    if (!same_tables(gm, sgm))
        return 1;
    if (vm_add_vcpus(dst, src->nvcpus, err, errlen) < 0)
        return -1;
    uint64_t words = gm_bitmap_words(gm);
    memcpy(gm->table_bitmap, sgm->table_bitmap, words * 8);
    /* Frames whose mapping changes: the leaf entries that differ, old and new frame. */
    size_t nremap = 0, capremap = 0;
    uint64_t *remap = NULL;
    bool overflow = false;
    for (uint64_t w = 0; w < words; w++)
        for (uint64_t b = src->changed[w]; b; b &= b - 1) {
            uint64_t f = w * 64 + (uint64_t)__builtin_ctzll(b);
            if (gm->table_level[f] >= 2 || f * PAGE_SIZE == GPA_PML4)
                continue; /* equal in both (same_tables) */
            uint8_t *to = gm->host + f * PAGE_SIZE;
            const uint8_t *from = src->mem + f * PAGE_SIZE;
            if (gm->table_level[f] == 1) {
                const uint64_t *o = (const uint64_t *)to, *n = (const uint64_t *)from;
                for (int e = 0; e < 512; e++) {
                    if (o[e] == n[e])
                        continue;
                    if (nremap + 2 > capremap) {
                        size_t cap = capremap ? 2 * capremap : 64;
                        uint64_t *r = cap <= (1u << 20) ? realloc(remap, cap * 8) : NULL;
                        if (!r) {
                            overflow = true;
                            continue;
                        }
                        remap = r;
                        capremap = cap;
                    }
                    uint64_t fo = gm_pte_frame(o[e]), fn = gm_pte_frame(n[e]);
                    if (fo)
                        remap[nremap++] = fo;
                    if (fn)
                        remap[nremap++] = fn;
                }
            }
            memcpy(to, from, PAGE_SIZE);
            gm_mark_dirty(gm, f * PAGE_SIZE); /* for the worker's own snapshot */
            (*pages)++;
        }
    memset(src->changed, 0, words * 8);
    /* A leaf entry changed by the host is not seen by KVM's MMU: drop the translations
     * of every frame it mapped or maps now (as a restore does, snapshot_restore). */
    if (overflow)
        gm_invalidate_range(gm, GPA_POOL, gm->size - GPA_POOL);
    else if (nremap)
        gm_invalidate_frames(gm, remap, nremap);
    free(remap);
    for (int i = 0; i < dst->nvcpus; i++)
        dst->vcpus[i]->clean_snap = NULL;
    if (apply_state(dst, src, false) < 0) {
        snprintf(err, errlen, "worker sync: cannot set vCPU state");
        return -1;
    }
    return 0;
}
