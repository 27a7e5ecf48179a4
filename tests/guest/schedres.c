/* Scheduling and resource syscalls as thread pools and portable runtimes call them
 * (issue 28): sched_*param, sched_*scheduler, sched_get_priority_max/min, sched_*affinity,
 * getrlimit/setrlimit/prlimit, sysinfo, madvise.
 *   schedres          prints what Linux answers the same on any machine for an unprivileged
 *                     user ("answers: ..."), compared with a native run by the test script
 *   schedres jinx MEM also checks what jinx alone answers: real-time policies refused
 *                     (EPERM), the CPU count the same through every route, RLIMIT_STACK's
 *                     soft limit the default thread stack (glibc), sysinfo's RAM = MEM
 *                     bytes and its uptime in virtual time.
 * Built with musl (static) and glibc (dynamic): both libcs' routes to the same answers. */
#define _GNU_SOURCE
#include "check.h"
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

static char answers[2048];
static size_t alen;

/* Appends "name=value " to the answers line: a result or an errno name. */
static void note(const char *name, long r)
{
    const char *e = r >= 0 ? NULL : errno == EINVAL ? "EINVAL" : errno == EPERM ? "EPERM"
                  : errno == ESRCH ? "ESRCH" : errno == EFAULT ? "EFAULT"
                  : errno == ENOMEM ? "ENOMEM" : "E?";
    if (e)
        alen += (size_t)snprintf(answers + alen, sizeof answers - alen, "%s=%s ", name, e);
    else
        alen += (size_t)snprintf(answers + alen, sizeof answers - alen, "%s=%ld ", name, r);
}

#define SC(...) syscall(__VA_ARGS__)

static void portable(void)
{
    struct sched_param p = {.sched_priority = 7};
    int prio = 5;
    /* 0-6: OTHER FIFO RR BATCH ISO(unused) IDLE DEADLINE; 100: none (7 is SCHED_EXT
     * since Linux 6.12, so not compared) */
    for (int pol = 0; pol <= 100; pol = pol == 6 ? 100 : pol + 1) {
        char n[32];
        snprintf(n, sizeof n, "max%d", pol);
        note(n, SC(SYS_sched_get_priority_max, pol));
        snprintf(n, sizeof n, "min%d", pol);
        note(n, SC(SYS_sched_get_priority_min, pol));
    }
    note("getsched", SC(SYS_sched_getscheduler, 0));
    note("getsched-self", SC(SYS_sched_getscheduler, SC(SYS_gettid)));
    note("getsched-neg", SC(SYS_sched_getscheduler, -1));
    note("getparam", SC(SYS_sched_getparam, 0, &p));
    note("prio", p.sched_priority);
    note("getparam-null", SC(SYS_sched_getparam, 0, NULL));
    note("getparam-fault", SC(SYS_sched_getparam, 0, (void *)16));
    note("setparam0", SC(SYS_sched_setparam, 0, &(int){0}));
    note("setparam5", SC(SYS_sched_setparam, 0, &prio));
    note("setsched-other", SC(SYS_sched_setscheduler, 0, SCHED_OTHER, &(int){0}));
    note("setsched-other5", SC(SYS_sched_setscheduler, 0, SCHED_OTHER, &prio));
    note("setsched-batch", SC(SYS_sched_setscheduler, 0, SCHED_BATCH, &(int){0}));
    note("setsched-fifo0", SC(SYS_sched_setscheduler, 0, SCHED_FIFO, &(int){0}));
    note("setsched-bad", SC(SYS_sched_setscheduler, 0, 77, &(int){0}));
    note("setsched-fault", SC(SYS_sched_setscheduler, 0, SCHED_OTHER, (void *)16));
    note("setsched-back", SC(SYS_sched_setscheduler, 0, SCHED_OTHER, &(int){0}));
    /* pthread's view, as a portable runtime creating a thread asks it. */
    int pol = -1;
    struct sched_param sp;
    note("pthread-getsched", pthread_getschedparam(pthread_self(), &pol, &sp));
    note("pthread-policy", pol);
    note("pthread-prio", sp.sched_priority);
    cpu_set_t set;
    note("aff-len0", SC(SYS_sched_getaffinity, 0, 0, &set));
    note("aff-len3", SC(SYS_sched_getaffinity, 0, 3, &set));
    note("aff-fault", SC(SYS_sched_getaffinity, 0, sizeof set, (void *)16));
    note("aff-nopid", SC(SYS_sched_getaffinity, 999999, sizeof set, &set));
    CPU_ZERO(&set);
    note("setaff-empty", SC(SYS_sched_setaffinity, 0, sizeof set, &set));
    struct rlimit rl;
    note("getrlimit-bad", SC(SYS_getrlimit, 99, &rl));
    note("getrlimit-null", SC(SYS_getrlimit, RLIMIT_NOFILE, NULL));
    note("getrlimit-fault", SC(SYS_getrlimit, RLIMIT_NOFILE, (void *)16));
    note("rtprio", getrlimit(RLIMIT_RTPRIO, &rl) ? -1 : (long)rl.rlim_cur);
    struct rlimit inv = {.rlim_cur = 10, .rlim_max = 5};
    note("setrlimit-inv", SC(SYS_setrlimit, RLIMIT_NOFILE, &inv));
    note("prlimit-nopid", SC(SYS_prlimit64, 999999, RLIMIT_NOFILE, NULL, &rl));
    note("prlimit-bad", SC(SYS_prlimit64, 0, 77, NULL, &rl));
    note("sysinfo-fault", SC(SYS_sysinfo, (void *)16));
    /* madvise: MADV_DONTNEED zeroes anonymous pages; others keep them; bad ranges. */
    char *m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    memset(m, 9, 4 * 4096);
    note("madv-dontneed", SC(SYS_madvise, m + 4096, 4096, MADV_DONTNEED));
    note("zeroed", m[4096] == 0 && m[2 * 4096 - 1] == 0 && m[0] == 9 && m[2 * 4096] == 9);
    note("madv-willneed", SC(SYS_madvise, m, 4 * 4096, MADV_WILLNEED));
    note("madv-sequential", SC(SYS_madvise, m, 4 * 4096, MADV_SEQUENTIAL));
    note("madv-kept", m[0] == 9 && m[3 * 4096] == 9);
    note("madv-len0", SC(SYS_madvise, m, 0, MADV_NORMAL));
    note("madv-unaligned", SC(SYS_madvise, m + 1, 4096, MADV_NORMAL));
    note("madv-badadvice", SC(SYS_madvise, m, 4096, 77));
    CHECK(munmap(m + 2 * 4096, 4096) == 0);
    note("madv-hole", SC(SYS_madvise, m, 4 * 4096, MADV_WILLNEED));
    note("madv-hole-dontneed", SC(SYS_madvise, m, 4 * 4096, MADV_DONTNEED));
    munmap(m, 4 * 4096);
}

