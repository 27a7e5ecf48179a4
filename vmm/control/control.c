/* The control socket (control.h): one serving thread, poll-based, every fd non-blocking.
 *
 * Why it cannot disturb the VM: the serving thread never blocks on a client (reads and
 * writes are non-blocking, output is buffered per client with a fixed bound), requests
 * are parsed by a strict validator before anything reaches the round driver, and the
 * only lock shared with the rest of the VMM (c->lock) is held for memory copies only,
 * never while calling round_* (round_detach waits for a round, and a round calls
 * control_event, which takes c->lock).
 *
 * Flow control: a client whose output buffer is more than half full is not read from
 * until it drains, so a client that floods requests without reading its replies only
 * stalls itself. Events to a slow follower are dropped (counted, and announced to it
 * with a "dropped" event once it catches up) rather than ever blocking control_event. */
#include "control/control.h"
#include "control/control_req.h"
#include "lib/json.h"
#include "linux/outcome.h"
#include "rounds/round_config.h"
#include "control/rundir.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_CLIENTS 16
#define OUT_CAP (64 * 1024)
#define OUT_HIGH (OUT_CAP / 2)        /* above this, stop reading the client's requests */
#define REPLY_RESERVE (8 * 1024)      /* events never use the last 8 KiB: replies fit */
#define IN_CAP (CONTROL_MAX_LINE + 1) /* a longest line and its newline */
#define CLOSE_GRACE_NS 1000000000ULL  /* a closing client gets 1 s to read its last reply */
#define STOP_FLUSH_NS 200000000ULL    /* at shutdown, 200 ms to deliver the "end" event */

struct client {
    int fd;
    bool following;
    bool eof;           /* the peer closed its writing side */
    bool closing;       /* close once the output is delivered (or the grace expires) */
    bool dead;          /* close now */
    uint64_t close_deadline;
    size_t nin, nout;
    uint64_t dropped;   /* events dropped since the last "dropped" notice */
    char in[IN_CAP];
    char out[OUT_CAP];
};

struct control {
    struct vm *vm;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int lfd, wakefd;
    pthread_t thread;
    bool thread_started;
    atomic_bool stop;
    pthread_mutex_t lock;               /* clients' out, nout, following, dropped */
    struct client *cl[MAX_CLIENTS];
    uint64_t events_dropped;            /* all clients, since start (lock) */
    uint64_t clients_refused;           /* other uid, or too many clients */
};

const char *control_path(const struct control *c) { return c ? c->path : NULL; }

static void wake(struct control *c)
{
    uint64_t one = 1;
    /* Non-blocking eventfd: if the counter is somehow full, the thread is awake anyway. */
    if (write(c->wakefd, &one, sizeof one) < 0) {
    }
}

/* ---- output (caller holds c->lock) -------------------------------------------- */

static bool append(struct client *cl, const char *s, size_t n, size_t limit)
{
    if (cl->nout + n + 1 > limit)
        return false;
    memcpy(cl->out + cl->nout, s, n);
    cl->out[cl->nout + n] = '\n';
    cl->nout += n + 1;
    return true;
}

/* A reply always fits: requests are only read while nout < OUT_HIGH and a reply is at
 * most CONTROL_MAX_LINE + 1 bytes. If not, the client is broken beyond help. */
static void reply_locked(struct client *cl, const char *s)
{
    if (!append(cl, s, strlen(s), OUT_CAP))
        cl->dead = true;
}

static void reply(struct control *c, struct client *cl, const char *s)
{
    pthread_mutex_lock(&c->lock);
    reply_locked(cl, s);
    pthread_mutex_unlock(&c->lock);
}

static void reply_error(struct control *c, struct client *cl, const char *msg)
{
    char buf[CONTROL_MAX_LINE];
    struct jbuf b;
    jb_init(&b, buf, sizeof buf);
    jb_raw(&b, "{\"ok\":false,\"error\":");
    jb_str(&b, msg);
    jb_raw(&b, "}");
    reply(c, cl, jb_ok(&b) == 0 ? buf : "{\"ok\":false,\"error\":\"error message too long\"}");
}

