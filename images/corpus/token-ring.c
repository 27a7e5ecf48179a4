/*
 * token-ring - a token passed once around a ring of four threads (0 -> 1 -> 2 -> 3, and
 * 3 hands it back to 0) through one shared condition variable, with
 * pthread_cond_signal where broadcast is needed. A signal wakes one waiter; when that is
 * not the token's next holder, it waits again and the holder is never woken. Deadlock
 * (members in pthread_cond_wait, main in join). Five threads (main + 4). It takes no
 * preemption, only a start order: if members 2 and then 1 wait before member 0 passes,
 * member 0's signal goes to the older waiter, member 2, and member 1 sleeps on.
 *
 *   member i: lock; while (turn != i) wait; turn = (i + 1) % 4; signal; unlock
 *
 * Twin (token-ring-ok): pthread_cond_broadcast.
 */
#include "corpus.h"

#define RING 4
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int turn;
static int passes;

static void *member(void *arg)
{
    int me = ARG_ID(arg);
    if (me == 0)
        WIDEN(2000000);                 /* 1, 2 and 3 wait before 0 passes */
    if (me == 1)
        WIDEN(1000000);                 /* 2 waits before 1 */
    pthread_mutex_lock(&m);
    while (turn != me)
        pthread_cond_wait(&c, &m);
    passes++;
    turn = (me + 1) % RING;
    if (FIXED)
        pthread_cond_broadcast(&c);
    else
        pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    run_ids(RING, member);
    CHECK(passes == RING && turn == 0, "passes %d, token at %d", passes, turn);
    PASS("token-ring");
    return 0;
}