static void *idle_thread(void *arg)
{
    (void)arg;
    return NULL;
}

/* The CPU files (issue 28), the same count: /proc/cpuinfo's processor blocks, /sys's
 * online, possible and present lists, and the cpuK entries readdir sees. */
static void cpu_files(long n)
{
    char buf[65536], want[32];
    FILE *f = fopen("/proc/cpuinfo", "r");
    CHECK(f);
    long procs = 0, flags = 0;
    unsigned a, b, c, dx, fam = 0, model = 0;
    CHECK(__get_cpuid(1, &a, &b, &c, &dx)); /* the CPU the program sees: the same model */
    unsigned want_fam = (a >> 8 & 15) + ((a >> 8 & 15) == 15 ? (a >> 20 & 255) : 0);
    unsigned want_model = (a >> 4 & 15) | ((a >> 8 & 15) >= 6 ? (a >> 16 & 15) << 4 : 0);
    while (fgets(buf, sizeof buf, f)) {
        if (sscanf(buf, "cpu family\t: %u", &fam) == 1)
            CHECK(fam == want_fam);
        if (sscanf(buf, "model\t\t: %u", &model) == 1)
            CHECK(model == want_model);
        procs += !strncmp(buf, "processor\t: ", 12);
        flags += !strncmp(buf, "flags\t\t: ", 9) && strstr(buf, " sse2") && strstr(buf, " fpu");
    }
    fclose(f);
    CHECK(procs == n && flags == n && fam == want_fam && model == want_model);
    snprintf(want, sizeof want, n > 1 ? "0-%ld\n" : "0\n", n - 1);
    const char *lists[] = {"online", "possible", "present"};
    for (int i = 0; i < 3; i++) {
        snprintf(buf, sizeof buf, "/sys/devices/system/cpu/%s", lists[i]);
        int fd = open(buf, O_RDONLY);
        CHECK(fd >= 0);
        ssize_t r = read(fd, buf, sizeof buf - 1);
        CHECK(r > 0);
        buf[r] = 0;
        CHECK(!strcmp(buf, want));
        close(fd);
    }
    DIR *d = opendir("/sys/devices/system/cpu/");
    CHECK(d);
    long cpus = 0;
    for (struct dirent *e; (e = readdir(d));)
        cpus += !strncmp(e->d_name, "cpu", 3) && e->d_name[3] >= '0' && e->d_name[3] <= '9' &&
                e->d_type == DT_DIR;
    closedir(d);
    CHECK(cpus == n);
    snprintf(buf, sizeof buf, "/sys/devices/system/cpu/cpu%ld", n - 1);
    CHECK((d = opendir(buf)) != NULL);
    closedir(d);
    snprintf(buf, sizeof buf, "/sys/devices/system/cpu/cpu%ld", n);
    CHECK(opendir(buf) == NULL);
}

