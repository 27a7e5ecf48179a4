/* Scheduling and resource syscalls (schedres.h): what thread pools, nproc and portable
 * runtimes ask, answered as Linux answers an unprivileged process whose threads are all
 * SCHED_OTHER, and the same every run (nothing here depends on the host's scheduler). */
#include "linux/schedres.h"
#include "linux/files.h"
#include "linux/mm.h"
#include "lib/util.h"
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SCHED_OTHER_ 0
#define SCHED_FIFO_ 1
#define SCHED_RR_ 2
#define SCHED_BATCH_ 3
#define SCHED_IDLE_ 5
#define SCHED_DEADLINE_ 6
#define SCHED_RESET_ON_FORK_ 0x40000000
#define RLIM_NLIMITS_ 16
#define RLIM_INF_ (~0ULL)

int schedres_ncpus(struct vm *vm)
{
    long host = sysconf(_SC_NPROCESSORS_ONLN);
    int n = host < 1 ? 1 : vm->opt.max_vcpus < host ? vm->opt.max_vcpus : (int)host;
    return n < 1 ? 1 : n;
}

/* pid as the scheduling calls take it: 0 (the caller) or a live thread's tid. 0, or
 * -EINVAL (negative) / -ESRCH (no such thread). */
static int64_t check_pid(struct vm *vm, int64_t pid)
{
    if (pid < 0)
        return -EINVAL;
    if (pid == 0)
        return 0;
    int64_t r = -ESRCH;
    pthread_mutex_lock(&vm->lock);
    for (int i = 0; i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid == pid)
            r = 0;
    pthread_mutex_unlock(&vm->lock);
    return r;
}

/* The kernel's cpumask as the guest sees it: schedres_ncpus() CPUs, in whole longs. */
static uint64_t mask_bytes(int n) { return (uint64_t)(n + 63) / 64 * 8; }

static int64_t do_getaffinity(struct vm *vm, int64_t pid, uint64_t len, uint64_t uptr)
{
    int n = schedres_ncpus(vm);
    uint64_t size = mask_bytes(n);
    if (len < size || (len & 7))
        return -EINVAL;
    int64_t r = check_pid(vm, pid);
    if (r)
        return r;
    uint64_t mask[(MAX_VCPUS + 63) / 64 + 1];
    memset(mask, 0, sizeof mask);
    for (int i = 0; i < n; i++)
        mask[i / 64] |= 1ULL << (i % 64);
    return copy_to_user(&vm->gm, uptr, mask, size) ? (int64_t)size : -EFAULT;
}

/* Accepted (jinx's scheduler decides where threads run) when the mask names one of the
 * guest's CPUs, as Linux requires. */
static int64_t do_setaffinity(struct vm *vm, int64_t pid, uint64_t len, uint64_t uptr)
{
    int n = schedres_ncpus(vm);
    uint64_t size = mask_bytes(n), mask[(MAX_VCPUS + 63) / 64 + 1];
    memset(mask, 0, sizeof mask);
    if (!copy_from_user(&vm->gm, mask, uptr, len < size ? len : size))
        return -EFAULT;
    int64_t r = check_pid(vm, pid);
    if (r)
        return r;
    bool any = false;
    for (int i = 0; i < n && !any; i++)
        any = (mask[i / 64] >> (i % 64)) & 1;
    return any ? 0 : -EINVAL;
}

/* Is (policy, prio) a valid request? 0, or -EINVAL. */
static int64_t check_param(int policy, int prio)
{
    switch (policy) {
    case SCHED_OTHER_: case SCHED_BATCH_: case SCHED_IDLE_:
        return prio == 0 ? 0 : -EINVAL;
    case SCHED_FIFO_: case SCHED_RR_:
        return prio >= 1 && prio <= 99 ? 0 : -EINVAL;
    default:
        return -EINVAL;
    }
}

