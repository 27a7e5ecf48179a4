/* An order violation made by a sleep (tests/integration/timers.sh, docs/timers.md).
 *
 * Main starts a worker, then sets up the configuration the worker needs (a table it
 * fills entry by entry, then publishes). The worker sleeps 10 ms first, "main has
 * published it by then", and uses it. Natively main takes microseconds and the test
 * passes; on a busy machine main can be descheduled mid-way, the worker's sleep ends and
 * it reads a configuration not yet published: an assertion.
 *
 * FIXED (the bug-free twin, sleeporder_ok): the worker waits for the publication with
 * pthread_cond_timedwait (1 ms) retried on timeout, and sleeps 1 ms between its pieces
 * of work (timers in loops, ending early must not fail it). */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ENTRIES 32

struct config {
    int ready;
    unsigned table[ENTRIES];
};

static struct config cfg;
static struct config *published;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long total;

static void *worker(void *arg)
{
    (void)arg;
#ifdef FIXED
    pthread_mutex_lock(&mu);
    while (!published) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 1000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_nsec -= 1000000000;
            t.tv_sec++;
        }
        int rc = pthread_cond_timedwait(&cv, &mu, &t);
        assert(rc == 0 || rc == ETIMEDOUT);
    }
    struct config *c = published;
    pthread_mutex_unlock(&mu);
#else
    usleep(10000); /* "main has published it by then" */
    struct config *c = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
#endif
    if (!c || !c->ready) {
        fprintf(stderr, "sleeporder: the worker found no configuration: its sleep ended "
                "before main published it\n");
        abort();
    }
    for (unsigned i = 0; i < ENTRIES; i++) {
        total += c->table[i];
#ifdef FIXED
        if (i % 16 == 15) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
#endif
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    for (unsigned i = 0; i < ENTRIES; i++) /* the set-up: entry by entry */
        cfg.table[i] = i * 3 + 1;
    cfg.ready = 1;
    pthread_mutex_lock(&mu);
    __atomic_store_n(&published, &cfg, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(t, NULL);
    printf("sleeporder: ok (%lu)\n", total);
    return 0;
}
