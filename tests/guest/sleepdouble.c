/* A double free ordered by a timeout (tests/integration/timers.sh, docs/timers.md).
 *
 * A sender hands a message to a receiver and waits 50 ms for its acknowledgement; on
 * timeout it takes the message back and frees it ("the receiver never took it"). The
 * receiver takes the message at once, works on it for a while, acknowledges it and frees
 * it. Natively the receiver acknowledges well within 50 ms, so the test passes; on a busy
 * machine the sender's timeout can end while the receiver still works, and both free the
 * message. Messages come from a small pool whose free checks and kills a magic word, so
 * the second free is an abort with a message, whatever malloc would have done (musl's
 * may unmap the page, and the bug would show as some other crash).
 *
 * FIXED (the bug-free twin, sleepdouble_ok): the sender waits for the acknowledgement with
 * pthread_cond_timedwait (5 ms) retried until it comes, and never frees: the receiver
 * owns the message once it took it. The receiver meanwhile sleeps 1 ms between pieces of
 * work (nanosleep in a loop): timers ended early must not make it fail. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define LIVE 0x11fe11feu
#define DEAD 0xdeaddeadu
#define WORDS 48

struct msg {
    unsigned magic;
    unsigned data[WORDS];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct msg *box;     /* the message handed over */
static int taken, acked;
static unsigned long sum;
static struct msg pool[4];
static unsigned pool_used;

static struct msg *msg_alloc(void)
{
    struct msg *m = &pool[pool_used++ % 4];
    m->magic = LIVE;
    return m;
}

static void release(struct msg *m, const char *who)
{
    if (m->magic != LIVE) {
        fprintf(stderr, "sleepdouble: %s frees a message already freed (magic 0x%x)\n", who,
                m->magic);
        abort();
    }
    m->magic = DEAD;
}

static void *receiver(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!box)
        pthread_cond_wait(&cv, &mu);
    struct msg *m = box;
    taken = 1;
    pthread_mutex_unlock(&mu);
    unsigned copy[WORDS];
    for (unsigned i = 0; i < WORDS; i++)
        copy[i] = m->data[i];
    for (unsigned i = 0; i < WORDS; i++) { /* the work, into a shared total */
        sum += copy[i] * 2654435761u;
#ifdef FIXED
        if (i % 16 == 15) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
#endif
    }
    pthread_mutex_lock(&mu);
    acked = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    release(m, "the receiver");
    return NULL;
}

static struct timespec after_ns(long ns)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += ns;
    while (t.tv_nsec >= 1000000000) {
        t.tv_nsec -= 1000000000;
        t.tv_sec++;
    }
    return t;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, receiver, NULL) != 0)
        return 2;
    struct msg *m = msg_alloc();
    for (unsigned i = 0; i < WORDS; i++)
        m->data[i] = i * 7 + 1;
    pthread_mutex_lock(&mu);
    box = m;
    pthread_cond_signal(&cv);
#ifdef FIXED
    while (!acked) { /* a timed wait retried on timeout */
        struct timespec d = after_ns(5000000);
        int rc = pthread_cond_timedwait(&cv, &mu, &d);
        assert(rc == 0 || rc == ETIMEDOUT);
    }
    pthread_mutex_unlock(&mu);
#else
    struct timespec d = after_ns(50000000);
    while (!acked) {
        if (pthread_cond_timedwait(&cv, &mu, &d) == ETIMEDOUT)
            break; /* "the receiver never took it" */
    }
    int give_up = !acked;
    pthread_mutex_unlock(&mu);
    if (give_up)
        release(m, "the sender, after its 50 ms timeout,");
#endif
    pthread_join(t, NULL);
    printf("sleepdouble: ok (%lu, taken %d)\n", sum, taken);
    return 0;
}