static void event_locked(struct control *c, struct client *cl, const char *s, size_t n)
{
    const size_t limit = OUT_CAP - REPLY_RESERVE;
    if (cl->dropped) {
        char note[160];
        int k = snprintf(note, sizeof note,
                         "{\"event\":\"dropped\",\"count\":%llu,\"msg\":\"%llu events dropped: "
                         "this client reads too slowly\"}",
                         (unsigned long long)cl->dropped, (unsigned long long)cl->dropped);
        if (cl->nout + (size_t)k + 1 + n + 1 > limit) {
            cl->dropped++;
            c->events_dropped++;
            return;
        }
        append(cl, note, (size_t)k, limit);
        cl->dropped = 0;
    }
    if (!append(cl, s, n, limit)) {
        cl->dropped++;
        c->events_dropped++;
    }
}

/* vm->event_sink: {"event":KIND,"msg":LINE} to the followers. */
static void send_event(void *ctx, const char *kind, const char *msg)
{
    char json[1024];
    struct jbuf b;
    jb_init(&b, json, sizeof json);
    jb_raw(&b, "{\"event\":");
    jb_str(&b, kind);
    jb_raw(&b, ",\"msg\":");
    jb_str(&b, msg);
    jb_raw(&b, "}");
    if (jb_ok(&b) == 0)
        control_event(ctx, json);
}

