/* `jinx test IMAGE [--budget 60s] [--rate R] [--json] [--junit FILE] [--dump-dir DIR]
 * [--mem SIZE] [--vcpus N] [--cpu-model NAME] [-- ARGS]`: the CI command (options before or after IMAGE).
 * Runs IMAGE under `jinx-vmm run --attach R --dump-dir DIR --report ...` again and again
 * (seed 1, 2, ...) until a run fails or the budget is spent; --jobs N of them at once
 * (cli/jinx_test_run.c, cli/jinx_test_jobs.h: the first verdict stops the others).
 *
 * Exit status: 0 nothing found within the budget; 1 a bug was found (the dump's path and
 * a short report: outcome, thread, function, round, time to find, the program's last
 * stderr lines); 2 usage errors, jinx-vmm could not run the image at all, or "could not
 * test": the failing run had met one of jinx's own limits first (limitlog.h: threads,
 * guest memory, a syscall jinx lacks, ...), so its failure may be jinx's and is not
 * reported as a bug. --json prints the result as one JSON object on stdout, --junit
 * writes a JUnit XML file (one test case: the image); both also when jinx-vmm could not
 * run the image (could_not_test, the reason from jinx-vmm's first message). The guest's
 * own output is not shown (it would interleave with the progress line); the last run's
 * jinx-vmm report is kept in DIR/jinx-test-last.log and its JSON outcome in
 * DIR/jinx-test-last.json. */
#include "lib/options.h"
#include "cli/hosts_cmd.h"
#include "kvm/cpumodel.h"
#include "dump/dumpfile.h"
#include "linux/elfparse.h"
#include "kvm/layout.h"
#include "kvm/vm.h"
#include "linux/limitlog.h"
#include "linux/sanenv.h"
#include "rounds/round_config.h"
#include "dump/roundrec.h"
#include "lib/json.h"
#include "lib/util.h"
#include "campaign/campaign.h"
#include "dump/race_pair.h"
#include "dump/timer_names.h"
#include "explorer/explorer.h"
#include "cli/jinx_test.h"
#include "cli/jinx_test_jobs.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


/* Each round's fragments stop at their next cue point once this much wall time is spent.
 * Short ones give more rounds per run; long ones reach as far as the fragment's cue-point
 * length in programs whose cue points are many or costly (glibc's startup and locks: a
 * glibc race-o1o2 round needs ~570 cue points, ~350 fit in 50 ms). Odd seeds get the
 * first, even seeds the second. */
