/* A crash that whole runs and rounds cannot reach from a snapshot: two threads make far
 * more shared-memory cue points than a whole run's budget allows (whole-run exploration
 * gives up), then main, the only thread left, computes privately for several seconds
 * (about 7 s here) and aborts, in free execution: rounds skip while one thread lives
 * (there is nothing to interleave), and a round's serialized tail that began while the
 * workers lived runs at most 1 s (five times its 200 ms wall budget), so none reaches the
 * abort. jinx test must report it as met in free execution and say that its search from
 * snapshots did not meet it again (tests/integration/explore.sh), or meet it in a sparse
 * whole run (no memory cue points: the increments cost it nothing, and its probe may take
 * 4 prefixes' CPU time, docs/sparse.md), whose dump replays. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define INCREMENTS 400000

static atomic_long counter;

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < INCREMENTS; i++)
        atomic_fetch_add(&counter, 1);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, work, NULL))
            return 2;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 3000000000UL; i++)
        x += i;
    fprintf(stderr, "freecrash: %ld increments, aborting\n", atomic_load(&counter));
    abort();
}
