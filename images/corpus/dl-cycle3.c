/*
 * dl-cycle3 - lock-order deadlock over a cycle of three locks: worker i takes lock i,
 * then lock (i+1) % 3. Each pair of workers agrees on an order, but the three together
 * form a cycle: deadlock when every worker holds its first lock. Four threads (main +
 * 3), two preemptions (w0 and w1 each after their first lock; w2 then blocks on its
 * second by itself).
 *
 *   w0: lock L0 [p1]                        lock L1  <- blocks
 *   w1:          lock L1 [p2]               lock L2  <- blocks
 *   w2:                   lock L2; lock L0           <- blocks
 *
 * Twin (dl-cycle3-ok): every worker takes the lower-numbered lock first.
 */
#include "corpus.h"

#define N 3
static pthread_mutex_t locks[N] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
                                    PTHREAD_MUTEX_INITIALIZER };
static long slots[N];

static void *worker(void *arg)
{
    int i = ARG_ID(arg), j = (i + 1) % N;
    int first = i, second = j;
    if (FIXED && first > second) {
        first = j;
        second = i;
    }
    pthread_mutex_lock(&locks[first]);
    WIDEN(1000000);
    pthread_mutex_lock(&locks[second]);
    slots[i]++;
    slots[j]++;
    pthread_mutex_unlock(&locks[second]);
    pthread_mutex_unlock(&locks[first]);
    return NULL;
}

int main(void)
{
    run_ids(N, worker);
    for (int i = 0; i < N; i++)
        CHECK(slots[i] == 2, "slot %d is %ld", i, slots[i]);
    PASS("dl-cycle3");
    return 0;
}
