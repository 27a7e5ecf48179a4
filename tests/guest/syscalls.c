/* The syscall layer as a static musl program sees it: identity, time, memory, random,
 * bad arguments answered with errors rather than crashes. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static uint64_t ns(clockid_t c) { struct timespec t; clock_gettime(c, &t); return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec; }

int main(int argc, char **argv)
{
    CHECK(getpid() == 1);
    CHECK(syscall(SYS_gettid) == 1);
    CHECK(argc == 3 && !strcmp(argv[1], "alpha") && !strcmp(argv[2], "beta"));
    CHECK(getenv("JINX_TEST") && !strcmp(getenv("JINX_TEST"), "yes"));

    /* Virtual time: monotonic, and a sleep advances it by at least the request. */
    uint64_t a = ns(CLOCK_MONOTONIC);
    struct timespec req = {0, 50 * 1000 * 1000};
    CHECK(nanosleep(&req, NULL) == 0);
    uint64_t b = ns(CLOCK_MONOTONIC);
    CHECK(b - a >= 50 * 1000 * 1000ull);
    CHECK(ns(CLOCK_REALTIME) / 1000000000ull >= 1767225600ull);
    unsigned long long t1 = __rdtsc(), t2 = __rdtsc();
    CHECK(t2 >= t1);

    /* Memory: anonymous mmap, mprotect, munmap, brk. */
    char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK(p[0] == 0 && p[3 * 4096 - 1] == 0);
    memset(p, 7, 3 * 4096);
    CHECK(mprotect(p + 4096, 4096, PROT_NONE) == 0);
    CHECK(mprotect(p + 4096, 4096, PROT_READ | PROT_WRITE) == 0);
    CHECK(p[4096] == 7);
    CHECK(madvise(p + 4096, 4096, MADV_DONTNEED) == 0 && p[4096] == 0 && p[0] == 7);
    CHECK(munmap(p, 3 * 4096) == 0);
    /* madvise over kernel or unmapped ranges fails at once (it used to walk the length). */
    CHECK(madvise((void *)0xffff800000000000ull, 1ull << 46, MADV_DONTNEED) == -1 && errno == EINVAL);
    CHECK(madvise((void *)0x100000000000ull, 1ull << 40, MADV_DONTNEED) == -1 && errno == ENOMEM);
    CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 3, 0) == MAP_FAILED);
    void *big = mmap(NULL, 64ull << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(big == MAP_FAILED && errno == ENOMEM);
    /* musl's sbrk refuses growth, so talk to brk directly. */
    char *cur = (char *)syscall(SYS_brk, 0);
    CHECK((char *)syscall(SYS_brk, cur + 65536) == cur + 65536);
    memset(cur, 1, 65536);
    CHECK((char *)syscall(SYS_brk, cur) == cur);

    /* Bad pointers and bad arguments: errors, never a crash of the VMM. */
    CHECK(syscall(SYS_write, 1, (void *)0xdead0000, 10) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_write, 1, (void *)0xffff800000001000ull, 10) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (void *)0x10) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_clock_gettime, 12345, &req) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_futex, (void *)0x1000, 0, 0, 0, 0, 0) == -1 && errno == EFAULT);
    int word = 0;
    CHECK(syscall(SYS_futex, (char *)&word + 1, 0, 0, 0, 0, 0) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_writev, 1, (void *)0x20, 5) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_write, 77, "x", 1) == -1 && errno == EBADF);
    CHECK(syscall(SYS_getrandom, (void *)0x30, 16, 0) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_rt_sigaction, 99, 0, 0, 8) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_munmap, 0x1001, 4096) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_mprotect, 0x7000000000ull, 4096, PROT_READ) == -1 && errno == ENOMEM);
    CHECK(syscall(9999) == -1 && errno == ENOSYS);
    CHECK(syscall(SYS_socket, 2, 1, 0) == -1 && errno == ENOSYS); /* reported once on stderr */
    CHECK(syscall(SYS_socket, 2, 1, 0) == -1 && errno == ENOSYS); /* ... not twice */
    CHECK(syscall(SYS_fork) == -1 && errno == ENOSYS);
    CHECK(syscall(SYS_arch_prctl, 0x1002, 0xffff800000000000ull) == -1 && errno == EPERM);

    struct utsname u;
    CHECK(uname(&u) == 0 && !strcmp(u.sysname, "Linux") && !strcmp(u.machine, "x86_64"));
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 1);
    CHECK(sysconf(_SC_NPROCESSORS_ONLN) >= 1);

    /* Seeded randomness: printed so the runner can compare two runs. */
    unsigned char r[8];
    CHECK(getrandom(r, sizeof r, 0) == sizeof r);
    printf("random %02x%02x%02x%02x%02x%02x%02x%02x\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
    printf("syscalls ok\n");
    return 0;
}
