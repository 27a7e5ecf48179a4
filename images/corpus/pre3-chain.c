/*
 * pre3-chain - a bug that needs three preemptions among four threads: a transient
 * state relayed along a chain A -> B -> C -> D.
 *
 * Each of A, B, C has a short "busy" window; B enters its window only if it catches A
 * busy, C only if it catches B busy; D asserts it never catches C busy. Failing needs
 * A, B and C each preempted inside their window: three preemptions, four threads
 * involved (plus main). SIGABRT in D.
 *
 *   A: s1 = 1 [p1]                                           s1 = 0
 *   B:        if (s1) { s2 = 1 [p2]                               s2 = 0 }
 *   C:                          if (s2) { s3 = 1 [p3]                 s3 = 0 }
 *   D:                                              check(!s3)
 *
 * No twin.
 */
#include "corpus.h"

static int s1, s2, s3;

static void *thread_a(void *arg)
{
    (void)arg;
    STORE(s1, 1);
    WIDEN(3000000);
    STORE(s1, 0);
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    WIDEN(500000);
    if (LOAD(s1)) {
        STORE(s2, 1);
        WIDEN(2000000);
        STORE(s2, 0);
    }
    return NULL;
}

static void *thread_c(void *arg)
{
    (void)arg;
    WIDEN(1000000);
    if (LOAD(s2)) {
        STORE(s3, 1);
        WIDEN(1000000);
        STORE(s3, 0);
    }
    return NULL;
}

static void *thread_d(void *arg)
{
    (void)arg;
    WIDEN(1500000);
    CHECK(!LOAD(s3), "D caught C busy: the chain A -> B -> C was relayed");
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    void *(*fn[4])(void *) = { thread_a, thread_b, thread_c, thread_d };
    for (int i = 0; i < 4; i++)
        start_thread(&t[i], fn[i], NULL);
    for (int i = 0; i < 4; i++)
        join_thread(t[i]);
    PASS("pre3-chain");
    return 0;
}
