/*
 * guestfuzz — a hostile guest for hardening jinx-vmm (docs/hardening.md). Not a target
 * workload: it has no manifest and is not among the bug-finding images.
 *
 *   guestfuzz MODE SEED [ITERS [THREADS]]
 *
 *   syscalls  THREADS (default 4) threads issue ITERS (default 200000) random syscalls in
 *             total: random numbers (implemented, unimplemented, out of range, 64-bit),
 *             random arguments (0, -1, small, huge lengths, bad fds, bad flags, wild user,
 *             kernel, non-canonical and agent-page pointers, pointers into a scratch arena
 *             that straddle its guard page). Only calls that would end the run are tamed:
 *             no exit/kill/clone, no MAP_FIXED/munmap/mprotect/madvise over the program's
 *             own memory (those get a playground address or a non-user one), waits get a
 *             1 us timeout, writes to stdout/stderr get a bad fd. Prints
 *             "guestfuzz: mode=syscalls seed=S syscalls=N" on stderr and exits 0.
 *   fatal     ITERS/10 random syscalls, then one thing that must end the program, chosen
 *             by SEED: a jump to a wild address, a privileged instruction, a write to the
 *             page tables' or the agent's addresses, a syscall on a wild stack, a smashed
 *             stack, a clone onto a wild stack, a deadlock, ... (variant names below).
 *             The outcome is a signal, a deadlock or an exit chosen by the variant.
 *   threads   creates threads until pthread_create fails; that must be EAGAIN. Exits 0.
 *   mem       mmap/brk storms until ENOMEM, frees everything, allocates again (the memory
 *             must come back), then munmap/mmap of random sizes. Exits 0.
 *   steps     hostile single steps under --serial (guestfuzz-steps.h).
 *   cues      the same for memory cue points taken in the guest (guestfuzz-steps.h).
 *   files     (SEED ITERS THREADS DIR) the read-only file layer: wild paths, huge
 *             lengths, bad flags, other threads' descriptors, files mapped past their
 *             end (guestfuzz-files.h).
 *
 * The point is what jinx-vmm does: whatever this program does, it must report a guest
 * outcome (exit, signal, deadlock, timeout), never crash, hang or leak. The program
 * installs no signal handlers of its own (jinx delivers none), so every fault ends it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARENA_SIZE (2u << 20)
#define GUARD_SIZE (64u << 10)
/* MAP_FIXED and friends land here: far from the program's text (0x400000), its heap,
 * the top-down mmap area below 0x7f0000000000 and the stack. */
#define PLAY_LO 0x100000000000ULL
#define PLAY_SPAN (1ULL << 40)
#define KBASE 0xFFFF800000000000ULL
#define UVA_MMIO 0x00007FFFFFFFC000ULL
#define UVA_AGENT 0x00007FFFFFFFD000ULL
#define MAX_KEEP 16

static uint64_t seed;
static long iters = 200000, nthreads = 4;
static atomic_ulong total_calls;
static atomic_int done_threads;

static uint64_t next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static long raw6(long nr, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10),
                     "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return ret;
}

static void say(const char *s) { raw6(SYS_write, 2, (long)s, (long)strlen(s), 0, 0, 0); }

/* Syscalls jinx-vmm implements (syscall.c), drawn more often than the rest. */
static const int implemented[] = {
    SYS_read, SYS_write, SYS_writev, SYS_readv, SYS_open, SYS_openat, SYS_close, SYS_lseek,
    SYS_ioctl, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_mremap, SYS_brk, SYS_madvise,
    SYS_mlock, SYS_munlock, SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_sigaltstack,
    SYS_sched_yield, SYS_nanosleep, SYS_clock_nanosleep, SYS_clock_gettime, SYS_clock_getres,
    SYS_gettimeofday, SYS_time, SYS_getpid, SYS_gettid, SYS_set_tid_address,
    SYS_set_robust_list, SYS_arch_prctl, SYS_futex, SYS_getrandom, SYS_uname,
    SYS_sched_getaffinity, SYS_sched_setaffinity, SYS_prlimit64, SYS_getrlimit,
    SYS_setrlimit, SYS_fork, SYS_vfork, SYS_execve, SYS_clone3, SYS_membarrier, SYS_rseq,
};
#define NIMPL (sizeof implemented / sizeof implemented[0])

