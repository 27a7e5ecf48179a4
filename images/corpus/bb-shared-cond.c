/*
 * bb-shared-cond - bounded buffer (one slot) whose producers and consumers wait on one
 * shared condition variable, woken with pthread_cond_signal. When both consumers wait,
 * a put wakes one of them; if the second producer then waits on the full slot, the take
 * signals once, to the older waiter: the other consumer, which finds the slot empty and
 * waits again. Nobody wakes the producer. Deadlock (everyone in pthread_cond_wait or
 * join). Five threads (main + 2 producers + 2 consumers). No preemption, only a start
 * order (main starts the producers first; the consumers must run first) and the wakeup
 * going to the older waiter.
 *
 *   c0, c1: lock; while (count == 0) wait         (both wait)
 *   p0: put (count 1); signal -> c0
 *   p1: lock; while (count == 1) wait             <- never woken
 *   c0: take (count 0); signal -> c1, which waits again
 *
 * No twin (lw-wrong-waiter-ok shows the broadcast fix).
 */
#include "corpus.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int slot, count;
static long taken_sum;

static void *producer(void *arg)
{
    int item = ARG_ID(arg) + 1;
    WIDEN(item == 1 ? 1000000 : 1500000);   /* both consumers wait first */
    pthread_mutex_lock(&m);
    while (count == 1)
        pthread_cond_wait(&changed, &m);
    slot = item;
    count = 1;
    pthread_cond_signal(&changed);
    if (item == 1)
        WIDEN(1000000);                     /* p1 arrives before c0 takes */
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    while (count == 0)
        pthread_cond_wait(&changed, &m);
    taken_sum += slot;
    count = 0;
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    start_thread(&t[0], producer, ID_ARG(0));
    start_thread(&t[1], producer, ID_ARG(1));
    start_thread(&t[2], consumer, NULL);
    start_thread(&t[3], consumer, NULL);
    for (int i = 0; i < 4; i++)
        join_thread(t[i]);
    CHECK(taken_sum == 3, "consumed sum %ld, want 3", taken_sum);
    PASS("bb-shared-cond");
    return 0;
}
