/* Descriptor calls on pipes and eventfds inside the guest (issue 28; vmm/linux/pipes.h):
 * dup/dup2/dup3/fcntl, select/pselect6, epoll and socketpair.
 *   pipefds            checks the calls' answers, then passes tokens around a ring of
 *                      threads, each waiting in another call (select, pselect6,
 *                      epoll_wait, poll on a socket, a blocking read of a dup'd
 *                      descriptor); prints a line that must be the same natively, free,
 *                      --serial and --attach
 *   pipefds hostile    two threads make the calls above with wild arguments (never
 *                      waiting): each gets an answer, the program ends
 *   pipefds deadlock   two threads: one reads a pipe holding a lock, the other takes the
 *                      lock before it writes: a deadlock in some schedules only */
#define _GNU_SOURCE
#include "check.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static void dup_fcntl(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    int d = dup(p[1]);
    CHECK(d > p[1] && fcntl(d, F_GETFD) == 0);
    CHECK(write(d, "ab", 2) == 2);
    char b[4];
    CHECK(close(d) == 0 && read(p[0], b, 4) == 2 && !memcmp(b, "ab", 2));
    CHECK(dup2(p[0], 40) == 40 && dup3(p[1], 41, O_CLOEXEC) == 41);
    CHECK(fcntl(41, F_GETFD) == FD_CLOEXEC && fcntl(40, F_GETFD) == 0);
    CHECK(dup3(41, 41, 0) == -1 && errno == EINVAL);
    CHECK(syscall(SYS_dup3, 41, 42, 12345) == -1 && errno == EINVAL);
    CHECK(fcntl(p[0], F_DUPFD, 50) == 50 && fcntl(p[0], F_DUPFD_CLOEXEC, 50) == 51);
    CHECK(fcntl(51, F_GETFD) == FD_CLOEXEC && fcntl(51, F_SETFD, 0) == 0 &&
          fcntl(51, F_GETFD) == 0);
    CHECK(fcntl(p[0], F_DUPFD, -1) == -1 && errno == EINVAL);
    CHECK(fcntl(999, F_GETFL) == -1 && errno == EBADF);
    /* O_NONBLOCK is the open file's: every dup of it sees it. */
    CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0 && (fcntl(40, F_GETFL) & O_NONBLOCK) &&
          (fcntl(50, F_GETFL) & O_NONBLOCK) && (fcntl(p[1], F_GETFL) & O_NONBLOCK) == 0);
    CHECK(read(50, b, 1) == -1 && errno == EAGAIN);
    CHECK(fcntl(40, F_SETFL, 0) == 0 && (fcntl(p[0], F_GETFL) & O_NONBLOCK) == 0);
    /* The write end stays open while a dup of it is: no EOF yet. */
    CHECK(close(p[1]) == 0 && write(41, "c", 1) == 1 && read(p[0], b, 4) == 1);
    CHECK(close(41) == 0 && read(p[0], b, 4) == 0); /* now EOF */
    CHECK(posix_fadvise(40, 0, 0, POSIX_FADV_SEQUENTIAL) == ESPIPE);
    CHECK(fsync(40) == -1 && errno == EINVAL);
    int exe = open("/proc/self/exe", O_RDONLY);
    CHECK(exe >= 3 && posix_fadvise(exe, 0, 0, POSIX_FADV_SEQUENTIAL) == 0);
    CHECK(posix_fadvise(exe, 0, 0, 99) == EINVAL && close(exe) == 0);
    CHECK(posix_fadvise(99, 0, 0, POSIX_FADV_NORMAL) == EBADF);
    CHECK(close(p[0]) == 0 && close(40) == 0 && close(50) == 0 && close(51) == 0);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void selects(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    fd_set r, w;
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_SET(p[0], &r);
    FD_SET(p[1], &w);
    struct timeval tv = {0, 0};
    CHECK(select(p[1] + 1, &r, &w, NULL, &tv) == 1 && !FD_ISSET(p[0], &r) && FD_ISSET(p[1], &w));
    CHECK(write(p[1], "x", 1) == 1);
    FD_SET(p[0], &r);
    CHECK(select(p[0] + 1, &r, NULL, NULL, NULL) == 1 && FD_ISSET(p[0], &r));
    /* A timeout with nothing ready: 0, the sets emptied, after the time. */
    char c;
    CHECK(read(p[0], &c, 1) == 1);
    FD_SET(p[0], &r);
    uint64_t t0 = now_ns();
    tv = (struct timeval){0, 30000};
    CHECK(select(p[0] + 1, &r, NULL, NULL, &tv) == 0 && !FD_ISSET(p[0], &r));
    CHECK(now_ns() - t0 >= 30000000ull);
    printf("select: time left after a timeout %ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
    struct timespec ts = {0, 20000000};
    FD_SET(p[0], &r);
    CHECK(pselect(p[0] + 1, &r, NULL, NULL, &ts, NULL) == 0 && !FD_ISSET(p[0], &r));
    FD_SET(60, &r);
    CHECK(select(61, &r, NULL, NULL, NULL) == -1 && errno == EBADF);
    CHECK(select(-1, NULL, NULL, NULL, &tv) == -1 && errno == EINVAL);
    tv = (struct timeval){-1, 0};
    CHECK(select(1, NULL, NULL, NULL, &tv) == -1 && errno == EINVAL);
    tv = (struct timeval){0, 1000};  /* Linux takes a microsecond count of a second or */
    FD_SET(p[0], &r);                /* more too: 1 000 000 us is a second */
    CHECK(select(p[0] + 1, &r, NULL, NULL, &tv) == 0);
    CHECK(syscall(SYS_select, p[0] + 1, (void *)16, NULL, NULL, NULL) == -1 && errno == EFAULT);
    CHECK(close(p[0]) == 0);
    FD_ZERO(&r);
    FD_SET(p[1], &r); /* a write end with no reader: an error is "ready" */
    CHECK(select(p[1] + 1, NULL, &r, NULL, NULL) == 1 && FD_ISSET(p[1], &r));
    CHECK(close(p[1]) == 0);
}

static void epolls(void)
{
    CHECK(syscall(SYS_epoll_create, 0) == -1 && errno == EINVAL);
    CHECK(epoll_create1(12345) == -1 && errno == EINVAL);
    int ep = epoll_create1(EPOLL_CLOEXEC), p[2], e = eventfd(0, 0);
    CHECK(ep >= 3 && fcntl(ep, F_GETFD) == FD_CLOEXEC && pipe(p) == 0 && e >= 3);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7}, out[4];
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == -1 && errno == EEXIST);
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev) == -1 && errno == ENOENT);
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev) == -1 && errno == EINVAL);
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, 77, &ev) == -1 && errno == EBADF);
    CHECK(epoll_ctl(p[0], EPOLL_CTL_ADD, e, &ev) == -1 && errno == EINVAL);
    CHECK(epoll_ctl(ep, 99, e, &ev) == -1 && errno == EINVAL);
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, e, (void *)16) == -1 && errno == EFAULT);
    CHECK(epoll_wait(ep, out, 0, 0) == -1 && errno == EINVAL);
    CHECK(epoll_wait(p[0], out, 4, 0) == -1 && errno == EINVAL);
    CHECK(epoll_wait(ep, out, 4, 0) == 0);
    CHECK(write(p[1], "y", 1) == 1);
    CHECK(epoll_wait(ep, out, 4, -1) == 1 && out[0].events == EPOLLIN && out[0].data.u64 == 7);
    /* One-shot: reported once, then not until EPOLL_CTL_MOD arms it again. */
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLONESHOT, .data.u64 = 9};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev) == 0);
    uint64_t one = 1;
    CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL) == 0 && write(e, &one, 8) == 8);
    CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL) == -1 && errno == ENOENT);
    CHECK(epoll_wait(ep, out, 4, 0) == 1 && out[0].data.u64 == 9);
    CHECK(epoll_wait(ep, out, 4, 0) == 0);
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, e, &ev) == 0 && epoll_wait(ep, out, 4, 0) == 1);
    /* A write end's room; nothing ready within the timeout: 0 after the time. */
    ev = (struct epoll_event){.events = EPOLLOUT, .data.u64 = 11};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev) == 0);
    CHECK(epoll_wait(ep, out, 4, 0) == 1 && out[0].events == EPOLLOUT && out[0].data.u64 == 11);
    CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL) == 0);
    uint64_t t0 = now_ns();
    CHECK(epoll_wait(ep, out, 4, 25) == 0 && now_ns() - t0 >= 25000000ull);
    /* An epoll instance in another: readable when the inner one has events. */
    int outer = epoll_create1(0);
    ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = 13};
    CHECK(outer >= 3 && epoll_ctl(outer, EPOLL_CTL_ADD, ep, &ev) == 0);
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, outer, &ev) == -1 && errno == ELOOP);
    CHECK(epoll_wait(outer, out, 4, 0) == 0);
    ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = 7};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0 && write(p[1], "z", 1) == 1);
    CHECK(epoll_wait(outer, out, 4, 0) == 1 && out[0].data.u64 == 13);
    /* Closing the descriptor ends the interest; a closed writer is EPOLLHUP. */
    char b[4];
    CHECK(read(p[0], b, 4) == 2 && close(p[1]) == 0); /* "y" and "z" */
    CHECK(epoll_wait(ep, out, 4, 0) == 1 && out[0].events == EPOLLHUP);
    CHECK(close(p[0]) == 0 && epoll_wait(ep, out, 4, 0) == 0);
    CHECK(close(outer) == 0 && close(ep) == 0 && close(e) == 0);
}

