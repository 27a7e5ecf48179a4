#include "sched/selftest.h"
#include "kvm/snapshot.h"
#include "linux/files.h"
#include "lib/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

struct ref_vcpu {
    bool valid;
    struct kvm_regs regs;
    struct kvm_sregs sregs;
    struct kvm_xsave *xsave;
};

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
    nanosleep(&ts, NULL);
}

/* The vCPU's state as its next KVM_RUN will see it: kvm_run writes not yet applied
 * win over what KVM reports. */
static int read_state(struct vcpu *v, struct kvm_regs *r, struct kvm_sregs *s, struct kvm_xsave *x)
{
    uint64_t dirty = v->run->kvm_dirty_regs;
    if (dirty & KVM_SYNC_X86_REGS)
        *r = v->run->s.regs.regs;
    else if (ioctl(v->fd, KVM_GET_REGS, r) < 0)
        return -1;
    if (dirty & KVM_SYNC_X86_SREGS)
        *s = v->run->s.regs.sregs;
    else if (ioctl(v->fd, KVM_GET_SREGS, s) < 0)
        return -1;
    if (v->fpu_pending) { /* a restore's FPU state, applied before the next KVM_RUN */
        *x = *v->fpu_want;
        return 0;
    }
    return ioctl(v->fd, KVM_GET_XSAVE, x) < 0 ? -1 : 0;
}

/* The VMM state a restore brings back where it takes shortcuts: the frame bitmap (redone
 * only in the words with dirty frames) and its count, and the descriptor table (copied
 * up to its high-water mark). The number of mismatches, each named on stderr. */
static int vmm_state_diffs(struct vm *vm, const struct snapshot *s, int round)
{
    struct guestmem *gm = &vm->gm;
    uint64_t used = 0, words = 0;
    for (uint64_t w = 0; w < gm_bitmap_words(gm); w++) {
        words += gm->bitmap[w] != (s->frame_bitmap[w] | gm->table_bitmap[w]);
        used += (uint64_t)__builtin_popcountll(gm->bitmap[w]);
    }
    int fds = 0;
    for (int i = 0; vm->files && s->files && i < FILES_MAX; i++) {
        const struct fdent *a = &vm->files->fd[i], *b = &s->files->fd[i];
        fds += a->f != b->f || a->off != b->off || a->cloexec != b->cloexec;
    }
    bool cwd = vm->files && s->files && strcmp(vm->files->cwd, s->files->cwd) != 0;
    if (words || used != gm->used || fds || cwd)
        fprintf(stderr, "jinx-vmm: selftest round %d: after restore, %llu frame-bitmap words "
                "differ from the snapshot's, %llu frames counted in use for %llu set, %d "
                "descriptors differ%s\n", round, (unsigned long long)words,
                (unsigned long long)gm->used, (unsigned long long)used, fds,
                cwd ? ", the cwd differs" : "");
    return (words != 0) + (used != gm->used) + (fds != 0) + cwd;
}

static bool running(struct vm *vm) { return !atomic_load(&vm->stopping); }

