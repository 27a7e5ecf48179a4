/*
 * lw-wrong-waiter - lost wakeup: two waiters with different predicates share one
 * condition variable, and the setter wakes them with pthread_cond_signal (one waiter
 * each). When both are waiting and the first signal goes to the waiter whose predicate
 * is still false (wb, the older waiter), it waits again and wa's wakeup is gone; the
 * second signal then goes to the older waiter, wa, and wb sleeps on. Deadlock (wb in
 * pthread_cond_wait, main in join). Four threads (main + 2 waiters + setter); one
 * preemption (the setter, between its two wakeups, so that wb waits again before the
 * second), plus both waiters waiting before the setter runs and FIFO wakeups. Natively
 * the waiters prepare for tens of microseconds before they wait, so the setter is
 * usually done first.
 *
 *   wa: lock; while (!a_ready) wait; unlock      wb: lock; while (!b_ready) wait; unlock
 *   setter: lock; a_ready = 1; signal; unlock; [p]  lock; b_ready = 1; signal; unlock
 *
 * Twin (lw-wrong-waiter-ok): pthread_cond_broadcast.
 */
#include "corpus.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int a_ready, b_ready;

static void wake(pthread_cond_t *cv)
{
    if (FIXED)
        pthread_cond_broadcast(cv);
    else
        pthread_cond_signal(cv);
}

static void *waiter(void *arg)
{
    int *pred = ARG_ID(arg) ? &b_ready : &a_ready;
    keep(work_yielding(5, 60000, 4));   /* prepares its part before it waits */
    pthread_mutex_lock(&m);
    while (!*pred)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *setter(void *arg)
{
    (void)arg;
    WIDEN(2000000);
    pthread_mutex_lock(&m);
    a_ready = 1;
    wake(&c);
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m);
    b_ready = 1;
    wake(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t wb, wa, s;
    /* wb first: it is the one a FIFO wakeup picks when both wait */
    start_thread(&wb, waiter, ID_ARG(1));
    start_thread(&wa, waiter, ID_ARG(0));
    start_thread(&s, setter, NULL);
    join_thread(wb);
    join_thread(wa);
    join_thread(s);
    PASS("lw-wrong-waiter");
    return 0;
}