static void sockets(void)
{
    int sv[2];
    CHECK(socketpair(AF_INET, SOCK_STREAM, 0, sv) == -1 && errno == EOPNOTSUPP);
    CHECK(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, (void *)16) == -1 && errno == EFAULT);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    CHECK(fcntl(sv[0], F_GETFD) == FD_CLOEXEC && (fcntl(sv[1], F_GETFL) & O_ACCMODE) == O_RDWR);
    char b[8];
    CHECK(write(sv[0], "hi", 2) == 2 && read(sv[1], b, 8) == 2 && !memcmp(b, "hi", 2));
    CHECK(send(sv[1], "yo", 2, 0) == 2 && recv(sv[0], b, 8, 0) == 2 && !memcmp(b, "yo", 2));
    CHECK(recv(sv[0], b, 8, MSG_DONTWAIT) == -1 && errno == EAGAIN);
    struct pollfd pf = {.fd = sv[0], .events = POLLIN | POLLOUT};
    CHECK(poll(&pf, 1, 0) == 1 && pf.revents == POLLOUT);
    CHECK(sendto(sv[1], "k", 1, 0, NULL, 0) == 1 && poll(&pf, 1, 0) == 1 &&
          pf.revents == (POLLIN | POLLOUT));
    CHECK(recvfrom(sv[0], b, 8, 0, NULL, NULL) == 1 && b[0] == 'k');
    CHECK(close(sv[1]) == 0 && read(sv[0], b, 8) == 0);
    CHECK(send(sv[0], "z", 1, MSG_NOSIGNAL) == -1 && errno == EPIPE);
    CHECK(close(sv[0]) == 0);
}

