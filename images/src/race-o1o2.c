/*
 * race-o1o2 — RaceFuzzer's (race-directed random testing) aliasing example.
 *
 * Every round, main creates thread 1, which writes field f of object o1, while main
 * itself (playing thread 2) tests field f of object o2; then main joins thread 1. o1 and
 * o2 are fresh objects each round and alias (are the same object) in every other round.
 * Nothing orders the two accesses, so when o1 == o2 they race.
 *
 *   Thread 1 (created each round):           Thread 2 (main), each round:
 *                                              create thread 1
 *     g1(); ... g8();  (~g units of            h1(); ... h7();  (~h units, h << g)
 *                       private work, each     if (o2->f == 1)                   (b1)
 *                       ending in a syscall)       ERROR;  -> assert
 *     o1->f = 1;                     (a1)      join thread 1
 *
 * The bug: ERROR is reachable only when o1 and o2 alias and thread 1's write a1 comes
 * before thread 2's read b1. Natively thread 2 is already running and reaches b1 ~h units
 * after creating thread 1, which first has to start and then run ~g units (yielding the
 * CPU between its steps, so it cannot crowd thread 2 out even on a shared CPU): thread 2
 * must be descheduled between the create and b1 for longer than all of that. A scheduler
 * that postpones b1 until a1 has run (RaceFuzzer's strategy) triggers it at once:
 * SIGABRT in thread 2 (main).
 *
 * usage: race-o1o2 [rounds [g [h]]]   (defaults 8 rounds, g 150000 units ~200 us, h 8000)
 * Threads: main + one thread per round (at most two alive at a time).
 * -DWIDEN_WINDOW: thread 2 sleeps 5 ms before b1.
 */
#include "common.h"

struct obj {
    long f;
    char pad[56];
};

static struct obj *pool;
static long rounds = 8, g_units = 150000, h_units = 8000;

struct t1arg {
    struct obj *o1;
    uint64_t seed;
};

static void *thread1(void *arg)
{
    struct t1arg *a = arg;
    uint64_t rng = a->seed, acc = 1;
    acc = work_yielding(acc, jitter(&rng, (unsigned long)g_units), 8); /* g1() .. g8() */
    *(volatile long *)&a->o1->f = 1;                                    /* a1 */
    keep(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[rounds [g [h]]]";
    rounds = arg_long(argc, argv, 1, rounds, usage);
    g_units = arg_long(argc, argv, 2, g_units, usage);
    h_units = arg_long(argc, argv, 3, h_units, usage);
    pool = calloc(2 * (size_t)rounds + 2, sizeof *pool);
    assert(pool);
    uint64_t seed = os_seed(), rng = seed * 5 | 1, acc = 2;
    long aliased = 0;
    for (long r = 0; r < rounds; r++) {
        struct obj *o1 = &pool[2 * r];
        struct obj *o2 = (r % 2 == 1) ? o1 : &pool[2 * r + 1];
        struct t1arg a = { o1, seed * (uint64_t)(2 * r + 3) | 1 };
        pthread_t t1;
        start_thread(&t1, thread1, &a);
        acc = work(acc, jitter(&rng, (unsigned long)h_units)); /* h1() .. h7() */
        WIDEN(5000000);
        int err = *(volatile long *)&o2->f == 1;                /* b1 */
        assert(!err && "ERROR: o2.f == 1");
        aliased += o1 == o2;
        join_thread(t1);
    }
    keep(acc);
    printf("race-o1o2: ok rounds=%ld aliased=%ld g=%ld h=%ld%s\n", rounds, aliased, g_units,
           h_units, WIDENED ? " (widened)" : "");
    return 0;
}
