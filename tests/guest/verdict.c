/* Correct programs that need what jinx must provide (many threads, thread ids past 255)
 * and programs that fail only because jinx lacks something; the verdict tests
 * (tests/integration/verdicts.sh) check that jinx never calls either a bug.
 *   alive N      N threads alive at once (they meet at a barrier), then joined
 *   seq N        N threads one after the other (create, join): thread ids grow past N
 *   waves N W    N threads, W at a time, sharing a mutex-protected counter
 *   nosys        needs socket(2), which jinx does not implement, and aborts without it
 *   pifutex      needs FUTEX_LOCK_PI (a priority-inheritance mutex's futex operation),
 *                which jinx does not implement, and aborts without it
 *   handler      raises SIGUSR1 with a handler installed (jinx does not run handlers)
 *   exitwait     main exits while its worker still runs, which then waits for ever: a
 *                correct program (exit ends the process), never a deadlock
 *   assert       a plain assertion failure after a few lines on stderr (a real bug)
 *   fail N       two threads share the counter, then the test reports failure by exit
 *                status N (1..125) without a crash: a failed test, as jinx test counts it
 * Like an ordinary test, a failed pthread_create ends it with status 255 and the error. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static long counter;
static int use_barrier;

static void *worker(void *arg)
{
    if (use_barrier)
        pthread_barrier_wait(&bar);
    pthread_mutex_lock(&mu);
    counter += (long)arg;
    pthread_mutex_unlock(&mu);
    return arg;
}

static void create(pthread_t *t, long i)
{
    int rc = pthread_create(t, NULL, worker, (void *)i);
    if (rc) {
        fprintf(stderr, "verdict: pthread_create of thread %ld: %s\n", i, strerror(rc));
        exit(255);
    }
}

static void join(pthread_t t, long i)
{
    void *ret;
    int rc = pthread_join(t, &ret);
    if (rc || (long)ret != i) {
        fprintf(stderr, "verdict: pthread_join of thread %ld: %s\n", i, strerror(rc));
        exit(254);
    }
}

static void check_sum(long n)
{
    long want = n * (n + 1) / 2;
    if (counter != want) {
        fprintf(stderr, "verdict: counter %ld, expected %ld\n", counter, want);
        exit(253);
    }
}

static void on_usr1(int sig) { (void)sig; }

static pthread_mutex_t late_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t late_c = PTHREAD_COND_INITIALIZER;

/* exitwait's worker: computes a while (in registers), then waits for what never comes. */
static void *late_waiter(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3000000; i++)
        __asm__ volatile("");
    pthread_mutex_lock(&late_m);
    for (;;)
        pthread_cond_wait(&late_c, &late_m);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "alive";
    long n = argc > 2 ? atol(argv[2]) : 100;
    if (n < 1 || n > 100000)
        n = 100;
    if (!strcmp(mode, "alive")) {
        pthread_t *t = calloc((size_t)n, sizeof *t);
        use_barrier = 1;
        pthread_barrier_init(&bar, NULL, (unsigned)n);
        for (long i = 1; i <= n; i++)
            create(&t[i - 1], i);
        for (long i = 1; i <= n; i++)
            join(t[i - 1], i);
        check_sum(n);
    } else if (!strcmp(mode, "seq")) {
        for (long i = 1; i <= n; i++) {
            pthread_t t;
            create(&t, i);
            join(t, i);
        }
        check_sum(n);
    } else if (!strcmp(mode, "waves")) {
        long w = argc > 3 ? atol(argv[3]) : 4;
        if (w < 1 || w > 64)
            w = 4;
        pthread_t t[64];
        for (long i = 1; i <= n; i += w) {
            long k = n - i + 1 < w ? n - i + 1 : w;
            for (long j = 0; j < k; j++)
                create(&t[j], i + j);
            for (long j = 0; j < k; j++)
                join(t[j], i + j);
        }
        check_sum(n);
    } else if (!strcmp(mode, "nosys")) {
        if (socket(AF_INET, SOCK_STREAM, 0) < 0) {
            fprintf(stderr, "verdict: socket: %s\n", strerror(errno));
            abort();
        }
    } else if (!strcmp(mode, "pifutex")) {
        static int word; /* unlocked: LOCK_PI takes it at once on Linux */
        if (syscall(SYS_futex, &word, 6 | 128 /* FUTEX_LOCK_PI_PRIVATE */, 0, NULL, NULL, 0) != 0) {
            fprintf(stderr, "verdict: futex(FUTEX_LOCK_PI): %s\n", strerror(errno));
            abort();
        }
    } else if (!strcmp(mode, "exitwait")) {
        pthread_t w;
        if (pthread_create(&w, NULL, late_waiter, NULL) != 0)
            return 255;
        printf("verdict: main exits, its worker still running\n");
        exit(0);
    } else if (!strcmp(mode, "handler")) {
        signal(SIGUSR1, on_usr1);
        raise(SIGUSR1);
    } else if (!strcmp(mode, "assert")) {
        for (int i = 1; i <= 12; i++)
            fprintf(stderr, "verdict: step %d\n", i);
        int broken = n > 0;
        assert(!broken && "the invariant the test checks");
    } else if (!strcmp(mode, "fail")) {
        pthread_t t[2];
        create(&t[0], 1);
        create(&t[1], 2);
        join(t[0], 1);
        join(t[1], 2);
        fprintf(stderr, "verdict: the test failed (status %ld)\n", n);
        return n <= 125 ? (int)n : 1;
    } else {
        fprintf(stderr, "verdict: unknown mode %s\n", mode);
        return 2;
    }
    printf("verdict %s %ld ok\n", mode, n);
    return 0;
}
