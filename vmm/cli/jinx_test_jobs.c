/* `jinx test --jobs N`: runs side by side, stopped when one decides (cli/jinx_test_jobs.h). */
#include "cli/jinx_test_jobs.h"
#include "kvm/pin.h"
#include "lib/util.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE_TTY_NS 1000000000ULL   /* the status line's refresh on a terminal */
#define LINE_LOG_NS 5000000000ULL   /* ... and at most this often into a log */

int jt_default_jobs(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) < 0)
        return 1;
    return CPU_COUNT(&set) >= 2 ? 2 : 1;
}

/* The signals taken while waiting: a run's end and the ones that stop the command. */
static void wait_set(sigset_t *s, bool with_child)
{
    sigemptyset(s);
    sigaddset(s, SIGINT);
    sigaddset(s, SIGTERM);
    sigaddset(s, SIGHUP);
    if (with_child)
        sigaddset(s, SIGCHLD);
}

/* Removes the files in path (jinx-vmm writes nothing else there), then path. */
static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    if (rmdir(path) < 0 && errno != ENOENT)
        jx_err("cannot remove %s: %s (remove it by hand)", path, strerror(errno));
}

static int set_name(char *dst, size_t cap, const char *dir, const char *name, char *err,
                    size_t errlen)
{
    if ((size_t)snprintf(dst, cap, "%s/%s", dir, name) >= cap)
        return jx_fail(err, errlen, "--dump-dir %s: path too long", dir);
    return 0;
}

int jt_pool_init(struct jt_pool *p, int jobs, const char *dir, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (jobs < 1 || jobs > JT_MAX_JOBS)
        return jx_fail(err, errlen, "--jobs %d: expected 1 to %d", jobs, JT_MAX_JOBS);
    p->jobs = jobs;
    p->private_dirs = jobs > 1;
    if ((size_t)snprintf(p->dir, sizeof p->dir, "%s", dir) >= sizeof p->dir)
        return jx_fail(err, errlen, "--dump-dir %s: path too long", dir);
    for (int j = 0; j < jobs; j++) {
        struct jt_files *f = &p->job[j].f;
        if (!p->private_dirs) {
            snprintf(f->dir, sizeof f->dir, "%s", dir);
        } else if ((size_t)snprintf(f->dir, sizeof f->dir, "%s/.jinx-test-%d.%d", dir,
                                    (int)getpid(), j) >= sizeof f->dir) {
            return jx_fail(err, errlen, "--dump-dir %s: path too long", dir);
        }
        if (set_name(f->log, sizeof f->log, p->private_dirs ? f->dir : dir,
                     p->private_dirs ? "jinx-test.log" : "jinx-test-last.log", err, errlen) < 0 ||
            set_name(f->report, sizeof f->report, p->private_dirs ? f->dir : dir,
                     p->private_dirs ? "jinx-test.json" : "jinx-test-last.json", err, errlen) < 0)
            return -1;
        if (!p->private_dirs)
            continue;
        int e = mkdir(f->dir, 0700) < 0 ? errno : 0;
        if (e == EEXIST) {
            remove_dir(f->dir); /* left by a killed jinx test whose pid this process has */
            e = mkdir(f->dir, 0700) < 0 ? errno : 0;
        }
        if (e) {
            for (int k = 0; k < j; k++)
                remove_dir(p->job[k].f.dir);
            return jx_fail(err, errlen, "cannot create %s: %s", f->dir, strerror(e));
        }
    }
    sigset_t s;
    wait_set(&s, true);
    sigprocmask(SIG_BLOCK, &s, &p->oldmask);
    return 0;
}

static void status_line(struct jt_pool *p, bool started)
{
    if (!p->progress)
        return;
    bool tty = isatty(2);
    uint64_t now = mono_ns();
    if (tty ? !started && now - p->last_line < LINE_TTY_NS
            : !started || now - p->last_line < LINE_LOG_NS)
        return;
    p->last_line = now;
    char what[160];
    int n = 0, len = 0;
    for (int j = 0; j < p->jobs; j++)
        if (p->job[j].pid)
            n++;
    if (p->jobs == 1) {
        snprintf(what, sizeof what, "run %llu", (unsigned long long)p->job[0].seed);
    } else {
        len = snprintf(what, sizeof what, "seed%s", n == 1 ? "" : "s");
        for (int j = 0, k = 0; j < p->jobs && len < (int)sizeof what - 32; j++)
            if (p->job[j].pid)
                len += snprintf(what + len, sizeof what - (size_t)len, "%s %llu",
                                k++ ? "," : "", (unsigned long long)p->job[j].seed);
        snprintf(what + len, sizeof what - (size_t)len, " running (%d jobs)", p->jobs);
    }
    fprintf(stderr, "%sjinx test: %s, %.1f s of %.0f s, nothing found yet%s", tty ? "\r" : "",
            what, (now - p->t0) / 1e9, p->budget_ns / 1e9, tty ? "   " : "\n");
}

