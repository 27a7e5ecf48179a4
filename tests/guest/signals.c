/* Thread-directed signals as tests and tools use them (issue 28: pbzip2's signal thread):
 * pthread_kill, tgkill, kill to itself, pending sets under the blocked mask, sigwait,
 * sigwaitinfo, sigtimedwait (a timeout in virtual time), sigpending, SIG_IGN dropping a
 * pending signal, and the argument errors Linux answers.
 *   signals [small]      the checks; prints "signals ok: ..." (the same natively: the
 *                        test script compares), small does fewer ping-pong rounds
 *   signals fatal        pthread_kill(SIGTERM) to a thread that does not block it: the
 *                        program ends with SIGTERM (status 143), a real program outcome
 *   signals unblock      SIGUSR1 sent to a thread that blocks it stays pending (sigpending
 *                        says so) until the thread unblocks it: then it ends the program
 *                        (status 138)
 * Built with musl (static: its sigwait, tkill) and glibc (dynamic: tgkill). */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread;
static int rounds = 200;
static volatile int stage;   /* handshakes: written under lock, read under lock */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void set_stage(int s)
{
    pthread_mutex_lock(&mu);
    stage = s;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void wait_stage(int s)
{
    pthread_mutex_lock(&mu);
    while (stage < s)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static sigset_t one(int sig)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    return s;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* Ping-pong: the peer waits for SIGUSR1 and answers the main thread with SIGUSR2. */
static void *pong(void *arg)
{
    (void)arg;
    sigset_t s = one(SIGUSR1);
    for (int i = 0; i < rounds; i++) {
        int sig = 0;
        CHECK(sigwait(&s, &sig) == 0 && sig == SIGUSR1);
        CHECK(pthread_kill(main_thread, SIGUSR2) == 0);
    }
    /* sigwaitinfo says who sent it: this process, by tkill/tgkill. */
    siginfo_t si;
    CHECK(sigwaitinfo(&s, &si) == SIGUSR1);
    /* glibc folds SI_TKILL into SI_USER; musl does not */
    CHECK(si.si_signo == SIGUSR1 && (si.si_code == SI_TKILL || si.si_code == SI_USER) &&
          si.si_pid == getpid());
    /* Pending while blocked: the main thread sends, then says so; it stays pending. */
    wait_stage(1);
    sigset_t p;
    CHECK(sigpending(&p) == 0 && sigismember(&p, SIGUSR1) && !sigismember(&p, SIGUSR2));
    int sig = 0;
    CHECK(sigwait(&s, &sig) == 0 && sig == SIGUSR1);
    CHECK(sigpending(&p) == 0 && !sigismember(&p, SIGUSR1));
    /* A process-directed signal (kill) every thread blocks: pending for all, one takes it. */
    wait_stage(2);
    CHECK(sigpending(&p) == 0 && sigismember(&p, SIGHUP));
    sigset_t h = one(SIGHUP);
    CHECK(sigwaitinfo(&h, &si) == SIGHUP && si.si_code == SI_USER);
    set_stage(3);
    return NULL;
}

static void errors(void)
{
    sigset_t s = one(SIGUSR2);
    struct timespec bad = {0, 1000000000L}, zero = {0, 0};
    errno = 0;
    CHECK(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), 65) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_tgkill, getpid(), -3, SIGUSR2) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_tkill, 0, SIGUSR2) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), 0) == 0); /* it exists */
    CHECK(syscall(SYS_rt_sigtimedwait, &s, NULL, &zero, 4) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_rt_sigtimedwait, &s, NULL, &bad, 8) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_rt_sigtimedwait, (void *)16, NULL, &zero, 8) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_rt_sigpending, &s, 16) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_rt_sigpending, (void *)16, 8) == -1 && errno == EFAULT);
    CHECK(sigtimedwait(&s, NULL, &zero) == -1 && errno == EAGAIN); /* nothing pending */
}

static int checks(void)
{
    main_thread = pthread_self();
    sigset_t blk;
    sigemptyset(&blk);
    sigaddset(&blk, SIGUSR1);
    sigaddset(&blk, SIGUSR2);
    sigaddset(&blk, SIGHUP);
    sigaddset(&blk, SIGCHLD);
    CHECK(pthread_sigmask(SIG_BLOCK, &blk, NULL) == 0); /* the peer inherits it */
    errors();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, pong, NULL) == 0);
    sigset_t s2 = one(SIGUSR2);
    for (int i = 0; i < rounds; i++) {
        CHECK(pthread_kill(t, SIGUSR1) == 0);
        int sig = 0;
        CHECK(sigwait(&s2, &sig) == 0 && sig == SIGUSR2);
    }
    CHECK(pthread_kill(t, SIGUSR1) == 0); /* its sigwaitinfo */
    /* A timed wait nobody answers: EAGAIN after its 50 ms. */
    struct timespec ts = {0, 50000000L};
    uint64_t t0 = now_ns();
    CHECK(sigtimedwait(&s2, NULL, &ts) == -1 && errno == EAGAIN);
    uint64_t waited = now_ns() - t0;
    CHECK(waited >= 50000000ULL);
    CHECK(pthread_kill(t, SIGUSR1) == 0); /* stays pending: it does not wait yet */
    set_stage(1);
    kill(getpid(), SIGHUP); /* every thread blocks it */
    set_stage(2);
    wait_stage(3);
    CHECK(pthread_join(t, NULL) == 0);
    /* A blocked signal whose default is ignore stays pending, and unblocking drops it. */
    CHECK(raise(SIGCHLD) == 0);
    sigset_t p;
    CHECK(sigpending(&p) == 0 && sigismember(&p, SIGCHLD));
    sigset_t c = one(SIGCHLD);
    CHECK(pthread_sigmask(SIG_UNBLOCK, &c, NULL) == 0);
    CHECK(sigpending(&p) == 0 && !sigismember(&p, SIGCHLD));
    /* SIG_IGN drops a pending signal (POSIX): raise SIGUSR1 blocked, then ignore it. */
    CHECK(raise(SIGUSR1) == 0);
    CHECK(sigpending(&p) == 0 && sigismember(&p, SIGUSR1));
    CHECK(signal(SIGUSR1, SIG_IGN) != SIG_ERR);
    CHECK(sigpending(&p) == 0 && !sigismember(&p, SIGUSR1));
    printf("signals ok: %d ping-pong rounds, a timeout, pending sets, errors\n", rounds);
    return 0;
}

static void *idle(void *arg)
{
    (void)arg;
    wait_stage(99); /* never comes */
    return NULL;
}

static void *blocker(void *arg)
{
    (void)arg;
    sigset_t s = one(SIGUSR1);
    CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
    set_stage(1);
    wait_stage(2);
    sigset_t p;
    CHECK(sigpending(&p) == 0 && sigismember(&p, SIGUSR1));
    printf("unblock: SIGUSR1 pending while blocked\n");
    fflush(stdout);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL); /* acts now: the program ends */
    printf("unblock: still alive (wrong)\n");
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "small")) {
        rounds = 20;
        return checks();
    }
    if (!strcmp(mode, "fatal")) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, idle, NULL) == 0);
        printf("fatal: sending SIGTERM\n");
        CHECK(pthread_kill(t, SIGTERM) == 0);
        pthread_join(t, NULL);
        printf("fatal: still alive (wrong)\n");
        return 0;
    }
    if (!strcmp(mode, "unblock")) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, blocker, NULL) == 0);
        wait_stage(1);
        CHECK(pthread_kill(t, SIGUSR1) == 0);
        set_stage(2);
        pthread_join(t, NULL);
        return 0;
    }
    return checks();
}
