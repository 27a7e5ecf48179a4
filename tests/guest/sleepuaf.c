/* A use-after-free ordered by a sleep (tests/integration/timers.sh, docs/timers.md).
 *
 * Main fills a buffer, starts a reader, sleeps 50 ms ("the reader is surely done by
 * then"), then poisons the buffer and frees it. The reader checks its 64 slots one by one,
 * with some private work between them. Natively the reader needs well under a millisecond,
 * so the test passes on an idle machine; on a busy one the reader can be descheduled for
 * longer than the sleep, and then it reads freed, poisoned memory: a sleep is no
 * synchronization. Jinx finds it only when a schedule may end main's sleep early.
 *
 * HOT (sleepuaf_hot): both threads also bump a shared statistics counter, the reader 20000
 * times per slot, so a traced run (every shared access a cue point) is cut by its budget
 * and sparse runs (docs/sparse.md: decisions only) find the bug: a sleep ends early there
 * too, at a preemption point.
 *
 * FIXED (the bug-free twin, sleepuaf_ok): main frees only after the reader said it is
 * done, which it waits for by polling a flag with usleep(1000) in a loop (a loop that
 * waits on time: ending one of its sleeps early must neither livelock nor fail it), and
 * the reader waits for its start signal with pthread_cond_timedwait retried on timeout. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 64
#define GOOD 0x5a
#define POISON 0xdd

static unsigned char *buf;
static atomic_int done;
static unsigned long sink;
#ifdef HOT
static volatile unsigned long stats; /* hot and shared: traced runs are too long */
#define HOT_BUMPS 20000
#else
#define HOT_BUMPS 0
#endif

static void busy(unsigned n) /* private work: no shared access */
{
    unsigned long x = n;
    for (unsigned i = 0; i < 200; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    sink += x & 1;
}

#ifdef FIXED
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;

/* Waits for `go` with a 2 ms timeout, retried: every timeout is harmless. */
static void wait_go(void)
{
    pthread_mutex_lock(&mu);
    while (!go) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 2000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_nsec -= 1000000000;
            t.tv_sec++;
        }
        int rc = pthread_cond_timedwait(&cv, &mu, &t);
        assert(rc == 0 || rc == ETIMEDOUT);
    }
    pthread_mutex_unlock(&mu);
}
#endif

static void *reader(void *arg)
{
    (void)arg;
#ifdef FIXED
    wait_go();
#endif
    for (unsigned i = 0; i < SLOTS; i++) {
        busy(i);
#ifdef HOT
        for (unsigned j = 0; j < HOT_BUMPS; j++)
            stats++;
#endif
        unsigned char v = buf[i * 64];
        if (v != GOOD) {
            fprintf(stderr, "sleepuaf: slot %u reads 0x%02x: the buffer was freed under the "
                    "reader\n", i, v);
            abort();
        }
    }
    atomic_store(&done, 1);
    return NULL;
}

int main(void)
{
    buf = malloc(SLOTS * 64);
    if (!buf)
        return 2;
    memset(buf, GOOD, SLOTS * 64);
    pthread_t t;
    if (pthread_create(&t, NULL, reader, NULL) != 0)
        return 2;
#ifdef FIXED
    pthread_mutex_lock(&mu);
    go = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    while (!atomic_load(&done))
        usleep(1000); /* poll: a timer in a loop */
#else
#ifdef HOT
    stats++;
#endif
    usleep(50000); /* "the reader is done by then" */
#endif
    memset(buf, POISON, SLOTS * 64);
    free(buf);
    pthread_join(t, NULL);
    printf("sleepuaf: ok (%lu)\n", sink);
    return 0;
}
