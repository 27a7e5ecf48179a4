/*
 * deadlock-abba — lock-order inversion.
 *
 *   Thread 1, each iteration:                Thread 2, each iteration:
 *     private work                             private work
 *     lock(A)                        (a1)      lock(B)                        (b1)
 *     a_count++                                b_count++
 *     lock(B)                        (a2)      lock(A)                        (b2)
 *     both++                                   both++
 *     unlock(B); unlock(A)                     unlock(A); unlock(B)
 *
 * The bug: the threads take A and B in opposite orders. It manifests iff thread 2's b1
 * comes after a1 and before thread 1's a2 (and so thread 1 blocks in a2 and thread 2 in
 * b2) — i.e. both threads hold their first lock at the same time. Then both block forever
 * in pthread_mutex_lock and main blocks forever in pthread_join: a deadlock. Natively a1
 * and a2 are a few instructions apart and the threads spend ~work units outside the
 * locks, so it is rare.
 *
 * usage: deadlock-abba [iters [work]]   (defaults 20 iterations, work 30000 units ~40 us)
 * -DWIDEN_WINDOW: each thread sleeps 2 ms between its two lock calls.
 */
#include "common.h"

static pthread_mutex_t A = PTHREAD_MUTEX_INITIALIZER, B = PTHREAD_MUTEX_INITIALIZER;
static long a_count, b_count, both;
static struct gate start = GATE_INIT;
static long iters = 20, work_units = 30000;

static void *thread1(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 1;
    gate_wait(&start);
    for (long i = 0; i < iters; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        pthread_mutex_lock(&A);        /* a1 */
        a_count++;
        WIDEN(2000000);
        pthread_mutex_lock(&B);        /* a2 */
        both++;
        pthread_mutex_unlock(&B);
        pthread_mutex_unlock(&A);
    }
    keep(acc);
    return NULL;
}

static void *thread2(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 2;
    gate_wait(&start);
    for (long i = 0; i < iters; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        pthread_mutex_lock(&B);        /* b1 */
        b_count++;
        WIDEN(2000000);
        pthread_mutex_lock(&A);        /* b2: opposite order */
        both++;
        pthread_mutex_unlock(&A);
        pthread_mutex_unlock(&B);
    }
    keep(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[iters [work]]";
    iters = arg_long(argc, argv, 1, iters, usage);
    work_units = arg_long(argc, argv, 2, work_units, usage);
    uint64_t seed = os_seed();
    pthread_t a, b;
    start_thread(&a, thread1, (void *)(uintptr_t)(seed * 3 | 1));
    start_thread(&b, thread2, (void *)(uintptr_t)(seed * 5 | 1));
    gate_open(&start);
    join_thread(a);
    join_thread(b);
    printf("deadlock-abba: ok iters=%ld both=%ld%s\n", iters, both, WIDENED ? " (widened)" : "");
    return 0;
}
