/* Signals inside the guest: actions, masks, pending sets and sigwait (signals.h). */
#include "linux/signals.h"
#include "linux/futex.h"
#include "linux/pipes_int.h"
#include "linux/syscall.h"
#include "lib/util.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#define NSIG_ 64
#define SI_USER_ 0
#define SI_TKILL_ (-6)
#define SIGINFO_SIZE 128

static uint64_t bit(int sig) { return 1ULL << (sig - 1); }
/* SIGKILL and SIGSTOP can be neither blocked nor waited for: Linux drops them from masks. */
static const uint64_t UNBLOCKABLE = (1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1));

enum action { A_IGNORE, A_TERM, A_HANDLER };

/* What sig does when it acts on a thread. The default of stop (SIGSTOP, SIGTSTP, ...) is
 * taken as ignore: one program per VM, no job control to resume it. */
static enum action action_of(const struct vm *vm, int sig)
{
    if (sig == SIGKILL)
        return A_TERM;
    uint64_t h = vm->sigact[sig];
    if (h == 1)
        return A_IGNORE;
    if (h > 1)
        return A_HANDLER;
    switch (sig) {
    case SIGCHLD: case SIGURG: case SIGWINCH: case SIGCONT:
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return A_IGNORE;
    default:
        return A_TERM; /* real-time signals terminate too */
    }
}

/* The set blocked sigwaiter w waits for (read again from its arguments: the call reruns
 * with them). 0 when it cannot be read. */
static uint64_t wait_set(struct vm *vm, const struct vcpu *w)
{
    uint64_t set;
    if (!copy_from_user(&vm->gm, &set, w->blocked_regs.rdi, 8))
        return 0;
    return set & ~UNBLOCKABLE;
}

static bool waits_for(struct vm *vm, const struct vcpu *w, uint64_t b)
{
    return w->tid && w->state == T_BLOCKED && !w->woken && w->wait_addr == SIG_KEY &&
           (wait_set(vm, w) & b);
}

bool signals_waiter_ready_locked(struct vm *vm, const struct vcpu *w)
{
    return ((w->sigpending | vm->sig_shared) & wait_set(vm, w)) != 0;
}

static void wake_waiter_locked(struct vm *vm, struct vcpu *w)
{
    futex_unblock_locked(vm, w, SYSRET_RERUN); /* it reruns rt_sigtimedwait and takes it */
    pthread_cond_signal(&w->cv);
}

/* A signal acting on thread t now: ignored, or t is the victim (terminate or handler). */
static struct vcpu *act_locked(struct vm *vm, struct vcpu *t, int sig)
{
    return action_of(vm, sig) == A_IGNORE ? NULL : t;
}

static void make_pending(struct vcpu *t, uint64_t b, bool tkill)
{
    t->sigpending |= b;
    t->sigpend_tkill = tkill ? t->sigpend_tkill | b : t->sigpend_tkill & ~b;
}

/* Sends sig to thread t, or to the process when t is NULL (Linux's choice: a thread
 * waiting for it, else one that does not block it, the lowest tid first; else it stays
 * pending for the process). Returns the thread it kills now (its action is terminate, or
 * a handler jinx does not run), or NULL. Caller holds vm->lock. */
static struct vcpu *send_locked(struct vm *vm, struct vcpu *t, int sig, bool tkill)
{
    uint64_t b = bit(sig);
    if (t) {
        if (waits_for(vm, t, b)) {
            make_pending(t, b, tkill);
            wake_waiter_locked(vm, t);
            return NULL;
        }
        if (t->sigmask & b) {
            make_pending(t, b, tkill);
            return NULL;
        }
        return act_locked(vm, t, sig);
    }
    struct vcpu *w = NULL, *free_one = NULL;
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *x = vm->vcpus[i];
        if (!x->tid)
            continue;
        if (waits_for(vm, x, b) && (!w || x->tid < w->tid))
            w = x;
        if (!(x->sigmask & b) && (!free_one || x->tid < free_one->tid))
            free_one = x;
    }
    if (w) {
        vm->sig_shared |= b;
        wake_waiter_locked(vm, w);
        return NULL;
    }
    if (free_one)
        return act_locked(vm, free_one, sig);
    vm->sig_shared |= b;
    return NULL;
}

