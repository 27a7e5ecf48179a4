/*
 * pipe-publish - a three-stage pipeline over single-producer single-consumer rings whose
 * middle stage publishes a slot before it fills it. The source computes ITEMS values
 * into ring 1; the filter takes each, transforms it and puts it into ring 2; the sink
 * checks every value against the serial computation. A stage that finds its ring full
 * or empty sched_yields. The filter advances ring 2's tail and only then stores the
 * value into the slot, so a sink that reads the new tail in between takes the slot's
 * old contents (the value of CAP items earlier): SIGABRT in the sink. 4 threads
 * (main + 3), the bug involves 2, one preemption (the filter, between its two stores).
 *
 *   filter: tail2 = t + 1 [preempted]                          slot2[t] = v
 *   sink:                  h < tail2: x = slot2[h] (stale) -> check fails
 *
 * Shared accesses: ~4 per ring operation (head, tail, slot, index), 4 ring operations
 * per item, ITEMS = 150000: ~2.4e6 a run, plus the yields' polls.
 *
 * Twin (pipe-publish-ok): the slot is stored before the tail is advanced.
 */
#include "corpus.h"

#define ITEMS 150000
#define CAP 64

struct ring {
    atomic_ulong head;
    char pad1[56];
    atomic_ulong tail;
    char pad2[56];
    uint64_t slot[CAP];
};

static struct ring r1, r2;

static uint64_t source_value(uint64_t i)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ULL + 1;
    return x ^ (x >> 29);
}

static uint64_t transform(uint64_t v)
{
    return (v * 0xbf58476d1ce4e5b9ULL) ^ (v >> 31);
}

static void put(struct ring *r, uint64_t v, int publish_first)
{
    unsigned long t = atomic_load(&r->tail);
    while (t - atomic_load(&r->head) == CAP)
        sched_yield();
    if (publish_first) {
        atomic_store(&r->tail, t + 1);
        if (t == ITEMS / 2)
            WIDEN(2000000);
        STORE(r->slot[t % CAP], v);
    } else {
        STORE(r->slot[t % CAP], v);
        atomic_store(&r->tail, t + 1);
    }
}

static uint64_t get(struct ring *r)
{
    unsigned long h = atomic_load(&r->head);
    while (atomic_load(&r->tail) == h)
        sched_yield();
    uint64_t v = LOAD(r->slot[h % CAP]);
    atomic_store(&r->head, h + 1);
    return v;
}

static void *source(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < ITEMS; i++)
        put(&r1, source_value(i), 0);
    return NULL;
}

static void *filter(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < ITEMS; i++)
        put(&r2, transform(get(&r1)), !FIXED);
    return NULL;
}

static void *sink(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < ITEMS; i++) {
        uint64_t v = get(&r2);
        CHECK(v == transform(source_value(i)), "item %llu: got %016llx", (unsigned long long)i,
              (unsigned long long)v);
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b, c;
    start_thread(&a, source, NULL);
    start_thread(&b, filter, NULL);
    start_thread(&c, sink, NULL);
    join_thread(a);
    join_thread(b);
    join_thread(c);
    PASS("pipe-publish");
    return 0;
}
