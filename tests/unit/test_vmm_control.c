/* Unit tests for vmm/control/control.c: the control socket served for a fake VM (no KVM), with
 * the round driver replaced by mocks that record what the socket asked of it. Covers
 * the directory and socket modes, every request, events and their bound for slow
 * clients, over-long lines, floods, the client limit and shutdown. The peer-uid check
 * needs a second uid and is tested in tests/integration/control.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control.h"
#include "lib/json.h"
#include "rounds/round_config.h"
#include "control/rundir.h"
#include "lib/util.h"
#include "kvm/vm.h"

/* ---- the round driver, mocked ---- */
static struct {
    pthread_mutex_t lock;
    int attaches, detaches;
    bool attached;
    struct round_config cfg;
    bool fail_next;
} M = {.lock = PTHREAD_MUTEX_INITIALIZER};

int round_attach(struct vm *vm, const struct round_config *cfg, char *err, size_t errlen)
{
    (void)vm;
    pthread_mutex_lock(&M.lock);
    int r = 0;
    if (M.fail_next) {
        snprintf(err, errlen, "mock refuses");
        M.fail_next = false;
        r = -1;
    } else {
        M.attaches++;
        M.attached = true;
        M.cfg = *cfg;
    }
    pthread_mutex_unlock(&M.lock);
    return r;
}

void round_detach(struct vm *vm)
{
    (void)vm;
    pthread_mutex_lock(&M.lock);
    M.detaches++;
    M.attached = false;
    pthread_mutex_unlock(&M.lock);
}

void round_status(struct vm *vm, struct round_stats *out)
{
    (void)vm;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&M.lock);
    out->attached = M.attached;
    out->cfg = M.cfg;
    out->rounds = 7;
    pthread_mutex_unlock(&M.lock);
}

/* ---- helpers ---- */
static struct vm VM; /* only image_path, stopping and out are used */
static char DIR_[256];

static int setup(void **state)
{
    (void)state;
    snprintf(DIR_, sizeof DIR_, "/tmp/jinx-ctl-test-%d", (int)getpid());
    setenv("JINX_RUNTIME_DIR", DIR_, 1);
    unsetenv("JINX_TEST");
    memset(&VM, 0, sizeof VM);
    VM.image_path = "images/bin/some image";
    round_config_default(&M.cfg);
    M.attached = false;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rmdir(DIR_);
    return 0;
}

struct cl {
    int fd;
    char buf[65536];
    size_t n;
};

static void cl_open(struct cl *c, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
    c->n = 0;
    assert_true(c->fd >= 0);
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        fail_msg("connect %s: %s", path, strerror(errno));
}

