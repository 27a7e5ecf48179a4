#include "linux/syscall.h"
#include "linux/altstack.h"
#include "linux/cpuidload.h"
#include "linux/threads.h"
#include "linux/futex.h"
#include "linux/files.h"
#include "linux/schedres.h"
#include "linux/pipes.h"
#include "linux/signals.h"
#include "lib/splitmix.h"
#include "lib/util.h"
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static const char *const names[] = {
#include "linux/syscall_names.h"
};

const char *syscall_name(unsigned nr)
{
    if (nr < sizeof names / sizeof names[0] && names[nr])
        return names[nr];
    return "unknown";
}

#define IO_CHUNK 65536
#define MAX_IOV 1024

/* write/writev to the guest's stdout/stderr: straight to the host's (dropped in a
 * sandboxed simulation). */
static int64_t do_write(struct vm *vm, int fd, uint64_t buf, uint64_t len)
{
    if (fd != 1 && fd != 2)
        return -EBADF;
    static __thread char tmp[IO_CHUNK];
    uint64_t done = 0;
    while (done < len) {
        size_t n = len - done > IO_CHUNK ? IO_CHUNK : (size_t)(len - done);
        if (!copy_from_user(&vm->gm, tmp, buf + done, n))
            return done ? (int64_t)done : -EFAULT;
        /* A simulation's output is not the program's: only its retired replay speaks. A
         * stress run's stderr is kept for the report's tail (a failure ends the VM there). */
        ssize_t w = vm->sandbox || vm->stress ? (ssize_t)n : write(fd, tmp, n);
        if (w < 0)
            return done ? (int64_t)done : -errno;
        if (fd == 2 && !vm->sandbox)
            tail_add(&vm->errtail, tmp, (size_t)w); /* the report's last stderr lines */
        done += (uint64_t)w;
        if ((size_t)w < n)
            break;
    }
    return (int64_t)done;
}

static int64_t do_writev(struct vm *vm, int fd, uint64_t iov, uint64_t cnt)
{
    if (fd != 1 && fd != 2)
        return -EBADF;
    if (cnt > MAX_IOV)
        return -EINVAL;
    int64_t total = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        uint64_t e[2];
        if (!copy_from_user(&vm->gm, e, iov + i * 16, 16))
            return total ? total : -EFAULT;
        if (e[1] > 0x7FFFF000)
            return total ? total : -EINVAL;
        if (!e[1])
            continue;
        int64_t r = do_write(vm, fd, e[0], e[1]);
        if (r < 0)
            return total ? total : r;
        total += r;
        if ((uint64_t)r < e[1])
            break;
    }
    return total;
}

static int64_t do_read(struct vm *vm, int fd, uint64_t buf, uint64_t len)
{
    if (fd != 0)
        return -EBADF;
    static __thread char tmp[IO_CHUNK];
    size_t n = len > IO_CHUNK ? IO_CHUNK : (size_t)len;
    if (n && !gm_user_ptr(&vm->gm, buf, true))
        return -EFAULT;
    ssize_t r = read(0, tmp, n);
    if (r < 0)
        return -errno;
    if (!copy_to_user(&vm->gm, buf, tmp, (size_t)r))
        return -EFAULT;
    return r;
}

static int64_t do_clock_gettime(struct vm *vm, int clk, uint64_t tp)
{
    uint64_t t;
    switch (clk) {
    case 0: case 5: case 8: case 11: /* REALTIME, REALTIME_COARSE, REALTIME_ALARM, TAI */
        t = VTIME_EPOCH_NS + vm_vtime(vm);
        break;
    case 1: case 2: case 3: case 4: case 6: case 7: case 9:
        t = vm_vtime(vm);
        break;
    default:
        return -EINVAL;
    }
    int64_t ts[2] = {(int64_t)(t / 1000000000ULL), (int64_t)(t % 1000000000ULL)};
    if (tp && !copy_to_user(&vm->gm, tp, ts, sizeof ts))
        return -EFAULT;
    return 0;
}