/* Blocking writes bigger than the room, and than a whole pipe: all taken, never short. */
static int bw[2];
static void *drain(void *arg)
{
    (void)arg;
    unsigned char *buf = malloc(10000); /* pages no other thread touches (fast serialized) */
    CHECK(buf != NULL);
    size_t got = 0;
    uint64_t sum = 0;
    ssize_t r;
    while ((r = read(bw[0], buf, 10000)) > 0)
        for (ssize_t k = 0; k < r; k++, got++)
            sum = sum * 7 + buf[k];
    free(buf);
    return (void *)(uintptr_t)(got ^ sum);
}

static void big_writes(void)
{
    enum { BIG = 300000 };
    unsigned char *big = malloc(BIG); /* its own pages: only this thread touches them */
    CHECK(big != NULL);
    for (size_t i = 0; i < BIG; i++)
        big[i] = (unsigned char)(i * 13 + i / 977);
    CHECK(pipe(bw) == 0 && write(bw[1], big, 1000) == 1000);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, drain, NULL) == 0);
    CHECK(write(bw[1], big, 60000) == 60000);          /* more than the room left */
    CHECK(write(bw[1], big, BIG) == BIG); /* more than a pipe holds */
    CHECK(close(bw[1]) == 0);
    void *res;
    CHECK(pthread_join(t, &res) == 0 && close(bw[0]) == 0);
    size_t got = 0;
    uint64_t sum = 0;
    static const size_t lens[3] = {1000, 60000, BIG};
    for (int w = 0; w < 3; w++)
        for (size_t k = 0; k < lens[w]; k++, got++)
            sum = sum * 7 + big[k];
    CHECK((uintptr_t)res == (uintptr_t)(got ^ sum));
    free(big);
}

