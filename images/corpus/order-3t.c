/*
 * order-3t - order violation between two workers: the user assumes the initializer,
 * started first, has finished.
 *
 * main starts init (builds a lookup table) and then user (reads it), and joins both.
 * Nothing orders user after init (natively init has a head start of a thread creation plus
 * user's tens of microseconds of preparation). If user runs before init has published the
 * table, it finds none: SIGABRT in user. Three threads; no preemption at all is needed:
 * when main blocks in join, a scheduler that runs user before init shows it.
 *
 *   main: create(init); create(user); join; join
 *   init: t = malloc; fill t; table = t
 *   user: check(table != NULL); sum table
 *
 * No twin.
 */
#include "corpus.h"

#define N 16
static int *table;
static long sum;

static void *init(void *arg)
{
    (void)arg;
    int *t = malloc(N * sizeof *t);
    if (!t) {
        fprintf(stderr, "order-3t: out of memory\n");
        exit(3);
    }
    for (int i = 0; i < N; i++)
        t[i] = i * i;
    WIDEN(2000000);
    STORE(table, t);
    return NULL;
}

static void *user(void *arg)
{
    (void)arg;
    keep(work_yielding(3, 30000, 4));   /* prepares its query first (with syscalls) */
    int *t = LOAD(table);
    CHECK(t != NULL, "lookup table used before init published it");
    for (int i = 0; i < N; i++)
        sum += t[i];
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    start_thread(&a, init, NULL);
    start_thread(&b, user, NULL);
    join_thread(a);
    join_thread(b);
    CHECK(sum == 1240, "sum %ld, want 1240", sum);
    free(table);
    PASS("order-3t");
    return 0;
}