struct fuzzer {
    uint64_t rng;
    uint8_t *arena;
    uint64_t keep[MAX_KEEP], keeplen[MAX_KEEP];
    int nkeep;
    uint64_t short_ts[2];
    uint64_t zero_tv[2]; /* select's timeout: return at once */
};

static uint64_t playground(struct fuzzer *f)
{
    return PLAY_LO + ((next(&f->rng) % PLAY_SPAN) & ~0xFFFULL);
}

/* An address the program does not use: kernel half, non-canonical, below the first user
 * page, the agent's pages, the playground, or unaligned. */
static uint64_t foreign(struct fuzzer *f)
{
    uint64_t r = next(&f->rng);
    switch (r % 7) {
    case 0: return KBASE + (r >> 8) % (1ULL << 32);
    case 1: return 0x0000800000000000ULL + (r >> 8) % (1ULL << 46);
    case 2: return (r >> 8) % 0x10000;
    case 3: return UVA_MMIO + (r >> 8) % 0x2000;
    case 4: return ~0ULL - (r >> 8) % 0x10000;
    case 5: return playground(f) + ((r >> 8) & 1);
    default: return playground(f);
    }
}

static uint64_t arg(struct fuzzer *f)
{
    uint64_t r = next(&f->rng), x = r >> 8;
    switch (r % 16) {
    case 0: return 0;
    case 1: return x % 64;
    case 2: return ~0ULL;
    case 3: return x * 0x9E3779B97F4A7C15ULL;
    case 4: return (uint64_t)f->arena + x % ARENA_SIZE;           /* valid (or straddling) */
    case 5: return (uint64_t)f->arena + ARENA_SIZE - x % 64;     /* runs into the guard */
    case 6: return 0x10000 + x % (0x7FFFFFFFC000ULL - 0x10000);   /* wild user */
    case 7: return KBASE + x % (1ULL << 33);                      /* page tables, agent */
    case 8: return 0x0000800000000000ULL + x;                     /* non-canonical */
    case 9: return UVA_MMIO + x % 0x2000;                        /* agent pages */
    case 10: return 1ULL << (x % 64);                             /* huge lengths */
    case 11: return 3 + x % (1u << 20);                          /* bad fd */
    case 12: return (uint64_t)-(int64_t)(x % 4096);              /* small negative */
    case 13: return x % 3;                                       /* stdio fds */
    case 14: return x & 0xFFFFFFFF;                              /* flag soup */
    default: return playground(f);
    }
}

/* A range that starts in the playground ends there too: a huge length from there would
 * reach the program's own stacks, exactly as it would on Linux. Ranges that start
 * outside user space keep their lengths (they must fail, whatever the length). */
static void clamp_to_playground(uint64_t a[6])
{
    const uint64_t end = PLAY_LO + PLAY_SPAN;
    if (a[0] >= PLAY_LO && a[0] < end && a[1] > end - a[0])
        a[1] = end - a[0];
}

static bool is_wait(long op)
{
    int cmd = (int)(op & 0x7F);
    return cmd == 0 || cmd == 9 || cmd == 6 || cmd == 11 || cmd == 13;
}

#define FUZZ_O_NONBLOCK 04000 /* O_NONBLOCK = EFD_NONBLOCK = SOCK_NONBLOCK on x86-64 */
#define FUZZ_SYS_epoll_pwait2 441

/* Keeps the call from ending the run, blocking it for good or destroying the program's
 * own memory. Returns false to skip it. */