#define FRAGMENT_WALL_SHORT "50ms"
#define FRAGMENT_WALL_LONG "500ms"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jinx test IMAGE [--budget 60s] [--rate R] [--fragment-wall DUR] [--json]\n"
        "                 [--junit FILE] [--dump-dir DIR] [--mem SIZE] [--vcpus N]\n"
        "                 [--seeds FIRST-LAST] [--jobs N] [--ro-dir DIR]... [--cpu-model NAME]\n"
        "                 [--strategy NAME] [--depth D] [--timers strict|early]\n"
        "                 [-- ARGS...]\n"
        "       jinx campaign plan|run-task|merge ... (jinx campaign --help)\n"
        "       jinx hosts baseline [--uri URI] [--json] HOST.xml...\n"
        "\n"
        "Runs IMAGE again and again, seed 1, 2, ..., until a run fails or the budget is\n"
        "spent. Each run explores whole runs from a snapshot at the first thread creation\n"
        "(traced schedules, then sparse schedules and free stress runs: jinx-vmm run\n"
        "--explore), and simulation rounds (jinx-vmm run --attach R) where whole runs are\n"
        "too long. Options may come before or after IMAGE; the program's arguments go\n"
        "after --.\n"
        "\n"
        "  --budget DUR    wall time to spend (default 60s)\n"
        "  --rate R        simulation rounds per second (default 5/s)\n"
        "  --strategy NAME whole-run strategy: portfolio (default), pct, pos, random, rf,\n"
        "                  window, flip, nest, sweep, wake, lanes or timed (jinx-vmm\n"
        "                  run --explore-strategy)\n"
        "  --depth D       PCT depth, 1 to %d (jinx-vmm run --explore-depth)\n"
        "  --fragment-wall DUR  wall-time budget of each round's fragments (default: runs\n"
        "                  alternate " FRAGMENT_WALL_SHORT " and " FRAGMENT_WALL_LONG ")\n"
        "  --dump-dir DIR  where a found bug's dump goes (default jinx-dumps)\n"
        "  --json          print the result as one JSON object on stdout\n"
        "  --junit FILE    also write the result as a JUnit XML file\n"
        "  --mem SIZE      guest memory of each run (jinx-vmm run --mem; default 512M)\n"
        "  --file-mem SIZE files each run's program may write (jinx-vmm run; 256M)\n"
        "  --ro-dir DIR    let the program read DIR and below, read-only (jinx-vmm run\n"
        "                  --ro-dir; repeatable)\n"
        "  --vcpus N       most threads at once (jinx-vmm run --vcpus; default and max %d)\n"
        "  --seeds A-B     run only seeds A..B (default: 1, 2, ... until the budget is spent)\n"
        "  --jobs N        runs at once, each its own jinx-vmm and seed (default 2 when 2 or\n"
        "                  more CPUs may be used, else 1); the first to find a bug decides,\n"
        "                  the others are stopped. Re-run a reported seed S alone with\n"
        "                  --jobs 1 --seeds S-S. Job i's serialized execution runs on CPU\n"
        "                  i mod n of the n this process may use (taskset), so that two jobs\n"
        "                  never share one (jinx-vmm run --pin-cpu)\n"
        "  --no-pin        leave CPU affinity alone (jinx-vmm run --no-pin)\n"
        "  --cpu-model NAME  the CPU the guest sees (jinx-vmm run --cpu-model; default " CPU_MODEL_DEFAULT ")\n"
        "  --timers MODE   early (default): a schedule may end a thread's sleep or timed wait\n"
        "                  (at most 1 s away) before its deadline, as a busy machine can (a\n"
        "                  sleep is no synchronization; the report names each one); strict:\n"
        "                  every timer runs to its deadline (jinx-vmm run --timers)\n"
        "\n"
        "exit status: 0 nothing found, 1 a bug was found (dump written), 2 usage error, the\n"
        "image could not be run, or could not test: the failing run met one of jinx's own\n"
        "limits first (threads, memory, a syscall jinx lacks), so its failure is not\n"
        "reported as a bug. jinx-vmm is taken from this program's directory ($JINX_VMM\n"
        "overrides).\n", EX_PCT_MAX_DEPTH, MAX_VCPUS);
}

static const char *vmm_path(char *buf, size_t len)
{
    const char *env = getenv("JINX_VMM");
    if (env && *env)
        return env;
    ssize_t n = readlink("/proc/self/exe", buf, len - 16);
    if (n <= 0)
        return "jinx-vmm";
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    snprintf(slash ? slash + 1 : buf, len - (size_t)(slash ? slash + 1 - buf : 0), "jinx-vmm");
    return buf;
}

/* What every run gets besides its seed and time. */
struct run_opts {
    const char *vmm, *image, *rate, *dir, *log, *report;
    const char *mem, *vcpus, *file_mem; /* NULL: jinx-vmm's defaults */
    const char *cpu_model;      /* NULL: jinx-vmm's default */
    const char *fragment_wall;  /* NULL: alternate FRAGMENT_WALL_SHORT and _LONG by seed */
    const char *strategy, *depth; /* whole-run strategy and PCT depth (NULL: defaults) */
    bool timers_strict;           /* --timers strict */
    const char *const *ro_dirs;   /* --ro-dir, passed on to every run */
    int n_ro_dirs;
    int nargs;
    char **args;
};

