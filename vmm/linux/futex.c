#include "linux/futex.h"
#include "linux/syscall.h"
#include "linux/pipes.h"
#include "linux/vmlibs.h"
#include "lib/util.h"
#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <time.h>

static void deadlock(struct vm *vm, bool runtime_sleeps)
{
    struct outcome o = {.kind = OUT_DEADLOCK};
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (v->tid == 0 || v->state != T_BLOCKED)
            continue;
        o.nthreads_total++;
        if (o.nwaiters == OUT_MAX_WAITERS)
            continue;
        struct out_waiter *w = &o.waiters[o.nwaiters++];
        w->tid = v->tid;
        w->addr = v->wait_addr;
        w->rip = v->blocked_regs.rcx; /* the user rip after the syscall instruction */
        w->rbp = v->blocked_regs.rbp;
        w->nbt = vm_backtrace(vm, w->rip, v->blocked_regs.rsp, w->rbp, w->bt, OUT_MAX_BT);
    }
    /* Report threads in tid order. */
    for (int i = 1; i < o.nwaiters; i++)
        for (int j = i; j > 0 && o.waiters[j - 1].tid > o.waiters[j].tid; j--) {
            struct out_waiter t = o.waiters[j];
            o.waiters[j] = o.waiters[j - 1];
            o.waiters[j - 1] = t;
        }
    snprintf(o.detail, sizeof o.detail, "all %d live threads are blocked with no one to wake them%s",
             vm->live, runtime_sleeps ? "; the sanitizer runtime's own thread only wakes from its sleeps to sleep again"
                                      : "");
    vm_stop_locked(vm, &o);
}

/* Whether v sleeps (a plain sleep, no futex) in a sanitizer runtime's code: its background
 * thread (TSan's wakes every 100 ms all the program's life), not the program's. */
static bool runtime_sleeper(struct vm *vm, const struct vcpu *v)
{
    if (v->wait_addr != 0)
        return false;
    if (!vm->rt_text_set) {
        vm->rt_text_set = true;
        size_t n = vmlibs_sanitizer_text(vm, vm->rt_text, 4);
        n += vmlibs_program_sanitizer_text(vm, vm->rt_text + n, 8 - n);
        vm->rt_text_n = (uint32_t)n;
    }
    uint64_t rip = v->blocked_regs.rcx; /* the user rip after the syscall instruction */
    for (uint32_t i = 0; i < vm->rt_text_n; i++)
        if (rip >= vm->rt_text[i][0] && rip < vm->rt_text[i][1])
            return true;
    return false;
}

/* Every thread but a sanitizer runtime's sleeper waits with no deadline, and nothing
 * progressed (no such thread woken, none made or gone) over the runtime's last
 * FUTEX_RUNTIME_IDLE_WAITS sleeps: the program is deadlocked, as it would be without the
 * runtime, whose thread would only wake and sleep again forever. The waits keep a
 * runtime that joins its thread at exit (it wakes, sees the stop, ends: progress) from
 * being taken for one; counted in wait_counter, which snapshots and dumps carry. */
#define FUTEX_RUNTIME_IDLE_WAITS 16u
static bool runtime_only_sleeps(struct vm *vm)
{
    bool stuck = false, sleeper = false;
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (!v->tid || v->state != T_BLOCKED)
            continue;
        if (v->wait_deadline == NO_DEADLINE)
            stuck = true;
        else if (runtime_sleeper(vm, v))
            sleeper = true;
        else
            return false; /* the program's own timer: it may yet do something */
    }
    if (vm->progress_wait > vm->wait_counter)
        vm->progress_wait = vm->wait_counter;
    return stuck && sleeper && vm->wait_counter - vm->progress_wait >= FUTEX_RUNTIME_IDLE_WAITS;
}

void futex_check_all_blocked(struct vm *vm)
{
    if (vm->live == 0 || vm->blocked < vm->live || atomic_load(&vm->stopping))
        return;
    struct vcpu *first = NULL;
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (v->tid && v->state == T_BLOCKED && v->wait_deadline != NO_DEADLINE &&
            (!first || v->wait_deadline < first->wait_deadline))
            first = v;
    }
    if (!first) {
        deadlock(vm, false);
        return;
    }
    if (runtime_only_sleeps(vm)) {
        deadlock(vm, true);
        return;
    }
    uint64_t now = vm_vtime(vm);
    if (first->wait_deadline > now)
        vm->skipped_ns += (int64_t)(first->wait_deadline - now);
    if (vm_time_is_virtual(vm))
        futex_expire_locked(vm); /* now, under this lock hold: see futex_expire_locked */
    else
        pthread_cond_signal(&first->cv);
}

