/*
 * spin-unlock-early - a test-and-test-and-set spinlock (waiters sched_yield) whose
 * holder releases it one write too early. Three workers append computed records to a
 * shared journal: under the lock each reads the journal length, writes its record,
 * bumps the length and reads the running total; it unlocks and only then stores the new
 * total. A worker that takes the lock in between reads the old total, so one of the two
 * additions is lost: main recomputes the total from the journal, SIGABRT in main.
 * 4 threads (main + 3), the bug involves 2, one preemption (the holder, between its
 * unlock and its store of the total).
 *
 *   w1: lock; append; s = total; unlock [preempted]                 total = s + v1
 *   w2:                                  lock; append; total = s + v2; unlock
 *
 * Shared accesses: ~8 per append (lock exchange, length, record, total, unlock),
 * 3 x 25000 appends: ~6e5 a run.
 *
 * Twin (spin-unlock-early-ok): the total is stored before the unlock.
 */
#include "corpus.h"

#define WORKERS 3
#define ITERS 25000

static atomic_int lk;
static uint64_t journal[WORKERS * ITERS];
static long length;
static uint64_t total;

static void spin_lock(void)
{
    for (;;) {
        if (!atomic_exchange(&lk, 1))
            return;
        while (atomic_load(&lk))
            sched_yield();
    }
}

static void spin_unlock(void)
{
    atomic_store(&lk, 0);
}

static void *worker(void *arg)
{
    int id = ARG_ID(arg);
    uint64_t x = (uint64_t)(id + 1) * 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < ITERS; i++) {
        x = work(x, 8);
        uint64_t v = x >> 40;
        spin_lock();
        long n = LOAD(length);
        STORE(journal[n], v);
        STORE(length, n + 1);
        uint64_t s = LOAD(total);
#if FIXED
        STORE(total, s + v);
        spin_unlock();
#else
        spin_unlock();
        if (i == ITERS / 2)
            WIDEN(2000000);
        STORE(total, s + v);                   /* after the unlock */
#endif
    }
    return NULL;
}

int main(void)
{
    run_ids(WORKERS, worker);
    CHECK(length == WORKERS * ITERS, "journal holds %ld records", length);
    uint64_t want = 0;
    for (long i = 0; i < length; i++)
        want += journal[i];
    CHECK(total == want, "total %llu, the journal sums to %llu", (unsigned long long)total,
          (unsigned long long)want);
    PASS("spin-unlock-early");
    return 0;
}