static int64_t do_nanosleep(struct vm *vm, struct vcpu *v, int clk, int flags, uint64_t req)
{
    int64_t ts[2];
    if (clk != 0 && clk != 1 && clk != 7)
        return -EINVAL;
    if (!copy_from_user(&vm->gm, ts, req, sizeof ts))
        return -EFAULT;
    if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
        return -EINVAL;
    uint64_t ns = (uint64_t)ts[0] > 1000000000ULL * 1000 ? UINT64_MAX / 4
                  : (uint64_t)ts[0] * 1000000000ULL + (uint64_t)ts[1];
    uint64_t deadline;
    if (flags & 1) /* TIMER_ABSTIME */
        deadline = clk == 0 ? (ns > VTIME_EPOCH_NS ? ns - VTIME_EPOCH_NS : 0) : ns;
    else
        deadline = vm_vtime(vm) + ns;
    return futex_sleep(vm, v, deadline);
}

static int64_t do_getrandom(struct vm *vm, uint64_t buf, uint64_t len)
{
    if (len > (1 << 20))
        len = 1 << 20;
    uint8_t tmp[256];
    uint64_t done = 0;
    while (done < len) {
        size_t n = len - done > sizeof tmp ? sizeof tmp : (size_t)(len - done);
        pthread_mutex_lock(&vm->lock);
        for (size_t i = 0; i < n; i += 8) {
            uint64_t r = splitmix64(&vm->rng);
            memcpy(tmp + i, &r, n - i < 8 ? n - i : 8);
        }
        pthread_mutex_unlock(&vm->lock);
        if (!copy_to_user(&vm->gm, buf + done, tmp, n))
            return done ? (int64_t)done : -EFAULT;
        done += n;
    }
    return (int64_t)done;
}

static int64_t do_uname(struct vm *vm, uint64_t buf)
{
    char u[6][65];
    memset(u, 0, sizeof u);
    strcpy(u[0], "Linux");
    strcpy(u[1], "jinx");
    strcpy(u[2], "6.1.0-jinx");
    strcpy(u[3], "#1 SMP");
    strcpy(u[4], "x86_64");
    strcpy(u[5], "(none)");
    return copy_to_user(&vm->gm, buf, u, sizeof u) ? 0 : -EFAULT;
}

/* An unsupported syscall: -ENOSYS, a warning the first time, and a jinx limit (limitlog.h),
 * which makes a failing run "could not test" rather than a bug. The syscalls that libc
 * calls and copes without are answered -ENOSYS silently and are no limit (see
 * syscall_dispatch: clone3, rseq, membarrier). */
static void warn_once(struct vm *vm, unsigned nr, const char *extra)
{
    if (!vm->sandbox)
        limits_note(&vm->limits, LIMIT_SYSCALL, (long)nr, NULL,
                    "the program used syscall %u (%s)%s, which jinx does not implement "
                    "(-ENOSYS)", nr, syscall_name(nr), extra ? extra : "");
    unsigned slot = nr < sizeof vm->warned ? nr : sizeof vm->warned - 1;
    if (vm->warned[slot])
        return;
    vm->warned[slot] = 1;
    jx_err("warning: unsupported syscall %u (%s)%s returns -ENOSYS", nr, syscall_name(nr),
           extra ? extra : "");
}

/* fstat/newfstatat on the guest's stdin/out/err: a pipe-like character stream (glibc's
 * stdio asks, to size its buffers); files are files.c's. */
static int64_t do_fstat(struct vm *vm, int64_t fd, uint64_t statbuf)
{
    if (fd < 0 || fd > 2)
        return -EBADF;
    uint8_t st[144]; /* struct stat on x86-64 */
    memset(st, 0, sizeof st);
    uint64_t nlink = 1, blksize = 4096;
    uint32_t mode = 0010600; /* S_IFIFO | 0600 */
    memcpy(st + 16, &nlink, 8);
    memcpy(st + 24, &mode, 4);
    memcpy(st + 56, &blksize, 8);
    return copy_to_user(&vm->gm, statbuf, st, sizeof st) ? 0 : -EFAULT;
}

static int64_t do_newfstatat(struct vm *vm, int64_t dirfd, uint64_t path, uint64_t statbuf,
                             uint64_t flags)
{
    char c;
    if (!copy_from_user(&vm->gm, &c, path, 1))
        return -EFAULT;
    if (c == 0 && (flags & 0x1000 /* AT_EMPTY_PATH */))
        return dirfd == -100 /* AT_FDCWD */ ? -ENOENT : do_fstat(vm, dirfd, statbuf);
    return -ENOENT; /* no files in the guest */
}

