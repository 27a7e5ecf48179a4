/* The guest's clock in free execution (vmm/kvm/vclock.h): clock_gettime MONOTONIC and
 * REALTIME, gettimeofday and time are answered by the guest-agent, while
 * CLOCK_PROCESS_CPUTIME_ID and CLOCK_TAI, which the agent leaves to the VMM, are the
 * VMM's vm_vtime (and its + epoch). Interleaved, the two must form one non-decreasing
 * sequence: an in-guest answer never after the VMM's next one, nor before its last.
 *
 *   clockcheck mix N       N rounds of the interleaved sequence; the median gap
 *                          between an in-guest answer and the VMM's next one must stay
 *                          under 1 ms (it is one exit: ~30-100 us here)
 *   clockcheck run MS      the same for MS ms of virtual time, 4 threads (rounds and
 *                          pauses happen meanwhile under --attach); prints the largest
 *                          step between consecutive readings of one thread
 *   clockcheck fast N      N x (MONOTONIC, REALTIME, gettimeofday, time): the exits the
 *                          run makes tell which path answered
 *   clockcheck faults      bad pointers: EFAULT, never a crash; registers kept
 * Exit 0 and "clockcheck: ok ..." on success, 1 with the failed check. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define EPOCH_S 1767225600LL /* the VMM's CLOCK_REALTIME at boot: 2026-01-01 */

static long raw2(long nr, long a, long b)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return r;
}

static uint64_t ts_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