/* Seed's jinx-vmm command line, writing into f (jt_hooks.argv: one malloc'd block, the
 * numbers' strings after the pointers). */
char **jt_run_argv(const struct run_opts *ro, uint64_t seed, uint64_t timeout_ms,
                   const struct jt_files *f, bool replayable_only)
{
    /* Whole runs get most of what is left; the rest is for the live replay and the
     * dump, or for the program's free end when nothing was found. */
    uint64_t explore_ms = timeout_ms > 2000 ? timeout_ms - timeout_ms / 10 : timeout_ms / 2 + 1;
    size_t nptr = 40 + (size_t)ro->nargs + 2 * (size_t)ro->n_ro_dirs;
    char **argv = calloc(1, nptr * sizeof *argv + 3 * 32);
    if (!argv)
        return NULL;
    char *seed_s = (char *)(argv + nptr), *to_s = seed_s + 32, *explore_s = to_s + 32;
    snprintf(explore_s, 32, "%llums", (unsigned long long)explore_ms);
    snprintf(seed_s, 32, "%llu", (unsigned long long)seed);
    snprintf(to_s, 32, "%llums", (unsigned long long)timeout_ms);
    const char *fixed[] = {ro->vmm, "run", "--no-control", "--quiet", "--seed", seed_s,
                           "--attach", ro->rate, "--dump-dir", f->dir, "--timeout", to_s,
                           "--report", f->report};
    size_t nf = sizeof fixed / sizeof fixed[0];
    for (size_t i = 0; i < nf; i++)
        argv[i] = (char *)fixed[i];
    size_t k = nf;
    argv[k++] = "--explore";
    argv[k++] = explore_s;
    if (ro->strategy) {
        argv[k++] = "--explore-strategy";
        argv[k++] = (char *)ro->strategy;
    }
    if (ro->depth) {
        argv[k++] = "--explore-depth";
        argv[k++] = (char *)ro->depth;
    }
    if (ro->timers_strict) {
        argv[k++] = "--timers";
        argv[k++] = "strict";
    }
    if (replayable_only)
        argv[k++] = "--replayable-only";
    argv[k++] = "--fragment-wall";
    argv[k++] = (char *)(ro->fragment_wall ? ro->fragment_wall
                         : seed % 2 ? FRAGMENT_WALL_SHORT : FRAGMENT_WALL_LONG);
    if (ro->mem) {
        argv[k++] = "--mem";
        argv[k++] = (char *)ro->mem;
    }
    if (ro->file_mem) {
        argv[k++] = "--file-mem";
        argv[k++] = (char *)ro->file_mem;
    }
    if (ro->vcpus) {
        argv[k++] = "--vcpus";
        argv[k++] = (char *)ro->vcpus;
    }
    for (int i = 0; i < ro->n_ro_dirs; i++) {
        argv[k++] = "--ro-dir";
        argv[k++] = (char *)ro->ro_dirs[i];
    }
    if (ro->cpu_model) {
        argv[k++] = "--cpu-model";
        argv[k++] = (char *)ro->cpu_model;
    }
    argv[k++] = (char *)ro->image;
    argv[k++] = "--"; /* the program's arguments are its own, whatever they look like */
    for (int i = 0; i < ro->nargs; i++)
        argv[k++] = ro->args[i];
    return argv;
}

static void classify(int st, struct result *r)
{
    if (st == 123)
        snprintf(r->outcome, sizeof r->outcome, "deadlock");
    else if (st > 128 && st < 128 + 65)
        snprintf(r->outcome, sizeof r->outcome, "SIG%s", sigabbrev_np(st - 128) ?
                 sigabbrev_np(st - 128) : "?");
    else
        snprintf(r->outcome, sizeof r->outcome, "exit %d", st);
}

enum { RUN_AGAIN = JT_AGAIN, RUN_DONE = JT_DONE, RUN_FAILED = JT_FAILED };

/* A failure after jinx's own limits (lim, nlim > 0): no verdict on the program; the
 * first limit is the reason, with the option that raises it. */
