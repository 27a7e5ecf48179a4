/*
 * order-done-flag - order violation: "done" is announced before the result is stored.
 *
 * The worker sets done and signals under the mutex, then stores the result after the
 * unlock (the author: "it is the very next line", and main does tens of microseconds of
 * its own work before it looks). main wakes, sees done and checks the result: 0 when the
 * worker is preempted between its unlock and its store. SIGABRT in main. Two threads,
 * one preemption (the worker, after its unlock).
 *
 *   worker                          main
 *   lock; done = 1; signal; unlock  lock; while (!done) wait; unlock
 *                                   check(result == 42)     <- before the store: fails
 *   result = 42
 *
 * Twin (order-done-flag-ok): the result is stored inside the critical section, before done.
 */
#include "corpus.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int done;
static long result;

static void *worker(void *arg)
{
    long sum = 0;
    (void)arg;
    for (int i = 1; i <= 8; i++)
        sum += i;                          /* 36 */
    pthread_mutex_lock(&m);
#if FIXED
    STORE(result, sum + 6);
#endif
    done = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    WIDEN(2000000);
#if !FIXED
    STORE(result, sum + 6);
#endif
    return NULL;
}

int main(void)
{
    pthread_t t;
    start_thread(&t, worker, NULL);
    pthread_mutex_lock(&m);
    while (!done)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    keep(work_yielding(2, 30000, 4));   /* main's own part of the job (with syscalls) */
    long r = LOAD(result);
    CHECK(r == 42, "result %ld read after done, want 42", r);
    join_thread(t);
    PASS("order-done-flag");
    return 0;
}