static bool tame(struct fuzzer *f, uint64_t nr, uint64_t a[6])
{
    switch (nr) {
    case SYS_exit: case SYS_exit_group: case SYS_kill: case SYS_tkill: case SYS_tgkill:
    case SYS_clone: case SYS_rt_sigreturn: case SYS_pause:
        return false;
    case SYS_write: case SYS_writev: case SYS_pwrite64: case SYS_pwritev: case SYS_sendfile:
        if (a[0] == 1 || a[0] == 2)
            a[0] = 1000 + a[0];
        return true;
    case SYS_read: case SYS_readv: case SYS_pread64:
        if (a[0] == 0 && !(f->rng & 1))
            a[0] = 1000;
        return true;
    case SYS_mmap:
        if (a[3] & (MAP_FIXED | 0x100000))
            a[0] = foreign(f);
        clamp_to_playground(a);
        return true;
    case SYS_munmap: case SYS_mprotect: case SYS_madvise: case SYS_mremap: case SYS_mlock:
    case SYS_munlock: case SYS_msync: case SYS_mincore: case SYS_pkey_mprotect:
        a[0] = foreign(f);
        clamp_to_playground(a);
        return true;
    case SYS_arch_prctl:
        if (a[0] == 0x1002 || a[0] == 0x1001) /* SET_FS, SET_GS: musl's TLS */
            a[0] = 0x1003;
        return true;
    case SYS_set_tid_address:
        a[0] = foreign(f); /* this thread is never joined: a wild clear address is fine */
        return true;
    case SYS_futex:
        if (is_wait((long)a[1]))
            a[3] = (uint64_t)f->short_ts;
        return true;
    case SYS_nanosleep:
        a[0] = (a[0] & 1) ? (uint64_t)f->short_ts : foreign(f);
        return true;
    case SYS_clock_nanosleep:
        a[2] = (a[2] & 1) ? (uint64_t)f->short_ts : foreign(f);
        return true;
    /* Pipes, eventfds and socket pairs are jinx-vmm's now: a read of an empty one, or a
     * wait on one, blocks for as long as nobody writes, i.e. forever here. So every one
     * the fuzzer makes is non-blocking, stays so (F_SETFL keeps O_NONBLOCK: it is shared
     * by every copy of a descriptor), and every wait returns at once. Their argument
     * checks are still fuzzed. */
    case SYS_pipe: case SYS_eventfd:
        return false; /* blocking ones only */
    case SYS_pipe2: case SYS_eventfd2:
        a[1] |= FUZZ_O_NONBLOCK;
        return true;
    case SYS_socketpair:
        a[1] |= FUZZ_O_NONBLOCK; /* SOCK_NONBLOCK */
        return true;
    case SYS_fcntl:
        if (a[1] == 4) /* F_SETFL */
            a[2] |= FUZZ_O_NONBLOCK;
        return true;
    case SYS_recvfrom: case SYS_recvmsg: case SYS_sendto: case SYS_sendmsg:
        a[3 - (nr == SYS_recvmsg || nr == SYS_sendmsg)] |= 0x40; /* MSG_DONTWAIT */
        return true;
    case SYS_poll:
        a[2] = 0;
        return true;
    case SYS_ppoll: /* its timespec is a[2] */
        a[2] = (uint64_t)f->short_ts;
        return true;
    case SYS_select:
        a[4] = (uint64_t)f->zero_tv;
        return true;
    case SYS_pselect6:
        a[4] = (uint64_t)f->short_ts;
        return true;
    case SYS_epoll_wait: case SYS_epoll_pwait:
        a[3] = 0;
        return true;
    case FUZZ_SYS_epoll_pwait2:
        a[3] = (uint64_t)f->short_ts;
        return true;
    case SYS_wait4: case SYS_waitid: case SYS_rt_sigsuspend:
    case SYS_rt_sigtimedwait: case SYS_accept: case SYS_accept4:
    case SYS_msgrcv: case SYS_semop: case SYS_io_getevents:
        return true; /* jinx-vmm answers -ENOSYS; were one implemented, it should not block */
    default:
        return true;
    }
}

static void forget_mappings(struct fuzzer *f)
{
    for (int i = 0; i < f->nkeep; i++)
        raw6(SYS_munmap, (long)f->keep[i], (long)f->keeplen[i], 0, 0, 0, 0);
    f->nkeep = 0;
}

static uint64_t pick_nr(struct fuzzer *f)
{
    uint64_t r = next(&f->rng);
    switch (r % 8) {
    case 0: case 1: case 2: case 3: case 4: return (uint64_t)implemented[(r >> 8) % NIMPL];
    case 5: return (r >> 8) % 450;
    case 6: return 450 + (r >> 8) % 2000;
    default: return r >> 3 | (r << 61);
    }
}