int selftest_run(struct vm *vm, int rounds, uint64_t interval_ns)
{
    struct snapshot snap;
    char err[256];
    if (snapshot_init(&snap, vm, err, sizeof err) < 0) {
        jx_err("selftest: %s", err);
        return -1;
    }
    uint8_t *ref = mmap(NULL, vm->gm.size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    struct ref_vcpu *rv = calloc(MAX_VCPUS, sizeof *rv);
    int failed = 0;
    for (int round = 1; round <= rounds && ref != MAP_FAILED && rv; round++) {
        sleep_ns(interval_ns);
        if (!running(vm))
            break;
        vm_pause(vm);
        if (!running(vm)) {
            vm_resume(vm);
            break;
        }
        uint64_t t0 = mono_ns();
        if (snapshot_take(&snap, err, sizeof err) < 0) {
            jx_err("selftest: %s", err);
            failed = -1;
            vm_resume(vm);
            break;
        }
        uint64_t take_ns = mono_ns() - t0;
        memcpy(ref, vm->gm.host, vm->gm.size);
        int nref = vm->nvcpus;
        for (int i = 0; i < nref; i++) {
            struct vcpu *v = vm->vcpus[i];
            rv[i].valid = v->tid && !v->start_pending &&
                          (rv[i].xsave || (rv[i].xsave = malloc(sizeof *rv[i].xsave))) &&
                          read_state(v, &rv[i].regs, &rv[i].sregs, rv[i].xsave) == 0;
        }
        vm_resume(vm);

        sleep_ns(interval_ns);
        vm_pause(vm);
        if (!running(vm)) {
            vm_resume(vm);
            break;
        }
        struct restore_stats st;
        uint64_t r0 = mono_ns();
        if (snapshot_restore(&snap, &st, err, sizeof err) < 0) {
            jx_err("selftest: %s", err);
            failed = -1;
            vm_resume(vm);
            break;
        }
        pthread_mutex_lock(&vm->lock);
        uint64_t vt = vm_vtime(vm);
        pthread_mutex_unlock(&vm->lock);
        uint64_t since_restore = mono_ns() - r0;
        /* Every page must match, except upper-level page tables, which keep the
         * structure grown since (by design, see guestmem.h). */
        uint64_t diff_pages = 0;
        for (uint64_t off = 0; off < vm->gm.size; off += PAGE_SIZE) {
            if (vm->gm.table_level[off / PAGE_SIZE] >= 2 || off == GPA_PML4)
                continue;
            if (memcmp(vm->gm.host + off, ref + off, PAGE_SIZE))
                diff_pages++;
        }
        int diff_vcpus = 0;
        for (int i = 0; i < nref; i++) {
            if (!rv[i].valid)
                continue;
            struct vcpu *v = vm->vcpus[i];
            struct kvm_regs r;
            struct kvm_sregs s;
            static struct kvm_xsave xbuf;
            struct kvm_xsave *x = &xbuf;
            if (read_state(v, &r, &s, x) < 0 || memcmp(&r, &rv[i].regs, sizeof r) ||
                memcmp(&s, &rv[i].sregs, sizeof s) || memcmp(x, rv[i].xsave, sizeof *x))
                diff_vcpus++;
        }
        /* Virtual time is back at the snapshot's: at most the host time since the
         * restore began ahead of it (a starved host, e.g. under valgrind, takes many
         * ms for that part alone), far from the interval the program ran since. */
        bool time_ok = vt >= snap.vtime && vt - snap.vtime <= since_restore + 1000000;
        if (!time_ok)
            fprintf(stderr, "jinx-vmm: selftest round %d: virtual time %llu after restore, "
                    "snapshot had %llu\n", round, (unsigned long long)vt,
                    (unsigned long long)snap.vtime);
        int diff_state = vmm_state_diffs(vm, &snap, round);
        if (diff_pages || diff_vcpus || diff_state || !time_ok)
            failed++;
        fprintf(stderr,
                "jinx-vmm: selftest round %d: snapshot %.1f us; restore %.1f us (dirty log %.1f, "
                "copy %.1f, invalidate %.1f, vcpus %.1f): %llu pages copied (%llu guest-dirty, "
                "%llu vmm-dirty), %llu frames invalidated; differences: %llu pages, %d vCPUs\n",
                round, take_ns / 1e3, st.ns_total / 1e3, st.ns_dirty_log / 1e3, st.ns_copy / 1e3,
                st.ns_invalidate / 1e3, st.ns_vcpus / 1e3, (unsigned long long)st.pages_copied,
                (unsigned long long)st.dirty_guest, (unsigned long long)st.dirty_vmm,
                (unsigned long long)st.frames_invalidated, (unsigned long long)diff_pages,
                diff_vcpus);
        vm_resume(vm);
        /* ...and goes on from there: the pause itself must not be taken off it (no upper
         * bound: this thread may wait long for a CPU among busy vCPU threads). */
        pthread_mutex_lock(&vm->lock);
        uint64_t vr = vm_vtime(vm);
        pthread_mutex_unlock(&vm->lock);
        if (vr < snap.vtime) {
            fprintf(stderr, "jinx-vmm: selftest round %d: virtual time %llu after resuming, "
                    "snapshot had %llu\n", round, (unsigned long long)vr,
                    (unsigned long long)snap.vtime);
            failed++;
        }
    }
    if (ref != MAP_FAILED)
        munmap(ref, vm->gm.size);
    for (int i = 0; rv && i < MAX_VCPUS; i++)
        free(rv[i].xsave);
    free(rv);
    snapshot_free(&snap);
    return failed;
}