/* A ring of threads passing a token, each waiting in another call. */
#define HOPS 4
static int ROUNDS = 200;
static int a[2], b[2], ev, sv[2], back[2], backdup;

static void *by_select(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(a[0], &r);
        CHECK(select(a[0] + 1, &r, NULL, NULL, NULL) == 1 && FD_ISSET(a[0], &r));
        uint32_t t;
        CHECK(read(a[0], &t, 4) == 4);
        t = t * 3 + 1;
        CHECK(write(b[1], &t, 4) == 4);
    }
    return NULL;
}

static void *by_epoll(void *arg)
{
    (void)arg;
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = 5}, out;
    CHECK(ep >= 3 && epoll_ctl(ep, EPOLL_CTL_ADD, b[0], &e) == 0);
    for (int i = 0; i < ROUNDS; i++) {
        CHECK(epoll_wait(ep, &out, 1, -1) == 1 && out.data.u32 == 5);
        uint32_t t;
        CHECK(read(b[0], &t, 4) == 4);
        uint64_t v = (uint64_t)t + 1;
        CHECK(write(ev, &v, 8) == 8);
    }
    CHECK(close(ep) == 0);
    return NULL;
}

static void *by_pselect(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(ev, &r);
        struct timespec ts = {100, 0};
        CHECK(pselect(ev + 1, &r, NULL, NULL, &ts, NULL) == 1);
        uint64_t v;
        CHECK(read(ev, &v, 8) == 8);
        uint32_t t = (uint32_t)v ^ 0x5a5a;
        CHECK(send(sv[0], &t, 4, 0) == 4);
    }
    return NULL;
}

static void *by_poll(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        struct pollfd pf = {.fd = sv[1], .events = POLLIN};
        CHECK(poll(&pf, 1, -1) == 1 && pf.revents == POLLIN);
        uint32_t t;
        CHECK(recv(sv[1], &t, 4, 0) == 4);
        t += 7;
        CHECK(write(back[1], &t, 4) == 4);
    }
    return NULL;
}

static void ring(void)
{
    CHECK(pipe(a) == 0 && pipe2(b, O_CLOEXEC) == 0 && pipe(back) == 0);
    CHECK((ev = eventfd(0, 0)) >= 3 && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK((backdup = dup(back[0])) >= 3 && close(back[0]) == 0);
    pthread_t t[HOPS];
    void *(*fn[HOPS])(void *) = {by_select, by_epoll, by_pselect, by_poll};
    for (int i = 0; i < HOPS; i++)
        CHECK(pthread_create(&t[i], NULL, fn[i], NULL) == 0);
    uint32_t tok = 1;
    uint64_t sum = 0;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK(write(a[1], &tok, 4) == 4);
        CHECK(read(backdup, &tok, 4) == 4); /* blocks until the ring comes round */
        sum = sum * 31 + tok;
    }
    for (int i = 0; i < HOPS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    printf("pipefds ok: %d rounds, token %08x, sum %016llx\n", ROUNDS, tok,
           (unsigned long long)sum);
}

static pthread_mutex_t dm = PTHREAD_MUTEX_INITIALIZER;
static int dp[2];
static void *dl_reader(void *arg)
{
    (void)arg;
    for (int i = 0; i < 300000; i++) /* natively the writer is long done by now (a loop */
        __asm__ volatile("");           /* in registers: no memory access to serialize) */
    pthread_mutex_lock(&dm);
    char c;
    CHECK(read(dp[0], &c, 1) == 1); /* holding the lock the writer needs first */
    pthread_mutex_unlock(&dm);
    return NULL;
}

static void *dl_writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&dm);
    pthread_mutex_unlock(&dm);
    CHECK(write(dp[1], "w", 1) == 1);
    return NULL;
}

