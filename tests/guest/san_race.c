/* A data race that needs a schedule, for TSan builds (tests/integration/sanitizers.sh):
 * main starts a worker and publishes the configuration under the lock at once; the
 * worker first prepares its work (about 20 ms of computation in registers), then
 * looks for the configuration under the lock. Only when the worker takes the lock before
 * main has published does it fall back to defaults, and it notes that in `fallbacks`
 * after unlocking, while main reads `fallbacks` without the lock (it "knows" the worker
 * found the configuration): a data race, which TSan reports (exit 66). Natively main
 * publishes long before the worker looks, so the racing write hardly ever happens; a
 * schedule that runs the worker to its lock first makes it. -DFIXED notes the fallback
 * and reads it under the lock: the bug-free twin. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int config; /* under lock */
static int fallbacks;
static int result;  /* under lock */

static void *worker(void *arg)
{
    unsigned x = (unsigned)(unsigned long)arg;
    for (unsigned i = 0; i < 20000000; i++) { /* preparation, in registers */
        x = x * 1103515245u + 12345u;
        __asm__ volatile("" : "+r"(x)); /* one step at a time, whatever the compiler */
    }
    pthread_mutex_lock(&lock);
    int c = config;
#ifdef FIXED
    if (!c) {
        c = 7;
        fallbacks++;
    }
    result = c + (int)(x & 1);
    pthread_mutex_unlock(&lock);
#else
    result = (c ? c : 7) + (int)(x & 1);
    pthread_mutex_unlock(&lock);
    if (!c)
        fallbacks++; /* races with main's read */
#endif
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, (void *)1ul))
        return 2;
    pthread_mutex_lock(&lock);
    config = 5;
    pthread_mutex_unlock(&lock);
#ifdef FIXED
    pthread_mutex_lock(&lock);
    int f = fallbacks;
    pthread_mutex_unlock(&lock);
#else
    int f = fallbacks; /* "the worker surely found the configuration" */
#endif
    pthread_join(t, NULL);
    printf("result %d, fallbacks %d\n", result > 0, f >= 0);
    return 0;
}
