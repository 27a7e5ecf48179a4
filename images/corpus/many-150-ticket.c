/*
 * many-150-ticket - 150 workers take tickets from a shared dispenser with a plain
 * `t = next; next = t + 1`. Two workers that interleave there get the same ticket; main
 * then finds a ticket taken twice and one never taken and exits with status 1 (the test
 * reports failure by exit code, not by a crash). 151 threads (main + 150), one preemption.
 *
 * No twin.
 */
#include "corpus.h"

#define WORKERS 150
static int next;
static unsigned char taken[WORKERS + 1];

static void *worker(void *arg)
{
    (void)arg;
    int t = LOAD(next);
    WIDEN(300000);
    STORE(next, t + 1);
    if (t >= 0 && t < WORKERS)
        __atomic_fetch_add(&taken[t], 1, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    run_ids(WORKERS, worker);
    for (int t = 0; t < WORKERS; t++)
        if (taken[t] != 1) {
            fprintf(stderr, "many-150-ticket: ticket %d taken %d times (dispenser at %d)\n",
                    t, taken[t], next);
            return 1;
        }
    PASS("many-150-ticket");
    return 0;
}