/* run's command line with job j's pinning option before its "--" (jinx-vmm run takes
 * options anywhere before it; at the end if there is none): run itself when there is no
 * option to add, else a new array whose strings are run's (free both). NULL when run is
 * NULL or out of memory. */
static char **pin_argv(const struct jt_pool *p, int j, char **run)
{
    int cpu = p->no_pin || p->jobs < 2 ? -1 : pin_nth_allowed_cpu(j);
    if (!run || (!p->no_pin && cpu < 0))
        return run; /* one job, or the mask unreadable: jinx-vmm chooses its own CPU */
    size_t n = 0, at = 0;
    while (run[n]) {
        if (!at && n > 0 && !strcmp(run[n], "--"))
            at = n;
        n++;
    }
    if (!at)
        at = n;
    char **argv = malloc((n + 3) * sizeof *argv + 16);
    if (!argv)
        return NULL;
    char *num = (char *)(argv + n + 3);
    snprintf(num, 16, "%d", cpu);
    size_t k = 0;
    for (size_t i = 0; i < at; i++)
        argv[k++] = run[i];
    argv[k++] = p->no_pin ? "--no-pin" : "--pin-cpu";
    if (!p->no_pin)
        argv[k++] = num;
    for (size_t i = at; i <= n; i++) /* with the NULL */
        argv[k++] = run[i];
    return argv;
}

/* Starts seed in job j. The child gets the caller's signal mask and writes its stderr
 * into the job's log. Returns the pid, or -1. */
static pid_t start_job(struct jt_pool *p, const struct jt_hooks *h, int j, uint64_t seed,
                       uint64_t timeout_ms)
{
    struct jt_job *jb = &p->job[j];
    unlink(jb->f.report); /* a report that is there afterwards is this run's */
    char **run = h->argv(h->ctx, seed, timeout_ms, &jb->f);
    char **argv = pin_argv(p, j, run);
    if (!argv) {
        free(run);
        return -1;
    }
    const char *log = jb->f.log;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* Should jinx test itself be killed outright (SIGKILL), its runs end too: no
         * orphan jinx-vmm explores on to its timeout. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
            _exit(127);
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(out, 2) < 0)
            _exit(127);
        sigprocmask(SIG_SETMASK, &p->oldmask, NULL);
        execv(argv[0], argv);
        dprintf(2, "jinx test: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (argv != run)
        free(argv);
    free(run);
    return pid;
}

/* The files a finished run is judged by: with private directories its log and report
 * are first renamed to DIR/jinx-test-last.* (the last judged run's, as with one job). */
static void publish(const struct jt_pool *p, const struct jt_job *jb, struct jt_files *out)
{
    *out = jb->f;
    if (!p->private_dirs)
        return;
    char err[64];
    if (set_name(out->log, sizeof out->log, p->dir, "jinx-test-last.log", err, sizeof err) < 0 ||
        set_name(out->report, sizeof out->report, p->dir, "jinx-test-last.json", err,
                 sizeof err) < 0) {
        *out = jb->f; /* cannot happen: init checked the longer private names */
        return;
    }
    if (rename(jb->f.log, out->log) < 0)
        unlink(out->log);
    if (rename(jb->f.report, out->report) < 0)
        unlink(out->report); /* no report from this run: none is judged */
}

static int status_of(int st, int *killed)
{
    *killed = 0;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    *killed = WTERMSIG(st);
    return 128 + WTERMSIG(st);
}

/* Job j ended with status (or never started: -1): judged, and the job is free. */
static int finished(struct jt_pool *p, const struct jt_hooks *h, int j, int status, int killed)
{
    struct jt_job *jb = &p->job[j];
    struct jt_files f;
    publish(p, jb, &f);
    jb->pid = 0;
    return h->judge(h->ctx, j, jb->seed, status, killed, &f);
}

