/* `jinx test --jobs N`: up to N jinx-vmm runs at once, one seed each, handed out in order
 * (cli/jinx_test_cmd.c builds each run's command line and judges it; this module starts,
 * waits for and stops the processes).
 *
 * Why processes: two VMs in one process serialise on the process's mmap lock (every
 * ownership change is an mprotect pair), +8-10% work per second for the second VM; two
 * jinx-vmm processes did ~1.4x (docs/rounds.md). A run is a whole jinx-vmm, so a seed's
 * run is the same whether it ran alone or beside others (but for wall-time budgets).
 *
 * Files: with one job, a run writes its dump into DIR and its log and report to
 * DIR/jinx-test-last.log and .json directly (as before --jobs). With more, each job has a
 * private directory DIR/.jinx-test-<pid>.<job>/ for its dumps, log and report; a finished
 * run's log and report are renamed to DIR/jinx-test-last.* before it is judged, the
 * deciding run's dump is moved into DIR (jt_pool_adopt_dump), and jt_pool_end removes the
 * private directories with whatever a stopped run left there. So no run but the deciding
 * one leaves a dump, and a stopped run leaves nothing.
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are blocked from jt_pool_init to jt_pool_end and
 * taken synchronously while waiting: the runs are stopped (by pid) and jt_pool_run says
 * JT_INTERRUPTED; jt_pool_end unblocks them (a pending one then acts as usual). Runs get
 * the caller's original signal mask, and SIGTERM should jinx test die without stopping
 * them (PR_SET_PDEATHSIG). */
#ifndef JINX_CLI_JINX_TEST_JOBS_H
#define JINX_CLI_JINX_TEST_JOBS_H
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define JT_MAX_JOBS 32
/* A stopped run gets SIGTERM (jinx-vmm then stops its guest and exits 143), and SIGKILL
 * when it has not ended after this long. */
#define JT_STOP_GRACE_NS 5000000000ULL

enum { JT_AGAIN, JT_DONE, JT_FAILED, JT_INTERRUPTED };

/* Where one run writes: dumps into dir, its stderr into log, --report into report. */
struct jt_files {
    char dir[PATH_MAX], log[PATH_MAX], report[PATH_MAX];
};

struct jt_hooks {
    void *ctx;
    /* seed's jinx-vmm command line (argv[0] the program to exec), writing into f, ending
     * within timeout_ms; malloc'd, NULL-terminated (the strings are not freed). NULL:
     * could not build it. */
    char **(*argv)(void *ctx, uint64_t seed, uint64_t timeout_ms, const struct jt_files *f);
    /* A run ended on its own (status: its exit status, 128 + signal, or -1 when it could
     * not be started; killed: the signal that killed jinx-vmm itself, else 0): JT_AGAIN
     * (next seed), JT_DONE (a verdict: the others are stopped) or JT_FAILED (jinx-vmm
     * could not run the image: the others are stopped). f has the -last names. */
    int (*judge)(void *ctx, int job, uint64_t seed, int status, int killed,
                 const struct jt_files *f);
    /* A run stopped because another decided or the command was interrupted; its log may
     * still hold what it did (jinx-vmm prints its exploration summary when stopped).
     * May be NULL. */
    void (*stopped)(void *ctx, int job, uint64_t seed, const struct jt_files *f);
};

struct jt_job {
    pid_t pid;              /* 0: free */
    uint64_t seed;
    struct jt_files f;      /* while it runs (private names with more than one job) */
    bool keep;              /* its directory holds the adopted dump (a name was taken) */
};

struct jt_pool {
    int jobs;
    bool private_dirs;      /* jobs > 1 */
    /* Pinning (kvm/pin.h): with more than one job, job j's run gets --pin-cpu (the j-th
     * CPU, mod their number, of this process's affinity mask); no_pin (set after
     * jt_pool_init): every run gets --no-pin instead. */
    bool no_pin;
    char dir[PATH_MAX];     /* --dump-dir */
    struct jt_job job[JT_MAX_JOBS];
    int stopped;            /* runs stopped because another decided */
    int signo;              /* the signal that interrupted the command, else 0 */
    /* The status line on stderr: every second on a terminal, else at most every 5 s
     * when a run starts. Off for a pool run with progress false. */
    bool progress;
    uint64_t t0, budget_ns;
    uint64_t last_line;
    sigset_t oldmask;
};

/* The default --jobs: 2 when this process may run on 2 or more CPUs
 * (sched_getaffinity), else 1. */
int jt_default_jobs(void);
/* Sets p up for jobs runs at once writing under dir (private directories made when
 * jobs > 1). 0, or -1 with a message in err. */
int jt_pool_init(struct jt_pool *p, int jobs, const char *dir, char *err, size_t errlen);
/* Runs seeds *next, *next + 1, ... up to last (0 after UINT64_MAX: no more), each with
 * the time left to deadline (mono_ns), as many at once as there are jobs, until a judge
 * says JT_DONE or JT_FAILED (the others are then stopped and reaped, and *winner is the
 * deciding run's job), the seeds or the time run out (JT_AGAIN once every run has
 * ended), or a signal came (JT_INTERRUPTED, every run stopped). *next is the first seed
 * not started. */
int jt_pool_run(struct jt_pool *p, const struct jt_hooks *h, uint64_t *next, uint64_t last,
                uint64_t deadline, int *winner);
/* Moves job's dump (dump, and core beside it) from its private directory into the dump
 * directory, under the same names (never replacing a file: if one is taken, the two stay
 * where they are and the private directory is kept), and updates the paths. No-op with
 * one job or an empty dump. */
void jt_pool_adopt_dump(struct jt_pool *p, int job, char *dump, size_t dumpcap, char *core,
                        size_t corecap);
/* Removes the private directories and what is in them (but one that keeps an adopted
 * dump), and restores the signal mask. */
void jt_pool_end(struct jt_pool *p);

#endif
