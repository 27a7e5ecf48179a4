/* jinxctl: the control client of running jinx-vmm instances (docs/control.md), and the
 * dispatcher of `jinxctl inspect` (inspect.h).
 *
 * Exit status: 0 done; 1 the VM refused the request or could not be reached; 2 bad
 * usage. */
#include "control/control_req.h"
#include "dump/inspect.h"
#include "lib/json.h"
#include "rounds/round_config.h"
#include "control/rundir.h"
#include "lib/util.h"
#include <dirent.h>
#include <errno.h>
#include "lib/options.h"
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define REPLY_TIMEOUT_MS 5000
/* detach replies when the round under way has ended (round_detach): a round of many
 * simulations on a slow host (or under valgrind) can take longer than a status reply. */
#define DETACH_TIMEOUT_MS 120000
#define MAX_VMS 64

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jinxctl COMMAND [options]\n"
        "\n"
        "Controls running jinx-vmm instances through their control sockets.\n"
        "\n"
        "commands:\n"
        "  attach [--rate 5/s] [--strategy S] [--depth D] [--sims K] [--fragment DUR]\n"
        "         [--tail DUR] [--max-duty PCT] [--seed N] [--workers N] [--sim-kind KIND]\n"
        "         [--no-follow] [--vm VM]\n"
        "                 start (or reconfigure) simulation rounds; then print the VM's events\n"
        "                 until Ctrl-C or the VM ends (--no-follow: return at once).\n"
        "                 --rate: rounds per second (5/s, 0.5/s, 30/min; default 5/s)\n"
        "                 --strategy: portfolio (default), jinx, pct, pctvb, race, random, bounded\n"
        "                 --depth: PCT depth, 1..32 (default 3)\n"
        "                 --sims: simulations per round, 1..64 (default 8)\n"
        "                 --fragment: virtual time simulated per round, 10us..100ms (default 1ms)\n"
        "                 --tail: after a retired suspicious schedule, stay serialized this\n"
        "                 much virtual time more, so a crash there replays (0..100ms, default 4ms)\n"
        "                 --max-duty: most of the wall time rounds may take, 1..100 (default 50;\n"
        "                 5 keeps the program's slowdown near 5%% at the cost of the rate)\n"
        "                 --seed: seed of every random choice of the rounds (default 1)\n"
        "                 --workers: worker VMs simulating beside the program's VM, 0..8\n"
        "                 (0: one after the other in the program's VM; default: docs/rounds.md)\n"
        "                 --sim-kind: auto (default), traced (every shared access a cue point)\n"
        "                 or sparse (decisions only: syscalls and learnt change points)\n"
        "  status [--json] [--vm VM]\n"
        "                 rounds done, cue points and simulations per round, round time per\n"
        "                 phase, best score, retirements (--json: the raw status object)\n"
        "  detach [--vm VM]  stop the rounds (the program runs on, free)\n"
        "  list              the running VMs (stale sockets are removed)\n"
        "  inspect DUMP [--thread N] [--disasm N] [--json] [--image PATH]\n"
        "                    print a crash dump (docs/dumps.md)\n"
        "  inspect --html OUT.html DUMP  the retired interleaving as one HTML page\n"
        "\n"
        "--vm VM: a socket path, or an image name or pid among `jinxctl list`. Without it,\n"
        "jinxctl talks to the only running VM. Sockets live in $JINX_RUNTIME_DIR, else\n"
        "$XDG_RUNTIME_DIR/jinx, else /tmp/jinx-UID.\n"
        "\n"
        "exit status: 0 done; 1 the VM refused or could not be reached; 2 bad usage.\n");
}

/* ---- connections ---------------------------------------------------------------- */

struct conn {
    int fd;
    char path[PATH_MAX];
    char buf[JSON_MAX_TEXT + 1];
    size_t n;
};

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) { interrupted = sig; }

