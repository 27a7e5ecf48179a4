/* rdtsc and rdtscp inside a multi-threaded section. Two threads read the TSC (rdtsc, and
 * rdtscp with its TSC_AUX in ECX) between locked increments of a shared counter (cue
 * points), and let what they read choose the shared slot they add to. Under jinx the
 * answer is virtual time wherever the program's rdtsc is answered by the VMM (trapped, or
 * patched where the host cannot trap it: docs/cpu-models.md "Patching RDTSC"), so a
 * serialized run, its repetition, a simulation and a replay must all print the same;
 * with the host's TSC they differ (tests/integration/cpuid-sim.sh checks).
 *
 *   tscsim            prints "tscsim: hash H sum S monotonic M aux A" (exit 0)
 *   tscsim crash      the same loop, and thread 0 aborts at the first reading whose
 *                     microsecond count (at 3 GHz) is a multiple of 61 after 100
 *                     iterations: where it crashes depends on the TSC alone
 *   tscsim loop N     free-execution cost: N rdtsc then N rdtscp, timed by
 *                     clock_gettime; prints "loop N rdtsc_ns R rdtscp_ns P monotonic M"
 *   tscsim smc        finds its own rdtscp (patched: 0F 0B F9), prints "smc patched=P
 *                     aux=A", then writes 90 over the F9 and runs it again: a ud2 whose
 *                     third byte is no longer rdtscp's is the program's own (SIGILL) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define ROUNDS 2000
#define SLOTS 64

static volatile uint64_t slot[SLOTS];
static unsigned long counter;
static int crash_mode;

static inline uint64_t rd_tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t rd_tscp(uint32_t *aux)
{
    uint32_t lo, hi, c;
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(c));
    *aux = c;
    return (uint64_t)hi << 32 | lo;
}

struct result {
    uint64_t sum;       /* of the differences between successive readings */
    int monotonic;
    uint32_t aux;       /* the largest TSC_AUX seen */
};

static void *worker(void *arg)
{
    unsigned long me = (unsigned long)arg;
    struct result *r = calloc(1, sizeof *r);
    if (!r)
        abort();
    r->monotonic = 1;
    uint64_t prev = rd_tsc();
    for (unsigned i = 0; i < ROUNDS; i++) {
        uint32_t aux;
        uint64_t t = (i & 1) ? rd_tscp(&aux) : rd_tsc();
        if (i & 1 && aux > r->aux)
            r->aux = aux;
        if (t < prev)
            r->monotonic = 0;
        r->sum += t - prev;
        prev = t;
        slot[(t / 64 + me) % SLOTS] += i + 1; /* where it writes depends on the TSC */
        __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
        if (crash_mode && me == 0 && i >= 100 && (t / 3000) % 61 == 0) {
            fprintf(stderr, "tscsim: crashing at iteration %u\n", i);
            abort();
        }
    }
    return r;
}

__attribute__((noinline)) static uint32_t tscp_aux(void)
{
    uint32_t aux;
    rd_tscp(&aux);
    return aux;
}

static int smc(void)
{
    unsigned char *f = (unsigned char *)(uintptr_t)tscp_aux;
    uintptr_t page = (uintptr_t)f & ~(uintptr_t)4095;
    if (mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
        puts("smc: mprotect failed");
        return 1;
    }
    for (int i = 0; i + 2 < 32; i++)
        if (f[i] == 0x0F && (f[i + 1] == 0x0B || f[i + 1] == 0x01) && f[i + 2] == 0xF9) {
            printf("smc patched=%d aux=%u\n", f[i + 1] == 0x0B, tscp_aux());
            fflush(stdout);
            f[i + 2] = 0x90; /* no longer rdtscp's bytes */
            __builtin___clear_cache((char *)f, (char *)f + 32);
            tscp_aux();
            puts("smc: ran on");
            return 0;
        }
    puts("smc: no rdtscp found");
    return 1;
}

static int loop(unsigned long n)
{
    struct timespec a, b, c;
    uint64_t prev = 0;
    int mono = 1;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (unsigned long i = 0; i < n; i++) {
        uint64_t t = rd_tsc();
        mono &= t >= prev;
        prev = t;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    for (unsigned long i = 0; i < n; i++) {
        uint32_t aux;
        uint64_t t = rd_tscp(&aux);
        mono &= t >= prev;
        prev = t;
    }
    clock_gettime(CLOCK_MONOTONIC, &c);
    double d1 = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    double d2 = (c.tv_sec - b.tv_sec) * 1e9 + (c.tv_nsec - b.tv_nsec);
    printf("loop %lu rdtsc_ns %.1f rdtscp_ns %.1f monotonic %d\n", n, d1 / (double)n,
           d2 / (double)n, mono);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "loop")) {
        char *end;
        unsigned long n = strtoul(argv[2], &end, 10);
        if (*end || !n) {
            fprintf(stderr, "tscsim: loop wants a count > 0\n");
            return 2;
        }
        return loop(n);
    }
    if (argc == 2 && !strcmp(argv[1], "smc"))
        return smc();
    crash_mode = argc == 2 && !strcmp(argv[1], "crash");
    if (argc > 1 && !crash_mode) {
        fprintf(stderr, "usage: tscsim [crash | loop N]\n");
        return 2;
    }
    pthread_t t[2];
    for (unsigned long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
            perror("tscsim: pthread_create");
            return 1;
        }
    uint64_t sum = 0, hash = 1469598103934665603ULL;
    int mono = 1;
    uint32_t aux = 0;
    for (int i = 0; i < 2; i++) {
        void *p;
        pthread_join(t[i], &p);
        struct result *r = p;
        sum += r->sum;
        mono &= r->monotonic;
        aux = r->aux > aux ? r->aux : aux;
        free(r);
    }
    for (int i = 0; i < SLOTS; i++)
        hash = (hash ^ slot[i]) * 1099511628211ULL;
    printf("tscsim: hash %016llx sum %llu monotonic %d aux %u\n", (unsigned long long)hash,
           (unsigned long long)sum, mono, aux);
    return counter == 2 * ROUNDS ? 0 : 1;
}
