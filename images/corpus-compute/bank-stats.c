/*
 * bank-stats - bank transfers with an unlocked check, beside a hot statistics counter.
 * Four tellers each make OPS transfers between ACCOUNTS accounts (amounts and accounts
 * from a fixed per-teller generator). A transfer checks the source balance without a
 * lock, then takes both account locks (lower index first) and moves the money. Between
 * operations every teller bumps global statistics counters (atomic, hot: written ~10^5
 * times a run). If another teller drains the source between the check and the locks,
 * the balance goes negative: SIGABRT in that teller. 5 threads (main + 4), the bug
 * involves 2, one preemption (the checking teller, between its check and its lock).
 *
 *   t1: LOAD(bal[a]) = 30 >= 25 [preempted]               lock; bal[a] -= 25 -> -15!
 *   t2:                 lock; bal[a] -= 20; unlock (10)
 *
 * Shared accesses: per transfer ~2 stats RMWs, 1 unlocked load, 4 mutex atomics,
 * 4 balance loads/stores: ~11, times 4 x 15000 transfers: ~6.6e5 a run.
 *
 * Twin (bank-stats-ok): the check is repeated under the locks.
 */
#include "corpus.h"

#define ACCOUNTS 8
#define TELLERS 4
#define OPS 15000
#define START 100

static long bal[ACCOUNTS];
static pthread_mutex_t lk[ACCOUNTS];
static atomic_ulong stat_ops, stat_moved, stat_refused;

static void lock2(int a, int b)
{
    pthread_mutex_lock(&lk[a < b ? a : b]);
    pthread_mutex_lock(&lk[a < b ? b : a]);
}

static void unlock2(int a, int b)
{
    pthread_mutex_unlock(&lk[a]);
    pthread_mutex_unlock(&lk[b]);
}

static void *teller(void *arg)
{
    int id = ARG_ID(arg);
    uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(id + 1);
    for (int i = 0; i < OPS; i++) {
        uint64_t r = rng_next(&s);
        int from = (int)(r % ACCOUNTS), to = (int)((r >> 8) % ACCOUNTS);
        if (to == from)
            to = (to + 1) % ACCOUNTS;
        long amt = 1 + (long)((r >> 16) % 40);
        atomic_fetch_add_explicit(&stat_ops, 1, memory_order_relaxed);
        if (LOAD(bal[from]) < amt) {           /* the check, without the locks */
            atomic_fetch_add_explicit(&stat_refused, 1, memory_order_relaxed);
            continue;
        }
        if (i == OPS / 2)
            WIDEN(1000000);
        lock2(from, to);
#if FIXED
        if (bal[from] < amt) {                 /* checked again under the locks */
            unlock2(from, to);
            atomic_fetch_add_explicit(&stat_refused, 1, memory_order_relaxed);
            continue;
        }
#endif
        STORE(bal[from], LOAD(bal[from]) - amt);
        CHECK(LOAD(bal[from]) >= 0, "teller %d overdrew account %d to %ld (transfer %d of %ld)",
              id, from, bal[from], i, amt);
        STORE(bal[to], LOAD(bal[to]) + amt);
        unlock2(from, to);
        atomic_fetch_add_explicit(&stat_moved, (unsigned long)amt, memory_order_relaxed);
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < ACCOUNTS; i++) {
        bal[i] = START;
        pthread_mutex_init(&lk[i], NULL);
    }
    run_ids(TELLERS, teller);
    long total = 0;
    for (int i = 0; i < ACCOUNTS; i++)
        total += bal[i];
    CHECK(total == (long)ACCOUNTS * START, "money not conserved: %ld", total);
    CHECK(atomic_load(&stat_ops) == (unsigned long)TELLERS * OPS, "ops %lu",
          (unsigned long)atomic_load(&stat_ops));
    PASS("bank-stats");
    return 0;
}