/* Connects to a socket. Returns 0, or -errno. */
static int conn_open(struct conn *c, const char *path)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    snprintf(c->path, sizeof c->path, "%s", path);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    c->fd = fd;
    return 0;
}

static void conn_close(struct conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

static int conn_send(struct conn *c, const char *line)
{
    size_t n = strlen(line), off = 0;
    char buf[CONTROL_MAX_LINE + 2];
    if (n > CONTROL_MAX_LINE)
        return -1;
    memcpy(buf, line, n);
    buf[n++] = '\n';
    while (off < n) {
        ssize_t k = send(c->fd, buf + off, n - off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR && !interrupted)
            continue;
        if (k < 0)
            return -1;
        off += (size_t)k;
    }
    return 0;
}

enum { LINE_OK = 0, LINE_EOF = -1, LINE_TIMEOUT = -2, LINE_ERROR = -3, LINE_INTR = -4,
       LINE_LONG = -5 };

/* Reads one line (newline removed) into line[0..cap). timeout_ms < 0: wait forever. */
static int conn_read_line(struct conn *c, char *line, size_t cap, int timeout_ms)
{
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->n);
        if (nl) {
            size_t len = (size_t)(nl - c->buf);
            if (len >= cap)
                return LINE_LONG;
            memcpy(line, c->buf, len);
            line[len] = 0;
            memmove(c->buf, nl + 1, c->n - len - 1);
            c->n -= len + 1;
            return LINE_OK;
        }
        if (c->n >= sizeof c->buf - 1)
            return LINE_LONG;
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        int r = poll(&pf, 1, timeout_ms);
        if (interrupted)
            return LINE_INTR;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return LINE_ERROR;
        if (r == 0)
            return LINE_TIMEOUT;
        ssize_t k = read(c->fd, c->buf + c->n, sizeof c->buf - 1 - c->n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno == ECONNRESET ? LINE_EOF : LINE_ERROR;
        if (k == 0)
            return LINE_EOF;
        c->n += (size_t)k;
    }
}

static void say_conn_error(const char *path, int neg_errno)
{
    int e = -neg_errno;
    if (e == ECONNREFUSED)
        jx_err("%s: nobody listens there (the VM has stopped; the socket is stale)", path);
    else if (e == ENOENT)
        jx_err("%s: no such socket (jinxctl list shows the running VMs)", path);
    else if (e == EACCES || e == EPERM)
        jx_err("%s: permission denied (the VM belongs to another user: run jinxctl as that "
               "user or as root)", path);
    else
        jx_err("%s: cannot connect: %s", path, strerror(e));
}

/* Sends a request and reads its reply into o (raw line in line). Returns 0 if the
 * reply says ok, 1 if it is an error reply (message printed), -1 if there was no
 * usable reply (message printed). */
static int request_within(struct conn *c, const char *req, char *line, size_t cap,
                          struct json_obj *o, int timeout_ms)
{
    char err[200];
    bool sent = conn_send(c, req) == 0;
    /* Even if sending failed, the VM may have said why before closing (a refusal). */
    int r = conn_read_line(c, line, cap, timeout_ms);
    if (r == LINE_TIMEOUT) {
        jx_err("%s: no reply within %d s (is the VM stuck?)", c->path, timeout_ms / 1000);
        return -1;
    }
    if (r == LINE_INTR)
        return -1;
    if (r != LINE_OK) {
        jx_err("%s: the VM closed the connection without a reply%s", c->path,
               sent ? " (it may have stopped)" : "");
        return -1;
    }
    if (json_parse_object(line, strlen(line), JSON_ALLOW_NESTED, o, err, sizeof err) < 0) {
        jx_err("%s: unreadable reply (%s): %.200s", c->path, err, line);
        return -1;
    }
    bool ok = false;
    if (json_get_bool(o, "ok", &ok) != 1) {
        jx_err("%s: reply without \"ok\": %.200s", c->path, line);
        return -1;
    }
    if (!ok) {
        const char *e = "(no message)";
        json_get_str(o, "error", &e);
        jx_err("the VM refused: %s", e);
        return 1;
    }
    return 0;
}