static void fuzzer_init(struct fuzzer *f, uint64_t s)
{
    memset(f, 0, sizeof *f);
    f->rng = s;
    f->short_ts[1] = 1000;
    f->arena = mmap(NULL, ARENA_SIZE + GUARD_SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (f->arena == MAP_FAILED) {
        say("guestfuzz: cannot map the arena\n");
        _exit(3);
    }
    mprotect(f->arena + ARENA_SIZE, GUARD_SIZE, PROT_NONE);
}

static unsigned long fuzz_calls(struct fuzzer *f, long n)
{
    unsigned long calls = 0;
    for (long i = 0; i < n; i++) {
        uint64_t nr = pick_nr(f), a[6];
        for (int k = 0; k < 6; k++)
            a[k] = arg(f);
        if (!tame(f, nr, a))
            continue;
        long ret = raw6((long)nr, (long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4],
                        (long)a[5]);
        calls++;
        if (nr == SYS_mmap && ret > 0 && !(a[3] & (MAP_FIXED | 0x100000))) {
            if (f->nkeep == MAX_KEEP)
                forget_mappings(f);
            f->keep[f->nkeep] = (uint64_t)ret;
            f->keeplen[f->nkeep++] = a[1];
        }
    }
    forget_mappings(f);
    return calls;
}

static void *syscall_worker(void *p)
{
    struct fuzzer f;
    fuzzer_init(&f, (uint64_t)p);
    atomic_fetch_add(&total_calls, fuzz_calls(&f, iters / nthreads));
    atomic_fetch_add(&done_threads, 1);
    return NULL;
}

static void report(const char *mode, const char *extra)
{
    char line[200];
    snprintf(line, sizeof line, "guestfuzz: mode=%s seed=%llu syscalls=%lu%s\n", mode,
             (unsigned long long)seed, atomic_load(&total_calls), extra);
    say(line);
}

static int mode_syscalls(void)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (long i = 0; i < nthreads; i++) {
        pthread_t t;
        uint64_t s = seed * 1000003ULL + (uint64_t)i;
        if (pthread_create(&t, &at, syscall_worker, (void *)s)) {
            say("guestfuzz: pthread_create failed\n");
            return 3;
        }
    }
    /* Workers may have wild clear-child-tid addresses: count them out instead of joining. */
    while (atomic_load(&done_threads) < nthreads)
        sched_yield();
    report("syscalls", "");
    return 0;
}

/* ---- fatal variants ----------------------------------------------------------------- */

static _Noreturn void jump_to(uint64_t target, uint64_t junk)
{
    __asm__ volatile("mov %1, %%rbx; mov %1, %%rbp; mov %1, %%r12; jmp *%0"
                     :: "r"(target), "r"(junk) : "rbx", "r12", "memory");
    __builtin_unreachable();
}

static volatile int depth_limit = 1 << 30; /* volatile: the compiler cannot see it is never reached */
static void recurse(volatile char *p, int depth)
{
    volatile char buf[4096];
    buf[0] = *p;
    if (depth < depth_limit)
        recurse(buf, depth + 1);
    buf[1] = 0;
}

static atomic_int parked;
static uint32_t never;
static void *park(void *p)
{
    (void)p;
    atomic_fetch_add(&parked, 1);
    raw6(SYS_futex, (long)&never, 0 /* WAIT */, 0, 0, 0, 0);
    return NULL;
}

static void *stacker(void *p) { (void)p; return NULL; }

static const char *const variants[] = {
    "jump-user", "jump-kernel", "jump-noncanonical", "jump-agent", "read-mmio", "write-mmio",
    "write-agent", "write-pagetable", "hlt", "cli", "wrmsr", "rdmsr", "in", "out", "mov-cr3",
    "lgdt", "invlpg", "int3", "int80", "int-n", "ud2", "syscall-wild-rsp", "smash-stack",
    "div0", "iretq", "swapgs", "sysret", "clone-wild-stack", "deadlock", "bigmap-crash",
    "stack-overflow", "unmap-text", "abort", "exit-status", "wild-tid-exit", "jump-arena",
    "agent-entry", "agent-stubs", "agent-clock",
};
#define NVARIANTS (int)(sizeof variants / sizeof variants[0])