void control_event(struct control *c, const char *json)
{
    if (!c || !json)
        return;
    /* One line per event: a newline inside would split it, so it becomes a space. */
    char line[CONTROL_MAX_LINE];
    size_t n = strnlen(json, sizeof line);
    if (n >= sizeof line)
        return; /* longer than the protocol allows: a bug in the caller, not worth a crash */
    for (size_t i = 0; i < n; i++)
        line[i] = json[i] == '\n' || json[i] == '\r' ? ' ' : json[i];
    bool any = false;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < MAX_CLIENTS; i++) {
        struct client *cl = c->cl[i];
        if (cl && cl->following && !cl->closing && !cl->dead) {
            event_locked(c, cl, line, n);
            any = true;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (any)
        wake(c);
}

/* Sends what is buffered, without blocking. */
static void flush(struct control *c, struct client *cl)
{
    pthread_mutex_lock(&c->lock);
    while (cl->nout && !cl->dead) {
        ssize_t k = send(cl->fd, cl->out, cl->nout, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                cl->dead = true; /* EPIPE, ECONNRESET: the peer is gone */
            break;
        }
        memmove(cl->out, cl->out + k, cl->nout - (size_t)k);
        cl->nout -= (size_t)k;
    }
    pthread_mutex_unlock(&c->lock);
}

/* ---- requests ------------------------------------------------------------------- */

static void handle_line(struct control *c, struct client *cl, const char *line, size_t len)
{
    struct control_req req;
    char err[512];
    if (control_parse_request(line, len, &req, err, sizeof err) < 0) {
        reply_error(c, cl, err);
        return;
    }
    char buf[CONTROL_MAX_LINE];
    struct jbuf b;
    jb_init(&b, buf, sizeof buf);
    switch (req.cmd) {
    case CTL_PING:
        jb_printf(&b, "{\"ok\":true,\"protocol\":1,\"pid\":%d,\"image\":", (int)getpid());
        jb_str(&b, c->vm->image_path ? c->vm->image_path : "");
        jb_raw(&b, ",\"socket\":");
        jb_str(&b, c->path);
        jb_raw(&b, "}");
        break;
    case CTL_STATUS: {
        struct round_stats st;
        char sj[3072];
        round_status(c->vm, &st);
        if (round_status_json(&st, sj, sizeof sj) < 0) {
            reply_error(c, cl, "status too long for one line (a bug: please report it)");
            return;
        }
        pthread_mutex_lock(&c->lock);
        int nclients = 0;
        for (int i = 0; i < MAX_CLIENTS; i++)
            nclients += c->cl[i] != NULL;
        uint64_t dropped = c->events_dropped, refused = c->clients_refused;
        pthread_mutex_unlock(&c->lock);
        jb_printf(&b, "{\"ok\":true,\"status\":%s,\"control\":{\"clients\":%d,"
                  "\"events_dropped\":%llu,\"clients_refused\":%llu}}", sj, nclients,
                  (unsigned long long)dropped, (unsigned long long)refused);
        break;
    }
    case CTL_ATTACH: {
        if (atomic_load(&c->vm->stopping)) {
            reply_error(c, cl, "the VM has stopped: there is nothing to attach to");
            return;
        }
        if (round_attach(c->vm, &req.cfg, err, sizeof err) < 0) {
            reply_error(c, cl, err[0] ? err : "attach failed");
            return;
        }
        char desc[256], ev[512];
        round_config_describe(&req.cfg, desc, sizeof desc);
        struct jbuf e;
        jb_init(&e, ev, sizeof ev);
        jb_raw(&e, "{\"event\":\"attach\",\"msg\":");
        char m[300];
        snprintf(m, sizeof m, "rounds attached: %s", desc);
        jb_str(&e, m);
        jb_raw(&e, "}");
        control_event(c, ev); /* before this client follows: it has the reply instead */
        jb_raw(&b, "{\"ok\":true,\"attached\":true,\"config\":");
        jb_str(&b, desc);
        jb_raw(&b, "}");
        break;
    }
    case CTL_DETACH: {
        struct round_stats st;
        round_status(c->vm, &st);
        round_detach(c->vm);
        jb_printf(&b, "{\"ok\":true,\"was_attached\":%s,\"rounds\":%llu}",
                  st.attached ? "true" : "false", (unsigned long long)st.rounds);
        if (st.attached)
            control_event(c, "{\"event\":\"detach\",\"msg\":\"rounds detached\"}");
        break;
    }
    case CTL_FOLLOW:
        jb_raw(&b, "{\"ok\":true,\"following\":true}");
        break;
    }
    pthread_mutex_lock(&c->lock);
    reply_locked(cl, jb_ok(&b) == 0 ? buf : "{\"ok\":false,\"error\":\"reply too long\"}");
    if (req.follow)
        cl->following = true;
    pthread_mutex_unlock(&c->lock);
}

static void close_soon(struct client *cl)
{
    cl->closing = true;
    cl->close_deadline = mono_ns() + CLOSE_GRACE_NS;
}

/* Handles the complete lines in cl->in while the output has room. */
static void process(struct control *c, struct client *cl)
{
    while (!cl->closing && !cl->dead && cl->nout < OUT_HIGH) {
        char *nl = memchr(cl->in, '\n', cl->nin);
        if (!nl) {
            if (cl->nin > CONTROL_MAX_LINE) {
                char m[128];
                snprintf(m, sizeof m, "request longer than %d bytes: closing the connection",
                         CONTROL_MAX_LINE);
                reply_error(c, cl, m);
                close_soon(cl);
            } else if (cl->eof) {
                if (cl->nin)
                    reply_error(c, cl, "incomplete request at end of input (no newline)");
                close_soon(cl);
            }
            return;
        }
        size_t len = (size_t)(nl - cl->in);
        size_t line_len = len && cl->in[len - 1] == '\r' ? len - 1 : len;
        handle_line(c, cl, cl->in, line_len);
        memmove(cl->in, nl + 1, cl->nin - len - 1);
        cl->nin -= len + 1;
    }
}

static void read_client(struct client *cl)
{
    while (cl->nin < IN_CAP && !cl->eof) {
        ssize_t k = read(cl->fd, cl->in + cl->nin, IN_CAP - cl->nin);
        if (k > 0) {
            cl->nin += (size_t)k;
            if (memchr(cl->in + cl->nin - (size_t)k, '\n', (size_t)k))
                return; /* handle it before reading more: flow control needs that */
            continue;
        }
        if (k == 0) {
            cl->eof = true;
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            cl->dead = true;
        return;
    }
}

/* ---- connections ---------------------------------------------------------------- */

static void refuse(struct control *c, int fd, const char *msg)
{
    char buf[512];
    struct jbuf b;
    jb_init(&b, buf, sizeof buf - 1);
    jb_raw(&b, "{\"ok\":false,\"error\":");
    jb_str(&b, msg);
    jb_raw(&b, "}");
    size_t n = strlen(buf);
    buf[n++] = '\n';
    if (send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* best effort: the peer may already be gone */
    }
    close(fd);
    pthread_mutex_lock(&c->lock);
    c->clients_refused++;
    pthread_mutex_unlock(&c->lock);
}

static void accept_clients(struct control *c)
{
    for (;;) {
        int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or a transient error (EMFILE, ECONNABORTED): try at next poll */
        struct ucred cred;
        socklen_t cl = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
            refuse(c, fd, "cannot read the peer's credentials (SO_PEERCRED)");
            continue;
        }
        uid_t me = geteuid();
        if (cred.uid != me && cred.uid != 0) {
            char m[200];
            snprintf(m, sizeof m, "permission denied: uid %u may not control this VM (it "
                     "belongs to uid %u; connect as that user or as root)", (unsigned)cred.uid,
                     (unsigned)me);
            refuse(c, fd, m);
            continue;
        }
        int slot = -1;
        for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
            if (!c->cl[i])
                slot = i;
        if (slot < 0) {
            refuse(c, fd, "too many clients (16 are connected): close one and retry");
            continue;
        }
        struct client *n = calloc(1, sizeof *n);
        if (!n) {
            refuse(c, fd, "out of memory in jinx-vmm");
            continue;
        }
        n->fd = fd;
        pthread_mutex_lock(&c->lock);
        c->cl[slot] = n;
        pthread_mutex_unlock(&c->lock);
    }
}

static void drop_client(struct control *c, int i)
{
    pthread_mutex_lock(&c->lock);
    struct client *cl = c->cl[i];
    c->cl[i] = NULL;
    pthread_mutex_unlock(&c->lock);
    close(cl->fd);
    free(cl);
}

/* ---- the serving thread ----------------------------------------------------------- */

static void final_flush(struct control *c)
{
    uint64_t deadline = mono_ns() + STOP_FLUSH_NS;
    for (;;) {
        struct pollfd pf[MAX_CLIENTS];
        int np = 0;
        for (int i = 0; i < MAX_CLIENTS; i++) {
            struct client *cl = c->cl[i];
            if (!cl || cl->dead)
                continue;
            flush(c, cl);
            if (cl->nout && !cl->dead)
                pf[np++] = (struct pollfd){.fd = cl->fd, .events = POLLOUT};
        }
        uint64_t now = mono_ns();
        if (!np || now >= deadline)
            return;
        if (poll(pf, (nfds_t)np, (int)((deadline - now) / 1000000 + 1)) <= 0)
            return;
    }
}

static void *serve(void *arg)
{
    struct control *c = arg;
    struct pollfd pf[2 + MAX_CLIENTS];
    int idx[2 + MAX_CLIENTS];
    while (!atomic_load(&c->stop)) {
        int np = 0;
        uint64_t now = mono_ns(), next_deadline = 0;
        pf[np++] = (struct pollfd){.fd = c->wakefd, .events = POLLIN};
        pf[np++] = (struct pollfd){.fd = c->lfd, .events = POLLIN};
        pthread_mutex_lock(&c->lock);
        for (int i = 0; i < MAX_CLIENTS; i++) {
            struct client *cl = c->cl[i];
            if (!cl)
                continue;
            short ev = 0;
            if (!cl->closing && !cl->eof && cl->nin < IN_CAP && cl->nout < OUT_HIGH)
                ev |= POLLIN;
            if (cl->nout)
                ev |= POLLOUT;
            if (cl->closing && (!next_deadline || cl->close_deadline < next_deadline))
                next_deadline = cl->close_deadline;
            idx[np] = i;
            pf[np++] = (struct pollfd){.fd = cl->fd, .events = ev};
        }
        pthread_mutex_unlock(&c->lock);
        int timeout = -1;
        if (next_deadline)
            timeout = next_deadline > now ? (int)((next_deadline - now) / 1000000 + 1) : 0;
        int r = poll(pf, (nfds_t)np, timeout);
        if (r < 0 && errno != EINTR) {
            jx_err("control socket: poll failed: %s; jinxctl can no longer reach this VM",
                   strerror(errno));
            break;
        }
        if (r > 0 && (pf[0].revents & POLLIN)) {
            uint64_t v;
            if (read(c->wakefd, &v, sizeof v) < 0) {
                /* EAGAIN: someone else drained it */
            }
        }
        if (atomic_load(&c->stop))
            break;
        if (r > 0 && (pf[1].revents & POLLIN))
            accept_clients(c);
        for (int p = 2; p < np && r > 0; p++) {
            struct client *cl = c->cl[idx[p]];
            short re = pf[p].revents;
            if (re & (POLLIN | POLLHUP | POLLERR)) {
                if (pf[p].events & POLLIN)
                    read_client(cl);
                else if (re & (POLLHUP | POLLERR))
                    cl->dead = true; /* gone, and we were not going to read anyway */
            }
        }
        /* Handle requests, then send: both for every client, since control_event may
         * have queued output for clients poll did not report. */
        now = mono_ns();
        for (int i = 0; i < MAX_CLIENTS; i++) {
            struct client *cl = c->cl[i];
            if (!cl)
                continue;
            process(c, cl);
            flush(c, cl);
            if (cl->dead || (cl->closing && (!cl->nout || now >= cl->close_deadline)) ||
                (cl->eof && !cl->nin && !cl->nout))
                drop_client(c, i);
        }
    }
    final_flush(c);
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (c->cl[i])
            drop_client(c, i);
    return NULL;
}

/* ---- start and stop ---------------------------------------------------------------- */

/* The image's basename, reduced to characters that are safe in a file name. */
static void socket_stem(const char *image, char *out, size_t len)
{
    const char *base = image ? strrchr(image, '/') : NULL;
    base = base ? base + 1 : (image ? image : "vm");
    size_t n = 0;
    for (; *base && n + 1 < len && n < 40; base++) {
        char ch = *base;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        out[n++] = ok ? ch : '_';
    }
    if (!n)
        out[n++] = 'v', out[n++] = 'm';
    out[n] = 0;
}

/* The socket's mode: 0600, except that the integration tests may widen it (only with
 * JINX_TEST=yes in jinx-vmm's environment) to reach the SO_PEERCRED check from
 * another uid. */
static mode_t socket_mode(void)
{
    const char *t = getenv("JINX_TEST"), *m = getenv("JINX_TEST_SOCKET_MODE");
    if (t && !strcmp(t, "yes") && m) {
        char *end;
        unsigned long v = strtoul(m, &end, 8);
        if (!*end && end != m && v <= 0777)
            return (mode_t)v;
    }
    return 0600;
}

static void destroy(struct control *c)
{
    if (c->lfd >= 0)
        close(c->lfd);
    if (c->wakefd >= 0)
        close(c->wakefd);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

struct control *control_start(struct vm *vm, char *err, size_t errlen)
{
    char dir[PATH_MAX], stem[48];
    if (rundir_path(dir, sizeof dir, err, errlen) < 0 || rundir_check(dir, true, err, errlen) < 0)
        return NULL;
    struct control *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "control socket: out of memory");
        return NULL;
    }
    c->vm = vm;
    c->lfd = c->wakefd = -1;
    pthread_mutex_init(&c->lock, NULL);
    socket_stem(vm->image_path, stem, sizeof stem);
    int n = snprintf(c->path, sizeof c->path, "%s/%s-%d.sock", dir, stem, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof c->path) {
        snprintf(err, errlen, "control socket path %s/%s-%d.sock is longer than a Unix socket "
                 "allows (%zu bytes): set JINX_RUNTIME_DIR to a shorter directory", dir, stem,
                 (int)getpid(), sizeof c->path - 1);
        destroy(c);
        return NULL;
    }
    c->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->wakefd < 0 || c->lfd < 0) {
        snprintf(err, errlen, "control socket: %s", strerror(errno));
        destroy(c);
        return NULL;
    }
    /* A socket with our pid in its name is left over from a dead process: replace it. */
    struct stat st;
    if (lstat(c->path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
            snprintf(err, errlen, "%s exists and is not a stale socket of yours: remove it or "
                     "set JINX_RUNTIME_DIR", c->path);
            destroy(c);
            return NULL;
        }
        unlink(c->path);
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, c->path, strlen(c->path) + 1);
    /* The umask makes the socket 0600 from its first instant (no window in which a
     * wider mode exists); chmod then sets the final mode whatever the umask was. */
    mode_t old = umask(0177);
    int br = bind(c->lfd, (struct sockaddr *)&sa, sizeof sa);
    int berr = errno;
    umask(old);
    if (br < 0) {
        snprintf(err, errlen, "cannot create control socket %s: %s", c->path, strerror(berr));
        destroy(c);
        return NULL;
    }
    if (chmod(c->path, socket_mode()) < 0 || listen(c->lfd, MAX_CLIENTS) < 0) {
        snprintf(err, errlen, "control socket %s: %s", c->path, strerror(errno));
        unlink(c->path);
        destroy(c);
        return NULL;
    }
    /* The serving thread takes no signals: SIGINT/SIGTERM belong to the main program. */
    sigset_t all, prev;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &prev);
    int pr = pthread_create(&c->thread, NULL, serve, c);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    if (pr != 0) {
        snprintf(err, errlen, "control socket: cannot start its thread: %s", strerror(pr));
        unlink(c->path);
        destroy(c);
        return NULL;
    }
    c->thread_started = true;
    vm->event_sink = send_event;
    vm->event_ctx = c;
    return c;
}

