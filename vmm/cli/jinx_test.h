/* `jinx test`: the result of a test (what the runs found) and its reports, shared by the
 * command (cli/jinx_test_cmd.c: the runs and their judgement) and the report writers
 * (cli/jinx_test_report.c). */
#ifndef JINX_CLI_JINX_TEST_H
#define JINX_CLI_JINX_TEST_H
#include "dump/race_pair.h"
#include "dump/timer_names.h"
#include "linux/limitlog.h"
#include "linux/sanreport.h"
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_NONE 0
#define EXIT_FOUND 1
#define EXIT_USAGE 2
#define MAX_BT 8
#define JT_MAX_TIMERS 8 /* timers ended early named in the report */

/* A bug a whole run met in exploration that the live program then did not meet: its
 * live replay was stopped before the end (a long run's wall bound, the timeout), or a
 * timed run's time-slice decisions were not found again (explore_timed.h). The program
 * really failed so in that run (a run that met a jinx limit is not one of these), but
 * no dump holds it. The first one is kept while the runs go on looking for a bug with a
 * dump; when none comes, it is the verdict (jt_adopt_unreplayed). */
struct jt_unreplayed {
    bool met;
    uint64_t seed;              /* the run's seed */
    uint64_t schedule;          /* its whole-run schedule that met the bug */
    char outcome[16];           /* explorer/score.h's class: "assert", "crash", "deadlock" */
    char strategy[32];
    char replay[12];            /* "stopped" or "differs" (explore.h's stats) */
    int status;                 /* how that run's live program ended (its exit status) */
    double seconds;             /* from jinx test's start until that run ended */
    bool adopted;               /* it is the verdict (jt_adopt_unreplayed) */
};

/* A limit of jinx that a run met, as its --report JSON lists it (limitlog.h). */
struct jt_limit {
    char kind[24];
    char what[LIMIT_WHAT_LEN];
    char option[LIMIT_OPTION_LEN];
    uint64_t count;
};

struct result {
    bool found;
    int runs;
    uint64_t seed;
    double seconds;
    double seconds_to_bug;      /* from the start until the bug was first met (before any
                                   search for a replayable dump); 0: none */
    int status;                 /* the failing run's exit status */
    char outcome[64];           /* "SIGABRT", "deadlock", "exit 3" */
    uint32_t thread;
    uint64_t rip;
    char function[160];
    char bt[MAX_BT][160];
    int nbt;
    uint64_t round;             /* 0: unknown (no round records) or a whole run */
    /* Whole-run exploration (jinx-vmm run --explore), summed over the runs. */
    uint64_t schedules;         /* whole runs simulated */
    uint64_t schedules_to_bug;  /* ... up to and including the one that found the bug */
    uint64_t sparse;            /* ... of them sparse (decisions only: explore_sparse.h) */
    uint64_t timed;             /* timed runs beside them (explore_timed.h) */
    uint64_t stress;            /* stress runs beside them (explore_stress.h: the program
                                   free from the snapshot, as native stress runs it) */
    double stress_seconds;      /* ... their wall time, summed */
    uint64_t cues;              /* cue points of all those runs (a schedule's decisions) */
    double sparse_fired;        /* change points that fired in the sparse ones */
    double explore_seconds;     /* wall time spent on them, summed over the runs */
    double explore_wall;        /* ... of the job that spent the most: with runs side by
                                   side (--jobs), the wall time of exploration */
    int jobs;                   /* runs at once (--jobs) */
    int stopped;                /* runs stopped because another one decided */
    bool whole_run;             /* the bug was found by a whole run */
    bool reproduced;            /* ... and its live replay ended in the same bug */
    bool gave_up;               /* some run was too long for whole runs (rounds took over) */
    char strategy[32];          /* the strategy of the run that found it */
    bool replayable;            /* the dump has round records (jinx-vmm replay) */
    /* A bug first met in free execution (no snapshot: its dump cannot replay) is looked
     * for again from snapshots before it is reported (jinx_test_cmd.c). */
    bool searched, search_found;
    bool leaks_off;             /* an ASan/LSan build: LeakSanitizer turned off (linux/sanenv.h) */
    int search_runs;            /* runs the search took */
    uint64_t first_seed;        /* the seed whose run met it in free execution */
    char first_dump[PATH_MAX];  /* that run's dump (no replay) */
    uint64_t bug_cues;          /* the retired trace's cue points (0: no round records) */
    int has_race;               /* 1: race[] is the retired schedule's racing pair */
    /* Timers the bug's schedule ended early (explorer/timers.h): the schedule's endings
     * (sched_timers: no segments or pages, just them) and their names. */
    struct ex_schedule sched_timers;
    size_t ntimers;
    struct timer_name timers[JT_MAX_TIMERS];
    uint64_t timers_early;      /* timers ended early in every run's schedules, summed */
    char race[2][RACE_SIDE_LEN];
    char dump[PATH_MAX], core[PATH_MAX];
    char detail[512];
    char stderr_tail[2048];     /* the failing run's last stderr lines (the guest's) */
    bool has_report;            /* the failing run's stderr held a sanitizer's report */
    struct san_report report;   /* ... which (linux/sanreport.h) */
    bool could_not_test;        /* the failing run met jinx's own limits: no verdict */
    bool limited_unreplayed;    /* in this run a whole run met a jinx limit and failed (or
                                   was stopped by the timeout), and the live program did
                                   not get as far: the timeout came first */
    char reason[LIMIT_WHAT_LEN + LIMIT_OPTION_LEN + 8]; /* "<what>, <option>" */
    struct jt_limit lim[LIMITS_MAX];   /* the failing run's limits */
    int nlim;
    struct jt_limit notes[LIMITS_MAX]; /* limits met by runs that ended well */
    int nnotes;
    struct jt_unreplayed unreplayed;   /* a bug met in exploration that no dump holds */
    int jinx_mismatches;               /* runs whose bug's replay differed: a bug in jinx,
                                          not the program's (named, never a verdict) */
};