static void jinx_only(long mem)
{
    /* Real-time policies: refused as for an unprivileged user (by the syscall: musl's
     * sched_setscheduler is a stub answering ENOSYS). */
    CHECK(syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &(int){10}) == -1 && errno == EPERM);
    CHECK(syscall(SYS_sched_setscheduler, 0, SCHED_RR, &(int){1}) == -1 && errno == EPERM);
    CHECK(syscall(SYS_sched_setscheduler, 0, SCHED_IDLE, &(int){0}) == 0);
    CHECK(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER | SCHED_RESET_ON_FORK, &(int){0}) == 0);
    /* One CPU count through every route. */
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
    long n = CPU_COUNT(&set);
    CHECK(n >= 1 && sysconf(_SC_NPROCESSORS_ONLN) == n && get_nprocs() == n);
    CHECK(syscall(SYS_sched_getaffinity, 0, sizeof set, &set) == 8 * ((n + 63) / 64));
    CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
    CHECK(sysconf(_SC_NPROCESSORS_CONF) == n && get_nprocs_conf() == n);
    cpu_files(n);
    /* Another live thread's tid is a valid pid; an exited one's is not. */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, idle_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(syscall(SYS_sched_getscheduler, 2) == -1 && errno == ESRCH);
    /* Limits: consistent with what the guest has. */
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur == 1024 && rl.rlim_max == 1024);
    CHECK(getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur == 1 << 20 && rl.rlim_max == 8 << 20);
    CHECK(getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY);
    size_t ss = 0;
    pthread_attr_t a;
#ifdef __GLIBC__
    CHECK(pthread_getattr_default_np(&a) == 0 && pthread_attr_getstacksize(&a, &ss) == 0);
    CHECK(ss == 1 << 20); /* glibc's default thread stack is RLIMIT_STACK's soft limit */
    pthread_attr_destroy(&a);
#else
    (void)a;
    (void)ss;
#endif
    struct rlimit lower = {.rlim_cur = 256, .rlim_max = 1024};
    CHECK(setrlimit(RLIMIT_NOFILE, &lower) == 0);
    struct rlimit raise = {.rlim_cur = 4096, .rlim_max = 4096};
    CHECK(setrlimit(RLIMIT_NOFILE, &raise) == -1 && errno == EPERM);
    CHECK(prlimit(0, RLIMIT_NOFILE, NULL, &rl) == 0 && rl.rlim_max == 1024);
    /* sysinfo: the guest's RAM, an uptime that a sleep advances (virtual time). */
    struct sysinfo si;
    CHECK(sysinfo(&si) == 0 && si.mem_unit == 1 && (long)si.totalram == mem);
    CHECK(si.freeram > 0 && si.freeram < si.totalram && si.procs == 1);
    CHECK(sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) == mem);
    long up = si.uptime;
    CHECK(sleep(3) == 0);
    CHECK(sysinfo(&si) == 0 && (long)si.uptime >= up + 3 && (long)si.uptime < up + 60);
    printf("jinx answers ok: %ld CPUs\n", n);
}

int main(int argc, char **argv)
{
    portable();
    printf("answers: %s\n", answers);
    if (argc > 2 && !strcmp(argv[1], "jinx"))
        jinx_only(atol(argv[2]));
    return 0;
}
