/* Deadlines that fall due together, for the determinism of serialized time
 * (tests/integration/sleepers.sh). SLEEPERS threads sleep to one shared absolute
 * deadline (clock_nanosleep TIMER_ABSTIME), a timed futex wait that always times out, and
 * a relative nanosleep, period after period, and each logs its id into a shared array as
 * it wakes: the log is the order in which the threads ran after their deadlines. Main
 * meanwhile keeps making cue points (locked increments) and now and then waits with a
 * timeout itself, so that sometimes every thread is blocked and time must skip.
 *
 * Under serialized time which threads may run at a cue point must depend on virtual time
 * alone: every execution of one schedule from one snapshot (`--simulate N`) must be
 * identical, and a retired simulation's replay (`--attach`) must follow it. Before
 * 33cdd38 a due sleeper ran when its host thread happened to wake (a resume's broadcast),
 * which this program meets at the start of nearly every fragment. Prints a checksum of
 * the log. Usage: sleepers [PERIODS] (default 400). */
#define FUTEX_WAIT_PRIVATE 128 /* musl has no <linux/futex.h> */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLEEPERS 4
#define PERIOD_NS 20000L
#define LOG_MAX (SLEEPERS * 3 * 4096)

static unsigned periods = 400;
static struct timespec t0;
static volatile unsigned char wake_log[LOG_MAX];
static unsigned log_n;
static unsigned long ticks;
static int never; /* a futex word nobody wakes: timed waits on it always time out */
static volatile int done;

static void add_ns(struct timespec *t, long ns)
{
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
}

static void log_wake(unsigned id)
{
    unsigned i = __atomic_fetch_add(&log_n, 1, __ATOMIC_SEQ_CST);
    if (i < LOG_MAX)
        wake_log[i] = (unsigned char)id;
}

static void timed_wait(long ns)
{
    struct timespec rel = {0, ns};
    syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
}

static void *sleeper(void *arg)
{
    unsigned id = (unsigned)(unsigned long)arg;
    for (unsigned p = 1; p <= periods; p++) {
        struct timespec due = t0;
        add_ns(&due, p * PERIOD_NS); /* the same deadline for every sleeper */
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) != 0)
            ;
        log_wake(id);
        timed_wait(3000); /* relative timeouts, mostly due together too */
        log_wake(id + 16);
        struct timespec rel = {0, 2000};
        nanosleep(&rel, NULL);
        log_wake(id + 32);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        periods = (unsigned)strtoul(argv[1], NULL, 10);
    if (periods == 0 || periods > 4096) {
        fprintf(stderr, "sleepers: PERIODS must be 1..4096\n");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t t[SLEEPERS];
    for (unsigned long i = 0; i < SLEEPERS; i++)
        if (pthread_create(&t[i], NULL, sleeper, (void *)(i + 1)) != 0) {
            perror("sleepers: pthread_create");
            return 1;
        }
    for (unsigned long n = 0; !done; n++) {
        __atomic_fetch_add(&ticks, 1, __ATOMIC_SEQ_CST);
        if (n % 16 == 15)
            timed_wait(5000);
        if (__atomic_load_n(&log_n, __ATOMIC_SEQ_CST) >= SLEEPERS * 3 * periods)
            done = 1;
    }
    for (int i = 0; i < SLEEPERS; i++)
        pthread_join(t[i], NULL);
    unsigned long sum = 0;
    for (unsigned i = 0; i < log_n && i < LOG_MAX; i++)
        sum = sum * 31 + wake_log[i];
    printf("sleepers: %u wakes, log checksum %lx\n", log_n, sum);
    return log_n == SLEEPERS * 3 * periods ? 0 : 1;
}
