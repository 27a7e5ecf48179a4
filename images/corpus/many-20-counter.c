/*
 * many-20-counter - 20 workers each count one event with a plain `events++`: a lost
 * update when one is preempted between its load and its store while another counts.
 * SIGABRT in main. 21 threads (main + 20), one preemption.
 *
 * No twin (atom-counter-ok shows the fix).
 */
#include "corpus.h"

#define WORKERS 20
static long events;

static void *worker(void *arg)
{
    (void)arg;
    long e = LOAD(events);
    WIDEN(300000);
    STORE(events, e + 1);
    return NULL;
}

int main(void)
{
    run_ids(WORKERS, worker);
    CHECK(events == WORKERS, "events %ld after %d workers: an update was lost", events,
          WORKERS);
    PASS("many-20-counter");
    return 0;
}
