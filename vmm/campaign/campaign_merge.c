/* `jinx campaign merge DIR`: every task's result, bugs de-duplicated by signature. */
#include "campaign/campaign.h"
#include "lib/options.h"
#include "lib/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool campaign_better_reproducer(const struct camp_result *a, const struct camp_result *b)
{
    if (a->replayable != b->replayable)
        return a->replayable;
    if (a->cues != b->cues)
        return a->cues < b->cues;
    return a->task < b->task;
}

static int by_signature(const void *x, const void *y)
{
    return strcmp(((const struct camp_bug *)x)->signature,
                  ((const struct camp_bug *)y)->signature);
}

static int by_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* The part of a signature before its race: "circle: SIGABRT in reader". */
static size_t sig_head(const char *sig)
{
    const char *r = strstr(sig, ", race ");
    const char *n = strstr(sig, ", no race");
    return r ? (size_t)(r - sig) : n ? (size_t)(n - sig) : strlen(sig);
}

/* A bug found without a racing pair (a crash met after the rounds, or none of the
 * program's races in the retired window) joins the one bug of the same image, outcome
 * and crash function that has a pair, if there is exactly one: its pair was only not
 * seen. With none or several such bugs it stays on its own (no guessing). */
static int fold_unknown_races(struct camp_merge *m)
{
    for (size_t j = 0; j < m->nbugs; j++) {
        struct camp_bug *b = &m->bugs[j];
        if (b->named->has_race)
            continue;
        size_t h = sig_head(b->signature), target = m->nbugs, n = 0;
        for (size_t k = 0; k < m->nbugs; k++)
            if (k != j && m->bugs[k].named->has_race && sig_head(m->bugs[k].signature) == h &&
                !strncmp(m->bugs[k].signature, b->signature, h)) {
                target = k;
                n++;
            }
        if (n != 1)
            continue;
        struct camp_bug *t = &m->bugs[target];
        uint32_t *nt = realloc(t->tasks, (t->ntasks + b->ntasks) * sizeof *nt);
        if (!nt)
            return -1;
        t->tasks = nt;
        memcpy(t->tasks + t->ntasks, b->tasks, b->ntasks * sizeof *nt);
        t->ntasks += b->ntasks;
        t->hits += b->hits;
        if (campaign_better_reproducer(b->best, t->best))
            t->best = b->best;
        free(b->tasks);
        m->bugs[j] = m->bugs[--m->nbugs];
        j--; /* the moved-in entry is looked at next */
    }
    return 0;
}

int campaign_merge_bugs(const struct camp_result *const *res, size_t n, struct camp_merge *m)
{
    m->bugs = NULL;
    m->nbugs = 0;
    size_t cap = 0;
    char sig[sizeof m->bugs->signature];
    for (size_t i = 0; i < n; i++) {
        const struct camp_result *r = res[i];
        if (r->status != CAMP_FOUND)
            continue;
        campaign_signature(r, sig, sizeof sig);
        struct camp_bug *b = NULL;
        for (size_t j = 0; j < m->nbugs && !b; j++)
            if (!strcmp(m->bugs[j].signature, sig))
                b = &m->bugs[j];
        if (!b) {
            if (m->nbugs == cap) {
                size_t nc = cap ? cap * 2 : 8;
                struct camp_bug *nb = realloc(m->bugs, nc * sizeof *nb);
                if (!nb)
                    goto nomem;
                m->bugs = nb;
                cap = nc;
            }
            b = &m->bugs[m->nbugs++];
            memset(b, 0, sizeof *b);
            snprintf(b->signature, sizeof b->signature, "%s", sig);
            b->named = r;
        }
        uint32_t *nt = realloc(b->tasks, (b->ntasks + 1) * sizeof *nt);
        if (!nt)
            goto nomem;
        b->tasks = nt;
        b->tasks[b->ntasks++] = r->task;
        b->hits++;
        if (!b->best || campaign_better_reproducer(r, b->best))
            b->best = r;
    }
    if (fold_unknown_races(m) < 0)
        goto nomem;
    for (size_t j = 0; j < m->nbugs; j++)
        qsort(m->bugs[j].tasks, m->bugs[j].ntasks, sizeof *m->bugs[j].tasks, by_u32);
    if (m->nbugs)
        qsort(m->bugs, m->nbugs, sizeof *m->bugs, by_signature);
    return 0;
nomem:
    campaign_merge_free(m);
    return -1;
}

void campaign_merge_free(struct camp_merge *m)
{
    for (size_t j = 0; j < m->nbugs; j++)
        free(m->bugs[j].tasks);
    free(m->bugs);
    m->bugs = NULL;
    m->nbugs = 0;
}

