/* A deadlock in a TSan build (tests/integration/sanitizers.sh): the waiter waits on a
 * condition nobody signals, main joins it. Natively the process hangs, with TSan's
 * background thread waking every 100 ms and sleeping again; jinx-vmm reports a deadlock
 * (status 123) as it does for the build without TSan (linux/futex.c: a sanitizer
 * runtime's own sleeping thread is not the program's). */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go; /* never set */

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!go)
        pthread_cond_wait(&cv, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, waiter, NULL))
        return 2;
    pthread_join(t, NULL);
    puts("not reached");
    return 0;
}