static int request(struct conn *c, const char *req, char *line, size_t cap, struct json_obj *o)
{
    return request_within(c, req, line, cap, o, REPLY_TIMEOUT_MS);
}

/* ---- finding the VM ------------------------------------------------------------- */

struct vm_entry {
    char path[PATH_MAX];
    char name[NAME_MAX + 1]; /* file name without ".sock" */
    long pid;
};

/* Lists the live sockets of the runtime directory; removes stale ones (connect
 * refused) that are ours. Returns the count, or -1 with a message. */
static int list_vms(struct vm_entry *out, int max, bool verbose)
{
    char dir[PATH_MAX], err[400];
    if (rundir_path(dir, sizeof dir, err, sizeof err) < 0) {
        jx_err("%s", err);
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) < 0 && errno == ENOENT)
        return 0; /* no VM has ever run here */
    if (rundir_check(dir, false, err, sizeof err) < 0) {
        jx_err("%s", err);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        jx_err("cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".sock"))
            continue;
        struct vm_entry *v = &out[n];
        if (snprintf(v->path, sizeof v->path, "%s/%s", dir, e->d_name) >= (int)sizeof v->path)
            continue;
        if (lstat(v->path, &st) < 0 || !S_ISSOCK(st.st_mode))
            continue;
        struct conn c;
        int r = conn_open(&c, v->path);
        if (r == -ECONNREFUSED) {
            if (st.st_uid == geteuid() && unlink(v->path) == 0 && verbose)
                fprintf(stderr, "jinxctl: removed stale socket %s (its VM is gone)\n", v->path);
            continue;
        }
        if (r < 0)
            continue;
        conn_close(&c);
        snprintf(v->name, sizeof v->name, "%.*s", (int)(len - 5), e->d_name);
        const char *dash = strrchr(v->name, '-');
        v->pid = dash ? strtol(dash + 1, NULL, 10) : 0;
        n++;
    }
    closedir(d);
    return n;
}

/* Resolves --vm (or its absence) to a socket path. Returns 0, or -1 with a message. */
static int find_vm(const char *want, char *path, size_t len)
{
    if (want && (strchr(want, '/') || strstr(want, ".sock"))) {
        snprintf(path, len, "%s", want);
        return 0;
    }
    static struct vm_entry vms[MAX_VMS];
    int n = list_vms(vms, MAX_VMS, false);
    if (n < 0)
        return -1;
    char dir[PATH_MAX], err[400];
    if (rundir_path(dir, sizeof dir, err, sizeof err) < 0)
        snprintf(dir, sizeof dir, "?");
    int match = -1, nmatch = 0;
    for (int i = 0; i < n; i++) {
        bool m = !want;
        if (want) {
            char *end;
            long pid = strtol(want, &end, 10);
            size_t wl = strlen(want);
            m = (!*end && pid == vms[i].pid) ||
                (!strncmp(vms[i].name, want, wl) && vms[i].name[wl] == '-');
        }
        if (m) {
            match = i;
            nmatch++;
        }
    }
    if (nmatch == 1) {
        snprintf(path, len, "%s", vms[match].path);
        return 0;
    }
    if (nmatch == 0 && !want) {
        jx_err("no running VM found in %s (start one with: jinx-vmm run IMAGE; if it runs with "
               "another JINX_RUNTIME_DIR or user, pass --vm SOCKET)", dir);
        return -1;
    }
    if (nmatch == 0) {
        jx_err("no running VM matches '%s' in %s (jinxctl list shows them; --vm takes a socket "
               "path, an image name or a pid)", want, dir);
        return -1;
    }
    jx_err("%d VMs are running%s%s%s: choose one with --vm (a socket path, image name or pid):",
           nmatch, want ? " as '" : "", want ? want : "", want ? "'" : "");
    for (int i = 0; i < n; i++)
        fprintf(stderr, "  %s\n", vms[i].path);
    return -1;
}

