/* `jinx campaign run-task DIR [--index N]`: one task of tasks.tsv, run by `jinx test`
 * (this same binary, /proc/self/exe), its result in DIR/results/N.json (written to a
 * temporary file and renamed: a reader never sees half of it, and a rerun replaces it
 * whole) and its dumps in DIR/dumps/N/ (emptied first: a rerun replaces only its own). */
#include "campaign/campaign.h"
#include "lib/options.h"
#include "lib/json.h"
#include "lib/util.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST_JSON_MAX (1 << 20)

/* Empties DIR/dumps/N of the files a previous run of this task left (nothing else). */
static int clear_task_dumps(const char *ddir)
{
    if (mkdir(ddir, 0755) < 0 && errno != EEXIST)
        return -1;
    DIR *d = opendir(ddir);
    if (!d)
        return -1;
    struct dirent *de;
    char p[PATH_MAX];
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            if ((size_t)snprintf(p, sizeof p, "%s/%s", ddir, de->d_name) < sizeof p)
                unlink(p);
        }
    closedir(d);
    return 0;
}

/* Runs `jinx test` for the task: its --json on out_json, its messages in log. Returns
 * its exit status, or -1 when it could not run or was killed. */
static int run_jinx_test(const struct camp_task *t, const char *ddir, const char *out_json,
                         const char *log)
{
    char seeds[48];
    snprintf(seeds, sizeof seeds, "%llu-%llu", (unsigned long long)t->first_seed,
             (unsigned long long)t->last_seed);
    char *argv[16 + CAMP_MAX_ARGS];
    int k = 0;
    argv[k++] = "jinx";
    argv[k++] = "test";
    argv[k++] = (char *)t->image;
    argv[k++] = "--budget";
    argv[k++] = (char *)t->budget;
    argv[k++] = "--seeds";
    argv[k++] = seeds;
    argv[k++] = "--strategy";
    argv[k++] = (char *)t->strategy;
    argv[k++] = "--dump-dir";
    argv[k++] = (char *)ddir;
    argv[k++] = "--json";
    /* One run at a time: a campaign already runs its tasks side by side, one CPU each
     * (jinx test's default of one run per CPU would oversubscribe every node). */
    argv[k++] = "--jobs";
    argv[k++] = "1";
    argv[k++] = "--";
    for (int i = 0; i < t->nargs; i++)
        argv[k++] = (char *)t->args[i];
    argv[k] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int out = open(out_json, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int err = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (out < 0 || err < 0 || null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0)
            _exit(127);
        execv("/proc/self/exe", argv);
        dprintf(2, "jinx campaign run-task: cannot run jinx test: %s\n", strerror(errno));
        _exit(127);
    }
    if (pid < 0)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool jfind(const char *buf, size_t n, const char *key, const char **raw, size_t *len)
{
    char err[100];
    return json_find(buf, n, key, raw, len, err, sizeof err) == 1;
}

static bool jstr(const char *buf, size_t n, const char *key, char *out, size_t cap)
{
    const char *raw;
    size_t len;
    if (!jfind(buf, n, key, &raw, &len) || json_decode_string(raw, len, out, cap) < 0)
        return false;
    for (char *c = out; *c; c++) /* printable ASCII in results: terminals and XML */
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?';
    return true;
}

static uint64_t ju64(const char *buf, size_t n, const char *key)
{
    const char *raw;
    size_t len;
    char num[24];
    uint64_t v = 0;
    if (jfind(buf, n, key, &raw, &len) && len < sizeof num) {
        memcpy(num, raw, len);
        num[len] = '\0';
        if (!parse_u64(num, &v))
            v = 0;
    }
    return v;
}

static bool jtrue(const char *buf, size_t n, const char *key)
{
    const char *raw;
    size_t len;
    return jfind(buf, n, key, &raw, &len) && len == 4 && !memcmp(raw, "true", 4);
}

/* The last non-empty line of a log (jinx test's error message) into out. */
static void last_line(const char *log, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    char line[600];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] && (size_t)snprintf(out, cap, "%s", line) >= cap)
            out[cap - 1] = '\0';
    }
    if (f)
        fclose(f);
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?';
}