static int64_t do_setscheduler(struct vm *vm, int64_t pid, int64_t policy, uint64_t param)
{
    int prio;
    if (pid < 0 || !param)
        return -EINVAL;
    if (!copy_from_user(&vm->gm, &prio, param, sizeof prio))
        return -EFAULT;
    int64_t r = check_pid(vm, pid);
    if (r)
        return r;
    policy &= ~(int64_t)SCHED_RESET_ON_FORK_;
    if ((r = check_param((int)policy, prio)))
        return r;
    /* Real-time policies need a privilege an unprivileged user lacks (RLIMIT_RTPRIO 0);
     * the others change nothing jinx's scheduler looks at. */
    return policy == SCHED_FIFO_ || policy == SCHED_RR_ ? -EPERM : 0;
}

/* getrlimit's values: the main stack's 8M hard limit, with --thread-stack as the soft
 * one (glibc sizes its default thread stack by it; loader.c does the same for musl),
 * descriptors as the file layer has them, threads as --vcpus allows, no real-time
 * priority or nice raise (as for an unprivileged user), the rest unlimited. */
static void rlimit_of(struct vm *vm, int resource, uint64_t lim[2])
{
    lim[0] = lim[1] = RLIM_INF_;
    switch (resource) {
    case 3: /* RLIMIT_STACK */
        lim[0] = vm->opt.thread_stack < STACK_SIZE ? vm->opt.thread_stack : STACK_SIZE;
        lim[1] = STACK_SIZE;
        break;
    case 4: /* RLIMIT_CORE */
        lim[0] = 0;
        break;
    case 6: /* RLIMIT_NPROC */
        lim[0] = lim[1] = (uint64_t)vm->opt.max_vcpus;
        break;
    case 7: /* RLIMIT_NOFILE */
        lim[0] = lim[1] = FILES_MAX;
        break;
    case 8: /* RLIMIT_MEMLOCK */
        lim[0] = lim[1] = 8ULL << 20;
        break;
    case 11: /* RLIMIT_SIGPENDING */
        lim[0] = lim[1] = 4096;
        break;
    case 12: /* RLIMIT_MSGQUEUE */
        lim[0] = lim[1] = 819200;
        break;
    case 13: case 14: /* RLIMIT_NICE, RLIMIT_RTPRIO */
        lim[0] = lim[1] = 0;
        break;
    }
}

/* prlimit64/getrlimit/setrlimit. A new limit is checked as Linux checks it (soft <= hard,
 * no raise of a hard limit) and accepted, but not kept: the limits stay jinx's. */
static int64_t do_prlimit(struct vm *vm, int64_t pid, uint64_t resource, uint64_t newl,
                          uint64_t oldl)
{
    if (resource >= RLIM_NLIMITS_)
        return -EINVAL;
    uint64_t cur[2], want[2];
    rlimit_of(vm, (int)resource, cur);
    if (newl) {
        if (!copy_from_user(&vm->gm, want, newl, sizeof want))
            return -EFAULT;
        if (want[0] > want[1])
            return -EINVAL;
    }
    int64_t r = check_pid(vm, pid);
    if (r)
        return r == -EINVAL ? -ESRCH : r;
    if (newl && want[1] > cur[1])
        return -EPERM;
    if (oldl && !copy_to_user(&vm->gm, oldl, cur, sizeof cur))
        return -EFAULT;
    return 0;
}

/* sysinfo: guest RAM and its free frames, uptime in virtual time, threads as procs. */
static int64_t do_sysinfo(struct vm *vm, uint64_t uptr)
{
    uint8_t si[112];
    memset(si, 0, sizeof si);
    uint64_t ns = vm_vtime(vm);
    int64_t uptime = (int64_t)(ns / 1000000000ULL) + (ns % 1000000000ULL ? 1 : 0);
    pthread_mutex_lock(&vm->gm.lock);
    uint64_t total = vm->gm.size;
    uint64_t freeb = vm->gm.nframes > vm->gm.used ? (vm->gm.nframes - vm->gm.used) * PAGE_SIZE : 0;
    pthread_mutex_unlock(&vm->gm.lock);
    pthread_mutex_lock(&vm->lock);
    uint16_t procs = (uint16_t)vm->live;
    pthread_mutex_unlock(&vm->lock);
    uint32_t unit = 1;
    memcpy(si + 0, &uptime, 8);        /* uptime; loads[3] at 8..32 stay 0 */
    memcpy(si + 32, &total, 8);        /* totalram */
    memcpy(si + 40, &freeb, 8);        /* freeram; shared, buffer, swap stay 0 */
    memcpy(si + 80, &procs, 2);        /* procs */
    memcpy(si + 104, &unit, 4);        /* mem_unit */
    return copy_to_user(&vm->gm, uptr, si, sizeof si) ? 0 : -EFAULT;
}

