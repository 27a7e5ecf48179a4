/* Pipes, eventfds and poll inside the guest (issue 28; vmm/linux/pipes.h).
 *   pipes            checks the calls' answers, then streams 320 KiB through a pipe from
 *                    one thread to another (blocking reads, and writes on a full pipe), wakes
 *                    a thread blocked on an eventfd and one blocked in poll; prints a line
 *                    that must be the same natively, free, --serial and --attach
 *   pipes small      the same with 80 KiB (serialized execution single-steps each access)
 *   pipes long       the same with 24 MiB: many rounds under --attach, blocked threads
 *                    in every snapshot
 *   pipes deadlock   a thread reads a pipe that nobody will write: a deadlock
 *   pipes sigpipe    writes to a pipe with no reader: killed by SIGPIPE */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static size_t TOTAL = 320 * 1024; /* "small": 80 KiB, for serialized runs */

static int pfd[2], efd, qfd[2];
static uint64_t sum_in, sum_out;

static void *producer(void *arg)
{
    (void)arg;
    unsigned char buf[7000];
    uint64_t sum = 0;
    size_t sent = 0;
    for (unsigned i = 0; sent < TOTAL; i++) {
        size_t n = 1 + (i * 2654435761u) % sizeof buf;
        if (n > TOTAL - sent)
            n = TOTAL - sent;
        for (size_t k = 0; k < n; k++) {
            buf[k] = (unsigned char)((sent + k) * 31 + (sent + k) / 251);
            sum = sum * 131 + buf[k];
        }
        for (size_t off = 0; off < n;) { /* a big write may be cut short */
            ssize_t w = write(pfd[1], buf + off, n - off);
            CHECK(w > 0);
            off += (size_t)w;
        }
        sent += n;
    }
    CHECK(close(pfd[1]) == 0);
    sum_out = sum;
    return NULL;
}

static void *event_waiter(void *arg)
{
    (void)arg;
    uint64_t v = 0;
    CHECK(read(efd, &v, 8) == 8); /* blocks until main writes */
    CHECK(v == 5);
    return (void *)(uintptr_t)v;
}

