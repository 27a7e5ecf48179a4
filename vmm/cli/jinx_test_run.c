/* `jinx test`'s runs as jobs (cli/jinx_test_jobs.h): the hooks that build, judge and
 * count each run, the search for a replayable dump of a bug met in free execution, and
 * the sums over the runs (cli/jinx_test.h). */
#include "cli/jinx_test.h"
#include "cli/jinx_test_jobs.h"
#include "lib/util.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* How long a bug met in free execution is looked for again from snapshots: at least
 * this, more if the budget has more left. */
#define SEARCH_MIN_NS 10000000000ULL

/* What the jobs' hooks work on (cli/jinx_test_jobs.h). */
struct jt_ctx {
    const struct run_opts *ro;
    struct result *r;               /* the verdict and the sums over every run */
    double job_explore[JT_MAX_JOBS]; /* whole-run seconds per job: the longest is the wall
                                        time the jobs explored, side by side */
    bool search;                    /* search_replayable: runs go into s, and count only
                                       when they meet r's bug with a dump that replays */
    struct result s;
    uint64_t t0;                    /* jinx test's start (seconds_to_bug) */
};

static char **hook_argv(void *c, uint64_t seed, uint64_t timeout_ms, const struct jt_files *f)
{
    struct jt_ctx *x = c;
    return jt_run_argv(x->ro, seed, timeout_ms, f, x->search);
}

/* The run's schedules and whole-run seconds added to the sums (job's share too). */
static void add_explore(struct jt_ctx *x, int job, const struct result *run)
{
    x->r->schedules += run->schedules;
    x->r->explore_seconds += run->explore_seconds;
    x->job_explore[job] += run->explore_seconds;
}

static int hook_judge(void *c, int job, uint64_t seed, int st, int killed, const struct jt_files *f)
{
    struct jt_ctx *x = c;
    struct result *r = x->r;
    if (x->search) {
        memset(&x->s, 0, sizeof x->s);
        int v = jt_judge(&x->s, x->ro, f, seed, st, killed);
        r->search_runs++;
        add_explore(x, job, &x->s);
        return v == JT_DONE && x->s.found && x->s.replayable &&
               !strcmp(x->s.outcome, r->outcome) && !strcmp(x->s.function, r->function) &&
               x->s.has_report == r->has_report &&
               (!r->has_report || !strcmp(x->s.report.kind, r->report.kind))
            ? JT_DONE : JT_AGAIN;
    }
    double before = r->explore_seconds;
    uint64_t seed_before = r->seed;
    bool met_before = r->unreplayed.met;
    int v = jt_judge(r, x->ro, f, seed, st, killed);
    if (!met_before && r->unreplayed.met)
        r->unreplayed.seconds = (mono_ns() - x->t0) / 1e9;
    x->job_explore[job] += r->explore_seconds - before;
    if (v == JT_AGAIN && seed_before > seed)
        r->seed = seed_before; /* runs end out of order: "seeds A..B" names the highest */
    if (v == JT_DONE && r->found && !r->seconds_to_bug)
        r->seconds_to_bug = (mono_ns() - x->t0) / 1e9;
    return v;
}

/* A run stopped because another decided: what it explored counts. */
static void hook_stopped(void *c, int job, uint64_t seed, const struct jt_files *f)
{
    static struct result t;
    (void)seed;
    memset(&t, 0, sizeof t);
    jt_read_explore_log(f->log, &t);
    add_explore(c, job, &t);
}

/* r is a bug met in free execution (its dump has no snapshot to replay from): run the
 * next seeds with --replayable-only (as many at once as the pool has jobs; the last
 * seed again when it was the last) until one meets the same bug
 * (outcome and function) with a dump that replays, or until the time is up. On success
 * r takes that run's dump and details. Returns the pool's verdict. */
static int search_replayable(struct result *r, struct jt_ctx *x, struct jt_pool *p,
                             uint64_t deadline, uint64_t last_seed)
{
    r->searched = true;
    r->first_seed = r->seed;
    snprintf(r->first_dump, sizeof r->first_dump, "%s", r->dump);
    if (isatty(2))
        fprintf(stderr, "\rjinx test: run %llu met %s in free execution (no replay): searching "
                "from snapshots for it\n", (unsigned long long)r->seed, r->outcome);
    struct jt_hooks h = {.ctx = x, .argv = hook_argv, .judge = hook_judge, .stopped = hook_stopped};
    /* Its runs have no stress runs (jt_run_argv's replayable_only), so a seed's run is
     * not the one that met the bug even when it is the same seed: with --seeds N-N, the
     * search runs N again. */
    uint64_t next = r->seed < last_seed ? r->seed + 1 : r->seed;
    int win;
    bool progress = p->progress;
    p->progress = false;
    x->search = true;
    int v = jt_pool_run(p, &h, &next, last_seed, deadline, &win);
    x->search = false;
    p->progress = progress;
    if (v != JT_DONE)
        return v;
    static struct result s;
    s = x->s;
    s.runs = r->runs + r->search_runs;
    s.searched = s.search_found = true;
    s.search_runs = r->search_runs;
    s.first_seed = r->first_seed;
    memcpy(s.first_dump, r->first_dump, sizeof s.first_dump);
    s.schedules = r->schedules; /* the sums over every run */
    s.explore_seconds = r->explore_seconds;
    s.seconds_to_bug = r->seconds_to_bug; /* first met in free execution */
    *r = s;
    jt_pool_adopt_dump(p, win, r->dump, sizeof r->dump, r->core, sizeof r->core);
    return v;
}

int jt_run_jobs(struct result *r, const struct run_opts *ro, uint64_t first_seed,
                uint64_t last_seed, uint64_t budget, struct jt_pool *p, uint64_t t0)
{
    static struct jt_ctx x;
    memset(&x, 0, sizeof x);
    x.ro = ro;
    x.r = r;
    x.t0 = t0;
    struct jt_hooks h = {.ctx = &x, .argv = hook_argv, .judge = hook_judge, .stopped = hook_stopped};
    p->progress = true;
    p->t0 = t0;
    p->budget_ns = budget;
    uint64_t next = first_seed;
    int win;
    int v = jt_pool_run(p, &h, &next, last_seed, t0 + budget, &win);
    /* No run left a bug, but one met a bug in exploration that its live program did not
     * meet again: that is the program's bug, reported without a dump. */
    if (v == JT_AGAIN)
        jt_adopt_unreplayed(r);
    if (v == JT_DONE)
        jt_pool_adopt_dump(p, win, r->dump, sizeof r->dump, r->core, sizeof r->core);
    if (v == JT_DONE && r->found && !r->replayable && r->dump[0]) {
        uint64_t deadline = t0 + budget, now = mono_ns();
        if (deadline < now + SEARCH_MIN_NS)
            deadline = now + SEARCH_MIN_NS;
        if (search_replayable(r, &x, p, deadline, last_seed) == JT_INTERRUPTED)
            v = JT_INTERRUPTED;
    }
    r->jobs = p->jobs;
    r->stopped = p->stopped;
    for (int j = 0; j < p->jobs; j++)
        if (x.job_explore[j] > r->explore_wall)
            r->explore_wall = x.job_explore[j];
    return v;
}