/* Signal sig ends the program on thread t (reported there with registers tr). A handler jinx does not run is a limit (signals.h). */
static void kill_with(struct vm *vm, struct vcpu *t, int sig, const struct kvm_regs *tr,
                      const char *why)
{
    if (action_of(vm, sig) == A_HANDLER) {
        why = "raised by the program; its signal handler was not run (jinx does not deliver "
              "signals to handlers)";
        if (!vm->warned_handler) {
            vm->warned_handler = true;
            jx_err("warning: the program installed a handler for signal %d; jinx treats the "
                   "signal as fatal", sig);
        }
        if (!vm->sandbox)
            limits_note(&vm->limits, LIMIT_SIGNAL, sig, NULL, "signal %d (%s) ended the program: "
                        "jinx does not run the handler the program installed for it", sig,
                        signal_name(sig));
    }
    struct kvm_regs r = *tr;
    vm_fatal_signal(vm, t, sig, &r, r.rcx, why);
}

/* The registers a signal killing t is reported with: t's own at its syscall when it is
 * the caller or blocked, else the caller's (t runs elsewhere). Caller holds vm->lock. */
static struct kvm_regs victim_regs(struct vcpu *caller, struct vcpu *t)
{
    if (t != caller && t->state == T_BLOCKED)
        return t->blocked_regs;
    return caller->run->s.regs.regs;
}

static struct vcpu *find_tid_locked(struct vm *vm, int tid)
{
    for (int i = 0; i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid == tid)
            return vm->vcpus[i];
    return NULL;
}

/* kill/tkill/tgkill: tid 0 is the process (kill to itself). */
static int64_t do_kill(struct vm *vm, struct vcpu *v, int tid, int sig, bool *gone)
{
    if (sig < 0 || sig > NSIG_)
        return -EINVAL;
    pthread_mutex_lock(&vm->lock);
    struct vcpu *t = tid ? find_tid_locked(vm, tid) : NULL;
    if (tid && !t) {
        pthread_mutex_unlock(&vm->lock);
        return -ESRCH;
    }
    if (sig == 0) { /* only whether it exists */
        pthread_mutex_unlock(&vm->lock);
        return 0;
    }
    pipe_sync_note(v, SYNC_WAKE, SIG_KEY, 1); /* serialized execution: a send */
    struct vcpu *victim = send_locked(vm, t, sig, tid != 0);
    struct kvm_regs tr;
    if (victim)
        tr = victim_regs(v, victim);
    pthread_mutex_unlock(&vm->lock);
    if (victim) {
        kill_with(vm, victim, sig, &tr, "raised by the program (kill/tkill/tgkill)");
        *gone = true; /* the program is ending */
    }
    return 0;
}

bool signals_raise_self(struct vm *vm, struct vcpu *v, int sig, const char *why)
{
    pthread_mutex_lock(&vm->lock);
    struct vcpu *victim = NULL;
    /* A handler jinx cannot run: the syscall's own error is what the program sees. */
    if (action_of(vm, sig) != A_HANDLER || (v->sigmask & bit(sig)))
        victim = send_locked(vm, v, sig, false);
    struct kvm_regs tr = v->run->s.regs.regs;
    pthread_mutex_unlock(&vm->lock);
    if (victim)
        kill_with(vm, v, sig, &tr, why);
    return victim != NULL;
}

/* Signals pending for v that its mask no longer blocks act now, its own first, lowest
 * number first; ignored ones are dropped. Returns the one that kills v (*sig), or 0. */
