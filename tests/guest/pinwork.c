/* Work for tests/integration/pin.sh: THREADS threads (main included) that first take
 * turns on a shared mutex-protected counter ROUNDS times each (cue points all along when
 * serialized), then compute privately CHUNKS chunks of ~100k iterations each, with a
 * sched_yield after every chunk (a cue point, so that a serialized fragment taken during
 * this phase ends soon). While the test samples the host threads' CPU affinity, every
 * guest thread is running or about to: none sits blocked for long.
 * Usage: pinwork ROUNDS CHUNKS [THREADS] (THREADS 2..8, default 3). Prints the totals. */
#include "check.h"
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long counter;
static unsigned long rounds, chunks;

static void *work(void *arg)
{
    unsigned long *sum = arg;
    for (unsigned long r = 0; r < rounds; r++) {
        pthread_mutex_lock(&mu);
        counter++;
        pthread_mutex_unlock(&mu);
    }
    volatile unsigned long x = 0;
    for (unsigned long c = 0; c < chunks; c++) {
        for (unsigned long i = 0; i < 100000; i++)
            x += i ^ c;
        sched_yield();
    }
    *sum = x;
    return NULL;
}

int main(int argc, char **argv)
{
    CHECK(argc == 3 || argc == 4);
    rounds = strtoul(argv[1], NULL, 10);
    chunks = strtoul(argv[2], NULL, 10);
    int n = argc == 4 ? atoi(argv[3]) : 3;
    CHECK(n >= 2 && n <= 8);
    pthread_t t[8];
    unsigned long sums[8];
    for (int i = 1; i < n; i++)
        CHECK(pthread_create(&t[i], NULL, work, &sums[i]) == 0);
    work(&sums[0]);
    for (int i = 1; i < n; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(counter == rounds * (unsigned long)n);
    printf("pinwork: counter %lu, sum %lu\n", counter, sums[0]);
    return 0;
}
