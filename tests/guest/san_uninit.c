/* A use of uninitialized memory that needs a schedule, for MSan builds (tests/integration/
 * sanitizers.sh): main publishes a new request under the lock and fills in its limit
 * right after unlocking ("the worker is still preparing"); the worker prepares (about
 * 20 ms of computation in registers), takes the request under the lock and branches on
 * its limit. Natively main has long filled it in; a schedule that runs the worker between
 * main's unlock and its store makes the worker branch on an uninitialized value, which
 * MSan reports (use-of-uninitialized-value, exit 1). -DFIXED fills the request in before
 * publishing it: the bug-free twin. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct request {
    int limit;
    int used;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct request *pending; /* under lock */
static int answer;

/* Two paths that clang cannot fold into a select (a cmov): MSan reports a branch on an
 * uninitialized value, and a select only carries the shadow on into `answer`, which
 * nothing checks (so the first version of this test never failed, whatever the schedule). */
static __attribute__((noinline)) void grant(unsigned x)
{
    answer = 1 + (int)(x & 1);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void refuse(void)
{
    answer = 2;
    __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
    unsigned x = (unsigned)(unsigned long)arg;
    for (unsigned i = 0; i < 20000000; i++) { /* preparation, in registers */
        x = x * 1103515245u + 12345u;
        __asm__ volatile("" : "+r"(x));
    }
    pthread_mutex_lock(&lock);
    while (!pending)
        pthread_cond_wait(&cv, &lock);
    struct request *r = pending;
    pthread_mutex_unlock(&lock);
    if (r->limit > 3) /* uninitialized when main has not filled it in yet */
        grant(x);
    else
        refuse();
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, (void *)1ul))
        return 2;
    struct request *r = malloc(sizeof *r);
    if (!r)
        return 2;
    r->used = 0;
#ifdef FIXED
    r->limit = 5;
#endif
    pthread_mutex_lock(&lock);
    pending = r;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&lock);
#ifndef FIXED
    r->limit = 5; /* "the worker is still preparing" */
#endif
    pthread_join(t, NULL);
    printf("answer %d\n", answer > 0);
    free(r);
    return 0;
}