static void cl_send(struct cl *c, const char *s)
{
    size_t n = strlen(s);
    assert_int_equal(send(c->fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* One line, or NULL on EOF/timeout. */
static char *cl_line(struct cl *c, int timeout_ms)
{
    static char line[65536];
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->n);
        if (nl) {
            size_t len = (size_t)(nl - c->buf);
            memcpy(line, c->buf, len);
            line[len] = 0;
            memmove(c->buf, nl + 1, c->n - len - 1);
            c->n -= len + 1;
            return line;
        }
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        if (poll(&pf, 1, timeout_ms) <= 0)
            return NULL;
        ssize_t k = read(c->fd, c->buf + c->n, sizeof c->buf - c->n);
        if (k <= 0)
            return NULL;
        c->n += (size_t)k;
    }
}

static char *ask(struct cl *c, const char *req)
{
    cl_send(c, req);
    char *l = cl_line(c, 5000);
    if (!l)
        fail_msg("no reply to %s", req);
    return l;
}

#define CONTAINS(s, sub)                                                                   \
    do {                                                                                   \
        const char *s_ = (s);                                                              \
        if (!s_ || !strstr(s_, (sub)))                                                     \
            fail_msg("\"%s\" lacks \"%s\"", s_ ? s_ : "(null)", (sub));                    \
    } while (0)

static struct control *start(void)
{
    char err[512];
    struct control *c = control_start(&VM, err, sizeof err);
    if (!c)
        fail_msg("control_start: %s", err);
    return c;
}

/* ---- tests ---- */

static void test_socket_and_dir(void **state)
{
    (void)state;
    struct control *c = start();
    struct stat st;
    assert_int_equal(lstat(DIR_, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    char want[300];
    snprintf(want, sizeof want, "%s/some_image-%d.sock", DIR_, (int)getpid());
    assert_string_equal(control_path(c), want);
    assert_int_equal(lstat(want, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    control_stop(c);
    assert_int_equal(lstat(want, &st), -1); /* removed */
    control_stop(NULL);
    control_event(NULL, "{}");
}

static void test_test_mode_only_with_jinx_test(void **state)
{
    (void)state;
    struct stat st;
    setenv("JINX_TEST_SOCKET_MODE", "666", 1);
    struct control *c = start();
    assert_int_equal(stat(control_path(c), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600); /* ignored without JINX_TEST=yes */
    control_stop(c);
    setenv("JINX_TEST", "yes", 1);
    c = start();
    assert_int_equal(stat(control_path(c), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666);
    control_stop(c);
    unsetenv("JINX_TEST");
    unsetenv("JINX_TEST_SOCKET_MODE");
}

static void test_rundir_refusals(void **state)
{
    (void)state;
    char err[512];
    mkdir(DIR_, 0700);
    chmod(DIR_, 0770);
    assert_int_equal(rundir_check(DIR_, true, err, sizeof err), -1);
    CONTAINS(err, "writable by its group");
    assert_null(control_start(&VM, err, sizeof err));
    chmod(DIR_, 0703);
    assert_int_equal(rundir_check(DIR_, false, err, sizeof err), -1);
    CONTAINS(err, "writable by others");
    chmod(DIR_, 0755); /* readable by all is fine: the socket itself is 0600 */
    assert_int_equal(rundir_check(DIR_, false, err, sizeof err), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(DIR_, 65534, 65534), 0);
        assert_int_equal(rundir_check(DIR_, false, err, sizeof err), -1);
        CONTAINS(err, "belongs to uid 65534");
        assert_int_equal(chown(DIR_, 0, 0), 0);
    }
    char link[300];
    snprintf(link, sizeof link, "%s.link", DIR_);
    unlink(link);
    assert_int_equal(symlink(DIR_, link), 0);
    assert_int_equal(rundir_check(link, false, err, sizeof err), -1);
    CONTAINS(err, "symbolic link");
    unlink(link);
    chmod(DIR_, 0700);
    /* the default locations */
    char p[300];
    unsetenv("JINX_RUNTIME_DIR");
    setenv("XDG_RUNTIME_DIR", "/run/user/77", 1);
    assert_int_equal(rundir_path(p, sizeof p, err, sizeof err), 0);
    assert_string_equal(p, "/run/user/77/jinx");
    unsetenv("XDG_RUNTIME_DIR");
    assert_int_equal(rundir_path(p, sizeof p, err, sizeof err), 0);
    char want[64];
    snprintf(want, sizeof want, "/tmp/jinx-%u", (unsigned)geteuid());
    assert_string_equal(p, want);
    setenv("JINX_RUNTIME_DIR", DIR_, 1);
}

static void test_requests(void **state)
{
    (void)state;
    struct control *c = start();
    struct cl a;
    cl_open(&a, control_path(c));
    char *r = ask(&a, "{\"cmd\":\"ping\"}\n");
    CONTAINS(r, "\"ok\":true");
    char pid[40];
    snprintf(pid, sizeof pid, "\"pid\":%d", (int)getpid());
    CONTAINS(r, pid);
    CONTAINS(r, "\"image\":\"images/bin/some image\"");
    r = ask(&a, "{\"cmd\":\"status\"}\r\n"); /* CRLF is fine */
    CONTAINS(r, "{\"ok\":true,\"status\":{\"attached\":false,");
    CONTAINS(r, "\"rounds\":7");
    CONTAINS(r, "\"control\":{\"clients\":1,");
    r = ask(&a, "{\"cmd\":\"attach\",\"rate\":20,\"strategy\":\"pct\",\"depth\":4,\"sims\":3,"
                "\"fragment_us\":500,\"seed\":9}\n");
    CONTAINS(r, "\"ok\":true,\"attached\":true");
    CONTAINS(r, "20/s, strategy pct (depth 4), 3 simulations/round, fragment 0.5 ms, tail 4 ms, seed 9");
    assert_int_equal(M.attaches, 1);
    assert_true(M.cfg.rate == 20);
    assert_int_equal(M.cfg.params.pct_depth, 4);
    assert_int_equal(M.cfg.params.max_schedules, 3);
    assert_int_equal(M.cfg.fragment_ns, 500000);
    assert_int_equal(M.cfg.seed, 9);
    r = ask(&a, "{\"cmd\":\"status\"}\n");
    CONTAINS(r, "\"attached\":true,\"rate\":20,\"strategy\":\"pct\"");
    M.fail_next = true;
    r = ask(&a, "{\"cmd\":\"attach\"}\n");
    CONTAINS(r, "{\"ok\":false,\"error\":\"mock refuses\"}");
    r = ask(&a, "{\"cmd\":\"detach\"}\n");
    CONTAINS(r, "\"ok\":true,\"was_attached\":true,\"rounds\":7");
    assert_int_equal(M.detaches, 1);
    r = ask(&a, "{\"cmd\":\"detach\"}\n");
    CONTAINS(r, "\"was_attached\":false");
    /* errors leave the connection usable and the driver untouched */
    int att = M.attaches, det = M.detaches;
    r = ask(&a, "{\"cmd\":\"attach\",\"depth\":99}\n");
    CONTAINS(r, "{\"ok\":false,\"error\":\"\\\"depth\\\" must be an integer from 1 to 32\"}");
    r = ask(&a, "garbage\n");
    CONTAINS(r, "\"ok\":false,\"error\":\"malformed request");
    r = ask(&a, "\n");
    CONTAINS(r, "\"ok\":false");
    r = ask(&a, "{\"cmd\":\"shutdown\"}\n");
    CONTAINS(r, "unknown command \\\"shutdown\\\"");
    r = ask(&a, "{\"cmd\":\"ping\",\"x\":\"\\u0000\"}\n");
    CONTAINS(r, "\"ok\":false");
    r = ask(&a, "{\"cmd\":\"ping\"}\n");
    CONTAINS(r, "\"ok\":true");
    assert_int_equal(M.attaches, att);
    assert_int_equal(M.detaches, det);
    /* several requests in one write, answered in order */
    cl_send(&a, "{\"cmd\":\"ping\"}\n{\"cmd\":\"bad\"}\n{\"cmd\":\"follow\"}\n");
    CONTAINS(cl_line(&a, 5000), "\"pid\"");
    CONTAINS(cl_line(&a, 5000), "unknown command");
    CONTAINS(cl_line(&a, 5000), "\"following\":true");
    close(a.fd);
    control_stop(c);
}

static void test_events(void **state)
{
    (void)state;
    struct control *c = start();
    struct cl f, g, h;
    cl_open(&f, control_path(c));
    cl_open(&g, control_path(c));
    cl_open(&h, control_path(c));
    CONTAINS(ask(&f, "{\"cmd\":\"follow\"}\n"), "\"following\":true");
    CONTAINS(ask(&g, "{\"cmd\":\"ping\"}\n"), "\"ok\":true"); /* connected, not following */
    /* an attach with follow: the others are told, the attacher gets the reply */
    CONTAINS(ask(&h, "{\"cmd\":\"attach\",\"rate\":5,\"follow\":true}\n"), "\"attached\":true");
    CONTAINS(cl_line(&f, 5000), "{\"event\":\"attach\",\"msg\":\"rounds attached: 5/s");
    control_event(c, "{\"event\":\"round\",\"round\":1,\"msg\":\"x\ny\"}");
    CONTAINS(cl_line(&f, 5000), "{\"event\":\"round\",\"round\":1,\"msg\":\"x y\"}");
    CONTAINS(cl_line(&h, 5000), "{\"event\":\"round\",\"round\":1");
    assert_null(cl_line(&g, 200)); /* non-followers get no events */
    /* the end event on stop, then EOF */
    VM.out.kind = OUT_EXIT;
    VM.out.status = 3;
    control_stop(c);
    CONTAINS(cl_line(&f, 5000), "{\"event\":\"end\",\"outcome\":\"exit\",\"exit_status\":3,"
                                "\"msg\":\"the VM stopped: program exited with status 3\"}");
    assert_null(cl_line(&f, 5000));
    assert_null(cl_line(&g, 5000));
    VM.out.kind = OUT_NONE;
    close(f.fd);
    close(g.fd);
    close(h.fd);
}

static void test_slow_follower(void **state)
{
    (void)state;
    struct control *c = start();
    struct cl f;
    cl_open(&f, control_path(c));
    int rcv = 4096;
    setsockopt(f.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    CONTAINS(ask(&f, "{\"cmd\":\"follow\"}\n"), "\"following\":true");
    char ev[300];
    uint64_t t0 = mono_ns();
    for (int i = 0; i < 20000; i++) {
        snprintf(ev, sizeof ev, "{\"event\":\"round\",\"round\":%d,\"msg\":\"%0200d\"}", i, 0);
        control_event(c, ev);
    }
    uint64_t dt = mono_ns() - t0;
    if (dt > 2000000000ULL) /* ~100 ns each when nobody reads; a blocking one would hang */
        fail_msg("control_event took %llu ms for 20000 events", (unsigned long long)(dt / 1000000));
    /* status, from another client, counts the drops */
    struct cl s;
    cl_open(&s, control_path(c));
    char *r = ask(&s, "{\"cmd\":\"status\"}\n");
    const char *d = strstr(r, "\"events_dropped\":");
    assert_non_null(d);
    assert_true(strtoull(d + 17, NULL, 10) > 10000);
    /* The follower reads what fitted, in order, and "dropped" notices: after one more
     * event, every event is accounted for, delivered or counted as dropped. */
    int got = 0, last = -1;
    unsigned long long dropped = 0;
    char *l;
    bool sent_after = false;
    for (;;) {
        l = cl_line(&f, sent_after ? 5000 : 300);
        if (!l && !sent_after) { /* drained: now there is room for one more */
            control_event(c, "{\"event\":\"round\",\"round\":20000,\"msg\":\"after\"}");
            sent_after = true;
            continue;
        }
        if (!l)
            break;
        const char *p;
        static const char note[] = "{\"event\":\"dropped\",\"count\":";
        if ((p = strstr(l, note))) {
            dropped += strtoull(p + sizeof note - 1, NULL, 10);
            continue;
        }
        p = strstr(l, "\"round\":");
        if (!p)
            fail_msg("unexpected line %s", l);
        int n = atoi(p + 8);
        assert_true(n > last);
        last = n;
        got++;
        if (strstr(l, "\"after\""))
            break;
    }
    assert_int_equal(last, 20000);
    if (!(got > 10 && dropped > 10000))
        fail_msg("got %d, dropped %llu", got, dropped);
    assert_int_equal(got + dropped, 20001);
    close(s.fd);
    close(f.fd);
    control_stop(c);
}

static void test_long_line_and_partial(void **state)
{
    (void)state;
    struct control *c = start();
    struct cl a, b;
    /* a line of exactly 4096 bytes is a line (and here a malformed one) */
    cl_open(&a, control_path(c));
    static char big[8192];
    memset(big, ' ', 4096);
    memcpy(big, "{\"cmd\":\"ping\"}", 14);
    big[4096] = '\n';
    big[4097] = 0;
    CONTAINS(ask(&a, big), "\"ok\":true");
    /* 5000 bytes without a newline: error, then the server closes */
    memset(big, 'x', 5000);
    big[5000] = 0;
    cl_send(&a, big);
    CONTAINS(cl_line(&a, 5000), "request longer than 4096 bytes");
    assert_null(cl_line(&a, 5000));
    close(a.fd);
    /* a client that leaves mid-line disturbs nobody */
    cl_open(&b, control_path(c));
    cl_send(&b, "{\"cmd\":\"pi");
    close(b.fd);
    cl_open(&b, control_path(c));
    cl_send(&b, "{\"cmd\":\"ping\"}\n{\"cmd\":");
    shutdown(b.fd, SHUT_WR); /* half-closed: the complete line is answered */
    CONTAINS(cl_line(&b, 5000), "\"ok\":true");
    CONTAINS(cl_line(&b, 5000), "incomplete request at end of input");
    assert_null(cl_line(&b, 5000));
    close(b.fd);
    cl_open(&a, control_path(c));
    CONTAINS(ask(&a, "{\"cmd\":\"ping\"}\n"), "\"ok\":true");
    close(a.fd);
    control_stop(c);
}

struct flood {
    int fd, n;
};

static void *flooder(void *arg)
{
    struct flood *f = arg;
    static const char req[] = "{\"cmd\":\"ping\"}\n";
    char buf[sizeof req * 100];
    for (int i = 0; i < 100; i++)
        memcpy(buf + i * (sizeof req - 1), req, sizeof req - 1);
    for (int i = 0; i < f->n / 100; i++)
        if (send(f->fd, buf, 100 * (sizeof req - 1), MSG_NOSIGNAL) < 0)
            break;
    return NULL;
}

static void test_flood(void **state)
{
    (void)state;
    struct control *c = start();
    struct cl a;
    cl_open(&a, control_path(c));
    struct flood f = {.fd = a.fd, .n = 10000};
    pthread_t t;
    pthread_create(&t, NULL, flooder, &f);
    int replies = 0;
    char *l;
    while (replies < 10000 && (l = cl_line(&a, 5000))) {
        if (!strstr(l, "\"ok\":true"))
            fail_msg("reply %d: %s", replies, l);
        replies++;
    }
    pthread_join(t, NULL);
    assert_int_equal(replies, 10000);
    /* a flooder that never reads stalls only itself */
    struct cl b, d;
    cl_open(&b, control_path(c));
    int snd = 1;
    (void)snd;
    static char junk[1 << 20];
    for (size_t i = 0; i + 15 <= sizeof junk; i += 15)
        memcpy(junk + i, "{\"cmd\":\"ping\"}\n", 15);
    size_t sent = 0;
    for (int tries = 0; tries < 200; tries++) {
        ssize_t k = send(b.fd, junk, sizeof junk - sizeof junk % 15, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k <= 0)
            break;
        sent += (size_t)k;
    }
    assert_true(sent > 0);
    cl_open(&d, control_path(c));
    CONTAINS(ask(&d, "{\"cmd\":\"ping\"}\n"), "\"ok\":true");
    close(b.fd);
    close(d.fd);
    close(a.fd);
    control_stop(c);
}

static void test_client_limit(void **state)
{
    (void)state;
    struct control *c = start();
    static struct cl cs[17];
    for (int i = 0; i < 16; i++) {
        cl_open(&cs[i], control_path(c));
        CONTAINS(ask(&cs[i], "{\"cmd\":\"ping\"}\n"), "\"ok\":true");
    }
    cl_open(&cs[16], control_path(c));
    CONTAINS(cl_line(&cs[16], 5000), "too many clients");
    assert_null(cl_line(&cs[16], 5000));
    close(cs[16].fd);
    close(cs[0].fd);
    /* a slot is free again once the server has noticed */
    char *r = NULL;
    for (int tries = 0; tries < 50 && !(r && strstr(r, "\"ok\":true")); tries++) {
        struct cl n;
        cl_open(&n, control_path(c));
        cl_send(&n, "{\"cmd\":\"ping\"}\n");
        r = cl_line(&n, 5000);
        close(n.fd);
        if (!strstr(r ? r : "", "\"ok\":true"))
            usleep(20000);
    }
    CONTAINS(r, "\"ok\":true");
    for (int i = 1; i < 16; i++)
        close(cs[i].fd);
    control_stop(c);
}

static void test_stopped_vm_refuses_attach(void **state)
{
    (void)state;
    struct control *c = start();
    struct cl a;
    cl_open(&a, control_path(c));
    int att = M.attaches;
    atomic_store(&VM.stopping, true);
    CONTAINS(ask(&a, "{\"cmd\":\"attach\"}\n"), "the VM has stopped");
    assert_int_equal(M.attaches, att);
    atomic_store(&VM.stopping, false);
    close(a.fd);
    control_stop(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_socket_and_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_test_mode_only_with_jinx_test, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rundir_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_follower, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_line_and_partial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopped_vm_refuses_attach, setup, teardown),
    };
    const char *filter = getenv("JINX_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("vmm/control", tests, NULL, NULL);
}
