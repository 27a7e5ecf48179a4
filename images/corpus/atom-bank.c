/*
 * atom-bank - multi-variable atomicity violation: each account has its own lock, and a
 * transfer takes them one after the other, so the money is briefly in neither account.
 *
 * The auditor locks both accounts (in a fixed order) and checks the total. When it runs
 * between the transfer's two critical sections it sees 100 instead of 200: SIGABRT in the
 * auditor. Three threads (main + transfer + auditor), one preemption.
 *
 *   transfer: lock A; A -= 50; unlock A  [preempted]  lock B; B += 50; unlock B
 *   auditor:                 lock A; lock B; check(A + B == 200); unlock B; unlock A
 *
 * Twin (atom-bank-ok): the transfer holds both locks (same fixed order) for the move.
 */
#include "corpus.h"

struct account {
    pthread_mutex_t m;
    long balance;
};

static struct account acct_a = { PTHREAD_MUTEX_INITIALIZER, 100 };
static struct account acct_b = { PTHREAD_MUTEX_INITIALIZER, 100 };

static void *transfer(void *arg)
{
    (void)arg;
#if FIXED
    pthread_mutex_lock(&acct_a.m);
    pthread_mutex_lock(&acct_b.m);
    acct_a.balance -= 50;
    acct_b.balance += 50;
    pthread_mutex_unlock(&acct_b.m);
    pthread_mutex_unlock(&acct_a.m);
#else
    pthread_mutex_lock(&acct_a.m);
    acct_a.balance -= 50;
    pthread_mutex_unlock(&acct_a.m);
    WIDEN(1000000);
    pthread_mutex_lock(&acct_b.m);
    acct_b.balance += 50;
    pthread_mutex_unlock(&acct_b.m);
#endif
    return NULL;
}

static void *auditor(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&acct_a.m);
    pthread_mutex_lock(&acct_b.m);
    long total = acct_a.balance + acct_b.balance;
    pthread_mutex_unlock(&acct_b.m);
    pthread_mutex_unlock(&acct_a.m);
    CHECK(total == 200, "audit total %ld, want 200 (a transfer was half done)", total);
    return NULL;
}

int main(void)
{
    pthread_t t, a;
    start_thread(&t, transfer, NULL);
    start_thread(&a, auditor, NULL);
    join_thread(t);
    join_thread(a);
    CHECK(acct_a.balance == 50 && acct_b.balance == 150, "balances %ld/%ld",
          acct_a.balance, acct_b.balance);
    PASS("atom-bank");
    return 0;
}