static int could_not_test_for_limits(struct result *r, const struct jt_limit *lim, int nlim)
{
    r->could_not_test = true;
    memcpy(r->lim, lim, (size_t)nlim * sizeof *lim);
    r->nlim = nlim;
    snprintf(r->reason, sizeof r->reason, "%s, %s", lim[0].what,
             lim[0].option[0] ? lim[0].option : "no option raises it");
    return RUN_DONE;
}

/* Judges run `seed` of the test (jinx-vmm's status s; killed: the signal that killed
 * jinx-vmm itself, 0 if none) into r: RUN_AGAIN when nothing was found (another seed),
 * RUN_DONE with a verdict or a reason it cannot be tested, RUN_FAILED when jinx-vmm
 * could not run the image at all (its log was shown). */
static int judge_run(struct result *r, const struct run_opts *ro, uint64_t seed, int s,
                     int killed)
{
    r->runs++;
    r->seed = seed;
    struct jt_limit lim[LIMITS_MAX];
    int nlim = 0;
    char vmm_error[LIMIT_WHAT_LEN];
    bool have_report = jt_read_report(ro->report, lim, &nlim, r->stderr_tail,
                                   sizeof r->stderr_tail, vmm_error, sizeof vmm_error,
                                   &r->report, &r->has_report) == 0;
    if (s == 125 && have_report && vmm_error[0]) {
        /* The program ran, and jinx-vmm stopped it for a reason of its own (status
         * 125 with an outcome report): no verdict on the program. */
        r->status = s;
        snprintf(r->outcome, sizeof r->outcome, "jinx-vmm error");
        r->could_not_test = true;
        memcpy(r->lim, lim, sizeof lim);
        r->nlim = nlim;
        snprintf(r->reason, sizeof r->reason, "%s, no option raises it", vmm_error);
        return RUN_DONE;
    }
    if (s < 0 || s == 125 || s == 127) {
        if (isatty(2))
            fprintf(stderr, "\n");
        jx_err("jinx-vmm could not run %s (status %d); its report (%s):", ro->image, s, ro->log);
        FILE *lf = fopen(ro->log, "r");
        char line[512], first[512] = "";
        while (lf && fgets(line, sizeof line, lf)) {
            fputs(line, stderr);
            /* jinx-vmm's first message says why (no /dev/kvm, a bad option, ...). */
            if (!first[0] && !strncmp(line, "jinx-vmm: ", 10))
                snprintf(first, sizeof first, "%s", line + 10);
        }
        if (lf)
            fclose(lf);
        first[strcspn(first, "\n")] = 0;
        /* No verdict on the program; --json and --junit still say so (cmd_test). */
        r->status = s;
        r->could_not_test = true;
        snprintf(r->outcome, sizeof r->outcome, "jinx-vmm error");
        snprintf(r->reason, sizeof r->reason, "jinx-vmm could not run the image (status %d): %s",
                 s, first[0] ? first : "see its log");
        return RUN_FAILED;
    }
    if (s == 0 || s == 124) {
        /* A normal end, or the budget ran out mid-run: limits met on the way are
         * notes, not verdicts. */
        r->limited_unreplayed = false;
        bool met_before = r->unreplayed.met;
        jt_read_log(ro->log, r, true); /* its whole-run schedules count too */
        if (!met_before && r->unreplayed.met)
            r->unreplayed.status = s; /* this run met a bug in exploration only */
        if (s == 124 && nlim && r->limited_unreplayed) {
            /* A whole run met a jinx limit (and failed, or the budget ran out in it), and
             * the live program did not get there: the program cannot be judged, as when
             * the live run fails after a limit. */
            r->status = s;
            snprintf(r->outcome, sizeof r->outcome, "timeout");
            return could_not_test_for_limits(r, lim, nlim);
        }
        jt_add_notes(r->notes, &r->nnotes, lim, nlim);
        return RUN_AGAIN;
    }
    r->status = s;
    classify(s, r);
    if (killed || !have_report) {
        /* jinx-vmm itself died (its status looks like a guest signal's) or left no
         * outcome: nothing to judge the program by. */
        r->could_not_test = true;
        if (killed)
            snprintf(r->reason, sizeof r->reason, "jinx-vmm itself was killed by SIG%s, "
                     "without an outcome report (its log: %.200s)",
                     sigabbrev_np(killed) ? sigabbrev_np(killed) : "?", ro->log);
        else
            snprintf(r->reason, sizeof r->reason, "jinx-vmm ended with status %d but no "
                     "outcome report (its log: %.200s)", s, ro->log);
        return RUN_DONE;
    }
    if (nlim)
        return could_not_test_for_limits(r, lim, nlim);
    r->found = true;
    jt_read_log(ro->log, r, false);
    jt_read_dump(ro->image, r);
    return RUN_DONE;
}