static int mode_fatal(void)
{
    struct fuzzer f;
    fuzzer_init(&f, seed);
    atomic_fetch_add(&total_calls, fuzz_calls(&f, iters / 10));
    int v = (int)(seed % NVARIANTS);
    uint64_t r = next(&f.rng);
    char extra[80];
    snprintf(extra, sizeof extra, " variant=%s", variants[v]);
    report("fatal", extra);
    switch (v) {
    case 0: jump_to(0x10000 + r % (0x7FFFFFFFC000ULL - 0x10000), r);
    case 1: jump_to(KBASE + r % (1ULL << 32), r);
    case 2: jump_to(0x0000800000000000ULL + (r >> 17), r);
    case 3: jump_to(UVA_AGENT + r % 4096, r); /* the agent's user-mode syscall entry */
    case 4: {
        volatile uint64_t *p = (uint64_t *)(UVA_MMIO + (r % 512) * 8);
        __asm__ volatile("mov %1, %%rax; mov (%0), %%rax" :: "r"(p), "r"(r) : "rax", "memory");
        break; /* the read may be taken as a syscall request: then fall into a fault */
    }
    case 5: *(volatile uint64_t *)(UVA_MMIO + (r % 512) * 8) = r; break;
    case 6: *(volatile uint64_t *)(UVA_AGENT + (r % 512) * 8) = r; break;
    case 7: *(volatile uint64_t *)(KBASE + 0x3000 + (r % 512) * 8) = r; break; /* PML4 */
    case 8: __asm__ volatile("hlt"); break;
    case 9: __asm__ volatile("cli"); break;
    case 10: __asm__ volatile("wrmsr" :: "c"((uint32_t)r), "a"(0), "d"(0)); break;
    case 11: { uint32_t lo, hi; __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"((uint32_t)r)); break; }
    case 12: { uint8_t b; __asm__ volatile("inb %%dx, %0" : "=a"(b) : "d"((uint16_t)r)); break; }
    case 13: __asm__ volatile("outb %%al, %%dx" :: "a"((uint8_t)r), "d"((uint16_t)(0x40 + r % 32))); break;
    case 14: __asm__ volatile("mov %0, %%cr3" :: "r"(r & 0xFFFFF000ULL) : "memory"); break;
    case 15: { static uint8_t d[10]; __asm__ volatile("lgdt %0" :: "m"(d)); break; }
    case 16: __asm__ volatile("invlpg (%0)" :: "r"(r) : "memory"); break;
    case 17: __asm__ volatile("int3"); break;
    case 18: __asm__ volatile("int $0x80" :: "a"(20) : "memory"); break;
    case 19: {
        /* int $N for a vector chosen by the seed: exceptions, the agent's, anything. */
        static const uint8_t code[][3] = {{0xCD, 0x0E, 0xC3}, {0xCD, 0x08, 0xC3},
                                          {0xCD, 0x40, 0xC3}, {0xCD, 0x20, 0xC3},
                                          {0xCD, 0xFF, 0xC3}, {0xCD, 0x01, 0xC3}};
        uint8_t *x = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (x == MAP_FAILED)
            return 3;
        memcpy(x, code[r % 6], 3);
        ((void (*)(void))x)();
        break;
    }
    case 20: __asm__ volatile("ud2"); break;
    case 21: {
        uint64_t wild = (r & 1) ? KBASE + (r % 4096) * 8 : 0x0000800000000000ULL;
        __asm__ volatile("mov %0, %%rsp; syscall; ud2" :: "r"(wild), "a"((long)SYS_getpid)
                         : "memory");
        break;
    }
    case 22: {
        volatile uint64_t frame[4];
        for (int i = 0; i < 64; i++)
            ((volatile uint64_t *)frame)[i] = next(&f.rng); /* past the end, deliberately */
        return (int)frame[0];
    }
    case 23: { volatile int z = 0, q = 100 / z; (void)q; break; }
    case 24: __asm__ volatile("iretq"); break;
    case 25: __asm__ volatile("swapgs"); break;
    case 26: __asm__ volatile("sysretq" :: "c"(r), "r"(0)); break;
    case 27: {
        long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                     CLONE_SYSVSEM;
        long ret = raw6(SYS_clone, flags, (long)(0x10000 + r % (1ULL << 40)), 0, 0, 0, 0);
        if (ret == 0)
            __asm__ volatile("push %%rax; ud2" ::: "memory"); /* the child, on a wild stack */
        for (;;)
            raw6(SYS_sched_yield, 0, 0, 0, 0, 0, 0); /* until the child's fault ends us */
    }
    case 28: {
        /* As many parked threads as the VM allows (more than the outcome lists waiters
         * for at --vcpus 254), then main parks too: a deadlock. */
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, 64 << 10);
        int n = 0;
        while (n < 300 && pthread_create(&t, &at, park, NULL) == 0)
            n++;
        while (atomic_load(&parked) < n)
            sched_yield();
        park(NULL);
        break;
    }
    case 29: {
        /* A huge PROT_NONE reservation, then a crash: the dump must not walk it page by
         * page (64 TiB would take hours). */
        void *big = mmap(NULL, 1ULL << 46, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        void *big2 = mmap((void *)PLAY_LO, 1ULL << 44, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (big == MAP_FAILED && big2 == MAP_FAILED)
            say("guestfuzz: no big mapping\n");
        volatile uintptr_t null_page = 8;
        *(volatile int *)null_page = 1;
        break;
    }
    case 30: { volatile char c = 0; recurse(&c, 0); break; }
    case 31: {
        uintptr_t text = (uintptr_t)&mode_fatal & ~0xFFFUL;
        raw6(SYS_mprotect, (long)text, 4096 * 4, PROT_NONE, 0, 0, 0);
        break;
    }
    case 32: {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_IGN;
        sigaction(SIGABRT, &sa, NULL); /* abort() still ends the program */
        abort();
    }
    case 33: raw6(SYS_exit_group, (long)(r % 100), 0, 0, 0, 0, 0); break;
    case 34: {
        /* Threads whose clear-child-tid address is wild exit: the VMM's write there
         * must fail quietly. */
        pthread_t t;
        for (int i = 0; i < 4; i++)
            if (pthread_create(&t, NULL, stacker, NULL) == 0)
                pthread_detach(t);
        raw6(SYS_set_tid_address, (long)foreign(&f), 0, 0, 0, 0, 0);
        return 0; /* exit(0) from main: exit_group */
    }
    case 35: {
        for (uint32_t i = 0; i < ARENA_SIZE / 4; i++)
            ((uint32_t *)f.arena)[i] = (uint32_t)next(&f.rng);
        jump_to((uint64_t)f.arena + r % ARENA_SIZE, r); /* no-execute data */
    }
    case 36: {
        /* Straight into the agent's syscall entries (guest-agent/agent.S: their offsets
         * are the header's second and third words, which the program can read) without a
         * syscall instruction: the user-mode one is as good as a syscall and comes back
         * to rcx; the other must fault. */
        uint64_t entry = UVA_AGENT + *(volatile uint32_t *)(UVA_AGENT + ((r & 1) ? 12 : 8));
        long ret;
        __asm__ volatile("lea 1f(%%rip), %%rcx; jmp *%2; 1:"
                         : "=a"(ret) : "a"((long)SYS_getpid), "r"(entry) : "rcx", "r11", "memory");
        char line[64];
        snprintf(line, sizeof line, "guestfuzz: agent entry returned %ld\n", ret);
        say(line);
        __asm__ volatile("ud2");
        break;
    }
    case 37: /* the exception stubs: 32, 16 bytes apart, from the header's fifth word */
        jump_to(UVA_AGENT + *(volatile uint32_t *)(UVA_AGENT + 20) + 16 * (r % 32), r);
    case 38: {
        /* Into the agent's clock path where it writes the answer (clock_store, the
         * header's 12th word) with a wild pointer: the VMM answers EFAULT and returns to
         * rcx (vmm/kvm/vclock.h), or the write lands; either way back here. */
        uint64_t store = UVA_AGENT + *(volatile uint32_t *)(UVA_AGENT + 52);
        uint64_t wild = foreign(&f);
        long ret;
        __asm__ volatile("mov %3, %%rsi; mov %3, %%rdi; lea 1f(%%rip), %%rcx; jmp *%2; 1:"
                         : "=a"(ret)
                         : "a"((long)SYS_clock_gettime), "r"(store), "r"(wild)
                         : "rcx", "rsi", "rdi", "rdx", "r11", "memory");
        char line[64];
        snprintf(line, sizeof line, "guestfuzz: agent clock returned %ld\n", ret);
        say(line);
        __asm__ volatile("ud2");
        break;
    }
    }
    say("guestfuzz: the fatal variant returned\n");
    return 4;
}

/* ---- limits -------------------------------------------------------------------------- */

static int mode_threads(void)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 64 << 10);
    long n = 0;
    int rc;
    pthread_t t;
    while ((rc = pthread_create(&t, &at, park, NULL)) == 0)
        n++;
    char extra[80];
    snprintf(extra, sizeof extra, " threads=%ld error=%s", n + 1, strerror(rc));
    report("threads", extra);
    return rc == EAGAIN ? 0 : 5;
}

