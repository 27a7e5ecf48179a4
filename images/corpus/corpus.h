/*
 * Shared helpers for the bug corpus (images/corpus/NAME.c; README.md there).
 *
 * Corpus programs are short pthread tests as people write them: a few threads that live
 * well under a millisecond, no sleeps, no time-, pid- or random-dependent behaviour, so
 * only the scheduler decides whether the bug shows. A bug shows as an outcome Jinx
 * detects: abort() after printing the failed check on stderr (SIGABRT), a SIGSEGV, a
 * nonzero exit, or a deadlock (every thread blocked in the kernel).
 *
 * A twin is the same source built with FIXED defined to 1 (images/corpus/NAME-ok.c is
 * `#define FIXED 1` and `#include "NAME.c"`): same structure, bug removed.
 *
 * WIDEN(ns) (from images/src/common.h) is nothing in the normal build; -DWIDEN_WINDOW
 * builds sleep there to show a bug is real.
 */
#ifndef JINX_CORPUS_H
#define JINX_CORPUS_H

#include "../src/common.h"
#include <string.h>

#ifndef FIXED
#define FIXED 0
#endif

/* The fix of several twins: one mutex around the steps that race. The buggy build has
 * the same calls, which do nothing there. */
static UNUSED pthread_mutex_t fix_mutex = PTHREAD_MUTEX_INITIALIZER;
#define FIX_LOCK() ((void)(FIXED && pthread_mutex_lock(&fix_mutex)))
#define FIX_UNLOCK() ((void)(FIXED && pthread_mutex_unlock(&fix_mutex)))

/* Plain racy accesses the compiler may neither merge nor drop: the bug is in the
 * interleaving of these, exactly as the source reads. */
#define LOAD(x) (*(volatile __typeof__(x) *)&(x))
#define STORE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

/* The check a test makes: on failure, the check's text on stderr, then SIGABRT. */
#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            abort();                                                                  \
        }                                                                             \
    } while (0)

/* A worker's id, passed by value through the void * argument. */
#define ID_ARG(i) ((void *)(intptr_t)(i))
#define ARG_ID(p) ((int)(intptr_t)(p))

/* Start n workers fn(ID_ARG(0)) .. fn(ID_ARG(n-1)) in that order, then join them all.
 * n is at most 250: Jinx runs up to 254 threads at once. */
static UNUSED void run_ids(int n, void *(*fn)(void *))
{
    pthread_t t[250];
    if (n < 1 || n > 250) {
        fprintf(stderr, "run_ids: %d threads, want 1..250\n", n);
        exit(3);
    }
    for (int i = 0; i < n; i++)
        start_thread(&t[i], fn, ID_ARG(i));
    for (int i = 0; i < n; i++)
        join_thread(t[i]);
}

/* The last line of every run: the program name and "ok" (and the twin's mark). */
#define PASS(name) printf("%s: ok%s\n", (name), FIXED ? " (fixed)" : "")

#endif
