/*
 * many-64-max - 64 workers each propose a value (1..64) to a running maximum with an
 * unlocked check-then-act: `if (v > best) best = v`. A worker preempted between its check
 * and its store can overwrite a larger value written meanwhile. SIGABRT in main. 65
 * threads (main + 64), one preemption.
 *
 *   w3:  if (4 > best) [preempted]                    best = 4
 *   w63:                   if (64 > best) best = 64
 *
 * No twin.
 */
#include "corpus.h"

#define WORKERS 64
static int best;

static void *worker(void *arg)
{
    int v = ARG_ID(arg) + 1;
    if (v > LOAD(best)) {
        WIDEN(v == WORKERS ? 0 : 2000000);
        STORE(best, v);
    }
    return NULL;
}

int main(void)
{
    run_ids(WORKERS, worker);
    CHECK(best == WORKERS, "maximum %d, want %d: a smaller value overwrote it", best, WORKERS);
    PASS("many-64-max");
    return 0;
}
