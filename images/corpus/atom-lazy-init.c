/*
 * atom-lazy-init - single-variable atomicity violation (check then act) in lazy
 * initialization without a lock: two threads both see "no registry yet", both create
 * one, and the one created first is lost together with the entry put in it.
 *
 * Each worker registers itself; main checks both entries are in the registry. Lost when
 * one worker is preempted between its NULL check and its store of the new registry:
 * SIGABRT in main. Three threads (main + 2), one preemption.
 *
 *   w0: if (!reg)  [preempted]                                     reg = new0; add(reg, 0)
 *   w1:            if (!reg) reg = new1; add(reg, 1)
 *   -> reg = new0, w1's entry went into new1
 *
 * No twin.
 */
#include "corpus.h"

struct registry {
    int count;
    int ids[4];
};

static struct registry pool[2];
static struct registry *reg;

static void *worker(void *arg)
{
    int id = ARG_ID(arg);
    if (LOAD(reg) == NULL) {
        WIDEN(1000000);
        STORE(reg, &pool[id]);         /* a fresh registry for each creator */
    }
    struct registry *r = LOAD(reg);
    r->ids[r->count++] = id;
    return NULL;
}

int main(void)
{
    run_ids(2, worker);
    CHECK(reg->count == 2, "registry holds %d of 2 workers (a second registry was made)",
          reg->count);
    PASS("atom-lazy-init");
    return 0;
}