/* Stops every running job: SIGTERM, SIGKILL after the grace time; all reaped. */
static void stop_all(struct jt_pool *p, const struct jt_hooks *h)
{
    int running = 0;
    for (int j = 0; j < p->jobs; j++)
        if (p->job[j].pid) {
            kill(p->job[j].pid, SIGTERM);
            running++;
        }
    uint64_t until = mono_ns() + JT_STOP_GRACE_NS;
    sigset_t s;
    wait_set(&s, true);
    while (running) {
        for (int j = 0; j < p->jobs; j++) {
            int st;
            struct jt_job *jb = &p->job[j];
            if (!jb->pid || waitpid(jb->pid, &st, WNOHANG) == 0)
                continue;
            jb->pid = 0; /* ended, or not our child any more (ECHILD) */
            running--;
            p->stopped++;
            if (h->stopped)
                h->stopped(h->ctx, j, jb->seed, &jb->f);
        }
        uint64_t now = mono_ns();
        if (!running)
            break;
        if (now >= until) {
            for (int j = 0; j < p->jobs; j++)
                if (p->job[j].pid)
                    kill(p->job[j].pid, SIGKILL);
            until = UINT64_MAX; /* reaped by the loop; SIGKILL cannot be refused */
            continue;
        }
        struct timespec ts = {0, 100000000}; /* wakes on SIGCHLD; polls in any case */
        int sig = sigtimedwait(&s, NULL, &ts);
        if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && !p->signo)
            p->signo = sig;
    }
}

int jt_pool_run(struct jt_pool *p, const struct jt_hooks *h, uint64_t *next, uint64_t last,
                uint64_t deadline, int *winner)
{
    sigset_t s;
    wait_set(&s, true);
    *winner = -1;
    for (;;) {
        bool started = false;
        int running = 0;
        for (int j = 0; j < p->jobs; j++) {
            struct jt_job *jb = &p->job[j];
            uint64_t now = mono_ns();
            if (!jb->pid && !p->signo && *next && *next <= last && now < deadline) {
                uint64_t left_ms = (deadline - now) / 1000000;
                jb->seed = (*next)++;
                started = true;
                jb->pid = start_job(p, h, j, jb->seed, left_ms < 1 ? 1 : left_ms);
                if (jb->pid < 0) {
                    jb->pid = 0;
                    int v = finished(p, h, j, -1, 0);
                    if (v != JT_AGAIN) {
                        stop_all(p, h);
                        *winner = j;
                        return v;
                    }
                }
            }
            running += jb->pid != 0;
        }
        status_line(p, started);
        if (p->signo) {
            stop_all(p, h);
            return JT_INTERRUPTED;
        }
        if (!running)
            return JT_AGAIN;
        for (int j = 0; j < p->jobs; j++) {
            int st, killed;
            struct jt_job *jb = &p->job[j];
            if (!jb->pid)
                continue;
            pid_t w = waitpid(jb->pid, &st, WNOHANG);
            if (w == 0 || (w < 0 && errno == EINTR))
                continue;
            int v = finished(p, h, j, w < 0 ? -1 : status_of(st, &killed), w < 0 ? 0 : killed);
            if (v != JT_AGAIN) {
                stop_all(p, h);
                *winner = j;
                return v;
            }
            started = true; /* a job is free: start the next seed before waiting */
        }
        if (started)
            continue;
        struct timespec ts = {1, 0};
        int sig = sigtimedwait(&s, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
            p->signo = sig;
    }
}

/* dir/<the last component of path> into out. */
static int beside(const char *dir, const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return (size_t)snprintf(out, cap, "%s/%s", dir, base) < cap ? 0 : -1;
}

void jt_pool_adopt_dump(struct jt_pool *p, int job, char *dump, size_t dumpcap, char *core,
                        size_t corecap)
{
    if (!p->private_dirs || job < 0 || job >= p->jobs || !dump[0])
        return;
    char nd[PATH_MAX], nc[PATH_MAX];
    bool has_core = core[0] != '\0';
    if (beside(p->dir, dump, nd, sizeof nd) < 0 || (has_core && beside(p->dir, core, nc, sizeof nc) < 0) ||
        (size_t)snprintf(NULL, 0, "%s", nd) >= dumpcap ||
        (has_core && (size_t)snprintf(NULL, 0, "%s", nc) >= corecap)) {
        p->job[job].keep = true;
        return;
    }
    /* link, never rename: an existing file of that name is not replaced */
    if (has_core && link(core, nc) < 0) {
        p->job[job].keep = true;
        return;
    }
    if (link(dump, nd) < 0) {
        if (has_core)
            unlink(nc);
        p->job[job].keep = true;
        return;
    }
    unlink(dump);
    snprintf(dump, dumpcap, "%s", nd);
    if (has_core) {
        unlink(core);
        snprintf(core, corecap, "%s", nc);
    }
}

void jt_pool_end(struct jt_pool *p)
{
    for (int j = 0; j < p->jobs && p->private_dirs; j++) {
        if (p->job[j].keep)
            jx_err("kept %s: it holds the dump, whose name was taken in %s", p->job[j].f.dir,
                   p->dir);
        else
            remove_dir(p->job[j].f.dir);
    }
    sigprocmask(SIG_SETMASK, &p->oldmask, NULL);
}
