/*
 * dcl-singleton - double-checked locking that publishes the instance before filling
 * it in. The first caller allocates the singleton, stores the pointer, then sets its
 * fields (all under the lock); a second caller's unlocked first check sees the pointer,
 * skips the lock and reads an unfilled instance. SIGABRT in the second caller. Three
 * threads (main + 2), one preemption (the creator, between publishing and filling).
 *
 *   w0: if (!inst) { lock; if (!inst) { inst = p; [preempted]      p->port = 8080 }
 *   w1:                                  if (!inst) ...; check(inst->port == 8080)
 *
 * Twin (dcl-singleton-ok): fill the instance, then publish it with a release store
 * (and read it with an acquire load).
 */
#include "corpus.h"

struct settings {
    int port;
    int workers;
};

static struct settings storage;
static struct settings *inst;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int created;

static struct settings *get_settings(void)
{
    if (__atomic_load_n(&inst, FIXED ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED) == NULL) {
        pthread_mutex_lock(&m);
        if (inst == NULL) {
            struct settings *p = &storage;
            created++;
#if FIXED
            p->port = 8080;
            p->workers = 4;
            __atomic_store_n(&inst, p, __ATOMIC_RELEASE);
#else
            STORE(inst, p);
            WIDEN(1000000);
            STORE(p->port, 8080);
            STORE(p->workers, 4);
#endif
        }
        pthread_mutex_unlock(&m);
    }
    return inst;
}

static void *worker(void *arg)
{
    (void)arg;
    struct settings *s = get_settings();
    int port = LOAD(s->port);
    CHECK(port == 8080, "singleton seen half-built (port %d)", port);
    return NULL;
}

int main(void)
{
    run_ids(2, worker);
    CHECK(created == 1, "created %d times", created);
    PASS("dcl-singleton");
    return 0;
}