static int deliver_unblocked_locked(struct vm *vm, struct vcpu *v)
{
    for (;;) {
        uint64_t ready = (v->sigpending | vm->sig_shared) & ~v->sigmask;
        if (!ready)
            return 0;
        int sig = __builtin_ctzll(ready) + 1;
        uint64_t b = bit(sig);
        if (v->sigpending & b) {
            v->sigpending &= ~b;
            v->sigpend_tkill &= ~b;
        } else {
            vm->sig_shared &= ~b;
        }
        if (action_of(vm, sig) != A_IGNORE)
            return sig;
    }
}

/* An action that ignores sig drops it wherever it is pending, as Linux does. */
static void flush_ignored_locked(struct vm *vm, int sig)
{
    uint64_t b = bit(sig);
    vm->sig_shared &= ~b;
    for (int i = 0; i < vm->nvcpus; i++) {
        vm->vcpus[i]->sigpending &= ~b;
        vm->vcpus[i]->sigpend_tkill &= ~b;
    }
}

static int64_t do_rt_sigaction(struct vm *vm, int sig, uint64_t act, uint64_t oact, uint64_t sz)
{
    if (sig < 1 || sig > NSIG_ || sz != 8)
        return -EINVAL;
    uint64_t a[4] = {0, 0, 0, 0};
    if (act) {
        if (sig == SIGKILL || sig == SIGSTOP)
            return -EINVAL;
        if (!copy_from_user(&vm->gm, a, act, sizeof a))
            return -EFAULT;
    }
    pthread_mutex_lock(&vm->lock);
    uint64_t old[4] = {vm->sigact[sig], 0, 0, 0};
    if (act) {
        vm->sigact[sig] = a[0];
        if (action_of(vm, sig) == A_IGNORE)
            flush_ignored_locked(vm, sig);
    }
    pthread_mutex_unlock(&vm->lock);
    if (oact && !copy_to_user(&vm->gm, oact, old, sizeof old))
        return -EFAULT;
    return 0;
}