/* Fills r from jinx test's exit status and --json output; the dump's file name in
 * dump_base ("" when none). */
static void read_test(int st, const char *out_json, const char *log, struct camp_result *r,
                      char *dump_base, size_t cap)
{
    static char buf[TEST_JSON_MAX];
    size_t n = 0;
    dump_base[0] = '\0';
    FILE *f = fopen(out_json, "r");
    if (f) {
        n = fread(buf, 1, sizeof buf, f);
        fclose(f);
    }
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        n--;
    const char *raw;
    size_t len;
    bool have = n && n < sizeof buf && jfind(buf, n, "found", &raw, &len);
    if (have) {
        r->runs = ju64(buf, n, "runs");
        r->seed = ju64(buf, n, "seed");
        char secs[32];
        if (jfind(buf, n, "seconds", &raw, &len) && len < sizeof secs) {
            memcpy(secs, raw, len);
            secs[len] = '\0';
            r->seconds = strtod(secs, NULL);
        }
    }
    if (st == 1 && have && jtrue(buf, n, "found")) {
        r->status = CAMP_FOUND;
        jstr(buf, n, "outcome", r->outcome, sizeof r->outcome);
        char rip_fn[CAMP_BT_LEN], bt[8][CAMP_BT_LEN];
        int nbt = 0;
        if (!jstr(buf, n, "function", rip_fn, sizeof rip_fn))
            rip_fn[0] = '\0';
        size_t bpos = 0, bl;
        const char *be;
        if (jfind(buf, n, "backtrace", &raw, &len) && raw[0] == '[')
            while (nbt < 8 && json_array_next(raw, len, &bpos, &be, &bl) == 1 &&
                   json_decode_string(be, bl, bt[nbt], CAMP_BT_LEN) == 0)
                nbt++;
        campaign_crash_function(rip_fn, (const char (*)[CAMP_BT_LEN])bt, nbt, r->function,
                                sizeof r->function);
        for (char *ch = r->function; *ch; ch++)
            if ((unsigned char)*ch < 0x20 || (unsigned char)*ch >= 0x7f)
                *ch = '?';
        r->cues = ju64(buf, n, "cues");
        r->replayable = jtrue(buf, n, "replayable");
        size_t pos = 0, el;
        const char *e;
        if (jfind(buf, n, "race", &raw, &len) && raw[0] == '[' &&
            json_array_next(raw, len, &pos, &e, &el) == 1 &&
            json_decode_string(e, el, r->race[0], RACE_SIDE_LEN) == 0 &&
            json_array_next(raw, len, &pos, &e, &el) == 1 &&
            json_decode_string(e, el, r->race[1], RACE_SIDE_LEN) == 0)
            r->has_race = true;
        char dump[PATH_MAX];
        if (jstr(buf, n, "dump", dump, sizeof dump)) {
            const char *base = strrchr(dump, '/');
            snprintf(dump_base, cap, "%s", base ? base + 1 : dump);
            snprintf(r->dump, sizeof r->dump, "dumps/%u/bug.jinxdump", r->task);
        }
        return;
    }
    if (st == 0 && have) {
        r->status = CAMP_NONE;
        return;
    }
    r->status = CAMP_NOTEST;
    if (!(have && jtrue(buf, n, "could_not_test") &&
          jstr(buf, n, "reason", r->reason, sizeof r->reason))) {
        char line[500];
        last_line(log, line, sizeof line);
        snprintf(r->reason, sizeof r->reason, "jinx test exit status %d: %s", st,
                 line[0] ? line : "no message");
    }
}

