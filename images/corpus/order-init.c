/*
 * order-init - order violation: the worker reads a global the creator sets too late.
 *
 * main creates the worker and only then publishes the configuration it uses. The author
 * assumed the new thread "takes a while to start" (it does: it sets up private state for
 * tens of microseconds first, making system calls that let main run). If main is preempted
 * right after pthread_create for longer than that, the worker follows a NULL pointer:
 * SIGSEGV in the worker. Two threads, one preemption.
 *
 *   main                           worker
 *   create(worker)
 *                                  n = cfg->rounds      <- NULL when it runs first
 *   cfg = &config
 *   join
 *
 * Twin (order-init-ok): the worker waits on a mutex+condition until cfg is set.
 */
#include "corpus.h"

struct config {
    int rounds;
    int step;
};

static struct config config = { 4, 3 };
static struct config *cfg;
static long total;
#if FIXED
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
#endif

static void *worker(void *arg)
{
    (void)arg;
    keep(work_yielding(1, 30000, 4));   /* sets up its private state first (with syscalls) */
#if FIXED
    pthread_mutex_lock(&m);
    while (!cfg)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
#endif
    struct config *c0 = LOAD(cfg);
    for (int i = 0; i < c0->rounds; i++)
        total += c0->step;
    return NULL;
}

int main(void)
{
    pthread_t t;
    start_thread(&t, worker, NULL);
    WIDEN(2000000); /* -DWIDEN_WINDOW: publish 2 ms late */
#if FIXED
    pthread_mutex_lock(&m);
#endif
    STORE(cfg, &config);
#if FIXED
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
#endif
    join_thread(t);
    CHECK(total == 12, "total %ld, want 12", total);
    PASS("order-init");
    return 0;
}