static int mode_mem(void)
{
    struct fuzzer f;
    fuzzer_init(&f, seed);
    enum { CHUNK = 1 << 20, MAXC = 8192 };
    static void *chunks[MAXC];
    unsigned long got[2] = {0, 0};
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        void *p;
        while (n < MAXC && (p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) != MAP_FAILED) {
            ((volatile char *)p)[CHUNK - 1] = 1;
            chunks[n++] = p;
        }
        if (errno != ENOMEM && n < MAXC) {
            say("guestfuzz: mmap failed, but not with ENOMEM\n");
            return 5;
        }
        /* brk until it stops growing: it must keep the old break, never crash. */
        long cur = raw6(SYS_brk, 0, 0, 0, 0, 0, 0), b = cur;
        for (int i = 0; i < 64; i++) {
            long want = b + (long)(CHUNK >> (i % 8));
            long nb = raw6(SYS_brk, want, 0, 0, 0, 0, 0);
            if (nb != want && nb != b) {
                say("guestfuzz: a failed brk moved the break\n");
                return 5;
            }
            b = nb;
        }
        raw6(SYS_brk, cur, 0, 0, 0, 0, 0);
        got[pass] = (unsigned long)n;
        for (int i = 0; i < n; i++)
            munmap(chunks[i], CHUNK);
    }
    /* Freed memory came back (page tables are kept, so allow some slack). */
    if (got[1] + 8 < got[0]) {
        say("guestfuzz: memory did not come back after munmap\n");
        return 5;
    }
    for (long i = 0; i < iters / 10; i++) {
        uint64_t len = 1ULL << (next(&f.rng) % 34);
        void *p = mmap(NULL, len, (int)(next(&f.rng) % 8), MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        atomic_fetch_add(&total_calls, 1);
        if (p != MAP_FAILED && (next(&f.rng) & 1)) {
            munmap(p, len);
            atomic_fetch_add(&total_calls, 1);
        } else if (p != MAP_FAILED) {
            f.keep[f.nkeep % MAX_KEEP] = (uint64_t)p;
            f.keeplen[f.nkeep % MAX_KEEP] = len;
            if (++f.nkeep == MAX_KEEP)
                forget_mappings(&f);
        }
    }
    char extra[80];
    snprintf(extra, sizeof extra, " mib_first=%lu mib_second=%lu", got[0], got[1]);
    report("mem", extra);
    return 0;
}

