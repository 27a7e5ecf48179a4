/*
 * atom-split-withdraw - atomicity violation across two critical sections: the balance
 * is checked under the lock, the lock is dropped, and the withdrawal is made under it
 * again, based on the stale check.
 *
 * Two withdrawals of 60 from a balance of 100: only one may succeed. When one is
 * preempted between its check and its withdrawal and the other runs, both pass the check
 * and the balance goes negative: SIGABRT in main. Three threads (main + 2), one
 * preemption.
 *
 *   w0: lock; ok = bal >= 60; unlock  [preempted]              lock; bal -= 60; unlock
 *   w1:                  lock; ok = bal >= 60; unlock; lock; bal -= 60; unlock
 *
 * Twin (atom-split-withdraw-ok): check and withdrawal in one critical section.
 */
#include "corpus.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long balance = 100;
static int paid;

static void *withdraw(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    int ok = balance >= 60;
#if !FIXED
    pthread_mutex_unlock(&m);
    WIDEN(1000000);
    pthread_mutex_lock(&m);
#endif
    if (ok) {
        balance -= 60;
        paid++;
    }
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    run_ids(2, withdraw);
    CHECK(balance >= 0, "balance %ld after %d withdrawals of 60 from 100", balance, paid);
    CHECK(paid == 1, "%d withdrawals paid, want 1", paid);
    PASS("atom-split-withdraw");
    return 0;
}
