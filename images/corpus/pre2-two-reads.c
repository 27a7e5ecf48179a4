/*
 * pre2-two-reads - a bug that needs two preemptions between two threads: the reader
 * must see both of the writer's intermediate states, one per read.
 *
 * The writer moves a state machine from 0 through 1 (CONNECTING) to 2 (OPEN). The
 * monitor samples it twice and insists it never saw CONNECTING followed by OPEN within
 * one sampling (it assumes the move is instantaneous). Failing needs the monitor's first
 * read between the writer's stores and its second after them: writer preempted after
 * `state = 1`, monitor preempted after its first read. SIGABRT in the monitor. Three
 * threads (main + writer + monitor; the bug involves two).
 *
 *   writer:  state = 1 [p1]           state = 2 (exits)
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
    return NULL;
}

static void *monitor(void *arg)
{
    (void)arg;
    WIDEN(300000);
    int s1 = LOAD(state);
    WIDEN(2000000);
    int s2 = LOAD(state);
    CHECK(!(s1 == 1 && s2 == 2), "saw CONNECTING then OPEN in one sample (%d, %d)", s1, s2);
    return NULL;
}

int main(void)
{
    pthread_t w, m;
    start_thread(&w, writer, NULL);
    start_thread(&m, monitor, NULL);
    join_thread(w);
    join_thread(m);
    CHECK(state == 2, "state %d", state);
    PASS("pre2-two-reads");
    return 0;
}
