/*
 * atom-counter - single-variable atomicity violation: a lost update of hits++.
 *
 * Two workers each count one hit with a plain read-modify-write. If one is preempted
 * between its read and its write while the other counts, one hit is lost and main's
 * check fails: SIGABRT in main. Three threads (main + 2), one preemption.
 *
 *   w0: r = hits;            [preempted]            hits = r + 1
 *   w1:             r = hits; hits = r + 1
 *
 * Twin (atom-counter-ok): atomic_fetch_add.
 */
#include "corpus.h"

#if FIXED
static atomic_long hits;
#else
static long hits;
#endif

static void *worker(void *arg)
{
    (void)arg;
#if FIXED
    atomic_fetch_add(&hits, 1);
#else
    long r = LOAD(hits);
    WIDEN(1000000);
    STORE(hits, r + 1);
#endif
    return NULL;
}

int main(void)
{
    run_ids(2, worker);
    long h = hits;
    CHECK(h == 2, "hits %ld after 2 workers, want 2 (an update was lost)", h);
    PASS("atom-counter");
    return 0;
}
