/*
 * Shared helpers for the Jinx target workloads (images/src/NAME.c).
 *
 * Everything here stays within what the images are allowed to use: pthread mutexes and
 * condition variables, C11 atomics, malloc, printf, clock_gettime, nanosleep,
 * sched_yield, getrandom, assert/abort.
 *
 * Private work (work()) is a register-only integer hash loop: it touches no memory, so
 * under Jinx's page-ownership tracking it produces no cue points at all, and natively it
 * takes a predictable ~1 ns per unit on the measurement machine.
 *
 * WIDEN(ns): in the normal build it is nothing. Built with -DWIDEN_WINDOW (the
 * images/bin/widen/ variants) it sleeps ns nanoseconds, which turns the vulnerable window
 * of the program's bug into a wide one; those builds show that the bug is real.
 */
#ifndef JINX_IMAGES_COMMON_H
#define JINX_IMAGES_COMMON_H

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#define UNUSED __attribute__((unused))

/* ---- arguments -------------------------------------------------------------------- */

/* argv[i] as a positive long, or def when absent. Bad values print usage and exit 2. */
static UNUSED long arg_long(int argc, char **argv, int i, long def, const char *usage)
{
    if (i >= argc)
        return def;
    char *end;
    errno = 0;
    long v = strtol(argv[i], &end, 0);
    if (errno || end == argv[i] || *end || v < 0) {
        fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        exit(2);
    }
    return v;
}

/* ---- randomness ------------------------------------------------------------------- */

/* A seed from getrandom (seeded and deterministic under jinx-vmm, random natively). */
static UNUSED uint64_t os_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
        s = 0x9e3779b97f4a7c15ULL;
    return s | 1;
}

/* xorshift64*: a private PRNG, one per thread. */
static UNUSED uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [mean/2, mean*3/2]. */
static UNUSED unsigned long jitter(uint64_t *s, unsigned long mean)
{
    if (mean < 2)
        return mean;
    return mean / 2 + rng_next(s) % (mean + 1);
}

/* ---- private CPU-bound work ------------------------------------------------------- */

/* n rounds of a register-only integer hash (a dependent multiply chain). */
static UNUSED uint64_t work(uint64_t x, unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) {
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* ---- time ------------------------------------------------------------------------- */

static UNUSED uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static UNUSED void sleep_ns(long ns)
{
    struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

#ifdef WIDEN_WINDOW
#define WIDEN(ns) sleep_ns(ns)
#define WIDENED 1
#else
#define WIDEN(ns) ((void)0)
#define WIDENED 0
#endif

/* ---- start gate: threads wait until main has created all of them ------------------ */

struct gate {
    pthread_mutex_t m;
    pthread_cond_t c;
    int open;
};
#define GATE_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 }

static UNUSED void gate_wait(struct gate *g)
{
    pthread_mutex_lock(&g->m);
    while (!g->open)
        pthread_cond_wait(&g->c, &g->m);
    pthread_mutex_unlock(&g->m);
}

static UNUSED void gate_open(struct gate *g)
{
    pthread_mutex_lock(&g->m);
    g->open = 1;
    pthread_cond_broadcast(&g->c);
    pthread_mutex_unlock(&g->m);
}

/* ---- private work that lets a CPU-sharing thread in --------------------------------- */

/* n units of private work in `steps` chunks, each ending in sched_yield() (standing in
 * for a computation that makes system calls): a thread sharing the CPU with this one
 * gets to run between the chunks instead of after a whole time slice. */
static UNUSED uint64_t work_yielding(uint64_t x, unsigned long n, unsigned steps)
{
    for (unsigned i = 0; i < steps; i++) {
        x = work(x, n / steps);
        sched_yield();
    }
    return x;
}

/* ---- threads ---------------------------------------------------------------------- */

static UNUSED void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
    int e = pthread_create(t, NULL, fn, arg);
    if (e) {
        fprintf(stderr, "pthread_create failed: %d\n", e);
        exit(3);
    }
}

static UNUSED void join_thread(pthread_t t)
{
    int e = pthread_join(t, NULL);
    if (e) {
        fprintf(stderr, "pthread_join failed: %d\n", e);
        exit(3);
    }
}

/* Keeps the result of private work alive without writing memory. */
static UNUSED void keep(uint64_t v)
{
    __asm__ volatile("" : : "r"(v));
}

#endif
