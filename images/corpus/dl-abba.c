/*
 * dl-abba - lock-order deadlock between two threads: one takes A then B, the other B
 * then A. Deadlock when each holds its first lock (main blocked in join). Three threads
 * (main + 2), one preemption (the first worker, after taking its first lock).
 *
 *   w0: lock A [preempted]            lock B   <- blocks
 *   w1:            lock B; lock A              <- blocks
 *
 * Twin (dl-abba-ok): both take A before B.
 */
#include "corpus.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static long shared_a, shared_b;

static void *w0(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock_a);
    WIDEN(1000000);
    pthread_mutex_lock(&lock_b);
    shared_a++;
    shared_b++;
    pthread_mutex_unlock(&lock_b);
    pthread_mutex_unlock(&lock_a);
    return NULL;
}

static void *w1(void *arg)
{
    (void)arg;
    pthread_mutex_t *first = FIXED ? &lock_a : &lock_b;
    pthread_mutex_t *second = FIXED ? &lock_b : &lock_a;
    pthread_mutex_lock(first);
    WIDEN(1000000);
    pthread_mutex_lock(second);
    shared_a += 2;
    shared_b += 2;
    pthread_mutex_unlock(second);
    pthread_mutex_unlock(first);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    start_thread(&a, w0, NULL);
    start_thread(&b, w1, NULL);
    join_thread(a);
    join_thread(b);
    CHECK(shared_a == 3 && shared_b == 3, "a %ld b %ld", shared_a, shared_b);
    PASS("dl-abba");
    return 0;
}