/* What the command line asked for (options before or after IMAGE, up to --). */
struct test_opts {
    const char *strategy, *depth;       /* whole-run strategy and PCT depth (NULL: defaults) */
    uint64_t first_seed, last_seed, budget;
    const char *rate, *junit, *dir, *mem, *vcpus, *fragment_wall, *cpu_model, *file_mem;
    const char *ro_dirs[VM_MAX_RO_DIRS];
    int n_ro_dirs;
    int jobs;                           /* runs at once (cli/jinx_test_jobs.h) */
    bool json, no_pin, timers_strict;
    struct cli cl;
};

/* 0, 1 when --help was answered, -1 after a message. */
static int parse_test_args(int argc, char **argv, char **posv, struct test_opts *t)
{
    static const struct option lo[] = {
        {"budget", required_argument, 0, 'b'}, {"rate", required_argument, 0, 'r'},
        {"json", no_argument, 0, 'j'}, {"junit", required_argument, 0, 'u'},
        {"dump-dir", required_argument, 0, 'd'}, {"mem", required_argument, 0, 'm'},
        {"vcpus", required_argument, 0, 'v'}, {"fragment-wall", required_argument, 0, 'f'},
        {"strategy", required_argument, 0, 's'}, {"depth", required_argument, 0, 'D'},
        {"seeds", required_argument, 0, 'e'}, {"ro-dir", required_argument, 0, 'R'},
        {"cpu-model", required_argument, 0, 'c'}, {"jobs", required_argument, 0, 'J'},
        {"no-pin", no_argument, 0, 'P'}, {"timers", required_argument, 0, 'T'},
        {"file-mem", required_argument, 0, 'F'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    uint64_t n;
    *t = (struct test_opts){.first_seed = 1, .last_seed = UINT64_MAX, .budget = 60000000000ULL,
                            .rate = "5/s", .dir = "jinx-dumps", .jobs = jt_default_jobs()};
    struct cli *cl = &t->cl;
    cli_init(cl, "test", argc, argv, posv);
    int c;
    while ((c = cli_next(cl, "h", lo, NULL)) != CLI_END) {
        switch (c) {
        case CLI_ERROR:
            jx_err("%s (see jinx test --help; the program's arguments go after --)", cl->err);
            return -1;
        case 'b':
            if (!parse_duration(optarg, &t->budget) || !t->budget) {
                jx_err("--budget %s: expected a duration such as 60s or 5m", optarg);
                return -1;
            }
            break;
        case 'r': t->rate = optarg; break;
        case 'f': {
            struct round_config rc;
            char rerr[200];
            round_config_default(&rc);
            if (round_config_set(&rc, "fragment-wall", optarg, rerr, sizeof rerr) < 0) {
                jx_err("--%s", rerr);
                return -1;
            }
            t->fragment_wall = optarg;
            break;
        }
        case 's': {
            enum ex_online_kind k;
            if (strcmp(optarg, "timed") && ex_online_from_name(optarg, &k) < 0) {
                jx_err("--strategy %s: expected portfolio (the default), pct, pos, random, rf, "
                       "window, flip, nest, sweep, wake, lanes or timed",
                       optarg);
                return -1;
            }
            t->strategy = optarg;
            break;
        }
        case 'e':
            if (campaign_parse_seeds(optarg, &t->first_seed, &t->last_seed) < 0) {
                jx_err("--seeds %s: expected FIRST-LAST, e.g. 1-10 (1 <= FIRST <= LAST)", optarg);
                return -1;
            }
            break;
        case 'D':
            if (!parse_u64(optarg, &n) || n < 1 || n > EX_PCT_MAX_DEPTH) {
                jx_err("--depth %s: expected a number from 1 to %d", optarg, EX_PCT_MAX_DEPTH);
                return -1;
            }
            t->depth = optarg;
            break;
        case 'R':
            if (t->n_ro_dirs == VM_MAX_RO_DIRS) {
                jx_err("--ro-dir %s: at most %d directories (grant a common parent instead)",
                       optarg, VM_MAX_RO_DIRS);
                return -1;
            }
            t->ro_dirs[t->n_ro_dirs++] = optarg;
            break;
        case 'c':
            if (!cpumodel_name_ok(optarg)) {
                jx_err("--cpu-model '%s': not a CPU model name (a libvirt x86 model such as "
                       "kvm64 or Haswell-noTSX, or host)", optarg);
                return -1;
            }
            t->cpu_model = optarg;
            break;
        case 'J':
            if (!parse_u64(optarg, &n) || n < 1 || n > JT_MAX_JOBS) {
                jx_err("--jobs %s: expected a number from 1 to %d (runs at once; default %d "
                       "here)", optarg, JT_MAX_JOBS, jt_default_jobs());
                return -1;
            }
            t->jobs = (int)n;
            break;
        case 'T':
            if (strcmp(optarg, "strict") && strcmp(optarg, "early")) {
                jx_err("--timers %s: expected strict or early (the default)", optarg);
                return -1;
            }
            t->timers_strict = !strcmp(optarg, "strict");
            break;
        case 'j': t->json = true; break;
        case 'P': t->no_pin = true; break;
        case 'u': t->junit = optarg; break;
        case 'd': t->dir = optarg; break;
        case 'm':
            if (!parse_size(optarg, &n) || n < (16ULL << 20) || n > MAX_GUEST_MEM ||
                n % (2ULL << 20)) {
                jx_err("--mem %s: expected a size from 16M to 3G in whole MiB pairs (e.g. 1G)",
                       optarg);
                return -1;
            }
            t->mem = optarg;
            break;
        case 'F':
            if (!parse_size(optarg, &n) || n < (1ULL << 20) || n > (1ULL << 40)) {
                jx_err("--file-mem %s: expected a size from 1M to 1T (e.g. 512M)", optarg);
                return -1;
            }
            t->file_mem = optarg;
            break;
        case 'v':
            if (!parse_u64(optarg, &n) || n < 1 || n > MAX_VCPUS) {
                jx_err("--vcpus %s: expected a number from 1 to %d", optarg, MAX_VCPUS);
                return -1;
            }
            t->vcpus = optarg;
            break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return -1;
        }
    }
    return 0;
}

/* judge_run for the jobs (cli/jinx_test_run.c): the run wrote into f. */
int jt_judge(struct result *r, const struct run_opts *ro, const struct jt_files *f,
             uint64_t seed, int status, int killed)
{
    struct run_opts o = *ro;
    o.dir = f->dir;
    o.log = f->log;
    o.report = f->report;
    return judge_run(r, &o, seed, status, killed);
}

static int cmd_test(int argc, char **argv)
{
    char *posv[argc > 0 ? argc : 1];
    static struct test_opts t;
    int prc = parse_test_args(argc, argv, posv, &t);
    if (prc != 0)
        return prc > 0 ? 0 : EXIT_USAGE;
    struct cli cl = t.cl;
    const char *dir = t.dir, *junit = t.junit;
    bool json = t.json;
    if (cl.npos < 1) {
        jx_err("test: no IMAGE given");
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *image = cl.pos[0];
    struct elf_image probe;
    char err[512];
    if (elf_open(image, &probe, err, sizeof err) < 0) {
        jx_err("%s", err);
        return EXIT_USAGE;
    }
    const char *leak_var = sanenv_leak_var(&probe);
    elf_free(&probe);
    if (leak_var)
        fprintf(stderr, "jinx test: note: LeakSanitizer is off (jinx-vmm adds detect_leaks=0 to "
                "%s: its leak check at exit needs a fork, which a jinx guest cannot do); leaks "
                "are not reported\n", leak_var);
    struct stat st;
    if (stat(dir, &st) < 0 && mkdir(dir, 0755) < 0) {
        jx_err("--dump-dir %s: cannot create it: %s", dir, strerror(errno));
        return EXIT_USAGE;
    }
    char vbuf[PATH_MAX];
    const char *vmm = vmm_path(vbuf, sizeof vbuf);
    if (access(vmm, X_OK) < 0) {
        jx_err("cannot find jinx-vmm at %s (set JINX_VMM to its path)", vmm);
        return EXIT_USAGE;
    }
    struct run_opts ro = {.vmm = vmm, .image = image, .rate = t.rate, .dir = dir,
                          .mem = t.mem, .vcpus = t.vcpus, .file_mem = t.file_mem,
                          .fragment_wall = t.fragment_wall, .strategy = t.strategy,
                          .depth = t.depth, .timers_strict = t.timers_strict,
                          .cpu_model = t.cpu_model, .ro_dirs = t.ro_dirs,
                          .n_ro_dirs = t.n_ro_dirs,
                          .nargs = cl.npos - 1,
                          .args = cl.pos + 1};
    static struct jt_pool pool;
    if (jt_pool_init(&pool, t.jobs, dir, err, sizeof err) < 0) {
        jx_err("%s", err);
        return EXIT_USAGE;
    }
    pool.no_pin = t.no_pin;
    static struct result r;
    memset(&r, 0, sizeof r);
    r.leaks_off = leak_var != NULL;
    uint64_t t0 = mono_ns();
    int v = jt_run_jobs(&r, &ro, t.first_seed, t.last_seed, t.budget, &pool, t0);
    jt_pool_end(&pool);
    r.seconds = (mono_ns() - t0) / 1e9;
    if (isatty(2))
        fprintf(stderr, "\r%*s\r", 100, "");
    if (v == JT_FAILED && !json && !junit)
        return EXIT_USAGE; /* jinx-vmm's log was shown */
    if (v == JT_INTERRUPTED) {
        jx_err("test: interrupted by SIG%s after %.1f s: its runs were stopped, no verdict",
               sigabbrev_np(pool.signo) ? sigabbrev_np(pool.signo) : "?", r.seconds);
        return 128 + pool.signo;
    }
    if (v != JT_FAILED)
        jt_report_text(image, &r, json ? stderr : stdout);
    if (json)
        jt_report_json(image, &r, stdout);
    if (junit && jt_write_junit(junit, image, &r) < 0) {
        jx_err("cannot write --junit %s: %s", junit, strerror(errno));
        return EXIT_USAGE;
    }
    return r.found ? EXIT_FOUND : r.could_not_test ? EXIT_USAGE : EXIT_NONE;
}

int main(int argc, char **argv)
{
    jx_set_progname("jinx");
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "test"))
        return cmd_test(argc - 1, argv + 1);
    if (!strcmp(argv[1], "campaign"))
        return campaign_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "hosts"))
        return cmd_hosts(argc - 1, argv + 1);
    jx_err("unknown command '%s' (try: jinx test IMAGE --budget 60s, jinx campaign --help, or "
           "jinx hosts baseline HOST.xml...)", argv[1]);
    return EXIT_USAGE;
}
