/*
 * lw-signal-before-wait - lost wakeup: main waits on a condition variable with no
 * predicate at all, for a signal the worker sends when it has started (after tens of
 * microseconds of start-up). If main is preempted after pthread_create for longer and the
 * worker signals before main waits, main sleeps forever. Deadlock (main in
 * pthread_cond_wait, the worker exited). Two threads, one preemption (main, right after
 * creating the worker).
 *
 *   main:   create(worker) [preempted]                 lock; wait; unlock
 *   worker:                 lock; started work; signal; unlock
 *
 * No twin (lw-flag-ok shows the predicate loop).
 */
#include "corpus.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static long work_done;

static void *worker(void *arg)
{
    (void)arg;
    keep(work_yielding(4, 30000, 4));   /* starting up (with syscalls) */
    pthread_mutex_lock(&m);
    work_done = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    start_thread(&t, worker, NULL);
    WIDEN(2000000);
    pthread_mutex_lock(&m);
    pthread_cond_wait(&c, &m);             /* no predicate: the signal may be gone */
    pthread_mutex_unlock(&m);
    join_thread(t);
    PASS("lw-signal-before-wait");
    return 0;
}
