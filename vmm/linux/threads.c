#include "linux/threads.h"
#include "linux/altstack.h"
#include "explorer/explorer.h"
#include "kvm/cpu.h"
#include "kvm/vm.h"
#include "lib/util.h"
#include "linux/futex.h"
#include <errno.h>
#include <linux/sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>

int64_t thread_clone(struct vm *vm, struct vcpu *v, uint64_t flags, uint64_t stack,
                     uint64_t ptid, uint64_t ctid, uint64_t tls)
{
    const uint64_t need = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
    if ((flags & need) != need) {
        return -ENOSYS; /* processes (fork) are not supported: one program per VM */
    }
    if ((flags & CLONE_SETTLS) && tls >= USER_TOP)
        return -EPERM;
    struct kvm_sregs s;
    if (ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
        return -EAGAIN;
    struct kvm_xsave *xs = malloc(sizeof *xs);
    if (!xs)
        return -ENOMEM;
    if (ioctl(v->fd, KVM_GET_XSAVE, xs) < 0) {
        free(xs);
        return -EAGAIN;
    }
    pthread_mutex_lock(&vm->lock);
    char err[200];
    const char *option;
    struct vcpu *c = vm_get_vcpu_locked(vm, err, sizeof err, &option);
    if (!c) {
        if (!vm->warned_threads) {
            vm->warned_threads = true;
            jx_err("warning: %s; clone() returns EAGAIN (%s)", err,
                   option ? option : "no option raises it");
        }
        /* A simulation's refusal counts when a round retires it (limitlog.h). */
        limits_note(vm->sandbox ? &vm->sandbox_lims : &vm->limits, LIMIT_THREADS, 0, option,
                    "%s", err);
        if (vm->sandbox)
            atomic_fetch_add(&vm->sandbox_limits, 1);
        pthread_mutex_unlock(&vm->lock);
        free(xs);
        return -EAGAIN;
    }
    int tid = vm->next_tid++;
    if (!vm->t_first_clone)
        vm->t_first_clone = mono_ns();
    vm->progress_wait = vm->wait_counter; /* a thread made: progress (linux/futex.c) */
    if (flags & CLONE_PARENT_SETTID)
        copy_to_user(&vm->gm, ptid, &tid, 4);
    if (flags & CLONE_CHILD_SETTID)
        copy_to_user(&vm->gm, ctid, &tid, 4);
    c->clear_child_tid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    c->sigmask = v->sigmask;
    c->sigpending = c->sigpend_tkill = 0; /* a new thread has none pending (clone(2)) */
    altstack_reset(vm, c);
    /* The child starts in user mode right after the syscall instruction: rcx holds the
     * return address and r11 the flags, as the syscall ABI left them. */
    c->start_regs = v->run->s.regs.regs;
    c->start_regs.rax = 0;
    c->start_regs.rip = c->start_regs.rcx;
    c->start_regs.rflags = (c->start_regs.r11 & 0x3C0FD5) | 0x202;
    if (stack)
        c->start_regs.rsp = stack;
    c->start_sregs = s;
    cpu_sregs(vm, c, &c->start_sregs, true);
    if (flags & CLONE_SETTLS)
        c->start_sregs.fs.base = tls;
    free(c->start_xsave);
    c->start_xsave = xs;
    c->start_pending = true;
    c->state = T_RUNNING;
    c->tid = tid;
    thread_xid_assign_locked(vm, c);
    vm->live++;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&vm->lock);
    if (vm->on_clone)
        vm->on_clone(vm->on_clone_ctx);
    return tid;
}

void thread_exit(struct vm *vm, struct vcpu *v, int status)
{
    pthread_mutex_lock(&vm->lock);
    if (v->clear_child_tid) {
        uint32_t zero = 0;
        if (copy_to_user(&vm->gm, v->clear_child_tid, &zero, 4))
            futex_wake_locked(vm, v->clear_child_tid, 1, ~0u);
    }
    v->tid = 0;
    v->state = T_FREE;
    v->clear_child_tid = 0;
    v->sigpending = v->sigpend_tkill = 0; /* its own pending signals die with it */
    vm->live--;
    vm->progress_wait = vm->wait_counter; /* a thread gone: progress (linux/futex.c) */
    if (vm->live == 0) {
        /* The last thread leaving ends the process with its status, as on Linux. */
        struct outcome o = {.kind = OUT_EXIT, .status = status & 0xFF};
        vm_stop_locked(vm, &o);
    } else {
        futex_check_all_blocked(vm);
    }
    pthread_mutex_unlock(&vm->lock);
}

/* The lowest explorer id no live thread but v holds (0: none left). */
static int free_xid_locked(struct vm *vm, const struct vcpu *v)
{
    struct ex_tidset used;
    ex_tidset_clear(&used);
    for (int i = 0; i < vm->nvcpus; i++) {
        const struct vcpu *w = vm->vcpus[i];
        if (w != v && w->tid && w->xid)
            ex_tidset_add(&used, (uint32_t)w->xid);
    }
    for (int x = 1; x <= EX_MAX_TID; x++)
        if (!ex_tidset_has(&used, (uint32_t)x))
            return x;
    return 0;
}

static void xid_exhausted_locked(struct vm *vm, struct vcpu *v)
{
    v->xid = 0;
    limits_note(vm->sandbox ? &vm->sandbox_lims : &vm->limits, LIMIT_THREAD_IDS, 0, NULL,
                "serialized execution had more than %d threads at once (the explorer's "
                "thread ids)", EX_MAX_TID);
    if (vm->sandbox)
        atomic_fetch_add(&vm->sandbox_limits, 1);
}

void thread_xid_assign_locked(struct vm *vm, struct vcpu *v)
{
    if (v->tid > 0 && v->tid <= EX_MAX_TID) {
        v->xid = v->tid; /* a tid past EX_MAX_TID exists only once next_tid passed it */
        return;
    }
    v->xid = free_xid_locked(vm, v);
    if (!v->xid)
        xid_exhausted_locked(vm, v);
}

/* Every live thread's id from scratch, the same for the same live tids wherever the
 * fragment starts (the live VM, a worker VM, a replay): tids up to EX_MAX_TID keep their
 * own, the others take the lowest free ids in tid order. */
void thread_xids_reset_locked(struct vm *vm)
{
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *w = vm->vcpus[i];
        w->xid = w->tid > 0 && w->tid <= EX_MAX_TID ? w->tid : 0;
    }
    for (;;) {
        struct vcpu *next = NULL;
        for (int i = 0; i < vm->nvcpus; i++) {
            struct vcpu *w = vm->vcpus[i];
            if (w->tid > EX_MAX_TID && !w->xid && (!next || w->tid < next->tid))
                next = w;
        }
        if (!next)
            return;
        next->xid = free_xid_locked(vm, next);
        if (!next->xid) {
            xid_exhausted_locked(vm, next);
            next->xid = -1; /* marks it done for this loop */
        }
    }
}