/* One clock reading by raw syscall (no libc shortcut), as ns; exits 1 on an error. */
static uint64_t read_clock(int clk)
{
    struct timespec t;
    long r = raw2(SYS_clock_gettime, clk, (long)&t);
    if (r != 0) {
        fprintf(stderr, "clockcheck: clock_gettime(%d) = %ld\n", clk, r);
        exit(1);
    }
    CHECK(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
    return ts_ns(&t);
}

/* One round: guest MONOTONIC, VMM CPUTIME, guest REALTIME, VMM TAI, gettimeofday, time.
 * *last: the previous round's last monotonic-domain reading. Returns the largest gap
 * from an in-guest answer to the VMM's next one. */
static uint64_t round_once(uint64_t *last)
{
    const uint64_t epoch = (uint64_t)EPOCH_S * 1000000000ULL;
    uint64_t m = read_clock(CLOCK_MONOTONIC);
    uint64_t p = read_clock(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t r = read_clock(CLOCK_REALTIME);
    uint64_t t = read_clock(CLOCK_TAI);
    uint64_t b = read_clock(CLOCK_BOOTTIME), c = read_clock(CLOCK_MONOTONIC_COARSE);
    struct timeval tv;
    CHECK(raw2(SYS_gettimeofday, (long)&tv, 0) == 0);
    long s = raw2(SYS_time, 0, 0);
    CHECK(r >= epoch && t >= epoch);
    uint64_t g = (uint64_t)tv.tv_sec * 1000000000ULL + (uint64_t)tv.tv_usec * 1000;
    if (!(*last <= m && m <= p && p <= r - epoch && r <= t && t - epoch <= b && b <= c &&
          c <= g - epoch + 999 && (uint64_t)s >= g / 1000000000ULL &&
          (uint64_t)s <= g / 1000000000ULL + 1)) {
        fprintf(stderr, "clockcheck: backwards: last %llu mono %llu cputime(vmm) %llu "
                "real-epoch %llu tai(vmm)-epoch %llu boot %llu coarse %llu tod-epoch %llu "
                "time %ld\n", (unsigned long long)*last, (unsigned long long)m,
                (unsigned long long)p, (unsigned long long)(r - epoch),
                (unsigned long long)(t - epoch), (unsigned long long)b, (unsigned long long)c,
                (unsigned long long)(g - epoch), s);
        exit(1);
    }
    *last = c > g - epoch ? c : g - epoch;
    uint64_t gap1 = p - m, gap2 = t - r;
    return gap1 > gap2 ? gap1 : gap2;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int mix(long n)
{
    uint64_t last = 0, *gap = calloc((size_t)n, sizeof *gap);
    CHECK(gap);
    for (long i = 0; i < n; i++)
        gap[i] = round_once(&last);
    qsort(gap, (size_t)n, sizeof *gap, cmp_u64);
    uint64_t med = gap[n / 2];
    printf("clockcheck: ok mix %ld rounds, guest->vmm gap median %llu ns, largest %llu ns\n", n,
           (unsigned long long)med, (unsigned long long)gap[n - 1]);
    free(gap);
    return med < 1000000ULL ? 0 : (fprintf(stderr, "clockcheck: median gap over 1 ms\n"), 1);
}

static long run_ms;
static uint64_t worst_step[4];

static void *runner(void *arg)
{
    long k = (long)arg;
    uint64_t last = 0, start = read_clock(CLOCK_MONOTONIC), prev = start;
    volatile uint64_t spin = 0;
    while (prev - start < (uint64_t)run_ms * 1000000ULL) {
        uint64_t before = last;
        round_once(&last);
        if (before && last - before > worst_step[k])
            worst_step[k] = last - before;
        prev = last;
        for (int i = 0; i < 2000; i++) /* some work between readings */
            spin += (uint64_t)i;
    }
    return NULL;
}

static int run(long ms)
{
    run_ms = ms;
    pthread_t t[4];
    for (long k = 0; k < 4; k++)
        CHECK(pthread_create(&t[k], NULL, runner, (void *)k) == 0);
    uint64_t worst = 0;
    for (int k = 0; k < 4; k++) {
        CHECK(pthread_join(t[k], NULL) == 0);
        if (worst_step[k] > worst)
            worst = worst_step[k];
    }
    printf("clockcheck: ok run %ld ms, largest step between readings %llu ns\n", ms,
           (unsigned long long)worst);
    return 0;
}

static int fast(long n)
{
    struct timespec a, b;
    struct timeval tv;
    for (long i = 0; i < n; i++) {
        CHECK(raw2(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&a) == 0);
        CHECK(raw2(SYS_clock_gettime, CLOCK_REALTIME, (long)&b) == 0);
        CHECK(raw2(SYS_gettimeofday, (long)&tv, 0) == 0);
        CHECK(raw2(SYS_time, 0, 0) >= EPOCH_S);
    }
    printf("clockcheck: ok fast %ld\n", n);
    return 0;
}

/* clock_gettime(clk, p) with every other register holding a known value, which a syscall
 * must keep (rcx and r11 excepted). */
static long kept_regs_call(int clk, void *p)
{
    long r, rdx = 0x1111222233334444L, r8 = 0x5555, r9 = 0x6666, r10 = 0x7777, rbx = 0x8888;
    long rdx_out = rdx, r8o, r9o, r10o, rbxo;
    register long r8r __asm__("r8") = r8, r9r __asm__("r9") = r9, r10r __asm__("r10") = r10;
    __asm__ volatile("mov %[rbx], %%rbx\n syscall\n mov %%rbx, %[rbxo]"
                     : "=a"(r), "+d"(rdx_out), "+r"(r8r), "+r"(r9r), "+r"(r10r),
                       [rbxo] "=m"(rbxo)
                     : "a"((long)SYS_clock_gettime), "D"((long)clk), "S"(p),
                       [rbx] "r"(rbx)
                     : "rcx", "r11", "rbx", "memory");
    r8o = r8r, r9o = r9r, r10o = r10r;
    CHECK(rdx_out == rdx && r8o == r8 && r9o == r9 && r10o == r10 && rbxo == rbx);
    return r;
}

static const struct timespec ro_ts = {1, 2}; /* in .rodata: not writable */

static int faults(void)
{
    struct timespec ok;
    CHECK(kept_regs_call(CLOCK_MONOTONIC, &ok) == 0 && ok.tv_sec >= 0);
    CHECK(kept_regs_call(CLOCK_REALTIME, &ok) == 0 && ok.tv_sec >= EPOCH_S);
    CHECK(kept_regs_call(CLOCK_MONOTONIC, (void *)8) == -EFAULT);           /* unmapped */
    CHECK(kept_regs_call(CLOCK_MONOTONIC, (void *)&ro_ts) == -EFAULT);      /* read-only */
    CHECK(ro_ts.tv_sec == 1 && ro_ts.tv_nsec == 2);
    CHECK(kept_regs_call(CLOCK_MONOTONIC, (void *)0x8000000000000000UL) == -EFAULT); /* #GP */
    CHECK(kept_regs_call(CLOCK_MONOTONIC, (void *)0xffff800000001000UL) == -EFAULT); /* kernel */
    CHECK(kept_regs_call(CLOCK_MONOTONIC, (void *)0x7ffffffff000UL) == -EFAULT); /* above the agent */
    /* The agent's own page: readable and executable, not writable. */
    CHECK(kept_regs_call(CLOCK_MONOTONIC, (void *)0x7fffffffd000UL) == -EFAULT);
    char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(two != MAP_FAILED && mprotect(two + 4096, 4096, PROT_NONE) == 0);
    CHECK(kept_regs_call(CLOCK_MONOTONIC, two + 4088) == -EFAULT);          /* straddles */
    CHECK(kept_regs_call(CLOCK_MONOTONIC, two + 4080) == 0);
    CHECK(kept_regs_call(CLOCK_MONOTONIC, two + 4) == 0);                   /* misaligned */
    CHECK(mprotect(two, 4096, PROT_READ) == 0);
    CHECK(kept_regs_call(CLOCK_MONOTONIC, two + 16) == -EFAULT);
    CHECK(munmap(two, 8192) == 0);
    CHECK(kept_regs_call(99, &ok) == -EINVAL && kept_regs_call(-1, &ok) == -EINVAL);
    CHECK(kept_regs_call(CLOCK_THREAD_CPUTIME_ID, &ok) == 0);
    CHECK(raw2(SYS_gettimeofday, 8, 0) == -EFAULT);
    CHECK(raw2(SYS_gettimeofday, (long)&ro_ts, 0) == -EFAULT);
    CHECK(raw2(SYS_time, 8, 0) == -EFAULT);
    CHECK(raw2(SYS_time, (long)&ro_ts, 0) == -EFAULT);
    long tl = 0, s = raw2(SYS_time, (long)&tl, 0);
    CHECK(s >= EPOCH_S && tl == s);
    printf("clockcheck: ok faults\n");
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    if (argc >= 2 && !strcmp(argv[1], "faults"))
        return faults();
    if (argc != 3 || n < 1) {
        fprintf(stderr, "usage: clockcheck mix N | run MS | fast N | faults\n");
        return 2;
    }
    if (!strcmp(argv[1], "mix"))
        return mix(n);
    if (!strcmp(argv[1], "run"))
        return run(n);
    if (!strcmp(argv[1], "fast"))
        return fast(n);
    fprintf(stderr, "clockcheck: unknown mode %s\n", argv[1]);
    return 2;
}