/* results/N.json of task t into e: missing, bad (why) or ok. */
static void read_result(const char *dir, const struct camp_task *t, struct camp_entry *e)
{
    char path[PATH_MAX];
    static char buf[CAMP_MAX_RESULT + 1];
    e->state = CAMP_E_BAD;
    snprintf(path, sizeof path, "%s/results/%u.json", dir, t->index);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            e->state = CAMP_E_MISSING;
        else
            snprintf(e->why, sizeof e->why, "cannot read it: %s", strerror(errno));
        return;
    }
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, buf, sizeof buf);
    close(fd);
    if (n < 0) {
        snprintf(e->why, sizeof e->why, "not a readable regular file");
        return;
    }
    if ((size_t)n > CAMP_MAX_RESULT) {
        snprintf(e->why, sizeof e->why, "larger than %d bytes", CAMP_MAX_RESULT);
        return;
    }
    char why[300];
    if (campaign_result_parse(buf, (size_t)n, &e->r, why, sizeof why) < 0) {
        snprintf(e->why, sizeof e->why, "%s", why);
        return;
    }
    if (e->r.task != t->index || strcmp(e->r.image, t->image) ||
        strcmp(e->r.sha256, t->sha256) || e->r.first_seed != t->first_seed ||
        e->r.last_seed != t->last_seed) {
        snprintf(e->why, sizeof e->why, "it is the result of another task (task %u, %.200s, "
                 "seeds %llu-%llu): tasks.tsv changed since; rerun this task", e->r.task,
                 e->r.image, (unsigned long long)e->r.first_seed,
                 (unsigned long long)e->r.last_seed);
        return;
    }
    e->state = CAMP_E_OK;
}

static int write_atomic(const char *dir, const char *name, const struct camp_tasks *ts,
                        const struct camp_entry *e, const struct camp_merge *m,
                        void (*fn)(FILE *, const struct camp_tasks *, const struct camp_entry *,
                                   const struct camp_merge *))
{
    struct camp_atomic a;
    FILE *f = campaign_atomic_open(dir, name, &a);
    if (!f)
        return -1;
    fn(f, ts, e, m);
    return campaign_atomic_close(f, &a, true);
}

static void merge_usage(FILE *f)
{
    fprintf(f,
        "usage: jinx campaign merge DIR [--quiet | --json]\n"
        "\n"
        "Reads DIR/tasks.tsv and every DIR/results/N.json, de-duplicates the bugs found by\n"
        "signature (image, outcome, crash function, the racing access pair of the retired\n"
        "schedule), keeps the smallest reproducer of each (replayable, fewest cue points)\n"
        "and lists the tasks that could not test, have no result yet or a bad one.\n"
        "Writes DIR/report.json and DIR/junit.xml and prints a table (--quiet: nothing,\n"
        "--json: report.json instead).\n"
        "\n"
        "exit status: 0 every task has a result and nothing was found, 1 bugs were found,\n"
        "2 usage error or unreadable tasks.tsv, 3 some task could not test, has no result\n"
        "or a bad one (and no bug was found).\n");
}

int campaign_merge_cmd(int argc, char **argv)
{
    static const struct option lo[] = {{"quiet", no_argument, 0, 'q'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    bool quiet = false, json = false;
    cli_init(&cl, "campaign merge", argc, argv, posv);
    int c;
    while ((c = cli_next(&cl, "hq", lo, NULL)) != CLI_END) {
        if (c == 'h') {
            merge_usage(stdout);
            return 0;
        }
        if (c == 'q' || c == 'j') {
            *(c == 'q' ? &quiet : &json) = true;
            continue;
        }
        jx_err("%s (see jinx campaign merge --help)", c == CLI_ERROR ? cl.err : "bad option");
        return CAMP_EXIT_USAGE;
    }
    if (cl.npos != 1) {
        jx_err("campaign merge: expected one campaign directory, got %d arguments", cl.npos);
        merge_usage(stderr);
        return CAMP_EXIT_USAGE;
    }
    const char *dir = cl.pos[0];
    struct camp_tasks ts;
    char err[600];
    if (campaign_tasks_load(dir, &ts, err, sizeof err) < 0) {
        jx_err("%s", err);
        return CAMP_EXIT_USAGE;
    }
    struct camp_entry *e = calloc(ts.n, sizeof *e);
    const struct camp_result **ok = calloc(ts.n, sizeof *ok);
    if (!e || !ok) {
        jx_err("out of memory for %zu tasks", ts.n);
        free(e);
        free(ok);
        campaign_tasks_free(&ts);
        return CAMP_EXIT_USAGE;
    }
    size_t nok = 0, incomplete = 0;
    for (size_t i = 0; i < ts.n; i++) {
        read_result(dir, &ts.t[i], &e[i]);
        if (e[i].state == CAMP_E_OK)
            ok[nok++] = &e[i].r;
        if (e[i].state != CAMP_E_OK || e[i].r.status == CAMP_NOTEST)
            incomplete++;
    }
    struct camp_merge m;
    int rc = CAMP_EXIT_USAGE;
    if (campaign_merge_bugs(ok, nok, &m) < 0) {
        jx_err("out of memory merging %zu results", nok);
        goto out;
    }
    if (json)
        campaign_report_json(stdout, &ts, e, &m);
    else if (!quiet)
        campaign_report_table(stdout, &ts, e, &m);
    if (write_atomic(dir, "report.json", &ts, e, &m, campaign_report_json) == 0 &&
        write_atomic(dir, "junit.xml", &ts, e, &m, campaign_report_junit) == 0)
        rc = m.nbugs ? CAMP_EXIT_FOUND : incomplete ? CAMP_EXIT_NOTEST : CAMP_EXIT_NONE;
    campaign_merge_free(&m);
out:
    free(ok);
    free(e);
    campaign_tasks_free(&ts);
    return rc;
}
