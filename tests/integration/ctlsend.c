/* ctlsend: a raw control-socket client for tests/integration/control.sh (built by it).
 *
 *   ctlsend SOCKET            send stdin, half-close, print every reply line until EOF
 *   ctlsend -c SOCKET         send stdin and close at once without reading (a client
 *                             that disconnects mid-message)
 *   ctlsend -f N SOCKET       flood: N ping requests written while the replies are
 *                             read; prints "replies=R ok=K"
 *   ctlsend -l PATH           bind a socket at PATH and exit: a stale socket
 *
 * Exit status 0, or 3 when connect() fails (its error printed as "connect: ...").
 * Every read waits at most 10 s. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int open_sock(const char *path, int do_bind)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        exit(3);
    int r = do_bind ? bind(fd, (struct sockaddr *)&sa, sizeof sa)
                    : connect(fd, (struct sockaddr *)&sa, sizeof sa);
    if (r < 0) {
        printf("%s: %s\n", do_bind ? "bind" : "connect", strerror(errno));
        exit(3);
    }
    return fd;
}

static size_t slurp_stdin(char **out)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (n == cap)
            b = realloc(b, cap *= 2);
        ssize_t k = read(0, b + n, cap - n);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    *out = b;
    return n;
}

static void send_all(int fd, const char *b, size_t n)
{
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k <= 0)
            return; /* the server may close first (over-long line): fine */
        b += k;
        n -= (size_t)k;
    }
}

static int flood(int fd, long n)
{
    static const char req[] = "{\"cmd\":\"ping\"}\n";
    const size_t rl = sizeof req - 1;
    size_t total = (size_t)n * rl, sent = 0;
    char in[65536];
    size_t have = 0;
    long replies = 0, ok = 0;
    while (replies < n) {
        struct pollfd pf = {.fd = fd, .events = POLLIN | (sent < total ? POLLOUT : 0)};
        if (poll(&pf, 1, 10000) <= 0)
            break;
        if (pf.revents & POLLOUT) {
            /* The request stream is `n` copies of req; send the next piece of it from
             * wherever the last send stopped, never blocking (a blocking send while the
             * server waits for us to read its replies would deadlock both). */
            char buf[100 * sizeof req];
            size_t k = 0, off = sent % rl;
            while (k < sizeof buf - rl && sent + k < total) {
                size_t piece = rl - (off + k) % rl;
                if (piece > total - sent - k)
                    piece = total - sent - k;
                memcpy(buf + k, req + (off + k) % rl, piece);
                k += piece;
            }
            ssize_t w = send(fd, buf, k, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0)
                sent += (size_t)w;
        }
        if (pf.revents & (POLLIN | POLLHUP)) {
            ssize_t k = read(fd, in + have, sizeof in - have);
            if (k <= 0)
                break;
            have += (size_t)k;
            char *p = in, *nl;
            while ((nl = memchr(p, '\n', have - (size_t)(p - in)))) {
                replies++;
                ok += strstr(p, "\"ok\":true") && strstr(p, "\"ok\":true") < nl;
                p = nl + 1;
            }
            have -= (size_t)(p - in);
            memmove(in, p, have);
        }
    }
    printf("replies=%ld ok=%ld\n", replies, ok);
    return 0;
}

int main(int argc, char **argv)
{
    int opt, closing = 0;
    long nflood = 0;
    while ((opt = getopt(argc, argv, "cf:l")) != -1) {
        if (opt == 'c')
            closing = 1;
        else if (opt == 'f')
            nflood = atol(optarg);
        else if (opt == 'l') {
            if (optind >= argc)
                return 2;
            open_sock(argv[optind], 1);
            return 0;
        } else
            return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: ctlsend [-c | -f N] SOCKET < requests\n");
        return 2;
    }
    int fd = open_sock(argv[optind], 0);
    if (nflood)
        return flood(fd, nflood);
    char *data;
    size_t n = slurp_stdin(&data);
    send_all(fd, data, n);
    if (closing) {
        close(fd);
        return 0;
    }
    shutdown(fd, SHUT_WR);
    char buf[4096];
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 10000) <= 0)
            break;
        ssize_t k = read(fd, buf, sizeof buf);
        if (k <= 0)
            break;
        fwrite(buf, 1, (size_t)k, stdout);
    }
    return 0;
}
