/*
 * bounding-3t — a bug with t = 3 in the sense of variable/thread bounding (Bindal, Bansal,
 * Lal): it needs scheduling constraints among three threads; with any two threads the
 * program is correct.
 *
 * The threads share a Peterson-style "victim" lock (flag[i], victim), which is a correct
 * mutual-exclusion lock for two threads, used here by three:
 *
 *   lock(i):   flag[i] = 1; victim = i;
 *              while (victim == i && (flag[j] || flag[k])) spin;
 *   unlock(i): flag[i] = 0;
 *   critical section: assert(inside++ == 0); count++ ...; inside--
 *
 * The bug needs all three threads: A is in the critical section (it got in when B wrote
 * victim = B); B spins in lock(B) because victim == B and flag[A] is set; then C runs
 * lock(C) and writes victim = C. B's loop now sees victim != B and B enters while A is
 * still inside: B's check  assert(inside++ == 0)  fails (SIGABRT). The required order is
 * A.enter < B.(victim = B) < C.(victim = C) < B.(read victim) < A.exit. Natively the
 * threads do ~work units of private work per ~cs units inside, so three-way contention
 * in that order is rare.
 *
 * usage: bounding-3t [iters [work [cs [threads]]]]
 *        (defaults 40 iterations per thread, work 30000, cs 200, 3 threads; with 2 threads
 *        the program is correct)
 * -DWIDEN_WINDOW: the critical section sleeps 2 ms.
 */
#include "common.h"

#define MAXT 8

static _Atomic int flag[MAXT];
static _Atomic int victim;
static _Atomic int inside;
static long count; /* protected by the lock */
static struct gate start = GATE_INIT;
static long iters = 40, work_units = 30000, cs_units = 200, nthreads = 3;

static int others_want(int me)
{
    for (int j = 0; j < nthreads; j++)
        if (j != me && atomic_load(&flag[j]))
            return 1;
    return 0;
}

static void lock(int me)
{
    atomic_store(&flag[me], 1);
    atomic_store(&victim, me);
    unsigned spins = 0;
    while (atomic_load(&victim) == me && others_want(me)) {
        if (++spins % 32 == 0)
            sched_yield();
    }
}

static void unlock(int me)
{
    atomic_store(&flag[me], 0);
}

struct targ {
    int id;
    uint64_t seed;
};

static void *worker(void *arg)
{
    struct targ *t = arg;
    uint64_t rng = t->seed, acc = (uint64_t)t->id + 1;
    gate_wait(&start);
    for (long i = 0; i < iters; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        lock(t->id);
        assert(atomic_fetch_add(&inside, 1) == 0);
        long n = *(volatile long *)&count;
        acc = work(acc, (unsigned long)cs_units);
        WIDEN(2000000);
        *(volatile long *)&count = n + 1;
        atomic_fetch_sub(&inside, 1);
        unlock(t->id);
    }
    keep(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[iters [work [cs [threads]]]]";
    iters = arg_long(argc, argv, 1, iters, usage);
    work_units = arg_long(argc, argv, 2, work_units, usage);
    cs_units = arg_long(argc, argv, 3, cs_units, usage);
    nthreads = arg_long(argc, argv, 4, nthreads, usage);
    if (nthreads < 1 || nthreads > MAXT) {
        fprintf(stderr, "threads must be 1..%d\n", MAXT);
        return 2;
    }
    uint64_t seed = os_seed();
    pthread_t th[MAXT];
    struct targ ta[MAXT];
    for (int i = 0; i < nthreads; i++) {
        ta[i] = (struct targ){ i, seed * (uint64_t)(2 * i + 3) | 1 };
        start_thread(&th[i], worker, &ta[i]);
    }
    gate_open(&start);
    for (int i = 0; i < nthreads; i++)
        join_thread(th[i]);
    assert(count == iters * nthreads);
    printf("bounding-3t: ok threads=%ld iters=%ld count=%ld%s\n", nthreads, iters, count,
           WIDENED ? " (widened)" : "");
    return 0;
}
