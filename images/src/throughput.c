/*
 * throughput — no bug; the overhead benchmark.
 *
 *   throughput [threads [iters [cpu [cs]]]]
 *     threads (default 4) each run iters (default 4000) iterations of
 *       (a) a CPU-bound private phase: cpu (default 2048) rounds of an integer hash over
 *           the thread's own page-aligned 4 KiB buffer, and
 *       (b) a mutex-contended phase: lock(m); update shared counters (cs rounds, default
 *           32); unlock(m).
 *     Prints  cpu_phase_ms=  (time in phase (a), averaged over threads)
 *             mutex_phase_ms= (time in phase (b), averaged over threads)
 *             total_ms=       (wall clock from releasing the threads to the last join)
 *
 *   throughput pingpong [N]
 *     two threads hand a token back and forth N times (default 2000) through a mutex
 *     and two condition variables; prints pingpong_roundtrip_ns= (wall time / N; one
 *     round trip = two futex wake/wait hand-offs).
 *
 * All timing uses clock_gettime(CLOCK_MONOTONIC) (virtual time under jinx-vmm).
 */
#include "common.h"
#include <string.h>

#define MAXT 64
#define BUFWORDS 512 /* 4 KiB */

static _Alignas(4096) uint64_t bufs[MAXT][BUFWORDS];

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t sum, count, hash;
} shared;
static struct gate start = GATE_INIT;
static long nthreads = 4, iters = 4000, cpu_units = 2048, cs_units = 32;

struct result {
    uint64_t cpu_ns, mutex_ns;
    int id;
};

static uint64_t cpu_phase(uint64_t *buf, uint64_t x, long n)
{
    for (long i = 0; i < n; i++) {
        uint64_t *p = &buf[(x >> 7) % BUFWORDS];
        x ^= *p + (uint64_t)i;
        x *= 0x9e3779b97f4a7c15ULL;
        *p = x;
    }
    return x;
}

static void *worker(void *arg)
{
    struct result *r = arg;
    uint64_t *buf = bufs[r->id], x = (uint64_t)r->id * 0x1234567 + 1;
    for (int i = 0; i < BUFWORDS; i++)
        buf[i] = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
    gate_wait(&start);
    for (long i = 0; i < iters; i++) {
        uint64_t t0 = now_ns();
        x = cpu_phase(buf, x, cpu_units);
        uint64_t t1 = now_ns();
        pthread_mutex_lock(&m);
        for (long k = 0; k < cs_units; k++) {
            shared.sum += x >> 32;
            shared.hash = (shared.hash ^ x) * 0x100000001b3ULL;
        }
        shared.count++;
        pthread_mutex_unlock(&m);
        uint64_t t2 = now_ns();
        r->cpu_ns += t1 - t0;
        r->mutex_ns += t2 - t1;
    }
    keep(x);
    return NULL;
}

/* ---- pingpong ---- */
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pc[2] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };
static int turn;
static long pp_n = 2000;

static void *ponger(void *arg)
{
    int me = (int)(intptr_t)arg;
    pthread_mutex_lock(&pm);
    for (long i = 0; i < pp_n; i++) {
        while (turn != me)
            pthread_cond_wait(&pc[me], &pm);
        turn = !me;
        pthread_cond_signal(&pc[!me]);
    }
    pthread_mutex_unlock(&pm);
    return NULL;
}

static int pingpong(int argc, char **argv)
{
    pp_n = arg_long(argc, argv, 2, pp_n, "pingpong [N]");
    if (pp_n < 1)
        pp_n = 1;
    pthread_t a, b;
    uint64_t t0 = now_ns();
    start_thread(&a, ponger, (void *)(intptr_t)0);
    start_thread(&b, ponger, (void *)(intptr_t)1);
    join_thread(a);
    join_thread(b);
    uint64_t t1 = now_ns();
    printf("throughput: pingpong n=%ld pingpong_roundtrip_ns=%llu total_ms=%.3f\n", pp_n,
           (unsigned long long)((t1 - t0) / (uint64_t)pp_n), (double)(t1 - t0) / 1e6);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "pingpong") == 0)
        return pingpong(argc, argv);
    const char *usage = "[threads [iters [cpu [cs]]]] | pingpong [N]";
    nthreads = arg_long(argc, argv, 1, nthreads, usage);
    iters = arg_long(argc, argv, 2, iters, usage);
    cpu_units = arg_long(argc, argv, 3, cpu_units, usage);
    cs_units = arg_long(argc, argv, 4, cs_units, usage);
    if (nthreads < 1 || nthreads > MAXT) {
        fprintf(stderr, "threads must be 1..%d\n", MAXT);
        return 2;
    }
    pthread_t th[MAXT];
    static struct result res[MAXT];
    for (int i = 0; i < nthreads; i++) {
        res[i].id = i;
        start_thread(&th[i], worker, &res[i]);
    }
    uint64_t t0 = now_ns();
    gate_open(&start);
    for (int i = 0; i < nthreads; i++)
        join_thread(th[i]);
    uint64_t t1 = now_ns();
    uint64_t cpu = 0, mtx = 0;
    for (int i = 0; i < nthreads; i++) {
        cpu += res[i].cpu_ns;
        mtx += res[i].mutex_ns;
    }
    assert(shared.count == (uint64_t)(nthreads * iters));
    printf("throughput: threads=%ld iters=%ld cpu_phase_ms=%.3f mutex_phase_ms=%.3f "
           "total_ms=%.3f\n",
           nthreads, iters, (double)cpu / 1e6 / (double)nthreads,
           (double)mtx / 1e6 / (double)nthreads, (double)(t1 - t0) / 1e6);
    return 0;
}
