/* A spin on a page only the spinner has touched (tests/integration/ownspin.sh). A worker
 * spins on a flag alone on its page, computing in registers between reads; main makes a
 * cue point (sched_yield) again and again, and only after OWNSPIN_MS of its clock sets
 * the flag. Serialized from a snapshot taken meanwhile, round-robin gives the worker a
 * turn after main's first yield: its first read of the flag claims the page, and from
 * its next turn on the page is mapped for it and its reads are no cue points: without
 * the stall remedy (sched/stall.h) the worker keeps the turn for ever and main, the only
 * one who could set the flag, never runs again (every simulation stopped by the 5 s wall
 * guard: the correct image's reader meets the same in determinism.sh). Free execution
 * just runs it: main sets the flag, the worker sees it. */
#define _GNU_SOURCE
#include "check.h"
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#define OWNSPIN_MS 300

static struct {
    volatile int flag;
    char pad[4096 - sizeof(int)]; /* the page is the flag's alone */
} box __attribute__((aligned(4096)));
static volatile uint64_t spun;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void *worker(void *arg)
{
    (void)arg;
    uint64_t acc = 1, reads = 0;
    while (!box.flag) {
        for (int i = 0; i < 1000; i++) { /* registers only: no memory, no cue point */
            acc = (acc ^ (acc >> 31)) * 0xbf58476d1ce4e5b9ULL;
            __asm__ volatile("" : "+r"(acc));
        }
        reads++;
    }
    spun = reads + (acc & 1);
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    uint64_t end = now_ms() + OWNSPIN_MS, yields = 0;
    while (now_ms() < end) {
        sched_yield();
        yields++;
    }
    box.flag = 1;
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(spun > 0);
    printf("ownspin: flag set after %llu yields\n", (unsigned long long)yields);
    return 0;
}
