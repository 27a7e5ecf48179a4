/*
 * pre3-two-windows - a bug that needs three preemptions between two threads.
 *
 * The writer passes a state through 1 and 2 and back to 0 (a retry); the monitor reads
 * it twice and fails if it saw 1 and then 2. Both reads fall inside the writer's
 * sequence, so the writer is preempted twice (after `state = 1` and after `state = 2`)
 * and the monitor once (between its reads): three preemptions. SIGABRT in the monitor.
 * Three threads (main + writer + monitor; the bug involves two).
 *
 *   writer:  state = 1 [p1]          state = 2 [p3]           state = 0
 *   monitor:           s1 = state [p2]          s2 = state; check(!(s1 == 1 && s2 == 2))
 *
 * No twin.
 */
#include "corpus.h"

static int state;

static void *writer(void *arg)
{
    (void)arg;
    STORE(state, 1);
    WIDEN(1000000);
    STORE(state, 2);
    WIDEN(1000000);
    STORE(state, 0);
    return NULL;
}

static void *monitor(void *arg)
{
    (void)arg;
    WIDEN(500000);
    int s1 = LOAD(state);
    WIDEN(1000000);
    int s2 = LOAD(state);
    CHECK(!(s1 == 1 && s2 == 2), "saw a retry's 1 then 2 (%d, %d)", s1, s2);
    return NULL;
}

int main(void)
{
    pthread_t w, m;
    start_thread(&w, writer, NULL);
    start_thread(&m, monitor, NULL);
    join_thread(w);
    join_thread(m);
    CHECK(state == 0, "state %d", state);
    PASS("pre3-two-windows");
    return 0;
}
