/* `jinx campaign`: many images x many seeds as independent tasks that a distributed
 * engine runs (Slurm job arrays, GNU parallel), then merged. docs/campaigns.md is the
 * user's guide; this header is the contract of the pieces.
 *
 *   plan      campaign_plan.c   images + seeds + budget -> DIR/tasks.tsv
 *   run-task  campaign_task.c   one line of tasks.tsv -> `jinx test` -> DIR/results/N.json
 *   merge     campaign_merge.c  every result -> de-duplicated bugs: table, report.json,
 *                               junit.xml (campaign_report.c writes them)
 *
 * tasks.tsv (campaign_tasks.c): '#' lines are comments; every other line is one task,
 * tab-separated:  INDEX  IMAGE  SHA256  SEEDS  BUDGET  STRATEGY  ARGS
 * INDEX counts 0, 1, 2, ... in file order; SEEDS is "FIRST-LAST"; BUDGET a duration
 * ("60s"); ARGS the program's arguments, "-" for none, else separated by single spaces
 * with '\' escapes: "\s" space, "\t" tab, "\n" newline, "\\" backslash, "\-" an
 * argument that is exactly "-". Nothing here is trusted: a campaign directory may be
 * shared and edited; every field is checked and errors name the line.
 *
 * results/N.json (campaign_result.c): one JSON object that run-task writes atomically.
 * Untrusted too when merged (another user, a half-copied directory): parsed strictly. */
#ifndef JINX_CAMPAIGN_H
#define JINX_CAMPAIGN_H
#include "dump/race_pair.h"
#include "lib/sha256.h"
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CAMP_MAX_TASKS 100000
#define CAMP_MAX_LINE 8192
#define CAMP_MAX_ARGS 64
#define CAMP_ARG_LEN 512
#define CAMP_PATH_LEN 1024
#define CAMP_STRATEGY_LEN 32
#define CAMP_MAX_RESULT 8192   /* bytes of a results/N.json (JSON_MAX_TEXT) */
#define CAMP_MAX_TSV (64u << 20) /* bytes of a tasks.tsv */

/* Exit status of `jinx campaign run-task` (and what the sbatch script maps). */
#define CAMP_EXIT_NONE 0        /* nothing found */
#define CAMP_EXIT_FOUND 1       /* a bug: results/N.json + dumps/N/ */
#define CAMP_EXIT_USAGE 2       /* usage or campaign error: no result written */
#define CAMP_EXIT_NOTEST 3      /* could not test (result written, says why) */

struct camp_task {
    uint32_t index;
    char image[CAMP_PATH_LEN];
    char sha256[2 * SHA256_LEN + 1];
    uint64_t first_seed, last_seed;
    char budget[32];           /* as written: passed to jinx test --budget */
    char strategy[CAMP_STRATEGY_LEN];
    int nargs;
    char args[CAMP_MAX_ARGS][CAMP_ARG_LEN];
};

struct camp_tasks {
    struct camp_task *t;       /* owned */
    size_t n;
};

/* "A-B" with 1 <= A <= B (decimal): 0, or -1. */
int campaign_parse_seeds(const char *s, uint64_t *first, uint64_t *last);

/* tasks.tsv: one task as a line (no newline) into out; -1 if it does not fit or a field
 * cannot be written (a tab or newline in the image path). */
int campaign_task_format(const struct camp_task *t, char *out, size_t cap);
/* Parses one non-comment line (without its newline). 0, or -1 with a message. */
int campaign_task_parse(const char *line, struct camp_task *t, char *err, size_t errlen);
/* Reads a whole tasks.tsv text: indexes must be 0, 1, 2, ... in order. 0, or -1 with a
 * message naming the line. ts->t is owned (campaign_tasks_free). */
int campaign_tasks_parse(const char *text, size_t len, struct camp_tasks *ts, char *err,
                         size_t errlen);
int campaign_tasks_load(const char *dir, struct camp_tasks *ts, char *err, size_t errlen);
void campaign_tasks_free(struct camp_tasks *ts);

enum camp_status { CAMP_NONE = 0, CAMP_FOUND, CAMP_NOTEST };

/* A task's result as results/N.json holds it. Paths in it are relative to the campaign
 * directory, so two campaigns of the same plan compare equal wherever they ran. */