/* Hostile arguments to every call here (never a wait: timeouts 0, MSG_DONTWAIT), from
 * two threads at once: jinx-vmm must answer each with an errno or a result, and live. */
static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static long wild(uint64_t *x)
{
    static char scratch[1 << 17]; /* bigger than any length below */
    uint64_t r = rnd(x);
    switch (r % 8) {
    case 0: return 0;
    case 1: return (long)(r >> 8) % 64;                 /* a descriptor, often open */
    case 2: return (long)(uintptr_t)scratch;            /* writable memory */
    case 3: return -1;
    case 4: return (long)0xffff800000000000ull;         /* the kernel half */
    case 5: return 16;                                  /* the first page */
    case 6: return (long)(r >> 8);
    default: return (long)(r >> 40) % 70000;            /* a length, within scratch */
    }
}

static void *hostile(void *arg)
{
    uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    static const long nrs[] = {SYS_pipe, SYS_pipe2, SYS_eventfd2, SYS_dup, SYS_dup2, SYS_dup3,
                               SYS_fcntl, SYS_epoll_create1, SYS_epoll_ctl, SYS_socketpair,
                               SYS_close, SYS_poll, SYS_ppoll, SYS_select, SYS_pselect6,
                               SYS_epoll_wait, SYS_epoll_pwait, SYS_recvfrom, SYS_sendto};
    for (int i = 0; i < 20000; i++) {
        long nr = nrs[rnd(&x) % (sizeof nrs / sizeof nrs[0])];
        long a[6] = {wild(&x), wild(&x), wild(&x), wild(&x), wild(&x), wild(&x)};
        if (nr == SYS_close && a[0] < 3)
            continue; /* keep stdout */
        if (nr == SYS_fcntl && (a[1] == F_SETFL || a[1] == F_SETFD))
            continue; /* clearing O_NONBLOCK would let the I/O below wait */
        if (nr == SYS_poll || nr == SYS_epoll_wait || nr == SYS_epoll_pwait)
            a[nr == SYS_poll ? 2 : 3] = 0;
        if (nr == SYS_ppoll || nr == SYS_pselect6 || nr == SYS_select) {
            static const long zero[2];
            a[nr == SYS_ppoll ? 2 : 4] = (long)(uintptr_t)zero;
        }
        if (nr == SYS_recvfrom || nr == SYS_sendto)
            a[3] = MSG_DONTWAIT | MSG_NOSIGNAL;
        if (nr == SYS_pipe2 || nr == SYS_eventfd2 || nr == SYS_socketpair)
            a[nr == SYS_socketpair ? 1 : 1] |= O_NONBLOCK;
        if (nr == SYS_pipe)
            continue; /* its descriptors would block */
        syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "deadlock")) {
        CHECK(pipe(dp) == 0);
        pthread_t w, r;
        CHECK(pthread_create(&w, NULL, dl_writer, NULL) == 0);
        CHECK(pthread_create(&r, NULL, dl_reader, NULL) == 0);
        CHECK(pthread_join(w, NULL) == 0 && pthread_join(r, NULL) == 0);
        printf("pipefds deadlock: none this time\n");
        return 0;
    }
    if (!strcmp(mode, "hostile")) {
        signal(SIGPIPE, SIG_IGN);
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            CHECK(pthread_create(&t[i], NULL, hostile, (void *)(uintptr_t)(i + 1)) == 0);
        for (int i = 0; i < 2; i++)
            CHECK(pthread_join(t[i], NULL) == 0);
        printf("pipefds hostile: done\n");
        return 0;
    }
    if (!strcmp(mode, "small"))
        ROUNDS = 40;
    dup_fcntl();
    selects();
    epolls();
    sockets();
    big_writes();
    ring();
    return 0;
}
