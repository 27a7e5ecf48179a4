/*
 * pre2-relay - a bug that needs two preemptions among three threads: a transient state
 * relayed from one thread to the next.
 *
 * A is briefly busy (busy_a = 1; busy_a = 0). B, if it catches A busy, defers itself
 * for a moment (deferred_b = 1; deferred_b = 0). C asserts it never finds B deferred
 * ("deferral only happens when nobody looks"). Failing needs A preempted inside its busy
 * window and B preempted inside its deferred window: two preemptions, three threads
 * involved (plus main). SIGABRT in C.
 *
 *   A: busy_a = 1 [p1]                                busy_a = 0
 *   B:           if (busy_a) { deferred_b = 1 [p2]                  deferred_b = 0 }
 *   C:                                  check(!deferred_b)
 *
 * Twin (pre2-relay-ok): each thread's step holds one mutex.
 */
#include "corpus.h"

static int busy_a, deferred_b, deferrals;

static void *thread_a(void *arg)
{
    (void)arg;
    FIX_LOCK();
    STORE(busy_a, 1);
    WIDEN(2000000);
    STORE(busy_a, 0);
    FIX_UNLOCK();
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    WIDEN(500000);
    FIX_LOCK();
    if (LOAD(busy_a)) {
        STORE(deferred_b, 1);
        deferrals++;
        WIDEN(1000000);
        STORE(deferred_b, 0);
    }
    FIX_UNLOCK();
    return NULL;
}

static void *thread_c(void *arg)
{
    (void)arg;
    WIDEN(1000000);
    FIX_LOCK();
    int d = LOAD(deferred_b);
    FIX_UNLOCK();
    CHECK(!d, "C found B deferred (A was busy when B looked)");
    return NULL;
}

int main(void)
{
    pthread_t a, b, c;
    start_thread(&a, thread_a, NULL);
    start_thread(&b, thread_b, NULL);
    start_thread(&c, thread_c, NULL);
    join_thread(a);
    join_thread(b);
    join_thread(c);
    CHECK(deferrals <= 1, "deferrals %d", deferrals);
    PASS("pre2-relay");
    return 0;
}
