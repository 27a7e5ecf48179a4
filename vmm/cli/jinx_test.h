/* `jinx test`: the result of a test (what the runs found) and its reports, shared by the
 * command (cli/jinx_test_cmd.c: the runs and their judgement) and the report writers
 * (cli/jinx_test_report.c). */
#ifndef JINX_CLI_JINX_TEST_H
#define JINX_CLI_JINX_TEST_H
#include "dump/race_pair.h"
#include "linux/limitlog.h"
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_NONE 0
#define EXIT_FOUND 1
#define EXIT_USAGE 2
#define MAX_BT 8

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
    double explore_seconds;     /* wall time spent on them */
    bool whole_run;             /* the bug was found by a whole run */
    bool reproduced;            /* ... and its live replay ended in the same bug */
    bool gave_up;               /* some run was too long for whole runs (rounds took over) */
    char strategy[32];          /* the strategy of the run that found it */
    bool replayable;            /* the dump has round records (jinx-vmm replay) */
    /* A bug first met in free execution (no snapshot: its dump cannot replay) is looked
     * for again from snapshots before it is reported (jinx_test_cmd.c). */
    bool searched, search_found;
    int search_runs;            /* runs the search took */
    uint64_t first_seed;        /* the seed whose run met it in free execution */
    char first_dump[PATH_MAX];  /* that run's dump (no replay) */
    uint64_t cues;              /* the retired trace's cue points (0: no round records) */
    int has_race;               /* 1: race[] is the retired schedule's racing pair */
    char race[2][RACE_SIDE_LEN];
    char dump[PATH_MAX], core[PATH_MAX];
    char detail[512];
    char stderr_tail[2048];     /* the failing run's last stderr lines (the guest's) */
    bool could_not_test;        /* the failing run met jinx's own limits: no verdict */
    bool limited_unreplayed;    /* in this run a whole run met a jinx limit and failed (or
                                   was stopped by the timeout), and the live program did
                                   not get as far: the timeout came first */
    char reason[LIMIT_WHAT_LEN + LIMIT_OPTION_LEN + 8]; /* "<what>, <option>" */
    struct jt_limit lim[LIMITS_MAX];   /* the failing run's limits */
    int nlim;
    struct jt_limit notes[LIMITS_MAX]; /* limits met by runs that ended well */
    int nnotes;
};

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

#endif