static int prot_from_linux(uint64_t p) { return (int)(p & 7); }

/* The address-space calls that change what is mapped: mmap (anonymous only), munmap,
 * mprotect, mremap, brk; the mode hears of what became accessible (vm_note_mapped). */
static int64_t memory_syscall(struct vm *vm, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2,
                              uint64_t a3, uint64_t a4, uint64_t a5)
{
    int64_t ret = -ENOSYS;
    switch (nr) {
    case SYS_mmap: {
        int flags = (int)a3;
        if (!(flags & 0x20 /* MAP_ANONYMOUS */)) {
            ret = files_mmap(vm, a0, a1, (int)a2, flags, (int)a4, a5);
            if (ret > 0)
                vm_note_mapped(vm, (uint64_t)ret, (uint64_t)ret + a1);
            break;
        }
        if ((flags & 3) == 0 || (a2 & ~7ULL)) {
            ret = -EINVAL;
            break;
        }
        enum mm_mode mode = (flags & 0x100000) ? MM_FIXED_NOREPLACE /* MAP_FIXED_NOREPLACE */
                            : (flags & 0x10) ? MM_FIXED : MM_HINT;
        /* MAP_NORESERVE, or a large reservation: frames at first touch (mm.h). One larger
         * than guest RAM without MAP_NORESERVE stays ENOMEM, as Linux's heuristic
         * overcommit refuses one larger than RAM and swap. */
        bool lazy = (flags & 0x4000 /* MAP_NORESERVE */) ||
                    (a1 >= MM_LAZY_MIN && a1 <= vm->opt.mem);
        ret = mm_map_anon(&vm->mm, a0, a1, prot_from_linux(a2), mode, lazy);
        if (ret > 0)
            vm_note_mapped(vm, (uint64_t)ret, (uint64_t)ret + a1);
        break;
    }
    case SYS_munmap:
        ret = mm_unmap(&vm->mm, a0, a1);
        if (ret == 0)
            cpuidload_unmapped(vm, a0, a1);
        break;
    case SYS_mprotect:
        ret = mm_protect(&vm->mm, a0, a1, (int)a2);
        if (ret == 0)
            cpuidload_mprotect(vm, a0, a1, (int)a2);
        if (ret == 0)
            vm_note_mapped(vm, a0, a0 + a1);
        break;
    case SYS_mremap:
        ret = mm_mremap(&vm->mm, a0, a1, a2, (int)a3);
        break;
    case SYS_brk: {
        uint64_t before = vm->mm.brk_cur;
        ret = mm_brk(&vm->mm, a0);
        if ((uint64_t)ret > before)
            vm_note_mapped(vm, before, (uint64_t)ret);
        break;
    }
    }
    return ret;
}

/* clock_getres, gettimeofday, time: virtual time (vm_vtime) from VTIME_EPOCH_NS. */
static int64_t time_syscall(struct vm *vm, uint64_t nr, uint64_t a0, uint64_t a1)
{
    int64_t ret = -ENOSYS;
    switch (nr) {
    case SYS_clock_getres: {
        int64_t ts[2] = {0, 1};
        ret = (!a1 || copy_to_user(&vm->gm, a1, ts, sizeof ts)) ? 0 : -EFAULT;
        break;
    }
    case SYS_gettimeofday: {
        uint64_t t = VTIME_EPOCH_NS + vm_vtime(vm);
        int64_t tv[2] = {(int64_t)(t / 1000000000ULL), (int64_t)(t % 1000000000ULL) / 1000};
        ret = (!a0 || copy_to_user(&vm->gm, a0, tv, sizeof tv)) ? 0 : -EFAULT;
        break;
    }
    case SYS_time: {
        int64_t t = (int64_t)((VTIME_EPOCH_NS + vm_vtime(vm)) / 1000000000ULL);
        ret = (!a0 || copy_to_user(&vm->gm, a0, &t, 8)) ? t : -EFAULT;
        break;
    }
    }
    return ret;
}

/* Guest RAM ran out during syscall nr (mmap, brk, mprotect, mremap, ...) if
 * gm.exhausted moved past exhausted: a limit of jinx (--mem), not of the program; Linux
 * would have had the memory. */