#include "guestfuzz-files.h"
#include "guestfuzz-steps.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        say("usage: guestfuzz syscalls|fatal|threads|mem|steps|cues SEED [ITERS [THREADS]] | files SEED ITERS THREADS DIR\n");
        return 2;
    }
    seed = strtoull(argv[2], NULL, 0);
    if (argc > 3)
        iters = strtol(argv[3], NULL, 0);
    if (argc > 4)
        nthreads = strtol(argv[4], NULL, 0);
    if (iters < 1 || nthreads < 1 || nthreads > 64) {
        say("guestfuzz: bad ITERS or THREADS\n");
        return 2;
    }
    if (!strcmp(argv[1], "syscalls"))
        return mode_syscalls();
    if (!strcmp(argv[1], "fatal"))
        return mode_fatal();
    if (!strcmp(argv[1], "threads"))
        return mode_threads();
    if (!strcmp(argv[1], "mem"))
        return mode_mem();
    if (!strcmp(argv[1], "steps"))
        return mode_steps();
    if (!strcmp(argv[1], "cues"))
        return mode_cues();
    if (!strcmp(argv[1], "files")) {
        if (argc != 6) {
            say("usage: guestfuzz files SEED ITERS THREADS DIR\n");
            return 2;
        }
        return mode_files(argv[5]);
    }
    say("guestfuzz: unknown mode\n");
    return 2;
}
