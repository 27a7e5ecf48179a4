/*
 * race-lock-x — RaceFuzzer's lock example: a race that a lock does not order.
 *
 * Every round, main resets x = 0, creates thread 2 and then itself plays thread 1; then
 * it joins thread 2.
 *
 *   Thread 1 (main), each round:             Thread 2 (created each round):
 *     x = 0; create thread 2
 *     short private work (~w/10 units)         long private computation (~w units
 *     x = 1;                         (a1)        in 8 steps, each ending in a syscall)
 *     lock(L); f1(); unlock(L)       (a2)      lock(L); f2(); unlock(L)          (b1)
 *     join thread 2                            if (x == 0)                       (b2)
 *                                                  ERROR;  -> assert
 *
 * Both threads take L, but L orders a1 before b2 only when a2 precedes b1. The bug:
 * ERROR needs thread 2's read of x (b2) to come before thread 1's write (a1) — then b1
 * precedes a2 as well, and nothing orders the racing pair. Natively thread 1 is already
 * running and writes x ~w/10 units after creating thread 2, which first has to start and
 * then run its long computation (yielding the CPU between its steps, so it cannot crowd
 * thread 1 out even on a shared CPU): thread 1 must be descheduled before a1 for longer
 * than all of that: SIGABRT in thread 2.
 *
 * usage: race-lock-x [rounds [w]]   (defaults 8 rounds, w 150000 units ~200 us)
 * Threads: main + one thread per round (at most two alive at a time).
 * -DWIDEN_WINDOW: thread 1 sleeps 5 ms before a1.
 */
#include "common.h"

static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;
static long x;
static long f_count[2]; /* updated under L by f1/f2 */
static long rounds = 8, w_units = 150000;

static void *thread2(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 2;
    acc = work_yielding(acc, jitter(&rng, (unsigned long)w_units), 8);
    pthread_mutex_lock(&L);               /* b1 */
    f_count[1]++;                          /* f2() */
    pthread_mutex_unlock(&L);
    int err = *(volatile long *)&x == 0; /* b2 */
    assert(!err && "ERROR: x == 0");
    keep(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[rounds [w]]";
    rounds = arg_long(argc, argv, 1, rounds, usage);
    w_units = arg_long(argc, argv, 2, w_units, usage);
    uint64_t seed = os_seed(), rng = seed * 3 | 1, acc = 1;
    for (long r = 0; r < rounds; r++) {
        *(volatile long *)&x = 0;
        pthread_t t2;
        start_thread(&t2, thread2, (void *)(uintptr_t)(seed * (uint64_t)(2 * r + 5) | 1));
        acc = work(acc, jitter(&rng, (unsigned long)w_units / 10));
        WIDEN(5000000);
        *(volatile long *)&x = 1;      /* a1 */
        pthread_mutex_lock(&L);       /* a2 */
        f_count[0]++;                  /* f1() */
        pthread_mutex_unlock(&L);
        join_thread(t2);
    }
    keep(acc);
    printf("race-lock-x: ok rounds=%ld w=%ld f1=%ld f2=%ld%s\n", rounds, w_units, f_count[0],
           f_count[1], WIDENED ? " (widened)" : "");
    return 0;
}