/* When no run found a bug (nor could not test) and one met a bug in exploration that
 * no dump holds (r->unreplayed), that bug becomes the verdict: r->found, with the
 * outcome class and no dump. True if it did. */
bool jt_adopt_unreplayed(struct result *r);

/* Whole-run schedules per second of exploration: all runs' schedules over the wall time
 * the jobs explored side by side (one job: over its runs' time). */
double jt_schedules_per_second(const struct result *r);
/* The program's last stderr lines, indented, under the report. */
void jt_print_tail(const char *tail, FILE *f);
/* The limits as a JSON array. */
void jt_json_limits(FILE *f, const struct jt_limit *l, int n);
/* The verdict in words: found (with where and how), nothing found, or could not test. */
void jt_report_text(const char *image, const struct result *r, FILE *f);
/* The same as one JSON object and a newline. */
void jt_report_json(const char *image, const struct result *r, FILE *f);
/* One JUnit test case for the image. 0, or -1 with errno. */
int jt_write_junit(const char *path, const char *image, const struct result *r);

/* The runs (cli/jinx_test_cmd.c builds and judges one; cli/jinx_test_run.c runs them as
 * jobs). */
struct run_opts;
struct jt_files;
struct jt_pool;
/* seed's jinx-vmm command line, writing into f (jt_hooks.argv); replayable_only: with
 * --replayable-only (the search for a free-execution bug's replayable dump: a stress run
 * that met it again would end the run with a dump that does not replay either). */
char **jt_run_argv(const struct run_opts *ro, uint64_t seed, uint64_t timeout_ms,
                   const struct jt_files *f, bool replayable_only);
/* Judges a run that wrote into f into r (runs, verdict, sums): 0 nothing found (the next
 * seed), 1 a verdict, 2 jinx-vmm could not run the image (JT_AGAIN, JT_DONE, JT_FAILED). */
int jt_judge(struct result *r, const struct run_opts *ro, const struct jt_files *f,
             uint64_t seed, int status, int killed);
/* What a run left (cli/jinx_test_read.c). Adds a run's exploration summary from its log
 * (schedules, seconds) to r. */
void jt_read_explore_log(const char *log, struct result *r);
/* The limits, the last stderr lines and the sanitizer report of a run's --report JSON.
 * 0, or -1 when there is no valid report. */
struct san_report;
int jt_read_report(const char *path, struct jt_limit *lim, int *nlim, char *tail,
                   size_t tailcap, char *error, size_t errorcap, struct san_report *rep,
                   bool *has_rep);
/* Appends src's k notes to dst (n of them), without repeats. */
void jt_add_notes(struct jt_limit *dst, int *n, const struct jt_limit *src, int k);
/* A run's log: its exploration summary, and unless explore_only (a run that found
 * nothing) the dump's path, the backtrace and the outcome line. The log holds the
 * program's own output too: untrusted (tests/fuzz/fuzz_jtlog.c). */
void jt_read_log(const char *log, struct result *r, bool explore_only);
void jt_read_log_stream(FILE *f, struct result *r, bool explore_only);
/* What r's dump says (the round, whether it replays). */
void jt_read_dump(const char *image, struct result *r);
/* Seeds first_seed..last_seed as jobs of p until a verdict or the end of the budget (then
 * the search for a replayable dump of a bug met in free execution). r has the verdict;
 * returns the pool's (JT_FAILED, JT_INTERRUPTED: no verdict). */
int jt_run_jobs(struct result *r, const struct run_opts *ro, uint64_t first_seed,
                uint64_t last_seed, uint64_t budget, struct jt_pool *p, uint64_t t0);

#endif
