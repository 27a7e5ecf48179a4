/*
 * thr4-barrier - a hand-rolled barrier for four threads whose arrival count is bumped
 * outside the lock: a lost increment leaves everyone waiting for a fourth arrival that
 * already happened. Deadlock (every thread blocked: the workers in pthread_cond_wait,
 * main in pthread_join). Five threads (main + 4), one preemption (a worker between its
 * read and its write of `arrived`).
 *
 *   each worker: n = arrived; arrived = n + 1;          <- racy
 *                lock; if (arrived == 4) broadcast; else while (arrived < 4) wait; unlock
 *
 * No twin.
 */
#include "corpus.h"

#define WORKERS 4
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int arrived;
static long after;

static void *worker(void *arg)
{
    (void)arg;
    int n = LOAD(arrived);
    WIDEN(1000000);
    STORE(arrived, n + 1);
    pthread_mutex_lock(&m);
    if (arrived == WORKERS)
        pthread_cond_broadcast(&c);
    else
        while (arrived < WORKERS)
            pthread_cond_wait(&c, &m);
    after++;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    run_ids(WORKERS, worker);
    CHECK(after == WORKERS, "%ld of %d passed the barrier", after, WORKERS);
    PASS("thr4-barrier");
    return 0;
}
