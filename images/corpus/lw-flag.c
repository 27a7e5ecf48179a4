/*
 * lw-flag - lost wakeup: the waiter tests the flag before taking the mutex and then
 * waits once, without re-testing under the mutex. If the setter sets the flag and
 * signals between the waiter's test and its wait, the signal finds nobody and the waiter
 * sleeps forever. Deadlock (the waiter in pthread_cond_wait, main in join). Three
 * threads (main + waiter + setter), one preemption (the waiter, after its test).
 *
 *   waiter: if (!ready) [preempted]                          lock; wait; unlock
 *   setter:                lock; ready = 1; signal; unlock
 *
 * Twin (lw-flag-ok): lock; while (!ready) wait; unlock.
 */
#include "corpus.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;

static void *waiter(void *arg)
{
    (void)arg;
#if FIXED
    pthread_mutex_lock(&m);
    while (!ready)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
#else
    if (!LOAD(ready)) {
        WIDEN(1000000);
        pthread_mutex_lock(&m);
        pthread_cond_wait(&c, &m);
        pthread_mutex_unlock(&m);
    }
#endif
    return NULL;
}

static void *setter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t w, s;
    start_thread(&w, waiter, NULL);
    start_thread(&s, setter, NULL);
    join_thread(w);
    join_thread(s);
    PASS("lw-flag");
    return 0;
}