/* The "end" event: how the VM stopped, for followers (jinxctl attach exits on it). */
static void end_event(struct control *c)
{
    const struct outcome *o = &c->vm->out;
    char m[400], buf[700];
    const char *kind = "none";
    switch (o->kind) {
    case OUT_EXIT:
        kind = "exit";
        snprintf(m, sizeof m, "the VM stopped: program exited with status %d", o->status & 0xff);
        break;
    case OUT_SIGNAL:
        kind = "signal";
        snprintf(m, sizeof m, "the VM stopped: program killed by %s in thread %d",
                 signal_name(o->signal), o->thread);
        break;
    case OUT_DEADLOCK:
        kind = "deadlock";
        snprintf(m, sizeof m, "the VM stopped: deadlock");
        break;
    case OUT_TIMEOUT:
        kind = "timeout";
        snprintf(m, sizeof m, "the VM stopped: timeout");
        break;
    case OUT_ERROR:
        kind = "error";
        snprintf(m, sizeof m, "the VM stopped: %.300s", o->detail);
        break;
    default:
        snprintf(m, sizeof m, "the VM stopped");
    }
    struct jbuf b;
    jb_init(&b, buf, sizeof buf);
    jb_printf(&b, "{\"event\":\"end\",\"outcome\":\"%s\",\"exit_status\":%d,\"msg\":", kind,
              outcome_exit_status(o));
    jb_str(&b, m);
    jb_raw(&b, "}");
    if (jb_ok(&b) == 0)
        control_event(c, buf);
}

void control_stop(struct control *c)
{
    if (!c)
        return;
    if (c->vm->event_sink == send_event) {
        c->vm->event_sink = NULL;
        c->vm->event_ctx = NULL;
    }
    if (c->vm->out.kind != OUT_NONE)
        end_event(c);
    atomic_store(&c->stop, true);
    wake(c);
    if (c->thread_started)
        pthread_join(c->thread, NULL);
    unlink(c->path);
    destroy(c);
}