static void note_memory_limit(struct vm *vm, uint64_t nr, int64_t ret, uint64_t exhausted)
{
    if (ret == -ENOMEM || (nr == SYS_brk && ret >= 0)) {
        if (atomic_load_explicit(&vm->gm.exhausted, memory_order_relaxed) != exhausted &&
            !vm->sandbox) {
            char opt[LIMIT_OPTION_LEN];
            snprintf(opt, sizeof opt, "raise it with --mem SIZE (now %lluM, at most %lluM)",
                     (unsigned long long)(vm->opt.mem >> 20),
                     (unsigned long long)(MAX_GUEST_MEM >> 20));
            limits_note(&vm->limits, LIMIT_MEMORY, 0, opt, "guest memory exhausted: the "
                        "program's %s needed more than the %lluM of guest RAM",
                        syscall_name((unsigned)nr), (unsigned long long)(vm->opt.mem >> 20));
        }
    }
}

bool syscall_constant_answer(uint64_t nr, int64_t *value)
{
    switch (nr) {
    case SYS_getpid: case SYS_getpgrp: case SYS_getsid: *value = 1; return true;
    case SYS_getppid: case SYS_getuid: case SYS_geteuid: case SYS_getgid: case SYS_getegid:
        *value = 0;
        return true;
    default:
        return false;
    }
}