static int write_result(const char *dir, const struct camp_result *r)
{
    char rdir[PATH_MAX], name[32];
    snprintf(rdir, sizeof rdir, "%s/results", dir);
    snprintf(name, sizeof name, "%u.json", r->task);
    if (mkdir(rdir, 0755) < 0 && errno != EEXIST) {
        jx_err("campaign run-task: cannot create %s: %s", rdir, strerror(errno));
        return -1;
    }
    struct camp_atomic a;
    FILE *f = campaign_atomic_open(rdir, name, &a);
    if (!f)
        return -1;
    return campaign_atomic_close(f, &a, campaign_result_write(f, r) == 0);
}

static void task_usage(FILE *f)
{
    fprintf(f,
        "usage: jinx campaign run-task DIR [--index N] [--json]\n"
        "\n"
        "Runs task N of DIR/tasks.tsv (N defaults to $SLURM_ARRAY_TASK_ID) with jinx test,\n"
        "after checking that the image is still the one planned (its SHA-256). Writes\n"
        "DIR/results/N.json (atomically; a rerun replaces it) and the dumps in DIR/dumps/N/\n"
        "(emptied first; a bug's dump is DIR/dumps/N/bug.jinxdump). --json prints the\n"
        "result (results/N.json) on stdout instead of a line.\n"
        "\n"
        "exit status: 0 nothing found, 1 a bug was found, 2 usage or campaign error (no\n"
        "result written), 3 could not test (result written, with the reason).\n");
}

/* The task's index from --index or $SLURM_ARRAY_TASK_ID; -1 with a message. */
static long task_index(const char *opt)
{
    const char *src = opt ? opt : getenv("SLURM_ARRAY_TASK_ID");
    uint64_t v;
    if (!src) {
        jx_err("campaign run-task: which task? give --index N, or run it as a Slurm array "
               "task ($SLURM_ARRAY_TASK_ID is not set)");
        return -1;
    }
    if (!parse_u64(src, &v) || v >= CAMP_MAX_TASKS || strchr(src, 'x')) {
        jx_err("campaign run-task: %s '%s' is not a task index (0..%d)",
               opt ? "--index" : "$SLURM_ARRAY_TASK_ID", src, CAMP_MAX_TASKS - 1);
        return -1;
    }
    return (long)v;
}

/* The image is the one planned; else a could-not-test result saying so. */
static bool image_unchanged(const struct camp_task *t, struct camp_result *r)
{
    uint8_t d[SHA256_LEN];
    char hex[2 * SHA256_LEN + 1];
    if (sha256_file(t->image, d) < 0) {
        snprintf(r->reason, sizeof r->reason, "cannot read the image %.400s on this machine: "
                 "%s", t->image, strerror(errno));
        return false;
    }
    sha256_hex(d, hex);
    if (strcmp(hex, t->sha256)) {
        snprintf(r->reason, sizeof r->reason, "the image %.300s changed since the campaign "
                 "was planned (sha256 %.12s..., tasks.tsv has %.12s...): plan a new campaign "
                 "for the new build", t->image, hex, t->sha256);
        return false;
    }
    return true;
}