static int64_t do_rt_sigprocmask(struct vm *vm, struct vcpu *v, int how, uint64_t set,
                                 uint64_t oset, uint64_t sz, bool *gone)
{
    if (sz != 8)
        return -EINVAL;
    uint64_t s = 0;
    if (set && !copy_from_user(&vm->gm, &s, set, 8))
        return -EFAULT;
    if (set && how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
        return -EINVAL;
    uint64_t old = v->sigmask;
    if (oset && !copy_to_user(&vm->gm, oset, &old, 8))
        return -EFAULT;
    if (!set)
        return 0;
    pthread_mutex_lock(&vm->lock);
    if (how == SIG_BLOCK)
        v->sigmask |= s;
    else if (how == SIG_UNBLOCK)
        v->sigmask &= ~s;
    else
        v->sigmask = s;
    v->sigmask &= ~UNBLOCKABLE;
    int sig = deliver_unblocked_locked(vm, v);
    struct kvm_regs tr = v->run->s.regs.regs;
    pthread_mutex_unlock(&vm->lock);
    if (sig) {
        kill_with(vm, v, sig, &tr, "raised by the program (kill/tkill/tgkill) while the thread "
                  "blocked it; it acted when the thread unblocked it (rt_sigprocmask)");
        *gone = true;
    }
    return 0;
}

static int64_t do_rt_sigpending(struct vm *vm, struct vcpu *v, uint64_t uset, uint64_t sz)
{
    if (sz > 8)
        return -EINVAL;
    pthread_mutex_lock(&vm->lock);
    uint64_t set = (v->sigpending | vm->sig_shared) & v->sigmask;
    pthread_mutex_unlock(&vm->lock);
    return copy_to_user(&vm->gm, uset, &set, (size_t)sz) ? 0 : -EFAULT;
}

/* Takes the lowest signal of set pending for v (its own before the process's) and
 * writes its siginfo. Caller holds vm->lock; 0 when none. */
static int take_locked(struct vm *vm, struct vcpu *v, uint64_t set, uint8_t info[SIGINFO_SIZE])
{
    uint64_t own = v->sigpending & set, ready = own ? own : vm->sig_shared & set;
    if (!ready)
        return 0;
    int sig = __builtin_ctzll(ready) + 1;
    uint64_t b = bit(sig);
    int32_t code = SI_USER_;
    if (own) {
        code = (v->sigpend_tkill & b) ? SI_TKILL_ : SI_USER_;
        v->sigpending &= ~b;
        v->sigpend_tkill &= ~b;
    } else {
        vm->sig_shared &= ~b;
    }
    memset(info, 0, SIGINFO_SIZE);
    int32_t signo = sig, pid = 1, uid = 0; /* sent by the program itself (getpid: 1) */
    memcpy(info + 0, &signo, 4);
    memcpy(info + 8, &code, 4);
    memcpy(info + 16, &pid, 4);
    memcpy(info + 20, &uid, 4);
    return sig;
}

/* rt_sigtimedwait(set, info, timeout, sigsetsize): sigwait, sigwaitinfo, sigtimedwait. */
static int64_t do_sigtimedwait(struct vm *vm, struct vcpu *v, const uint64_t a[6])
{
    if (a[3] != 8)
        return -EINVAL;
    uint64_t set;
    if (!copy_from_user(&vm->gm, &set, a[0], 8))
        return -EFAULT;
    set &= ~UNBLOCKABLE;
    uint64_t timeout = UINT64_MAX;
    if (a[2]) {
        int64_t ts[2];
        if (!copy_from_user(&vm->gm, ts, a[2], sizeof ts))
            return -EFAULT;
        if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
            return -EINVAL;
        timeout = (uint64_t)ts[0] > 1000000000ULL * 1000000 ? UINT64_MAX / 4
                  : (uint64_t)ts[0] * 1000000000ULL + (uint64_t)ts[1];
    }
    uint8_t info[SIGINFO_SIZE];
    pthread_mutex_lock(&vm->lock);
    pipe_sync_note(v, SYNC_WAIT, SIG_KEY, 0);
    int sig = take_locked(vm, v, set, info);
    if (!sig && timeout) {
        futex_block_locked(vm, v, SIG_KEY, timeout == UINT64_MAX ? NO_DEADLINE
                                                                 : vm_vtime(vm) + timeout);
        pthread_mutex_unlock(&vm->lock);
        return SYSRET_BLOCKED;
    }
    pthread_mutex_unlock(&vm->lock);
    if (!sig)
        return -EAGAIN;
    if (a[1] && !copy_to_user(&vm->gm, a[1], info, sizeof info))
        return -EFAULT;
    return sig;
}

int64_t signals_syscall(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                        bool *handled, bool *gone)
{
    *handled = true;
    switch (nr) {
    case SYS_rt_sigaction: return do_rt_sigaction(vm, (int)a[0], a[1], a[2], a[3]);
    case SYS_rt_sigprocmask: return do_rt_sigprocmask(vm, v, (int)a[0], a[1], a[2], a[3], gone);
    case SYS_rt_sigpending: return do_rt_sigpending(vm, v, a[0], a[1]);
    case SYS_rt_sigtimedwait: return do_sigtimedwait(vm, v, a);
    case SYS_tkill:
        if ((int)a[1] < 0 || (int)a[1] > NSIG_)
            return -EINVAL;
        return (int)a[0] <= 0 ? -EINVAL : do_kill(vm, v, (int)a[0], (int)a[1], gone);
    case SYS_tgkill:
        if ((int)a[2] < 0 || (int)a[2] > NSIG_ || (int)a[0] <= 0 || (int)a[1] <= 0)
            return -EINVAL;
        return (int)a[0] != 1 ? -ESRCH : do_kill(vm, v, (int)a[1], (int)a[2], gone);
    case SYS_kill: /* the process itself: pid 1 (getpid), its group (0) or everyone (-1) */
        if ((int)a[1] < 0 || (int)a[1] > NSIG_)
            return -EINVAL;
        return ((int)a[0] == 1 || (int)a[0] == 0 || (int)a[0] == -1)
                   ? do_kill(vm, v, 0, (int)a[1], gone) : -ESRCH;
    default:
        *handled = false;
        return -ENOSYS;
    }
}