static void *poller(void *arg)
{
    (void)arg;
    struct pollfd p = {.fd = qfd[0], .events = POLLIN};
    CHECK(poll(&p, 1, -1) == 1 && (p.revents & POLLIN));
    char c;
    CHECK(read(qfd[0], &c, 1) == 1 && c == 'q');
    return NULL;
}

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static int cgo;
static void *cond_waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&cm);
    while (!cgo)
        pthread_cond_wait(&cc, &cm);
    pthread_mutex_unlock(&cm);
    return NULL;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void answers(void)
{
    int p[2];
    CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0 && p[0] >= 3 && p[1] == p[0] + 1);
    char c;
    CHECK(read(p[0], &c, 1) == -1 && errno == EAGAIN);
    CHECK(write(p[0], "x", 1) == -1 && errno == EBADF);
    CHECK(read(p[1], &c, 1) == -1 && errno == EBADF);
    CHECK(write(p[1], "hello", 5) == 5);
    int n = 0;
    CHECK(ioctl(p[0], FIONREAD, &n) == 0 && n == 5);
    struct stat st;
    CHECK(fstat(p[0], &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(lseek(p[0], 0, SEEK_SET) == -1 && errno == ESPIPE);
    CHECK((fcntl(p[0], F_GETFL) & O_NONBLOCK) && (fcntl(p[1], F_GETFL) & O_ACCMODE) == O_WRONLY);
    CHECK(fcntl(p[0], F_GETFD) == FD_CLOEXEC);
    char b[8] = {0};
    CHECK(read(p[0], b, sizeof b) == 5 && !memcmp(b, "hello", 5));
    CHECK(read(p[0], (void *)16, 1) == -1 && errno == EAGAIN); /* nothing there yet */
    CHECK(write(p[1], "y", 1) == 1);
    CHECK(read(p[0], (void *)16, 1) == -1 && errno == EFAULT);
    CHECK(write(p[1], (void *)16, 1) == -1 && errno == EFAULT);
    /* A full pipe: a nonblocking write gets what fits, then EAGAIN. */
    static char big[70000];
    ssize_t w = write(p[1], big, sizeof big);
    CHECK(w > 0 && w < (ssize_t)sizeof big);
    CHECK(write(p[1], big, 10) == -1 && errno == EAGAIN);
    struct pollfd pf[2] = {{.fd = p[0], .events = POLLIN}, {.fd = p[1], .events = POLLOUT}};
    CHECK(poll(pf, 2, 0) == 1 && pf[0].revents == POLLIN && pf[1].revents == 0);
    /* EOF once the write end is closed and the bytes are read. */
    CHECK(close(p[1]) == 0);
    while (read(p[0], big, sizeof big) > 0)
        ;
    CHECK(read(p[0], big, 1) == 0);
    CHECK(poll(pf, 1, 0) == 1 && (pf[0].revents & POLLHUP));
    CHECK(close(p[0]) == 0);
    /* EPIPE (SIGPIPE ignored) with no reader. */
    CHECK(pipe(p) == 0 && close(p[0]) == 0);
    signal(SIGPIPE, SIG_IGN);
    CHECK(write(p[1], "z", 1) == -1 && errno == EPIPE);
    CHECK(close(p[1]) == 0);
    CHECK(syscall(SYS_pipe2, (void *)16, 0) == -1 && errno == EFAULT);
    CHECK(syscall(SYS_pipe2, p, 12345) == -1 && errno == EINVAL);
    /* eventfd: counter, semaphore, nonblocking. */
    int e = eventfd(3, EFD_NONBLOCK | EFD_SEMAPHORE);
    uint64_t v;
    CHECK(e >= 3 && read(e, &v, 8) == 8 && v == 1 && read(e, &v, 8) == 8 && read(e, &v, 8) == 8);
    CHECK(read(e, &v, 8) == -1 && errno == EAGAIN);
    CHECK(read(e, &v, 4) == -1 && errno == EINVAL);
    v = UINT64_MAX;
    CHECK(write(e, &v, 8) == -1 && errno == EINVAL);
    close(e);
    /* poll with a timeout on nothing: 0, after the time (virtual time under jinx). */
    CHECK(pipe(p) == 0);
    pf[0] = (struct pollfd){.fd = p[0], .events = POLLIN};
    uint64_t t0 = now_ns();
    CHECK(poll(pf, 1, 50) == 0 && pf[0].revents == 0);
    CHECK(now_ns() - t0 >= 50000000ull);
    struct pollfd bad = {.fd = 999, .events = POLLIN};
    CHECK(poll(&bad, 1, 0) == 1 && bad.revents == POLLNVAL);
    close(p[0]);
    close(p[1]);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "deadlock")) {
        CHECK(pipe(pfd) == 0);
        char c;
        return (int)read(pfd[0], &c, 1); /* the write end stays open: nobody will write */
    }
    if (!strcmp(mode, "evwait")) { /* a thread blocked on an eventfd across rounds */
        CHECK((efd = eventfd(0, 0)) >= 3);
        pthread_t te;
        CHECK(pthread_create(&te, NULL, event_waiter, NULL) == 0);
        volatile uint64_t x = 0;
        for (int i = 0; i < 3000000; i++)
            x += (uint64_t)i * 7;
        uint64_t five = 5;
        CHECK(write(efd, &five, 8) == 8);
        CHECK(pthread_join(te, NULL) == 0);
        printf("evwait ok\n");
        return 0;
    }
    if (!strcmp(mode, "sigpipe")) {
        CHECK(pipe(pfd) == 0 && close(pfd[0]) == 0);
        write(pfd[1], "x", 1);
        return 0;
    }
    if (!strcmp(mode, "small"))
        TOTAL = 80 * 1024;
    if (!strcmp(mode, "long"))
        TOTAL = 24 << 20;
    answers();
    CHECK(pipe(pfd) == 0 && pipe(qfd) == 0);
    CHECK((efd = eventfd(0, EFD_CLOEXEC)) >= 3);
    pthread_t tp, te, tq;
    bool noev = getenv("PIPES_NOEV"), nopoll = getenv("PIPES_NOPOLL");
    CHECK(pthread_create(&tp, NULL, producer, NULL) == 0);
    if (!noev)
        CHECK(pthread_create(&te, NULL, event_waiter, NULL) == 0);
    if (!nopoll)
        CHECK(pthread_create(&tq, NULL, poller, NULL) == 0);
    pthread_t tc;
    bool cw = getenv("PIPES_CONDWAIT");
    if (cw)
        CHECK(pthread_create(&tc, NULL, cond_waiter, NULL) == 0);
    unsigned char buf[5000];
    size_t got = 0;
    ssize_t r;
    uint64_t sum = 0;
    while ((r = read(pfd[0], buf, sizeof buf)) > 0) {
        for (ssize_t k = 0; k < r; k++)
            sum = sum * 131 + buf[k];
        got += (size_t)r;
    }
    sum_in = sum;
    CHECK(r == 0 && got == TOTAL);
    uint64_t five = 5;
    void *ev = (void *)5;
    CHECK(write(efd, &five, 8) == 8);
    CHECK(write(qfd[1], "q", 1) == 1);
    if (cw) {
        pthread_mutex_lock(&cm);
        cgo = 1;
        pthread_cond_signal(&cc);
        pthread_mutex_unlock(&cm);
        CHECK(pthread_join(tc, NULL) == 0);
    }
    CHECK(pthread_join(tp, NULL) == 0);
    CHECK(noev || pthread_join(te, &ev) == 0);
    CHECK(nopoll || pthread_join(tq, NULL) == 0);
    CHECK(sum_in == sum_out && (uintptr_t)ev == 5);
    printf("pipes ok: %zu bytes, sum %016llx, eventfd %lu\n", got, (unsigned long long)sum_in,
           (unsigned long)(uintptr_t)ev);
    return 0;
}
