/*
 * atom-pair - multi-variable atomicity violation: a pair updated in two stores.
 *
 * The writer moves the pair (a, b) from (0, 0) to (1, -1), one store at a time; the
 * checker reads a and b and asserts a + b == 0. Natively the two stores are nanoseconds
 * apart. A checker that runs between them (the writer preempted after `a = 1`, or the
 * checker preempted between its two loads while the writer runs) sees (1, 0): SIGABRT in
 * the checker. Three threads (main + writer + checker), one preemption.
 *
 *   writer:  a = 1;   [preempted]          b = -1
 *   checker:          x = a; y = b; check(x + y == 0)
 *
 * Twin (atom-pair-ok): writer and checker hold one mutex around the pair.
 */
#include "corpus.h"

static long a, b;

static void *writer(void *arg)
{
    (void)arg;
    FIX_LOCK();
    STORE(a, 1L);
    WIDEN(1000000);
    STORE(b, -1L);
    FIX_UNLOCK();
    return NULL;
}

static void *checker(void *arg)
{
    (void)arg;
    FIX_LOCK();
    long x = LOAD(a);
    long y = LOAD(b);
    FIX_UNLOCK();
    CHECK(x + y == 0, "pair (a, b) = (%ld, %ld) is torn", x, y);
    return NULL;
}

int main(void)
{
    pthread_t w, c;
    start_thread(&w, writer, NULL);
    start_thread(&c, checker, NULL);
    join_thread(w);
    join_thread(c);
    PASS("atom-pair");
    return 0;
}
