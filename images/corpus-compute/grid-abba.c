/*
 * grid-abba - pairwise heat exchange between the cells of a grid, each cell with its
 * own mutex, locked in the order the pair was drawn instead of a global order. Four
 * workers each make OPS exchanges between a cell and a random neighbour (a fixed
 * per-worker generator): lock the first cell, lock the second, average their heat
 * (the total is conserved), unlock. Two workers exchanging across the same edge in
 * opposite directions can each hold one cell and wait for the other: every thread
 * blocked, a deadlock (main in pthread_join). 5 threads (main + 4), the bug involves 2,
 * one preemption (a worker between its two locks).
 *
 *   w1: lock(c5) [preempted]           lock(c6): waits for w2
 *   w2:            lock(c6); lock(c5): waits for w1
 *
 * Shared accesses: ~8 per exchange (4 mutex atomics, 2 loads, 2 stores), plus a running
 * sweep count, 4 x 20000 exchanges: ~7e5 a run.
 *
 * Twin (grid-abba-ok): the cell with the lower index is locked first.
 */
#include "corpus.h"

#define SIDE 12
#define CELLS (SIDE * SIDE)
#define WORKERS 4
#define OPS 20000
#define HEAT 1000

static long heat[CELLS];
static pthread_mutex_t lk[CELLS];
static atomic_ulong exchanges;

static void *worker(void *arg)
{
    int id = ARG_ID(arg);
    uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(id + 3);
    for (int i = 0; i < OPS; i++) {
        uint64_t r = rng_next(&s);
        int a = (int)(r % CELLS), row = a / SIDE, col = a % SIDE, b;
        switch ((r >> 32) & 3) {
        case 0: b = row > 0 ? a - SIDE : a + SIDE; break;
        case 1: b = row < SIDE - 1 ? a + SIDE : a - SIDE; break;
        case 2: b = col > 0 ? a - 1 : a + 1; break;
        default: b = col < SIDE - 1 ? a + 1 : a - 1; break;
        }
        int first = a, second = b;
#if FIXED
        if (first > second) {
            first = b;
            second = a;
        }
#endif
        pthread_mutex_lock(&lk[first]);
        if (i == OPS / 2)
            WIDEN(2000000);
        pthread_mutex_lock(&lk[second]);
        long ha = LOAD(heat[a]), hb = LOAD(heat[b]);
        STORE(heat[a], (ha + hb) / 2);
        STORE(heat[b], ha + hb - (ha + hb) / 2);
        pthread_mutex_unlock(&lk[second]);
        pthread_mutex_unlock(&lk[first]);
        atomic_fetch_add_explicit(&exchanges, 1, memory_order_relaxed);
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < CELLS; i++) {
        heat[i] = (i * 37) % HEAT;
        pthread_mutex_init(&lk[i], NULL);
    }
    long before = 0, after = 0;
    for (int i = 0; i < CELLS; i++)
        before += heat[i];
    run_ids(WORKERS, worker);
    for (int i = 0; i < CELLS; i++)
        after += heat[i];
    CHECK(after == before, "heat %ld, was %ld", after, before);
    CHECK(exchanges == (unsigned long)WORKERS * OPS, "%lu exchanges", (unsigned long)exchanges);
    PASS("grid-abba");
    return 0;
}
