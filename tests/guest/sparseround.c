/* Sparse rounds' test program: a long-running program whose bug needs two preemptions
 * at racy sites, for `--attach` rounds with sparse simulations (docs/rounds.md).
 *
 * A reader loops: it loads `slot`, and when it is not NULL loads it again and reads
 * through it (the second load is the bug: the pointer can change in between). A writer
 * loops: it sets `slot` to NULL and, one instruction later, back to the node. Both also
 * bump a statistics counter on the same page and do private work, for ROUNDS x 1000
 * iterations (about a second under jinx-vmm): rounds come while they run.
 *
 * The crash needs the reader stopped between its two loads and the writer stopped
 * between its two stores, then the reader going on: a window of one instruction on
 * each side, which free execution practically never meets, and which a sparse
 * simulation meets when its change points land on the reader's second load and the
 * writer's second store (both learnt racy sites of `slot`).
 *
 * Built twice (tests/guest/guest.mk): sparseround, and sparseround_ok with -DFIXED,
 * where the reader loads the pointer once (the bug-free twin). Argument: ROUNDS
 * (default 400). Prints "sparseround: ok <sum>" when the bug did not show. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
    long v;
};

static struct node node = {.v = 1};
static struct {
    struct node *volatile slot;
    volatile unsigned long stats; /* racy on purpose, only printed */
} sh = {.slot = &node};
static volatile int done;
static long rounds = 400;

static unsigned long work(unsigned long x)
{
    for (int k = 0; k < 200; k++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

static void *reader(void *arg)
{
    unsigned long x = (unsigned long)arg, sum = 0;
    for (long i = 0; i < rounds * 1000; i++) {
        sh.stats++;
#ifdef FIXED
        struct node *p = sh.slot;
        if (p)
            sum += (unsigned long)p->v;
#else
        if (sh.slot)
            sum += (unsigned long)sh.slot->v;
#endif
        x = work(x);
    }
    done = 1;
    return (void *)(sum + (x & 1));
}

static void *writer(void *arg)
{
    unsigned long x = (unsigned long)arg;
    while (!done) {
        sh.stats++;
        sh.slot = NULL;
        sh.slot = &node;
        x = work(x);
    }
    return (void *)x;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atol(argv[1]);
    if (rounds < 1)
        rounds = 1;
    pthread_t r, w;
    void *sum;
    if (pthread_create(&r, NULL, reader, (void *)1) != 0 ||
        pthread_create(&w, NULL, writer, (void *)2) != 0)
        return 2;
    pthread_join(r, &sum);
    pthread_join(w, NULL);
    printf("sparseround: ok %lu\n", (unsigned long)sum);
    return 0;
}
