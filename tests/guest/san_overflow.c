/* A signed overflow on a racy path, for UBSan builds with -fno-sanitize-recover
 * (tests/integration/sanitizers.sh): two depositors each check that their deposit fits
 * the balance, then add it. One after the other, the second check fails and the balance
 * stays below INT_MAX; a schedule that runs both checks before either add makes the
 * second add overflow, which UBSan reports (signed integer overflow) and exits 1.
 * -DFIXED checks and adds under a lock: the bug-free twin. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>

#define DEPOSIT 100

static volatile int balance = INT_MAX - 150;
static int accepted;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *depositor(void *arg)
{
    (void)arg;
#ifdef FIXED
    pthread_mutex_lock(&lock);
#endif
    if (balance <= INT_MAX - DEPOSIT) {
        int b = balance;
        balance = b + DEPOSIT; /* overflows when the other deposit came in meanwhile */
#ifndef FIXED
        pthread_mutex_lock(&lock);
#endif
        accepted++;
        pthread_mutex_unlock(&lock);
    } else {
#ifdef FIXED
        pthread_mutex_unlock(&lock);
#endif
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, depositor, NULL))
            return 2;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    /* Both deposits may also be accepted without an overflow (a lost update: both read
     * the same balance); that is no concern of this test, whose bug is UBSan's report. */
    printf("accepted %d, balance %d\n", accepted > 0, balance > 0);
    return 0;
}