static int open_vm(const char *want, struct conn *c)
{
    char path[PATH_MAX];
    if (find_vm(want, path, sizeof path) < 0)
        return -1;
    int r = conn_open(c, path);
    if (r < 0) {
        say_conn_error(path, r);
        return -1;
    }
    return 0;
}

/* ---- output helpers --------------------------------------------------------------- */

static uint64_t u64_of(const struct json_obj *o, const char *key)
{
    uint64_t v = 0;
    if (json_get_u64(o, key, &v) != 1)
        v = 0;
    return v;
}

/* An event line as text for people: its "msg" (with the round number when given). */
static void print_event(const char *line)
{
    static struct json_obj o;
    char err[200];
    const char *msg;
    if (json_parse_object(line, strlen(line), JSON_ALLOW_NESTED, &o, err, sizeof err) < 0 ||
        json_get_str(&o, "msg", &msg) != 1) {
        printf("jinx: %s\n", line); /* not for us to judge: show it as it came */
        return;
    }
    uint64_t round;
    if (json_get_u64(&o, "round", &round) == 1)
        printf("jinx: round %llu: %s\n", (unsigned long long)round, msg);
    else
        printf("jinx: %s\n", msg);
}

/* ---- commands ------------------------------------------------------------------------- */

static int cmd_attach(int argc, char **argv)
{
    static const struct option lo[] = {
        {"rate", required_argument, 0, 'r'}, {"strategy", required_argument, 0, 's'},
        {"depth", required_argument, 0, 'd'}, {"sims", required_argument, 0, 'k'},
        {"fragment", required_argument, 0, 'f'}, {"seed", required_argument, 0, 'S'},
        {"tail", required_argument, 0, 't'}, {"max-duty", required_argument, 0, 'm'},
        {"no-follow", no_argument, 0, 'n'}, {"vm", required_argument, 0, 'v'},
        {"workers", required_argument, 0, 'w'}, {"sim-kind", required_argument, 0, 'K'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    struct round_config cfg;
    round_config_default(&cfg);
    bool given[128] = {0}, follow = true;
    const char *want = NULL;
    char err[300];
    int ch, li;
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    cli_init(&cl, "attach", argc, argv, posv);
    while ((ch = cli_next(&cl, "h", lo, &li)) != CLI_END) {
        switch (ch) {
        case CLI_ERROR:
            jx_err("%s (see jinxctl --help)", cl.err);
            return EXIT_USAGE;
        case 'n': follow = false; break;
        case 'v': want = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'r': case 's': case 'd': case 'k': case 'f': case 'S': case 't': case 'm': case 'w':
        case 'K':
            if (round_config_set(&cfg, lo[li].name, optarg, err, sizeof err) < 0) {
                jx_err("attach: --%s", err);
                return EXIT_USAGE;
            }
            given[ch] = true;
            break;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (cl.npos) {
        jx_err("attach: unexpected argument '%s' (see jinxctl --help)", cl.pos[0]);
        return EXIT_USAGE;
    }
    /* Only what was given: the VM fills in the same defaults and checks again. */
    char req[CONTROL_MAX_LINE];
    struct jbuf b;
    jb_init(&b, req, sizeof req);
    jb_raw(&b, "{\"cmd\":\"attach\"");
    if (given['r'])
        jb_printf(&b, ",\"rate\":%.15g", cfg.rate);
    if (given['s']) {
        jb_raw(&b, ",\"strategy\":");
        jb_str(&b, ex_strategy_name(cfg.strategy));
    }
    if (given['d'])
        jb_printf(&b, ",\"depth\":%u", cfg.params.pct_depth);
    if (given['k'])
        jb_printf(&b, ",\"sims\":%u", cfg.params.max_schedules);
    if (given['f'])
        jb_printf(&b, ",\"fragment_us\":%llu", (unsigned long long)(cfg.fragment_ns / 1000));
    if (given['m'])
        jb_printf(&b, ",\"max_duty_pct\":%d", cfg.max_duty_pct);
    if (given['t'])
        jb_printf(&b, ",\"tail_us\":%llu", (unsigned long long)(cfg.tail_ns / 1000));
    if (given['S'])
        jb_printf(&b, ",\"seed\":%llu", (unsigned long long)cfg.seed);
    if (given['w'])
        jb_printf(&b, ",\"workers\":%d", cfg.workers);
    if (given['K']) {
        jb_raw(&b, ",\"sim_kind\":");
        jb_str(&b, round_sim_kind_name(cfg.sim_kind));
    }
    jb_printf(&b, ",\"follow\":%s}", follow ? "true" : "false");

    struct conn c;
    if (open_vm(want, &c) < 0)
        return EXIT_FAIL;
    static char line[JSON_MAX_TEXT + 1];
    static struct json_obj o;
    int r = request(&c, req, line, sizeof line, &o);
    if (r != 0) {
        conn_close(&c);
        return EXIT_FAIL;
    }
    const char *desc = "";
    json_get_str(&o, "config", &desc);
    printf("jinxctl: attached to %s: %s\n", c.path, desc);
    if (!follow) {
        conn_close(&c);
        return 0;
    }
    printf("jinxctl: following its events (Ctrl-C stops following; the rounds go on until "
           "jinxctl detach)\n");
    fflush(stdout);
    for (;;) {
        r = conn_read_line(&c, line, sizeof line, -1);
        if (r == LINE_OK) {
            print_event(line);
            fflush(stdout);
            continue;
        }
        if (r == LINE_INTR)
            printf("jinxctl: stopped following; the rounds go on (jinxctl detach stops them)\n");
        else if (r == LINE_EOF)
            printf("jinxctl: the VM closed the connection (it has stopped)\n");
        else if (r == LINE_LONG)
            jx_err("an event line longer than %d bytes: giving up", JSON_MAX_TEXT);
        else
            jx_err("reading events: %s", strerror(errno));
        break;
    }
    conn_close(&c);
    return r == LINE_OK || r == LINE_INTR || r == LINE_EOF ? 0 : EXIT_FAIL;
}

/* "vm" and "json" options shared by status and detach. */
static int simple_opts(int argc, char **argv, const char **want, bool *json, const char *cmd)
{
    static const struct option lo[] = {{"vm", required_argument, 0, 'v'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int ch;
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    cli_init(&cl, cmd, argc, argv, posv);
    while ((ch = cli_next(&cl, "h", lo, NULL)) != CLI_END) {
        switch (ch) {
        case CLI_ERROR:
            jx_err("%s (see jinxctl --help)", cl.err);
            return EXIT_USAGE;
        case 'v': *want = optarg; break;
        case 'j':
            if (!json) {
                jx_err("%s: --json is for jinxctl status", cmd);
                return EXIT_USAGE;
            }
            *json = true;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (cl.npos) {
        jx_err("%s: unexpected argument '%s' (see jinxctl --help)", cmd, cl.pos[0]);
        return EXIT_USAGE;
    }
    return -1;
}

static double ms(uint64_t ns) { return ns / 1e6; }

/* The status's "progress" object (vmm/rounds/round_progress.h), when the VM has one. */
static void print_progress(const struct json_obj *s)
{
    static struct json_obj p;
    const struct json_field *f = json_get(s, "progress");
    char err[120];
    if (!f || f->type != JSON_OBJECT ||
        json_parse_object(f->raw, f->rawlen, JSON_ALLOW_NESTED, &p, err, sizeof err) < 0)
        return;
    uint64_t with = u64_of(&p, "rounds_with_sims"), without = u64_of(&p, "rounds_without_sims");
    uint64_t all = with + without;
    printf("rounds with simulations: %llu of %llu (%.0f%%); without: %llu recording ended, "
           "%llu trace unusable, %llu no schedule proposed, %llu other\n",
           (unsigned long long)with, (unsigned long long)all, all ? 100.0 * with / all : 0.0,
           (unsigned long long)u64_of(&p, "nosim_ended"),
           (unsigned long long)u64_of(&p, "nosim_unusable"),
           (unsigned long long)u64_of(&p, "nosim_none"), (unsigned long long)u64_of(&p, "nosim_other"));
    printf("medians (last 256 rounds): %llu cue points/fragment, %llu simulations/round, %llu "
           "cue points/simulation; recordings cut by the wall budget: %llu (%llu stopped "
           "between cue points)\n", (unsigned long long)u64_of(&p, "median_cues"),
           (unsigned long long)u64_of(&p, "median_sims"),
           (unsigned long long)u64_of(&p, "median_sim_cues"),
           (unsigned long long)u64_of(&p, "record_cut"),
           (unsigned long long)u64_of(&p, "record_stopped"));
}

static void print_status(const struct json_obj *ping, const struct json_obj *s,
                         const struct json_obj *ctl, const char *path)
{
    static struct json_obj last, sum;
    const struct json_field *f;
    char err[120];
    const char *image = "?", *strategy = "?";
    json_get_str(ping, "image", &image);
    printf("VM: %s (pid %llu), socket %s\n", image, (unsigned long long)u64_of(ping, "pid"),
           path);
    bool attached = false;
    json_get_bool(s, "attached", &attached);
    json_get_str(s, "strategy", &strategy);
    double rate = 0;
    json_get_double(s, "rate", &rate);
    uint64_t rounds = u64_of(s, "rounds");
    if (attached)
        printf("rounds: attached, %g/s, strategy %s (depth %llu), %llu simulations/round, "
               "fragment %g ms, tail %g ms, seed %llu\n", rate, strategy,
               (unsigned long long)u64_of(s, "depth"), (unsigned long long)u64_of(s, "sims"),
               u64_of(s, "fragment_us") / 1e3, u64_of(s, "tail_us") / 1e3,
               (unsigned long long)u64_of(s, "seed"));
    else
        printf("rounds: detached (jinxctl attach --rate 5/s starts them)\n");
    printf("rounds done: %llu\n", (unsigned long long)rounds);
    double per = rounds ? 1.0 / (double)rounds : 0;
    printf("cue points/round: %.1f average, %llu last round\n", u64_of(s, "cues_total") * per,
           (unsigned long long)u64_of(s, "last_cues"));
    printf("simulations/round: %.1f average, %llu last round\n", u64_of(s, "simulations") * per,
           (unsigned long long)u64_of(s, "last_sims"));
    {
        const char *kind = "?";
        double per_sim = 0, dec = 0, sps = 0;
        json_get_str(s, "sim_kind", &kind);
        json_get_double(s, "cues_per_simulation", &per_sim);
        json_get_double(s, "decisions_per_sparse_simulation", &dec);
        json_get_double(s, "simulations_per_second", &sps);
        printf("simulations: %s, %llu sparse, %.1f cue points a simulation, %.2f change points "
               "fired a sparse one, %.1f simulations/s of simulating\n", kind,
               (unsigned long long)u64_of(s, "sparse_simulations"), per_sim, dec, sps);
    }
    print_progress(s);
    printf("worker VMs: %llu last round, %llu simulations on workers, %llu builds, %llu syncs "
           "(%llu pages)\n", (unsigned long long)u64_of(s, "workers"),
           (unsigned long long)u64_of(s, "worker_sims"), (unsigned long long)u64_of(s, "worker_builds"),
           (unsigned long long)u64_of(s, "worker_syncs"), (unsigned long long)u64_of(s, "worker_pages"));
    last.n = sum.n = 0;
    if ((f = json_get(s, "last_ns")) && f->type == JSON_OBJECT)
        json_parse_object(f->raw, f->rawlen, 0, &last, err, sizeof err);
    if ((f = json_get(s, "sum_ns")) && f->type == JSON_OBJECT)
        json_parse_object(f->raw, f->rawlen, 0, &sum, err, sizeof err);
    static const char *const ph[] = {"stop",  "snapshot", "record", "explore", "simulate",
                                     "score", "retire",   "resume", "round"};
    printf("round time, ms (last round / average):");
    for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++)
        printf("%s %s %.3f/%.3f", i ? "," : "", i == 8 ? "total" : ph[i],
               ms(u64_of(&last, ph[i])), ms(u64_of(&sum, ph[i])) * per);
    printf("\n");
    bool bug = false;
    json_get_bool(s, "best_bug", &bug);
    uint64_t susp = u64_of(s, "best_suspicion");
    if (bug)
        printf("best score: a bug (suspicion %llu)\n", (unsigned long long)susp);
    else if (rounds)
        printf("best score: suspicion %llu (no simulated bug)\n", (unsigned long long)susp);
    else
        printf("best score: none yet\n");
    printf("retirements: %llu (replay divergences: %llu); simulations that hit a bug: %llu\n",
           (unsigned long long)u64_of(s, "retired"), (unsigned long long)u64_of(s, "divergences"),
           (unsigned long long)u64_of(s, "sim_bugs"));
    printf("tails: %llu cue points run serialized after retirements, %llu crashes met there "
           "(replayable)\n", (unsigned long long)u64_of(s, "tail_cues"),
           (unsigned long long)u64_of(s, "tail_crashes"));
    printf("free execution since attach: %.3f s\n", u64_of(s, "free_ns") / 1e9);
    if (ctl)
        printf("control: %llu clients, %llu events dropped for slow clients, %llu connections "
               "refused\n", (unsigned long long)u64_of(ctl, "clients"),
               (unsigned long long)u64_of(ctl, "events_dropped"),
               (unsigned long long)u64_of(ctl, "clients_refused"));
}

static int cmd_status(int argc, char **argv)
{
    const char *want = NULL;
    bool json = false;
    int r = simple_opts(argc, argv, &want, &json, "status");
    if (r >= 0)
        return r;
    struct conn c;
    if (open_vm(want, &c) < 0)
        return EXIT_FAIL;
    static char pline[JSON_MAX_TEXT + 1], sline[JSON_MAX_TEXT + 1];
    static struct json_obj ping, reply, st, ctl;
    char err[200];
    if ((r = request(&c, "{\"cmd\":\"ping\"}", pline, sizeof pline, &ping)) != 0 ||
        (r = request(&c, "{\"cmd\":\"status\"}", sline, sizeof sline, &reply)) != 0) {
        conn_close(&c);
        return EXIT_FAIL;
    }
    conn_close(&c);
    const struct json_field *f = json_get(&reply, "status");
    if (!f || f->type != JSON_OBJECT ||
        json_parse_object(f->raw, f->rawlen, JSON_ALLOW_NESTED, &st, err, sizeof err) < 0) {
        jx_err("%s: status reply without a readable \"status\" object", c.path);
        return EXIT_FAIL;
    }
    if (json) {
        printf("%.*s\n", (int)f->rawlen, f->raw);
        return 0;
    }
    const struct json_field *cf = json_get(&reply, "control");
    bool have_ctl = cf && cf->type == JSON_OBJECT &&
                    json_parse_object(cf->raw, cf->rawlen, 0, &ctl, err, sizeof err) == 0;
    print_status(&ping, &st, have_ctl ? &ctl : NULL, c.path);
    return 0;
}

static int cmd_detach(int argc, char **argv)
{
    const char *want = NULL;
    int r = simple_opts(argc, argv, &want, NULL, "detach");
    if (r >= 0)
        return r;
    struct conn c;
    if (open_vm(want, &c) < 0)
        return EXIT_FAIL;
    static char line[JSON_MAX_TEXT + 1];
    static struct json_obj o;
    r = request_within(&c, "{\"cmd\":\"detach\"}", line, sizeof line, &o, DETACH_TIMEOUT_MS);
    conn_close(&c);
    if (r != 0)
        return EXIT_FAIL;
    bool was = false;
    json_get_bool(&o, "was_attached", &was);
    if (was)
        printf("jinxctl: rounds detached from %s after %llu rounds\n", c.path,
               (unsigned long long)u64_of(&o, "rounds"));
    else
        printf("jinxctl: %s had no rounds attached\n", c.path);
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    if (argc > 1) {
        jx_err("list: takes no arguments (got '%s'; see jinxctl --help)", argv[1]);
        return EXIT_USAGE;
    }
    static struct vm_entry vms[MAX_VMS];
    int n = list_vms(vms, MAX_VMS, true);
    if (n < 0)
        return EXIT_FAIL;
    if (n == 0) {
        char dir[PATH_MAX], err[300];
        if (rundir_path(dir, sizeof dir, err, sizeof err) < 0)
            snprintf(dir, sizeof dir, "?");
        printf("no running VM (in %s)\n", dir);
        return 0;
    }
    static char line[JSON_MAX_TEXT + 1];
    static struct json_obj o, st;
    char err[200];
    for (int i = 0; i < n; i++) {
        struct conn c;
        const char *image = "?";
        char rounds[160] = "rounds: ?";
        if (conn_open(&c, vms[i].path) == 0) {
            if (request(&c, "{\"cmd\":\"ping\"}", line, sizeof line, &o) == 0)
                json_get_str(&o, "image", &image);
            static char img[PATH_MAX];
            snprintf(img, sizeof img, "%s", image); /* o is reused below */
            image = img;
            const struct json_field *f;
            if (request(&c, "{\"cmd\":\"status\"}", line, sizeof line, &o) == 0 &&
                (f = json_get(&o, "status")) && f->type == JSON_OBJECT &&
                json_parse_object(f->raw, f->rawlen, JSON_ALLOW_NESTED, &st, err, sizeof err) ==
                    0) {
                bool att = false;
                double rate = 0;
                json_get_bool(&st, "attached", &att);
                json_get_double(&st, "rate", &rate);
                if (att)
                    snprintf(rounds, sizeof rounds, "rounds: attached %g/s, %llu done", rate,
                             (unsigned long long)u64_of(&st, "rounds"));
                else
                    snprintf(rounds, sizeof rounds, "rounds: detached");
            }
            conn_close(&c);
        }
        printf("%s  pid %ld  image %s  %s\n", vms[i].path, vms[i].pid, image, rounds);
    }
    return 0;
}

int main(int argc, char **argv)
{
    jx_set_progname("jinxctl");
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sigaction sa = {.sa_handler = on_sigint};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: poll returns, we say goodbye */
    sigaction(SIGTERM, &sa, NULL);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "attach"))
        return cmd_attach(argc - 1, argv + 1);
    if (!strcmp(cmd, "status"))
        return cmd_status(argc - 1, argv + 1);
    if (!strcmp(cmd, "detach"))
        return cmd_detach(argc - 1, argv + 1);
    if (!strcmp(cmd, "list"))
        return cmd_list(argc - 1, argv + 1);
    if (!strcmp(cmd, "inspect"))
        return cmd_inspect(argc - 1, argv + 1);
    jx_err("unknown command '%s' (commands: attach, status, detach, list, inspect; see "
           "jinxctl --help)", cmd);
    return EXIT_USAGE;
}