/* Marks the calling thread blocked. It is a thread state, not a host wait: the vCPU's
 * host thread waits in futex_wait_locked from its run loop, and a pause or snapshot
 * sees a blocked thread as plain data. Caller holds vm->lock. */
static void block_begin_locked(struct vm *vm, struct vcpu *v, uint64_t addr, uint32_t bitset,
                               uint64_t deadline)
{
    v->wait_addr = addr;
    v->wait_bitset = bitset;
    v->wait_deadline = deadline;
    uint64_t now = deadline == NO_DEADLINE ? 0 : vm_vtime(vm);
    v->wait_ns = deadline != NO_DEADLINE && deadline > now ? deadline - now : 0;
    v->wait_seq = ++vm->wait_counter;
    v->woken = false;
    v->wait_result = 0;
    v->state = T_BLOCKED;
    v->blocked_regs = v->run->s.regs.regs;
    vm->blocked++;
    futex_check_all_blocked(vm);
}

static void unblock_locked(struct vm *vm, struct vcpu *v, int64_t result)
{
    if (v->wait_deadline == NO_DEADLINE)
        vm->progress_wait = vm->wait_counter; /* runtime_only_sleeps */
    v->woken = true;
    v->wait_result = result;
    v->wait_addr = 0;
    v->state = T_RUNNING;
    vm->blocked--;
}

/* A wait whose deadline came: a sleep that ends is a success, a futex wait that ends
 * is a timeout. */
static void time_out_locked(struct vm *vm, struct vcpu *v)
{
    /* A poll's deadline is its ordinary end (0 ready); a futex wait's a timeout. */
    unblock_locked(vm, v, pipe_key(v->wait_addr) ? pipes_timed_out_locked(vm, v)
                          : v->wait_addr ? -ETIMEDOUT : 0);
}

void futex_block_locked(struct vm *vm, struct vcpu *v, uint64_t key, uint64_t deadline)
{
    block_begin_locked(vm, v, key, ~0u, deadline);
}

void futex_unblock_locked(struct vm *vm, struct vcpu *v, int64_t result)
{
    unblock_locked(vm, v, result);
}

int futex_expire_locked(struct vm *vm)
{
    uint64_t now;
    if (!vm->mode || !vm->mode->vtime(vm, &now))
        return 0; /* host time: each host thread's own timed wait expires it */
    int n = 0;
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (v->tid && v->state == T_BLOCKED && !v->woken && v->wait_deadline != NO_DEADLINE &&
            v->wait_deadline <= now) {
            time_out_locked(vm, v);
            pthread_cond_signal(&v->cv);
            n++;
        }
    }
    return n;
}

void futex_wait_locked(struct vm *vm, struct vcpu *v)
{
    if (v->state != T_BLOCKED)
        return;
    if (v->wait_deadline == NO_DEADLINE) {
        pthread_cond_wait(&v->cv, &vm->lock);
        return;
    }
    if (vm_time_is_virtual(vm)) {
        /* Serialized time moves only with cue points and skips, and the scheduler
         * expires deadlines at those points (futex_expire_locked): wait to be told.
         * Checking the deadline here would unblock the thread whenever its host thread
         * happens to wake, and a simulation and its replay would disagree on which
         * threads can run at a cue point. */
        pthread_cond_wait(&v->cv, &vm->lock);
        return;
    }
    uint64_t now = vm_vtime(vm);
    if (now >= v->wait_deadline) {
        time_out_locked(vm, v);
        return;
    }
    uint64_t host = mono_ns() + (v->wait_deadline - now);
    struct timespec ts = {.tv_sec = (time_t)(host / 1000000000ULL),
                          .tv_nsec = (long)(host % 1000000000ULL)};
    pthread_cond_timedwait(&v->cv, &vm->lock, &ts);
}

int futex_wake_locked(struct vm *vm, uint64_t uaddr, int n, uint32_t bitset)
{
    int woken = 0;
    while (woken < n) {
        struct vcpu *best = NULL;
        for (int i = 0; i < vm->nvcpus; i++) {
            struct vcpu *v = vm->vcpus[i];
            if (v->tid && v->state == T_BLOCKED && !v->woken && v->wait_addr == uaddr &&
                (v->wait_bitset & bitset) && (!best || v->wait_seq < best->wait_seq))
                best = v;
        }
        if (!best)
            break;
        unblock_locked(vm, best, 0);
        pthread_cond_signal(&best->cv);
        woken++;
    }
    return woken;
}

