/*
 * syscall-loop — a benchmark and test guest, not a workload (no manifest): N raw
 * syscalls of one kind in a loop, so that the cost of one syscall under jinx is
 * (wall(N) - wall(0)) / N (scripts/bench/syscall-cost.sh). Each answer is checked against
 * what jinx's VMM answers, so a wrong in-guest answer fails the run (exit 1) whichever
 * path produced it.
 *
 * usage: syscall-loop KIND [N]   KIND: getpid getppid getpgrp gettid clock uname
 *        (default N 10000; uname is a syscall the agent never answers in the guest)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A raw syscall, so that neither libc caches the answer nor takes a vDSO shortcut. */
static long raw0(long nr)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
    return ret;
}

static long raw2(long nr, long a, long b)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return ret;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: syscall-loop getpid|getppid|getpgrp|gettid|clock|uname [N]\n");
        return 2;
    }
    char *end;
    long n = argc == 3 ? strtol(argv[2], &end, 10) : 10000;
    if (argc == 3 && (*end || n < 0)) {
        fprintf(stderr, "syscall-loop: N must be a count, not %s\n", argv[2]);
        return 2;
    }
    const char *k = argv[1];
    long tid = raw0(SYS_gettid);
    struct timespec ts, prev = {0, 0};
    char uts[390];
    for (long i = 0; i < n; i++) {
        long r;
        if (!strcmp(k, "getpid") && (r = raw0(SYS_getpid)) != 1)
            goto bad;
        else if (!strcmp(k, "getppid") && (r = raw0(SYS_getppid)) != 0)
            goto bad;
        else if (!strcmp(k, "getpgrp") && (r = raw0(SYS_getpgrp)) != 1)
            goto bad;
        else if (!strcmp(k, "gettid") && (r = raw0(SYS_gettid)) != tid)
            goto bad;
        else if (!strcmp(k, "clock")) {
            /* Monotonic: never backwards. */
            if ((r = raw2(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts)) != 0 ||
                ts.tv_sec < prev.tv_sec || (ts.tv_sec == prev.tv_sec && ts.tv_nsec < prev.tv_nsec))
                goto bad;
            prev = ts;
        } else if (!strcmp(k, "uname") && (r = raw2(SYS_uname, (long)uts, 0)) != 0)
            goto bad;
        else if (strcmp(k, "getpid") && strcmp(k, "getppid") && strcmp(k, "getpgrp") &&
                 strcmp(k, "gettid") && strcmp(k, "clock") && strcmp(k, "uname")) {
            fprintf(stderr, "syscall-loop: unknown kind %s\n", k);
            return 2;
        }
        continue;
    bad:
        printf("syscall-loop: %s answered wrongly at iteration %ld\n", k, i);
        return 1;
    }
    printf("syscall-loop: %ld x %s ok\n", n, k);
    return 0;
}
