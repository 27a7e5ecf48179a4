/* Sparse schedules' test program: threads that compute on a shared page.
 *
 * Two tellers each run ITERS operations on one account. Every operation bumps a global
 * statistics counter (a hot shared variable: ~2 x ITERS accesses a run, all on the same
 * page as the balance), and every STRIDE-th one withdraws with an unlocked
 * check-then-act: `if (balance >= AMOUNT) balance -= AMOUNT;`. A teller preempted
 * between its check and its store lets the other drain the account, and the balance
 * goes negative: CHECK -> abort. Natively the window is a few instructions wide.
 *
 * Built twice (tests/guest/guest.mk): sparsebank, and sparsebank_ok with -DFIXED, where
 * the withdrawal holds a mutex (the bug-free twin). Argument: ITERS (default 20000).
 * Prints "sparsebank: ok <ops>" when the bug did not show. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define STRIDE 500
#define AMOUNT 10

static struct {
    volatile long balance;
    volatile unsigned long ops; /* statistics: racy on purpose, only ever printed */
    pthread_mutex_t lock;
} acct = {.lock = PTHREAD_MUTEX_INITIALIZER};

static long iters = 20000;

static void withdraw(void)
{
#ifdef FIXED
    pthread_mutex_lock(&acct.lock);
#endif
    if (acct.balance >= AMOUNT) {
        long b = acct.balance;
        acct.balance = b - AMOUNT;
    }
#ifdef FIXED
    pthread_mutex_unlock(&acct.lock);
#endif
    if (acct.balance < 0) {
        fprintf(stderr, "sparsebank: balance went negative (%ld)\n", acct.balance);
        abort();
    }
}

static void *teller(void *arg)
{
    unsigned long x = (unsigned long)arg, sum = 0;
    for (long i = 0; i < iters; i++) {
        acct.ops++;
        x = x * 6364136223846793005UL + 1442695040888963407UL; /* private work */
        sum += x >> 60;
        if (i % STRIDE == STRIDE - 1)
            withdraw();
    }
    return (void *)sum;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iters = atol(argv[1]);
    if (iters < STRIDE)
        iters = STRIDE;
    /* Enough for one teller's withdrawals and a half: the check is what protects it. */
    acct.balance = (iters / STRIDE) * AMOUNT * 3 / 2;
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, teller, (void *)(i + 1)) != 0)
            return 2;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sparsebank: ok %lu\n", acct.ops);
    return 0;
}