/* madvise: MADV_DONTNEED (and DONTNEED_LOCKED) zero anonymous pages as Linux does
 * (mm_dontneed); the other advice Linux knows changes nothing here (MADV_FREE keeps the
 * contents, which Linux may do too), its range checked as Linux does; unknown advice is
 * -EINVAL. */
static int64_t do_madvise(struct vm *vm, uint64_t addr, uint64_t len, int64_t advice)
{
    switch (advice) {
    case 4: case 24: /* MADV_DONTNEED, MADV_DONTNEED_LOCKED */
        return mm_dontneed(&vm->mm, addr, len);
    case 0: case 1: case 2: case 3: case 8: case 10: case 11: case 12: case 13: case 14:
    case 15: case 16: case 17: case 18: case 19: case 20: case 21: case 22: case 23: case 25:
        break;
    default:
        return -EINVAL;
    }
    if (addr & (PAGE_SIZE - 1) || len > USER_TOP)
        return -EINVAL;
    if (len == 0)
        return 0;
    uint64_t end = addr + ((len + PAGE_SIZE - 1) & PAGE_MASK);
    if (end > USER_TOP || end < addr)
        return addr < USER_TOP ? -ENOMEM : -EINVAL;
    pthread_mutex_lock(&vm->gm.lock);
    bool mapped = mm_is_mapped(&vm->mm, addr, end);
    pthread_mutex_unlock(&vm->gm.lock);
    return mapped ? 0 : -ENOMEM;
}

int64_t schedres_syscall(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled)
{
    int64_t pid = (int64_t)(int)a[0];
    *handled = true;
    switch (nr) {
    case SYS_sched_getaffinity: return do_getaffinity(vm, pid, a[1], a[2]);
    case SYS_sched_setaffinity: return do_setaffinity(vm, pid, a[1], a[2]);
    case SYS_sched_getscheduler: {
        int64_t r = check_pid(vm, pid);
        return r ? r : SCHED_OTHER_;
    }
    case SYS_sched_setscheduler: return do_setscheduler(vm, pid, (int64_t)(int)a[1], a[2]);
    case SYS_sched_getparam: {
        if (pid < 0 || !a[1])
            return -EINVAL;
        int64_t r = check_pid(vm, pid);
        int prio = 0;
        if (r)
            return r;
        return copy_to_user(&vm->gm, a[1], &prio, sizeof prio) ? 0 : -EFAULT;
    }
    case SYS_sched_setparam: {
        int prio;
        if (pid < 0 || !a[1])
            return -EINVAL;
        if (!copy_from_user(&vm->gm, &prio, a[1], sizeof prio))
            return -EFAULT;
        int64_t r = check_pid(vm, pid);
        return r ? r : check_param(SCHED_OTHER_, prio);
    }
    case SYS_sched_get_priority_max: case SYS_sched_get_priority_min: {
        int policy = (int)a[0];
        if (policy == SCHED_FIFO_ || policy == SCHED_RR_)
            return nr == SYS_sched_get_priority_max ? 99 : 1;
        if (policy == SCHED_OTHER_ || policy == SCHED_BATCH_ || policy == SCHED_IDLE_ ||
            policy == SCHED_DEADLINE_)
            return 0;
        return -EINVAL;
    }
    case SYS_prlimit64: return do_prlimit(vm, pid, a[1], a[2], a[3]);
    case SYS_getrlimit: return a[1] ? do_prlimit(vm, 0, a[0], 0, a[1]) : -EFAULT;
    case SYS_setrlimit:
        return a[1] ? do_prlimit(vm, 0, a[0], a[1], 0) : -EFAULT;
    case SYS_sysinfo: return do_sysinfo(vm, a[0]);
    case SYS_madvise: return do_madvise(vm, a[0], a[1], (int64_t)(int)a[2]);
    }
    *handled = false;
    return -ENOSYS;
}
