/*
 * dl-transfer - lock-order deadlock hidden in the data: transfer(from, to) locks `from`
 * and then `to`, so two transfers in opposite directions take the two account locks in
 * opposite orders. Deadlock (main blocked in join). Three threads (main + 2), one
 * preemption.
 *
 *   t0: transfer(x, y): lock x [preempted]           lock y   <- blocks
 *   t1: transfer(y, x):            lock y; lock x             <- blocks
 *
 * Twin (dl-transfer-ok): transfer locks the account with the lower id first.
 */
#include "corpus.h"

struct account {
    pthread_mutex_t m;
    int id;
    long balance;
};

static struct account acct[2] = { { PTHREAD_MUTEX_INITIALIZER, 0, 100 },
                                  { PTHREAD_MUTEX_INITIALIZER, 1, 100 } };

static void transfer(struct account *from, struct account *to, long amount)
{
    struct account *first = from, *second = to;
    if (FIXED && first->id > second->id) {
        first = to;
        second = from;
    }
    pthread_mutex_lock(&first->m);
    WIDEN(1000000);
    pthread_mutex_lock(&second->m);
    from->balance -= amount;
    to->balance += amount;
    pthread_mutex_unlock(&second->m);
    pthread_mutex_unlock(&first->m);
}

static void *worker(void *arg)
{
    int i = ARG_ID(arg);
    transfer(&acct[i], &acct[1 - i], 10 * (i + 1));
    return NULL;
}

int main(void)
{
    run_ids(2, worker);
    CHECK(acct[0].balance == 110 && acct[1].balance == 90, "balances %ld/%ld",
          acct[0].balance, acct[1].balance);
    PASS("dl-transfer");
    return 0;
}