struct camp_result {
    uint32_t task;
    char image[CAMP_PATH_LEN];
    char sha256[2 * SHA256_LEN + 1];
    uint64_t first_seed, last_seed;
    enum camp_status status;
    uint64_t runs, seed;       /* runs done; the last (failing) seed */
    double seconds;
    /* CAMP_FOUND */
    char outcome[64];          /* "SIGABRT", "deadlock", "exit 3" */
    char function[160];        /* crash function, "" when none (deadlock, exit) */
    bool has_race;
    char race[2][RACE_SIDE_LEN];
    uint64_t cues;             /* retired cue points; 0: no round records */
    bool replayable;
    char dump[48];             /* "dumps/N/bug.jinxdump" (N: task), "" when none */
    /* CAMP_NOTEST */
    char reason[600];
};

const char *campaign_status_name(enum camp_status s);
/* Writes r as one JSON object and a newline. 0, or -1 (stdio error). */
int campaign_result_write(FILE *f, const struct camp_result *r);
/* Parses results/N.json text. 0, or -1 with a message saying what is wrong. */
int campaign_result_parse(const char *buf, size_t len, struct camp_result *r, char *err,
                          size_t errlen);

/* The crash function of a failure: the backtrace's first frame after the abort path
 * (raise, abort, __assert_fail, ...: the same for every assertion) when the backtrace
 * has one, else the function at the crashing RIP. "" when neither is known. */
#define CAMP_BT_LEN 160
void campaign_crash_function(const char *rip_fn, const char (*bt)[CAMP_BT_LEN], int nbt,
                             char *out, size_t cap);

/* The signature that merge de-duplicates by: image name (basename), outcome, crash
 * function and the racing pair's two sides by function and access kind, all without
 * offsets. Written into out. */
void campaign_signature(const struct camp_result *r, char *out, size_t cap);

/* Merge's model, separate from its I/O so it can be unit-tested. */
struct camp_bug {
    char signature[1024];
    uint32_t hits;
    uint32_t *tasks;           /* owned, ascending */
    size_t ntasks;
    const struct camp_result *best;   /* the smallest reproducer */
    const struct camp_result *named;  /* a hit whose signature this is (its race) */
};

struct camp_merge {
    struct camp_bug *bugs;     /* owned, sorted by signature */
    size_t nbugs;
};

/* True when a is a better reproducer than b: replayable first, then fewer cue points,
 * then the lower task index (so the choice never depends on the order of reading). */
bool campaign_better_reproducer(const struct camp_result *a, const struct camp_result *b);
/* Groups the found results (others are skipped) by signature; a group without a racing
 * pair then joins the one group of the same image, outcome and crash function that has
 * one, if there is exactly one (docs/campaigns.md). 0, or -1 (no memory). */
int campaign_merge_bugs(const struct camp_result *const *res, size_t n, struct camp_merge *m);
void campaign_merge_free(struct camp_merge *m);

/* What merge knows about one task. */
enum camp_state { CAMP_E_MISSING = 0, CAMP_E_BAD, CAMP_E_OK };
struct camp_entry {
    enum camp_state state;
    struct camp_result r;      /* CAMP_E_OK */
    char why[400];             /* CAMP_E_BAD: what is wrong with results/N.json */
};

/* Merge's outputs (campaign_report.c); deterministic: everything sorted, no clock. */
void campaign_report_table(FILE *f, const struct camp_tasks *ts, const struct camp_entry *e,
                           const struct camp_merge *m);
void campaign_report_json(FILE *f, const struct camp_tasks *ts, const struct camp_entry *e,
                          const struct camp_merge *m);
void campaign_report_junit(FILE *f, const struct camp_tasks *ts, const struct camp_entry *e,
                           const struct camp_merge *m);

/* A file written to DIR/.NAME.tmp.PID, then renamed to DIR/NAME: readers never see a
 * part of it. open: NULL with a message on stderr. close: with keep, flushes, syncs and
 * renames; without (the caller failed), removes the temporary. 0, or -1 with a message. */
struct camp_atomic {
    char path[PATH_MAX], tmp[PATH_MAX];
};
FILE *campaign_atomic_open(const char *dir, const char *name, struct camp_atomic *a);
int campaign_atomic_close(FILE *f, const struct camp_atomic *a, bool keep);

/* Subcommands; argv[0] is "campaign" / the subcommand's name. Exit statuses above. */
int campaign_main(int argc, char **argv);
int campaign_plan_cmd(int argc, char **argv);
int campaign_run_task_cmd(int argc, char **argv);
int campaign_merge_cmd(int argc, char **argv);

#endif