static int requeue_locked(struct vm *vm, uint64_t from, uint64_t to, int n)
{
    int moved = 0;
    for (int i = 0; i < vm->nvcpus && moved < n; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (v->tid && v->state == T_BLOCKED && !v->woken && v->wait_addr == from) {
            v->wait_addr = to;
            moved++;
        }
    }
    return moved;
}

/* Reads a guest timespec; -EFAULT / -EINVAL, or 0 with *ns set. */
static int read_timespec(struct vm *vm, uint64_t uaddr, uint64_t *ns)
{
    int64_t ts[2];
    if (!copy_from_user(&vm->gm, ts, uaddr, sizeof ts))
        return -EFAULT;
    if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
        return -EINVAL;
    if ((uint64_t)ts[0] > (UINT64_MAX / 2) / 1000000000ULL)
        *ns = UINT64_MAX / 2;
    else
        *ns = (uint64_t)ts[0] * 1000000000ULL + (uint64_t)ts[1];
    return 0;
}

int64_t futex_syscall(struct vm *vm, struct vcpu *v, uint64_t uaddr, int op, uint32_t val,
                      uint64_t utime, uint64_t uaddr2, uint32_t val3)
{
    int cmd = op & FUTEX_CMD_MASK;
    bool realtime = op & FUTEX_CLOCK_REALTIME;
    if (uaddr & 3)
        return -EINVAL;
    uint32_t *p = gm_user_ptr(&vm->gm, uaddr, false);
    if (!p)
        return -EFAULT;
    switch (cmd) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET: {
        uint32_t bitset = cmd == FUTEX_WAIT ? ~0u : val3;
        if (!bitset)
            return -EINVAL;
        uint64_t deadline = NO_DEADLINE;
        if (utime) {
            uint64_t t;
            int rc = read_timespec(vm, utime, &t);
            if (rc)
                return rc;
            if (cmd == FUTEX_WAIT)
                deadline = vm_vtime(vm) + t; /* relative */
            else if (realtime)
                deadline = t > VTIME_EPOCH_NS ? t - VTIME_EPOCH_NS : 0;
            else
                deadline = t;
        }
        pthread_mutex_lock(&vm->lock);
        /* Under vm->lock, so a waker (which takes the lock) cannot slip in between
         * this check and the sleep. */
        if (__atomic_load_n(p, __ATOMIC_SEQ_CST) != val) {
            pthread_mutex_unlock(&vm->lock);
            return -EAGAIN;
        }
        block_begin_locked(vm, v, uaddr, bitset, deadline);
        pthread_mutex_unlock(&vm->lock);
        return SYSRET_BLOCKED;
    }
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET: {
        uint32_t bitset = cmd == FUTEX_WAKE ? ~0u : val3;
        if (!bitset)
            return -EINVAL;
        int n = val > 0x7FFFFFFF ? 0x7FFFFFFF : (int)val;
        pthread_mutex_lock(&vm->lock);
        int w = futex_wake_locked(vm, uaddr, n, bitset);
        pthread_mutex_unlock(&vm->lock);
        return w;
    }
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE: {
        if (uaddr2 & 3)
            return -EINVAL;
        if (!gm_user_ptr(&vm->gm, uaddr2, false))
            return -EFAULT;
        int nwake = val > 0x7FFFFFFF ? 0x7FFFFFFF : (int)val;
        int nreq = utime > 0x7FFFFFFF ? 0x7FFFFFFF : (int)utime; /* val2 rides in the timeout */
        pthread_mutex_lock(&vm->lock);
        if (cmd == FUTEX_CMP_REQUEUE && __atomic_load_n(p, __ATOMIC_SEQ_CST) != val3) {
            pthread_mutex_unlock(&vm->lock);
            return -EAGAIN;
        }
        int w = futex_wake_locked(vm, uaddr, nwake, ~0u);
        int m = requeue_locked(vm, uaddr, uaddr2, nreq);
        pthread_mutex_unlock(&vm->lock);
        return w + m;
    }
    default:
        return -ENOSYS;
    }
}

int64_t futex_sleep(struct vm *vm, struct vcpu *v, uint64_t deadline)
{
    pthread_mutex_lock(&vm->lock);
    block_begin_locked(vm, v, 0, 0, deadline);
    pthread_mutex_unlock(&vm->lock);
    return SYSRET_BLOCKED;
}
