/*
 * spin-tts-plain - a hand-rolled spinlock that tests and then sets with two separate
 * accesses (`while (lock) ; lock = 1;`), and whose waiters spin on a plain load with no
 * system call (the hard case for a serialized executor: labelled `spins: plain`). Two
 * workers update a shared histogram under it; inside the critical section each marks
 * itself the owner, updates a row of the histogram and checks it is still the owner.
 * Two workers that both see the lock free before either sets it are inside together:
 * SIGABRT in the one that finds the other's mark. 3 threads (main + 2), the bug involves
 * 2, two preemptions (a worker between its test and its set; the other inside its
 * critical section, so that both are inside at once).
 *
 *   w1: lock == 0 [preempted]                     lock = 1; owner = 1; ...; unlock; ...
 *   w2:            lock == 0; lock = 1; owner = 2 [preempted]                 ... owner == 2? no
 *
 * Shared accesses: ~2 + 2 x ROW per critical section (owner, bins) plus the spins,
 * 2 x 30000 sections: ~1.1e6 a run plus the spins.
 *
 * Twin (spin-tts-plain-ok): the set is an atomic exchange (test-and-test-and-set); the
 * waiters still spin on a plain load.
 */
#include "corpus.h"

#define WORKERS 2
#define ITERS 30000
#define ROW 8
#define BINS 64

static atomic_int lk;
static int owner;
static uint32_t hist[BINS][ROW];

static void bad_lock(int i)
{
    (void)i;
#if FIXED
    for (;;) {
        if (!atomic_exchange(&lk, 1))
            return;
        while (atomic_load_explicit(&lk, memory_order_relaxed))
            ;                                  /* plain spin: no system call */
    }
#else
    while (atomic_load_explicit(&lk, memory_order_relaxed))
        ;                                      /* plain spin: no system call */
    if (i % 1000 == 999)
        WIDEN(100000);
    atomic_store(&lk, 1);                      /* set: a separate access */
#endif
}

static void *worker(void *arg)
{
    int me = ARG_ID(arg) + 1;
    uint32_t x = (uint32_t)me * 2654435761u;
    for (int i = 0; i < ITERS; i++) {
        x = (x ^ (x >> 16)) * 0x45d9f3bu + (uint32_t)i;
        int b = (int)(x % BINS);
        bad_lock(i);
        STORE(owner, me);
        for (int k = 0; k < ROW; k++)
            STORE(hist[b][k], LOAD(hist[b][k]) + (uint32_t)k + 1);
        CHECK(LOAD(owner) == me, "worker %d and worker %d are both inside the lock", me,
              LOAD(owner));
        atomic_store(&lk, 0);
    }
    return NULL;
}

int main(void)
{
    run_ids(WORKERS, worker);
    uint64_t n = 0;
    for (int b = 0; b < BINS; b++)
        for (int k = 0; k < ROW; k++) {
            CHECK(hist[b][k] % (uint32_t)(k + 1) == 0, "bin %d,%d = %u", b, k, hist[b][k]);
            n += hist[b][k] / (uint32_t)(k + 1);
        }
    CHECK(n == (uint64_t)WORKERS * ITERS * ROW, "%llu updates counted", (unsigned long long)n);
    PASS("spin-tts-plain");
    return 0;
}
