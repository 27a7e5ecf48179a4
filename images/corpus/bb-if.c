/*
 * bb-if - bounded buffer whose consumer waits with `if` instead of `while`. A consumer
 * woken by the producer's signal must re-acquire the mutex; a consumer that arrives in
 * the meantime takes the item first, and the woken one goes on with an empty buffer.
 * SIGABRT in the woken consumer (count goes negative). Four threads (main + producer +
 * 2 consumers, started in that order, so natively the first item is usually there
 * before a consumer looks). No preemption: only the choices, when main and then the
 * producer block, of c0 (which waits) and then of the new consumer c1 over the woken c0.
 *
 *   c0: lock; if (count == 0) wait .............................. take: count = -1 !
 *   p:        lock; put (count 1); signal; unlock; lock; full: wait
 *   c1:                                    lock; while (count == 0) ..; take (count 0)
 *
 * Twin (bb-if-ok): while (count == 0) wait.
 */
#include "corpus.h"

#define CAP 1
#define ITEMS 2
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int buf[CAP], count;
static long taken_sum;

static void *producer(void *arg)
{
    (void)arg;
    WIDEN(1000000);                     /* c0 comes first and waits */
    for (int i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&m);
        while (count == CAP)
            pthread_cond_wait(&not_full, &m);
        buf[count++] = i;
        pthread_cond_signal(&not_empty);
        if (i == 1)
            WIDEN(1000000);             /* c1 arrives while c0 is still waking */
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    keep(work_yielding(6, 30000, 4));   /* gets ready to consume (with syscalls) */
    pthread_mutex_lock(&m);
#if FIXED
    while (count == 0)
#else
    if (count == 0)
#endif
        pthread_cond_wait(&not_empty, &m);
    count--;
    CHECK(count >= 0, "took an item from an empty buffer (count %d)", count);
    taken_sum += buf[count];
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t p, c0, c1;
    start_thread(&p, producer, NULL);
    start_thread(&c0, consumer, NULL);
    start_thread(&c1, consumer, NULL);
    join_thread(c0);
    join_thread(p);
    join_thread(c1);
    CHECK(taken_sum == 3, "consumed sum %ld, want 3", taken_sum);
    PASS("bb-if");
    return 0;
}
