/*
 * pipeline — no bug; a long-running workload whose threads compute privately between
 * their shared accesses (scripts/bench/rounds-progress.sh, docs/rounds.md).
 *
 *   pipeline [items [work [stages]]]
 *     A producer thread makes `items` items (default 200); each passes through `stages`
 *     stage threads (default 3, at most 8) joined by bounded queues (a mutex and two
 *     condition variables, 4 slots each). Every stage computes privately on each item —
 *     `work` rounds of a register-only hash (default 4000) and a pass over the stage's
 *     own 4 KiB table — then hands it on and bumps a statistics counter with an atomic
 *     add. main consumes the last queue and checks every item (order and value, computed
 *     again on its own). Prints  pipeline: ok items=N checksum=X  and exits 0; a wrong
 *     item prints the difference and aborts (SIGABRT).
 *
 * Unlike throughput (one lock, the same loop in every thread), the threads here block and
 * wake each other through condition variables, and each does different private work.
 */
#include "common.h"
#include <stdatomic.h>

#define MAXSTAGES 8
#define QSLOTS 4
#define TABLE 512 /* 4 KiB of uint64_t */

struct queue {
    pthread_mutex_t m;
    pthread_cond_t not_empty, not_full;
    uint64_t slot[QSLOTS];
    unsigned head, count;
};

static struct queue q[MAXSTAGES + 1];
static _Alignas(4096) uint64_t table[MAXSTAGES][TABLE];
static atomic_ulong handled;
static long items = 200, rounds = 4000, nstages = 3;

static void q_put(struct queue *x, uint64_t v)
{
    pthread_mutex_lock(&x->m);
    while (x->count == QSLOTS)
        pthread_cond_wait(&x->not_full, &x->m);
    x->slot[(x->head + x->count) % QSLOTS] = v;
    x->count++;
    pthread_cond_signal(&x->not_empty);
    pthread_mutex_unlock(&x->m);
}

static uint64_t q_get(struct queue *x)
{
    pthread_mutex_lock(&x->m);
    while (x->count == 0)
        pthread_cond_wait(&x->not_empty, &x->m);
    uint64_t v = x->slot[x->head];
    x->head = (x->head + 1) % QSLOTS;
    x->count--;
    pthread_cond_signal(&x->not_full);
    pthread_mutex_unlock(&x->m);
    return v;
}

/* What stage s makes of v: the same function in the stage and in main's check. */
static uint64_t stage_fn(long s, uint64_t v, const uint64_t *tab)
{
    v = work(v + (uint64_t)s, (unsigned long)rounds);
    for (int i = 0; i < TABLE; i += 8)
        v = (v ^ tab[i]) * 0x100000001b3ULL;
    return v;
}

static void table_fill(long s, uint64_t *tab)
{
    for (int i = 0; i < TABLE; i++)
        tab[i] = ((uint64_t)s + 1) * 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
}

static void *stage(void *arg)
{
    long s = (long)(intptr_t)arg;
    table_fill(s, table[s]);
    for (long i = 0; i < items; i++) {
        uint64_t v = stage_fn(s, q_get(&q[s]), table[s]);
        atomic_fetch_add(&handled, 1);
        q_put(&q[s + 1], v);
    }
    return NULL;
}

static void *producer(void *arg)
{
    (void)arg;
    for (long i = 0; i < items; i++)
        q_put(&q[0], (uint64_t)i * 0x2545F4914F6CDD1DULL + 7);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[items [work [stages]]]";
    items = arg_long(argc, argv, 1, items, usage);
    rounds = arg_long(argc, argv, 2, rounds, usage);
    nstages = arg_long(argc, argv, 3, nstages, usage);
    if (nstages < 1 || nstages > MAXSTAGES) {
        fprintf(stderr, "usage: %s %s (stages 1..%d)\n", argv[0], usage, MAXSTAGES);
        return 2;
    }
    for (int i = 0; i <= MAXSTAGES; i++) {
        pthread_mutex_init(&q[i].m, NULL);
        pthread_cond_init(&q[i].not_empty, NULL);
        pthread_cond_init(&q[i].not_full, NULL);
    }
    static uint64_t mine[MAXSTAGES][TABLE]; /* main's own copy of the tables */
    for (long s = 0; s < nstages; s++)
        table_fill(s, mine[s]);
    pthread_t prod, st[MAXSTAGES];
    start_thread(&prod, producer, NULL);
    for (long s = 0; s < nstages; s++)
        start_thread(&st[s], stage, (void *)(intptr_t)s);
    uint64_t sum = 0;
    for (long i = 0; i < items; i++) {
        uint64_t got = q_get(&q[nstages]), want = (uint64_t)i * 0x2545F4914F6CDD1DULL + 7;
        for (long s = 0; s < nstages; s++)
            want = stage_fn(s, want, mine[s]);
        if (got != want) {
            fprintf(stderr, "pipeline: item %ld is %#llx, want %#llx\n", i,
                    (unsigned long long)got, (unsigned long long)want);
            abort();
        }
        sum += got;
    }
    join_thread(prod);
    for (long s = 0; s < nstages; s++)
        join_thread(st[s]);
    if (atomic_load(&handled) != (unsigned long)(items * nstages)) {
        fprintf(stderr, "pipeline: %lu items handled, want %ld\n", atomic_load(&handled),
                items * nstages);
        abort();
    }
    printf("pipeline: ok items=%ld checksum=%016llx\n", items, (unsigned long long)sum);
    return 0;
}
