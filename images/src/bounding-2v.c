/*
 * bounding-2v — a bug with v = 2 in the sense of variable/thread bounding (Bindal, Bansal,
 * Lal): it needs a specific interleaving of the accesses to two shared variables, c
 * and v, from two threads, and two preemptions (PCT depth 3). Other shared variables
 * (the progress counters) are accessed all along but play no part in the bug.
 *
 * Protocol "commit unless vetoed" for transactions k = 1, 2, ...:
 *
 *   Thread 1 (committer), each k:           Thread 2 (vetoer), each poll:
 *     private work                             private work
 *     c = INTENT(k)                  (a1)      r = c                          (b1)
 *     if (v != k)                    (a2)      if (r == INTENT(k)) {
 *         c = COMMIT(k)              (a3)          v = k      (veto)          (b2)
 *     else                                         private work
 *         c = ABORTED(k)                           assert(c != COMMIT(k))     (b3)
 *                                              }
 *
 * The vetoer assumes that a transaction it has seen pending and vetoed can no longer
 * commit; but the committer's check of v and its commit are not atomic with respect to the
 * veto. The bug needs  a1 < b1 < a2 < b2  and  a3 < b3:  thread 2 must read c between
 * thread 1's intent store and its read of v (preempting thread 1 after a1), and thread 1
 * must then read v before thread 2's veto (preempting thread 2 after b1). Then b3 sees
 * the commit: SIGABRT in thread 2. Natively a1..a2 are adjacent instructions and thread 2
 * polls only every ~poll units, so this is rare.
 *
 * usage: bounding-2v [txns [work [poll]]]   (defaults 24 transactions, work 8000, poll 8000)
 * -DWIDEN_WINDOW: thread 1 sleeps 2 ms between a1 and a2, thread 2 sleeps 2 ms
 * between b1 and b2.
 */
#include "common.h"

#define INTENT(k) (3 * (k) + 1)
#define COMMIT(k) (3 * (k) + 2)
#define ABORTED(k) (3 * (k) + 3)

static _Atomic long c, v;
static _Atomic long committed, aborted, polls, vetoes; /* progress counters */
static _Atomic int done;
static struct gate start = GATE_INIT;
static long txns = 24, work_units = 8000, poll_units = 8000;

static void *committer(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 1;
    gate_wait(&start);
    for (long k = 1; k <= txns; k++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        atomic_store(&c, INTENT(k));          /* a1 */
        WIDEN(2000000);
        if (atomic_load(&v) != k) {           /* a2 */
            atomic_store(&c, COMMIT(k));      /* a3 */
            atomic_fetch_add(&committed, 1);
        } else {
            atomic_store(&c, ABORTED(k));
            atomic_fetch_add(&aborted, 1);
        }
    }
    atomic_store(&done, 1);
    keep(acc);
    return NULL;
}

static void *vetoer(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 2;
    gate_wait(&start);
    while (!atomic_load(&done)) {
        acc = work(acc, jitter(&rng, (unsigned long)poll_units));
        atomic_fetch_add(&polls, 1);
        long r = atomic_load(&c);             /* b1 */
        if (r % 3 != 1)
            continue;                         /* nothing pending */
        long k = (r - 1) / 3;
        WIDEN(2000000);
        atomic_store(&v, k);                  /* b2: veto k */
        atomic_fetch_add(&vetoes, 1);
        acc = work(acc, 200);
        assert(atomic_load(&c) != COMMIT(k)); /* b3 */
    }
    keep(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[txns [work [poll]]]";
    txns = arg_long(argc, argv, 1, txns, usage);
    work_units = arg_long(argc, argv, 2, work_units, usage);
    poll_units = arg_long(argc, argv, 3, poll_units, usage);
    uint64_t seed = os_seed();
    pthread_t a, b;
    start_thread(&a, committer, (void *)(uintptr_t)(seed * 3 | 1));
    start_thread(&b, vetoer, (void *)(uintptr_t)(seed * 5 | 1));
    gate_open(&start);
    join_thread(a);
    join_thread(b);
    printf("bounding-2v: ok txns=%ld committed=%ld aborted=%ld vetoes=%ld polls=%ld%s\n", txns,
           (long)committed, (long)aborted, (long)vetoes, (long)polls,
           WIDENED ? " (widened)" : "");
    return 0;
}