int campaign_run_task_cmd(int argc, char **argv)
{
    static const struct option lo[] = {{"index", required_argument, 0, 'i'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    const char *index_opt = NULL;
    bool json = false;
    cli_init(&cl, "campaign run-task", argc, argv, posv);
    int c;
    while ((c = cli_next(&cl, "h", lo, NULL)) != CLI_END) {
        if (c == 'h') {
            task_usage(stdout);
            return 0;
        }
        if (c == 'i' || c == 'j') {
            if (c == 'i')
                index_opt = optarg;
            json |= c == 'j';
            continue;
        }
        jx_err("%s (see jinx campaign run-task --help)", c == CLI_ERROR ? cl.err : "bad option");
        return CAMP_EXIT_USAGE;
    }
    if (cl.npos != 1) {
        jx_err("campaign run-task: expected one campaign directory, got %d arguments", cl.npos);
        return CAMP_EXIT_USAGE;
    }
    const char *dir = cl.pos[0];
    long idx = task_index(index_opt);
    if (idx < 0)
        return CAMP_EXIT_USAGE;
    struct camp_tasks ts;
    char err[600];
    if (campaign_tasks_load(dir, &ts, err, sizeof err) < 0) {
        jx_err("%s", err);
        return CAMP_EXIT_USAGE;
    }
    if ((size_t)idx >= ts.n) {
        jx_err("campaign run-task: task %ld: %s/tasks.tsv has %zu tasks (0..%zu)", idx, dir,
               ts.n, ts.n - 1);
        campaign_tasks_free(&ts);
        return CAMP_EXIT_USAGE;
    }
    static struct camp_task t;
    t = ts.t[idx];
    campaign_tasks_free(&ts);
    static struct camp_result r;
    memset(&r, 0, sizeof r);
    r.task = t.index;
    snprintf(r.image, sizeof r.image, "%s", t.image);
    snprintf(r.sha256, sizeof r.sha256, "%s", t.sha256);
    r.first_seed = t.first_seed;
    r.last_seed = t.last_seed;
    char ddir[PATH_MAX], out_json[PATH_MAX], log[PATH_MAX], base[PATH_MAX];
    if (strlen(dir) > PATH_MAX - 64) {
        jx_err("campaign run-task: %.80s...: path too long", dir);
        return CAMP_EXIT_USAGE;
    }
    snprintf(ddir, sizeof ddir, "%s/dumps", dir);
    mkdir(ddir, 0755);
    if ((size_t)snprintf(ddir, sizeof ddir, "%s/dumps/%u", dir, t.index) >= sizeof ddir ||
        (size_t)snprintf(out_json, sizeof out_json, "%s/jinx-test.json", ddir) >= sizeof out_json ||
        (size_t)snprintf(log, sizeof log, "%s/jinx-test.log", ddir) >= sizeof log ||
        clear_task_dumps(ddir) < 0) {
        jx_err("campaign run-task: cannot create or empty %s: %s", ddir, strerror(errno));
        return CAMP_EXIT_USAGE;
    }
    uint64_t t0 = mono_ns();
    if (!image_unchanged(&t, &r)) {
        r.status = CAMP_NOTEST;
        jx_err("campaign run-task: task %u: %s", t.index, r.reason);
    } else {
        int st = run_jinx_test(&t, ddir, out_json, log);
        if (st < 0 || st == 127) {
            jx_err("campaign run-task: task %u: jinx test was killed or could not run (%s); "
                   "no result written: rerun the task", t.index, log);
            return CAMP_EXIT_USAGE;
        }
        read_test(st, out_json, log, &r, base, sizeof base);
        if (!r.seconds)
            r.seconds = (mono_ns() - t0) / 1e9;
        char link[PATH_MAX];
        if (base[0] && ((size_t)snprintf(link, sizeof link, "%s/bug.jinxdump", ddir) >=
                        sizeof link || symlink(base, link) < 0)) {
            jx_err("campaign run-task: cannot link %s to %s: %s", link, base, strerror(errno));
            r.dump[0] = '\0';
        }
    }
    if (write_result(dir, &r) < 0)
        return CAMP_EXIT_USAGE;
    char sig[1024];
    campaign_signature(&r, sig, sizeof sig);
    if (json)
        campaign_result_write(stdout, &r);
    else
        printf("jinx campaign: task %u (%s, seeds %llu-%llu): %s%s%s%s\n", t.index, t.image,
               (unsigned long long)t.first_seed, (unsigned long long)t.last_seed,
               r.status == CAMP_FOUND ? "BUG FOUND: " : r.status == CAMP_NOTEST
               ? "could not test: " : "nothing found",
               r.status == CAMP_FOUND ? sig : r.status == CAMP_NOTEST ? r.reason : "",
               r.status == CAMP_FOUND && r.dump[0] ? "; dump " : "",
               r.status == CAMP_FOUND ? r.dump : "");
    return r.status == CAMP_FOUND ? CAMP_EXIT_FOUND : r.status == CAMP_NOTEST
           ? CAMP_EXIT_NOTEST : CAMP_EXIT_NONE;
}
