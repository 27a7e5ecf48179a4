/* Futex semantics implemented by the VMM: wake counts, EAGAIN, timeouts, requeue. */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* musl ships no <linux/futex.h>. */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define FUTEX_CMP_REQUEUE_PRIVATE 132

static int word, word2;
static atomic_int waiting, woke;

static long fx(int *uaddr, int op, int val, const struct timespec *t, int *uaddr2, int val3)
{
    return syscall(SYS_futex, uaddr, op, val, t, uaddr2, val3);
}

static void *waiter(void *arg)
{
    (void)arg;
    atomic_fetch_add(&waiting, 1);
    while (__atomic_load_n(&word, __ATOMIC_SEQ_CST) == 0)
        fx(&word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    atomic_fetch_add(&woke, 1);
    return NULL;
}

static void wait_for_sleepers(int n)
{
    while (atomic_load(&waiting) < n)
        sched_yield();
    struct timespec d = {0, 20 * 1000 * 1000}; /* let them block (virtual time is cheap) */
    nanosleep(&d, NULL);
}

int main(void)
{
    /* EAGAIN when the value differs. */
    word = 5;
    CHECK(fx(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0) == -1 && errno == EAGAIN);
    word = 0;
    /* Timeout. */
    struct timespec t = {0, 30 * 1000 * 1000};
    CHECK(fx(&word, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0) == -1 && errno == ETIMEDOUT);
    struct timespec bad = {0, 2000000000};
    CHECK(fx(&word, FUTEX_WAIT_PRIVATE, 0, &bad, NULL, 0) == -1 && errno == EINVAL);
    /* Wake with no waiters. */
    CHECK(fx(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) == 0);

    /* Wake counts: 5 waiters, wake 2 (the value stays 0, so the 2 go back to sleep
     * after counting a wakeup? no: they loop only while word==0, so set word first). */
    pthread_t th[5];
    for (int i = 0; i < 5; i++)
        CHECK(pthread_create(&th[i], NULL, waiter, NULL) == 0);
    wait_for_sleepers(5);
    CHECK(fx(&word, FUTEX_WAKE_PRIVATE, 0, NULL, NULL, 0) == 0);
    /* Requeue 3 of them to word2, wake 1 on word. */
    CHECK(fx(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)3L, &word2, 1) == -1 && errno == EAGAIN);
    long r = fx(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)3L, &word2, 0);
    if (r != 4)
        fprintf(stderr, "requeue returned %ld\n", r);
    CHECK(r == 4); /* 1 woken + 3 requeued */
    /* The woken one finds word==0 and sleeps again on word: now 1 on word... wait for it. */
    struct timespec d = {0, 20 * 1000 * 1000};
    nanosleep(&d, NULL);
    __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
    long w1 = fx(&word, FUTEX_WAKE_PRIVATE, 100, NULL, NULL, 0);
    long w2 = fx(&word2, FUTEX_WAKE_PRIVATE, 2, NULL, NULL, 0);
    long w3 = fx(&word2, FUTEX_WAKE_PRIVATE, 100, NULL, NULL, 0);
    CHECK(w1 == 2 && w2 == 2 && w3 == 1);
    for (int i = 0; i < 5; i++)
        pthread_join(th[i], NULL);
    CHECK(atomic_load(&woke) == 5);

    /* Condition variables and mutexes under contention. */
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    struct timespec abs;
    clock_gettime(CLOCK_REALTIME, &abs);
    abs.tv_nsec += 10 * 1000 * 1000;
    if (abs.tv_nsec >= 1000000000) { abs.tv_sec++; abs.tv_nsec -= 1000000000; }
    pthread_mutex_lock(&m);
    CHECK(pthread_cond_timedwait(&c, &m, &abs) == ETIMEDOUT);
    pthread_mutex_unlock(&m);
    printf("futex ok\n");
    return 0;
}
