/*
 * token-ring - a token passed once around a ring of four threads (0 -> 1 -> 2 -> 3 ->
 * back to 0) through one shared condition variable, with pthread_cond_signal where
 * broadcast is needed. A signal wakes one waiter; when that is not the token's next
 * holder, it waits again and the holder is never woken. Deadlock (the ring in
 * pthread_cond_wait, main in join). Five threads (main + 4). It takes no preemption,
 * only a start order: if thread 2 waits before thread 1 passes, thread 1's signal goes
 * to the oldest waiter (thread 0, waiting for the token's return) and thread 2 sleeps on.
 *
 *   thread i: for each visit (thread 0: two, the others one):
 *               lock; while (turn != i) wait; turn = next; signal; unlock
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
    int visits = me == 0 ? 2 : 1;
    if (me == 1)
        WIDEN(2000000);                 /* 2 and 3 wait before 1 passes */
    for (int v = 0; v < visits; v++) {
        pthread_mutex_lock(&m);
        while (turn != me)
            pthread_cond_wait(&c, &m);
        passes++;
        turn = passes <= RING ? (me + 1) % RING : -1; /* -1: the lap is over */
        if (FIXED)
            pthread_cond_broadcast(&c);
        else
            pthread_cond_signal(&c);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    run_ids(RING, member);
    CHECK(passes == RING + 1, "passes %d", passes);
    PASS("token-ring");
    return 0;
}
