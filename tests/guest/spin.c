/* Spin detection under serialized execution (explorer/spin.h). The main thread spins on
 * a plain volatile flag that a worker sets after some work. A futex handshake makes the
 * order exact under `--serial --policy continue`: the worker parks, main lets it go
 * (the worker is now runnable) and starts spinning. `continue` keeps the running thread,
 * so without spin detection main spins forever (a livelock: every read of the flag is a
 * cue point, but nobody else is ever chosen). With it, main is deprioritised after
 * --spin-threshold identical reads, the worker runs, sets the flag, and main sees it at
 * its very next read: the program prints how many reads of 0 main made, which is
 * exactly the threshold. Free execution just runs it. */
#define _GNU_SOURCE
#include "check.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

/* One page, touched by both threads: every access to it is a cue point. */
static struct {
    volatile int parked, go, flag;
} sh __attribute__((aligned(4096)));
static volatile uint64_t work_result;

static void fx_wait(volatile int *w, int val)
{
    syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void fx_wake(volatile int *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *worker(void *arg)
{
    (void)arg;
    sh.parked = 1;
    fx_wake(&sh.parked);
    while (!sh.go)
        fx_wait(&sh.go, 0);
    uint64_t h = 1469598103934665603ULL; /* some work of its own before the flag */
    for (int i = 0; i < 200000; i++)
        h = (h ^ (uint64_t)i) * 1099511628211ULL;
    work_result = h;
    sh.flag = 1;
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    while (!sh.parked)
        fx_wait(&sh.parked, 0);
    sh.go = 1;
    fx_wake(&sh.go);
    long spins = 0;
    while (!sh.flag)
        spins++;
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(work_result != 0);
    printf("spin: flag seen after %ld reads of 0\n", spins);
    return 0;
}