int syscall_dispatch(struct vm *vm, struct vcpu *v, int64_t *result)
{
    struct kvm_regs *r = &v->run->s.regs.regs;
    uint64_t nr = r->rax, a0 = r->rdi, a1 = r->rsi, a2 = r->rdx, a3 = r->r10, a4 = r->r8,
             a5 = r->r9;
    int64_t ret = -ENOSYS;
    bool gone = false;
    uint64_t exhausted = atomic_load_explicit(&vm->gm.exhausted, memory_order_relaxed);
    v->syscalls++;
    atomic_fetch_add_explicit(&vm->n_syscalls, 1, memory_order_relaxed);

    /* The file layer (files.h) answers the file syscalls but stdin/stdout/stderr's. */
    const uint64_t args[6] = {a0, a1, a2, a3, a4, a5};
    bool by_files = false;
    v->sync_kind = 0;
    ret = pipes_syscall(vm, v, nr, args, &by_files);
    if (by_files && ret == -EPIPE && !(nr == SYS_sendto && (a3 & 0x4000)) && /* MSG_NOSIGNAL */
        signals_raise_self(vm, v, SIGPIPE, "a write to a pipe that has no reader"))
        return SYSCALL_THREAD_GONE; /* SIGPIPE's default action (signals.h) */
    if (by_files)
        goto done;
    ret = signals_syscall(vm, v, nr, args, &by_files, &gone);
    if (by_files)
        goto done;
    ret = files_syscall(vm, nr, args, &by_files);
    if (by_files)
        goto done;
    ret = schedres_syscall(vm, nr, args, &by_files);
    if (by_files)
        goto done;
    switch (nr) {
    case SYS_read: ret = do_read(vm, (int)a0, a1, a2); break;
    case SYS_write: ret = do_write(vm, (int)a0, a1, a2); break;
    case SYS_writev: ret = do_writev(vm, (int)a0, a1, a2); break;
    case SYS_readv: ret = -EBADF; break;
    case SYS_fstat: ret = do_fstat(vm, (int64_t)a0, a1); break;
    case SYS_newfstatat: ret = do_newfstatat(vm, (int64_t)(int)a0, a1, a2, a3); break;
    case SYS_close: ret = a0 <= 2 ? 0 : -EBADF; break;
    case SYS_lseek: ret = a0 <= 2 ? -ESPIPE : -EBADF; break;
    case SYS_ioctl:
        if (a0 > 2)
            ret = -EBADF;
        else if (a1 == TIOCGWINSZ && isatty((int)a0)) {
            /* Lets musl's stdio line-buffer a terminal, as it would natively. */
            struct winsize ws;
            if (ioctl((int)a0, TIOCGWINSZ, &ws) < 0)
                ws = (struct winsize){.ws_row = 24, .ws_col = 80};
            ret = copy_to_user(&vm->gm, a2, &ws, sizeof ws) ? 0 : -EFAULT;
        } else
            ret = -ENOTTY;
        break;
    case SYS_mmap: case SYS_munmap: case SYS_mprotect: case SYS_mremap: case SYS_brk:
        ret = memory_syscall(vm, nr, a0, a1, a2, a3, a4, a5);
        break;
    case SYS_mlock: case SYS_munlock: case SYS_mlockall: case SYS_munlockall: ret = 0; break;
    case SYS_sigaltstack: ret = altstack_syscall(vm, v, a0, a1); break;
    case SYS_sched_yield: sched_yield(); ret = 0; break;
    case SYS_nanosleep: ret = do_nanosleep(vm, v, 1, 0, a0); break;
    case SYS_clock_nanosleep: ret = do_nanosleep(vm, v, (int)a0, (int)a1, a2); break;
    case SYS_clock_gettime: ret = do_clock_gettime(vm, (int)a0, a1); break;
    case SYS_clock_getres: case SYS_gettimeofday: case SYS_time:
        ret = time_syscall(vm, nr, a0, a1);
        break;
    case SYS_getpid: case SYS_getpgrp: case SYS_getsid: case SYS_getppid: case SYS_getuid:
    case SYS_geteuid: case SYS_getgid: case SYS_getegid:
        syscall_constant_answer(nr, &ret);
        break;
    case SYS_gettid: ret = v->tid; break;
    case SYS_setsid: case SYS_getpgid: ret = 1; break;
    case SYS_set_tid_address: v->clear_child_tid = a0; ret = v->tid; break;
    case SYS_set_robust_list: ret = a1 == 24 ? 0 : -EINVAL; break;
    case SYS_arch_prctl:
        if (a0 == 0x1002) { /* ARCH_SET_FS */
            ret = a1 >= USER_TOP ? -EPERM : (vm_set_fs_base(v, a1) ? -EINVAL : 0);
        } else if (a0 == 0x1003) { /* ARCH_GET_FS */
            uint64_t fs = vm_get_fs_base(v);
            ret = copy_to_user(&vm->gm, a1, &fs, 8) ? 0 : -EFAULT;
        } else
            ret = -EINVAL;
        break;
    case SYS_clone:
        ret = thread_clone(vm, v, a0, a1, a2, a3, a4);
        if (ret == -ENOSYS)
            warn_once(vm, (unsigned)nr, " without CLONE_VM|CLONE_THREAD (fork: one program "
                      "per VM)");
        break;
    case SYS_fork: case SYS_vfork: case SYS_execve:
        warn_once(vm, (unsigned)nr, " (jinx runs one program per VM, threads only)");
        ret = -ENOSYS;
        break;
    case SYS_clone3: ret = -ENOSYS; break; /* glibc falls back to clone: no warning, no limit */
    case SYS_exit:
        thread_exit(vm, v, (int)a0);
        return SYSCALL_THREAD_GONE;
    case SYS_exit_group:
        vm_exit_group(vm, (int)a0);
        return SYSCALL_THREAD_GONE;
    case SYS_futex:
        ret = futex_syscall(vm, v, a0, (int)a1, (uint32_t)a2, a3, a4, (uint32_t)a5);
        if (ret == -ENOSYS) { /* an op jinx lacks (FUTEX_LOCK_PI, FUTEX_WAKE_OP, ...): a limit */
            char op[48];
            snprintf(op, sizeof op, " operation %d", (int)a1 & ~384 /* FUTEX_CMD_MASK: without PRIVATE, CLOCK_REALTIME */);
            warn_once(vm, (unsigned)nr, op);
        }
        break;
    case SYS_getrandom: ret = do_getrandom(vm, a0, a1); break;
    case SYS_uname: ret = do_uname(vm, a0); break;
    case SYS_membarrier: ret = -ENOSYS; break; /* musl copes; not worth a warning */
    case SYS_rseq: ret = -ENOSYS; break;
    default:
        warn_once(vm, (unsigned)nr, "");
        ret = -ENOSYS;
        break;
    }
done:
    note_memory_limit(vm, nr, ret, exhausted);
    if (gone)
        return SYSCALL_THREAD_GONE;
    if (ret == SYSRET_BLOCKED)
        return SYSCALL_BLOCKED;
    *result = ret;
    return SYSCALL_CONTINUE;
}
