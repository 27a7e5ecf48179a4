/* `jinx-vmm run`: the options, the VM with the mode they ask for, the run, then the
 * reports. cmd_run reads as its phases: parse, check, set up, run, end, report. */
#include "cli/commands.h"
#include "lib/options.h"
#include "control/control.h"
#include "control/shutdown.h"
#include "dump/dump.h"
#include "kvm/cpucache.h"
#include "kvm/pin.h"
#include "kvm/vm.h"
#include "lib/util.h"
#include "linux/files.h"
#include "linux/sanenv.h"
#include "linux/sanreport.h"
#include "linux/scancache.h"
#include "linux/cpuidscan.h"
#include "linux/outcome.h"
#include "rounds/dumpround.h"
#include "rounds/explore.h"
#include "rounds/round.h"
#include "rounds/round_config.h"
#include "sched/crew.h"
#include "sched/selftest.h"
#include "sched/serialize.h"
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENV 256

/* The options whose values are not plain (their own parsing), besides run_values. */
enum { OPT_HELP = 256, OPT_ENV, OPT_POLICY, OPT_ATTACH, OPT_ROUND, OPT_CHECK_WORKERS,
       OPT_EXPLORE_STRATEGY, OPT_RO_DIR, OPT_TIMERS };
static const struct option run_specials[] = {
    {"help", no_argument, 0, OPT_HELP}, {"env", required_argument, 0, OPT_ENV},
    {"policy", required_argument, 0, OPT_POLICY}, {"attach", required_argument, 0, OPT_ATTACH},
    {"strategy", required_argument, 0, OPT_ROUND}, {"depth", required_argument, 0, OPT_ROUND},
    {"sims", required_argument, 0, OPT_ROUND}, {"fragment", required_argument, 0, OPT_ROUND},
    {"tail", required_argument, 0, OPT_ROUND}, {"max-duty", required_argument, 0, OPT_ROUND},
    {"workers", required_argument, 0, OPT_ROUND},
    {"fragment-wall", required_argument, 0, OPT_ROUND},
    {"sim-kind", required_argument, 0, OPT_ROUND},
    {"check-workers", no_argument, 0, OPT_CHECK_WORKERS},
    {"explore-strategy", required_argument, 0, OPT_EXPLORE_STRATEGY},
    {"ro-dir", required_argument, 0, OPT_RO_DIR},
    {"timers", required_argument, 0, OPT_TIMERS},
    {0, 0, 0, 0}};

/* What the command line asked for, and what the phases pass on. */
struct run {
    struct vm_options opt;
    char *envp[MAX_ENV];
    int envc;
    char asan_env[1024];        /* ASAN_/LSAN_OPTIONS as the guest gets it (linux/sanenv.h) */
    bool no_control, attach, seed_given;
    const char *round_opt;      /* a round option given (it needs --attach) */
    struct round_config rcfg;   /* --attach and its round options (round.h) */
    bool explore;               /* --explore DUR: whole runs (rounds/explore.h) */
    bool explore_runs_given, explore_depth_given, explore_strategy_given, timers_given;
    struct explore_config ecfg; /* ... and its options */
    struct cli cl;
    bool dev_mode;              /* --serial, --record or --snapshot-selftest */
    bool want_serial;           /* serialized execution is set up (--serial, --record,
                                   --explore) */
    bool had_rounds;
    struct round_stats rstats;
    int selftest_failed;        /* --snapshot-selftest rounds that found a difference */
    char err[512];
};

/* Runs the program: thread 1 starts, the developer modes (--record, --simulate,
 * --snapshot-selftest) drive the VM from this thread (they pause and resume it), then
 * the outcome is waited for. */
static void run_vm(struct run *r, struct vm *vm)
{
    if (vm_start(vm) < 0)
        return;
    if (vm->opt.record_ns) {
        if (vm->opt.simulate)
            serialize_repeat_fragment(vm, vm->opt.after_ns, vm->opt.record_ns, vm->opt.simulate);
        else
            serialize_record_fragment(vm, vm->opt.after_ns, vm->opt.record_ns);
    }
    if (vm->opt.selftest_rounds)
        r->selftest_failed = selftest_run(vm, vm->opt.selftest_rounds,
                                          vm->opt.selftest_interval_ns);
    vm_wait(vm);
}

#define MAX_RUN_VALUES 40

/* The plain options (lib/options.h): where each value goes, what it may be. */
static size_t run_values(struct run *r, struct cli_value *v)
{
    struct vm_options *o = &r->opt;
    const struct cli_value rows[] = {
        {"vcpus", CLI_U64, &o->max_vcpus, sizeof o->max_vcpus, 1, MAX_VCPUS, 0,
         "a number from 1 to " JX_STR(MAX_VCPUS), &o->vcpus_given},
        {"mem", CLI_SIZE, &o->mem, sizeof o->mem, 16ULL << 20, MAX_GUEST_MEM, 2ULL << 20,
         "a size from 16M to 3G in whole MiB pairs (e.g. 256M)", NULL},
        {"timeout", CLI_DURATION, &o->timeout_ns, sizeof o->timeout_ns, 1, UINT64_MAX, 0,
         "a duration such as 10s, 500ms or 2m", NULL},
        {"seed", CLI_U64, &o->seed, sizeof o->seed, 0, UINT64_MAX, 0, "an unsigned number",
         &r->seed_given},
        {"thread-stack", CLI_SIZE, &o->thread_stack, sizeof o->thread_stack, 16 << 10, 8 << 20,
         0, "a size from 16K to 8M", NULL},
        {"snapshot-selftest", CLI_U64, &o->selftest_rounds, sizeof o->selftest_rounds, 1,
         100000, 0, "a number of rounds", NULL},
        {"selftest-interval", CLI_DURATION, &o->selftest_interval_ns,
         sizeof o->selftest_interval_ns, 1, UINT64_MAX, 0, "a duration such as 5ms", NULL},
        {"spin-threshold", CLI_U64, &o->spin_threshold, sizeof o->spin_threshold, 0, 1000000, 0,
         "a number of reads (0: off)", NULL},
        {"simulate", CLI_U64, &o->simulate, sizeof o->simulate, 1, 100000, 0,
         "a number of simulations", NULL},
        {"after", CLI_DURATION, &o->after_ns, sizeof o->after_ns, 0, UINT64_MAX, 0,
         "a duration such as 50ms or 1ms", NULL},
        {"record", CLI_DURATION, &o->record_ns, sizeof o->record_ns, 1000, UINT64_MAX, 0,
         "a duration such as 50ms or 1ms", NULL},
        {"first", CLI_DURATION, &r->rcfg.first_ns, sizeof r->rcfg.first_ns, 0,
         3600000000000ULL, 0, "a duration such as 1ms or 2s", NULL},
        {"file-mem", CLI_SIZE, &o->file_mem, sizeof o->file_mem, 1ULL << 20, 1ULL << 40, 0,
         "a size from 1M to 1T (e.g. 512M)", NULL},
        {"out-dir", CLI_STRING, &o->out_dir, 0, 0, 0, 0, NULL, NULL},
        {"max-dump-size", CLI_SIZE, &o->max_dump_size, sizeof o->max_dump_size, 0, UINT64_MAX,
         0, "a size such as 512M or 2G (0: no cap)", NULL},
        {"serial", CLI_FLAG, &o->serial, 0, 0, 0, 0, NULL, NULL},
        {"no-memory-cues", CLI_FLAG, &o->no_crew, 0, 0, 0, 0, NULL, NULL},
        {"no-guest-answers", CLI_FLAG, &o->no_guest_answers, 0, 0, 0, 0, NULL, NULL},
        {"no-guest-cues", CLI_FLAG, &o->no_guest_cues, 0, 0, 0, 0, NULL, NULL},
        {"guest-cue-points", CLI_FLAG, &o->guest_cue_points, 0, 0, 0, 0, NULL, NULL},
        {"no-pin", CLI_FLAG, &o->no_pin, 0, 0, 0, 0, NULL, NULL},
        {"pin-cpu", CLI_U64, &o->pin_cpu, sizeof o->pin_cpu, 0, PIN_MAX_CPU, 0,
         "a CPU number from 0 to " JX_STR(PIN_MAX_CPU), &o->pin_cpu_given},
        {"stats", CLI_FLAG, &o->stats, 0, 0, 0, 0, NULL, NULL},
        {"quiet", CLI_FLAG, &o->quiet, 0, 0, 0, 0, NULL, NULL},
        {"no-control", CLI_FLAG, &r->no_control, 0, 0, 0, 0, NULL, NULL},
        {"verbose-rounds", CLI_FLAG, &r->rcfg.verbose, 0, 0, 0, 0, NULL, NULL},
        {"schedule", CLI_STRING, &o->schedule_path, 0, 0, 0, 0, NULL, NULL},
        {"trace", CLI_STRING, &o->trace_path, 0, 0, 0, 0, NULL, NULL},
        {"report", CLI_STRING, &o->report_path, 0, 0, 0, 0, NULL, NULL},
        {"dump-dir", CLI_STRING, &o->dump_dir, 0, 0, 0, 0, NULL, NULL},
        {"explore", CLI_DURATION, &r->ecfg.budget_ns, sizeof r->ecfg.budget_ns, 1, UINT64_MAX,
         0, "a duration such as 10s or 500ms", &r->explore},
        {"explore-runs", CLI_U64, &r->ecfg.max_schedules, sizeof r->ecfg.max_schedules, 1,
         UINT64_MAX, 0, "a number of runs, at least 1", &r->explore_runs_given},
        {"explore-depth", CLI_U64, &r->ecfg.params.depth, sizeof r->ecfg.params.depth, 1,
         EX_PCT_MAX_DEPTH, 0, "a number from 1 to " JX_STR(EX_PCT_MAX_DEPTH),
         &r->explore_depth_given},
        {"verbose-explore", CLI_FLAG, &r->ecfg.verbose, 0, 0, 0, 0, NULL, NULL},
        {"no-stress-runs", CLI_FLAG, &r->ecfg.no_stress, 0, 0, 0, 0, NULL, NULL},
        {"replayable-only", CLI_FLAG, &r->ecfg.replayable_only, 0, 0, 0, 0, NULL, NULL},
        {"cpu-model", CLI_STRING, &o->cpu_model, 0, 0, 0, 0, NULL, NULL},
    };
    _Static_assert(sizeof rows / sizeof rows[0] <= MAX_RUN_VALUES, "raise MAX_RUN_VALUES");
    memcpy(v, rows, sizeof rows);
    return sizeof rows / sizeof rows[0];
}

/* One special option c (name: its long name) with optarg. 0, or -1 after a message. */
static int parse_special(struct run *r, int c, const char *name)
{
    char rerr[256];
    switch (c) {
    case OPT_CHECK_WORKERS:
        r->rcfg.check_workers = true;
        r->round_opt = "check-workers";
        return 0;
    case OPT_ATTACH:
    case OPT_ROUND:
        if (round_config_set(&r->rcfg, c == OPT_ATTACH ? "rate" : name, optarg, rerr,
                             sizeof rerr) < 0) {
            if (c == OPT_ATTACH)
                jx_err("--attach %s: expected rounds per second such as 5/s or 0.5/s "
                       "(more than 0, at most 1000/s)", optarg);
            else
                jx_err("--%s", rerr);
            return -1;
        }
        r->attach |= c == OPT_ATTACH;
        if (c == OPT_ROUND)
            r->round_opt = name;
        return 0;
    case OPT_EXPLORE_STRATEGY:
        r->ecfg.timed_only = strcmp(optarg, "timed") == 0; /* explore_timed.h's runs alone */
        if (!r->ecfg.timed_only && ex_online_from_name(optarg, &r->ecfg.strategy) < 0) {
            jx_err("--explore-strategy %s: expected portfolio, pct, pos, random, rf, window, "
                   "flip, nest, sweep, wake, lanes or timed", optarg);
            return -1;
        }
        r->explore_strategy_given = true;
        return 0;
    case OPT_TIMERS: /* explore_timers.h */
        if (strcmp(optarg, "strict") && strcmp(optarg, "early")) {
            jx_err("--timers %s: expected strict (a timer never ends before its deadline) or "
                   "early (the default: exploration may end one early)", optarg);
            return -1;
        }
        r->ecfg.timers_strict = !strcmp(optarg, "strict");
        r->timers_given = true;
        return 0;
    case OPT_ENV:
        if (!strchr(optarg, '=') || r->envc == MAX_ENV) {
            jx_err("--env %s: expected K=V (at most %d)", optarg, MAX_ENV);
            return -1;
        }
        r->envp[r->envc++] = optarg;
        return 0;
    case OPT_RO_DIR:
        if (r->opt.n_ro_dirs == VM_MAX_RO_DIRS) {
            jx_err("--ro-dir %s: at most %d directories (grant a common parent instead)", optarg,
                   VM_MAX_RO_DIRS);
            return -1;
        }
        r->opt.ro_dirs[r->opt.n_ro_dirs++] = optarg;
        return 0;
    case OPT_POLICY:
        if (!strcmp(optarg, "roundrobin"))
            r->opt.roundrobin = true;
        else if (!strcmp(optarg, "continue"))
            r->opt.roundrobin = false;
        else {
            jx_err("--policy %s: expected roundrobin or continue", optarg);
            return -1;
        }
        return 0;
    default:
        jinx_vmm_usage(stderr);
        return -1;
    }
}

/* The options, before or after IMAGE. 0, 1 when --help was answered, -1 on an error. */
static int parse_args(struct run *r, int argc, char **argv, char **posv)
{
    struct cli_value values[MAX_RUN_VALUES];
    size_t nv = run_values(r, values);
    struct option lo[MAX_RUN_VALUES + sizeof run_specials / sizeof run_specials[0]];
    cli_value_longopts(values, nv, run_specials, lo, sizeof lo / sizeof lo[0]);
    cli_init(&r->cl, "run", argc, argv, posv);
    int c, li;
    while ((c = cli_next(&r->cl, "h", lo, &li)) != CLI_END) {
        if (c == CLI_ERROR) {
            jx_err("%s (jinx-vmm --help lists the options; arguments of the program that "
                   "start with '-' go after --)", r->cl.err);
            return -1;
        }
        if (c == OPT_HELP || c == 'h') {
            jinx_vmm_usage(stdout);
            return 1;
        }
        if (c == CLI_VALUE_ID) {
            if (cli_value_set(&values[li], optarg, r->err, sizeof r->err) < 0) {
                jx_err("%s", r->err);
                return -1;
            }
        } else if (parse_special(r, c, lo[li].name) < 0) {
            return -1;
        }
    }
    r->err[0] = 0;
    return 0;
}

/* Options that only make sense together, or not at all. 0, or -1 after a message. */
static int check_args(struct run *r)
{
    if (r->opt.schedule_path && !r->opt.record_ns)
        r->opt.serial = true; /* a schedule alone means a serialized run from the start */
    if (r->opt.simulate && !r->opt.record_ns) {
        jx_err("--simulate needs --record (the fragment to simulate)");
        return -1;
    }
    if (r->opt.record_ns && r->opt.serial) {
        jx_err("--record records one fragment of a free run; it cannot be combined with --serial");
        return -1;
    }
    if ((r->opt.serial || r->opt.record_ns) && r->opt.selftest_rounds) {
        jx_err("--serial and --snapshot-selftest cannot be combined yet");
        return -1;
    }
    if (r->opt.trace_path && !r->opt.serial && !r->opt.record_ns) {
        jx_err("--trace needs --serial or --record (cue points are recorded in serialized "
               "execution)");
        return -1;
    }
    if (r->opt.no_pin && r->opt.pin_cpu_given) {
        jx_err("--pin-cpu and --no-pin contradict each other: give one of them");
        return -1;
    }
    if (r->round_opt && !r->attach) {
        jx_err("--%s configures --attach: add --attach RATE (e.g. --attach 5/s)", r->round_opt);
        return -1;
    }
    const char *explore_opt = r->explore_runs_given ? "explore-runs"
                              : r->explore_depth_given ? "explore-depth"
                              : r->explore_strategy_given ? "explore-strategy"
                              : r->timers_given ? "timers"
                              : r->ecfg.verbose ? "verbose-explore"
                              : r->ecfg.no_stress ? "no-stress-runs"
                              : r->ecfg.replayable_only ? "replayable-only" : NULL;
    if (explore_opt && !r->explore) {
        jx_err("--%s configures --explore: add --explore DUR (e.g. --explore 30s)", explore_opt);
        return -1;
    }
    r->dev_mode = r->opt.serial || r->opt.record_ns || r->opt.selftest_rounds;
    if (r->explore && r->dev_mode) {
        jx_err("--explore runs its own serialized execution: it cannot be combined with "
               "--serial, --record, --schedule or --snapshot-selftest");
        return -1;
    }
    if (r->attach && r->dev_mode) {
        jx_err("--attach needs free execution: it cannot be combined with --serial, --record, "
               "--schedule or --snapshot-selftest");
        return -1;
    }
    if (r->seed_given)
        r->rcfg.seed = r->opt.seed; /* one --seed makes the whole run reproducible */
    r->ecfg.seed = r->opt.seed;
    r->ecfg.then_rounds = r->attach; /* a program too long for whole runs gets rounds */
    r->ecfg.rounds = r->rcfg;
    if (r->cl.npos < 1) {
        jx_err("run: no IMAGE given");
        jinx_vmm_usage(stderr);
        return -1;
    }
    return 0;
}

/* The VM with the image, the mode's state, the shutdown handler, the control socket and
 * --attach's rounds. 0, or -1 after a message (the VM is destroyed). */
static int set_up(struct run *r, struct vm *vm)
{
    if (r->opt.dump_dir && dump_check_dir(r->opt.dump_dir, r->err, sizeof r->err) < 0) {
        jx_err("%s", r->err);
        return -1;
    }
    struct elf_image probe;
    if (elf_open(r->cl.pos[0], &probe, r->err, sizeof r->err) < 0) {
        jx_err("%s", r->err);
        return -1;
    }
    /* An ASan or LSan build: LeakSanitizer's fork at exit cannot work in the guest
     * (sanenv.h): it is turned off, and the user told. */
    const char *leak_var = sanenv_leak_var(&probe);
    if (leak_var) {
        size_t vl = strlen(leak_var);
        int at = -1;
        for (int i = 0; i < r->envc; i++)
            if (!strncmp(r->envp[i], leak_var, vl) && r->envp[i][vl] == '=')
                at = i;
        bool own = at >= 0 && strstr(r->envp[at], "detect_leaks");
        if (sanenv_leak_options(leak_var, at >= 0 ? r->envp[at] : NULL, r->asan_env,
                                sizeof r->asan_env)) {
            if (at >= 0)
                r->envp[at] = r->asan_env;
            else if (r->envc < MAX_ENV)
                r->envp[r->envc++] = r->asan_env;
        }
        if (!own && !r->opt.quiet)
            fprintf(stderr, "jinx-vmm: LeakSanitizer off (detect_leaks=0 added to %s): its leak "
                    "check at exit needs a fork, which a jinx guest cannot do; leaks are not "
                    "reported\n", leak_var);
    }
    /* A dynamically linked sanitizer build resolves its symbols at load time
     * (LD_BIND_NOW), in free execution before its first thread starts, instead of lazily
     * at each first call: lazy binding's writes to the GOT and ld.so's state, on pages
     * every thread shares, were a third of a small UBSan build's cue points after its
     * first clone (1239 -> 771, docs/sanitizers.md). Only sanitizer builds, where it was
     * measured with the rest of their exploration: the dynamic corpus's cxx-race, found
     * by flip at schedule 3 with lazy binding, was not found in 109-417 schedules with
     * it. The user's own --env LD_BIND_NOW=... is kept. */
    if (probe.interp[0] && sanenv_uses_sanitizer(&probe)) {
        bool own = false;
        for (int i = 0; i < r->envc; i++)
            own |= !strncmp(r->envp[i], "LD_BIND_NOW=", 12);
        if (!own && r->envc < MAX_ENV)
            r->envp[r->envc++] = "LD_BIND_NOW=1";
    }
    elf_free(&probe);

    if (vm_create(vm, &r->opt, r->err, sizeof r->err) < 0) {
        jx_err("%s", r->err);
        vm_destroy(vm);
        return -1;
    }
    if (vm_load(vm, r->cl.pos[0], r->cl.npos, r->cl.pos, r->envc, r->envp, r->err,
                sizeof r->err) < 0) {
        jx_err("%s", r->err);
        vm_destroy(vm);
        return -1;
    }
    r->want_serial = r->opt.serial || r->opt.record_ns || r->explore;
    if (r->want_serial && !vm->cpuid_hidden && !(vm->patch_kinds & PATCH_KIND_BIT(PATCH_CPUID)))
        jx_err("warning: this host cannot hide RDRAND/RDSEED from the guest (PVM without "
               "CPUID faulting): a program that uses them, or the APIC ID that CPUID leaf 1 "
               "shows (glibc's startup reads it), is not deterministic here; the program also "
               "reads the host's CPUID, not CPU model %s's (docs/cpu-models.md)", vm->cpu_model);
    if (r->want_serial && serialize_init(vm, r->opt.schedule_path, r->opt.roundrobin,
                                      r->opt.spin_threshold, r->err, sizeof r->err) < 0) {
        jx_err("%s", r->err);
        vm_destroy(vm);
        return -1;
    }
    if (r->opt.record_ns)
        vm->ser->on = false; /* free until the fragment */
    bool sparse = r->opt.serial && !r->explore && vm->ser->sched.sparse;
    if (sparse) {
        /* A sparse --schedule: every page mapped, its points planted (sched/sparse.h). */
        pthread_mutex_lock(&vm->lock);
        sparse_begin_locked(vm, &vm->ser->sched);
        pthread_mutex_unlock(&vm->lock);
    }
    if ((r->opt.serial || r->explore) && !r->opt.no_crew && !sparse && crew_start(vm) < 0) {
        jx_err("%s", r->err[0] ? r->err : "cannot start page-ownership recording");
        vm_destroy(vm);
        return -1;
    }
    /* Clean SIGINT/SIGTERM shutdown (shutdown_start must precede every other thread),
     * then the control socket: not in the developer modes (--serial, --record,
     * --snapshot-selftest), whose output must be the same from run to run and which
     * rounds cannot join. */
    if (shutdown_start(vm, r->err, sizeof r->err) < 0) {
        jx_err("%s", r->err);
        vm_destroy(vm);
        return -1;
    }
    if (!r->no_control && !r->dev_mode) {
        vm->control = control_start(vm, r->err, sizeof r->err);
        if (!vm->control) {
            jx_err("%s", r->err);
            shutdown_end();
            vm_destroy(vm);
            return -1;
        }
        shutdown_cleanup_path(control_path(vm->control));
        fprintf(stderr, "jinx-vmm: control socket %s (jinxctl attach --rate 5/s)\n",
                control_path(vm->control));
    }
    if (r->explore && explore_start(vm, &r->ecfg, r->err, sizeof r->err) < 0) {
        jx_err("--explore: %s", r->err);
        control_stop(vm->control);
        shutdown_end();
        vm_destroy(vm);
        return -1;
    }
    if (r->attach && !r->explore && round_attach(vm, &r->rcfg, r->err, sizeof r->err) < 0) {
        jx_err("--attach: %s", r->err);
        control_stop(vm->control);
        shutdown_end();
        vm_destroy(vm);
        return -1;
    }
    return 0;
}

/* After the run: rounds and control socket end, the outcome is reported and dumped.
 * Returns the exit status. */
static int end_run(struct run *r, struct vm *vm)
{
    r->had_rounds = vm->rounds != NULL;
    /* A retired bug's round records go into the dump; they borrow from the round driver
     * (its snapshot), so they are encoded before round_shutdown frees it. */
    struct dump_record *rrec = NULL;
    size_t nrrec = 0;
    const struct round_retired *retired = round_retired(vm);
    if (!retired)
        retired = explore_retired(vm); /* a whole run's bug (rounds/explore.h) */
    /* A whole run's bug may end in a nonzero exit status (explore.c): dumped too, so that
     * it replays like a crash. */
    /* And so is a sanitizer's report with its failing exit (ASan's exit 1), wherever it
     * was met: the dump shows and replays the report (dump/sanrec.h). */
    struct san_report rep;
    bool sanitized = vm->out.kind == OUT_EXIT && vm->out.status && outcome_sanreport(vm, &rep);
    bool want_dump = dump_wanted(&vm->out) || sanitized ||
                     (retired && retired->round == 0 && vm->out.kind == OUT_EXIT && vm->out.status);
    if (r->opt.dump_dir && want_dump && retired &&
        dumpround_build(vm, retired, &rrec, &nrrec, r->err, sizeof r->err) < 0)
        jx_err("the crash dump will lack the round's records (no replay): %s", r->err);
    round_status(vm, &r->rstats);
    round_shutdown(vm); /* no events after this: the socket goes next */
    fflush(stdout);
    control_stop(vm->control); /* tells followers how the VM ended, removes the socket */
    vm->control = NULL;
    int interrupted = shutdown_end();
    int status = outcome_exit_status(&vm->out);
    if (interrupted) {
        fprintf(stderr, "jinx-vmm: interrupted by %s: the guest was stopped%s; exit status %d\n",
                signal_name(interrupted),
                r->no_control || r->dev_mode ? "" : ", control socket removed", 128 + interrupted);
        status = 128 + interrupted;
    }
    if (r->opt.selftest_rounds) {
        fprintf(stderr, "jinx-vmm: snapshot selftest: %s\n",
                r->selftest_failed == 0 ? "PASS" : "FAIL");
        if (r->selftest_failed)
            status = EXIT_VMM_ERROR;
    }
    if (!(r->opt.quiet && vm->out.kind == OUT_EXIT && vm->out.status == 0) && !interrupted)
        outcome_print(vm, &vm->out, stderr);
    if (r->opt.dump_dir && want_dump) {
        /* vm_run has joined every vCPU thread: the VM is stopped as the crash left it. */
        struct dump_result dr;
        int drc = dump_write(vm, &vm->out, r->opt.dump_dir, rrec, nrrec, &dr, r->err,
                             sizeof r->err);
        if (drc < 0)
            jx_err("no crash dump written: %s", r->err);
        else
            fprintf(stderr, "jinx-vmm: dump written to %s (+ .core)\n", dr.jinxdump);
        if (r->opt.stats && drc == 0)
            fprintf(stderr, "jinx-vmm: stats: dump_ms=%.2f core_bytes=%llu core_disk_bytes=%llu "
                    "jinxdump_bytes=%llu snapshot_bytes=%llu\n", dr.ns / 1e6,
                    (unsigned long long)dr.core_size, (unsigned long long)dr.core_disk,
                    (unsigned long long)dr.jinxdump_size,
                    (unsigned long long)(nrrec ? rrec[0].len : 0));
    }
    dumpround_free(rrec, nrrec);
    if (r->opt.out_dir && vm->files && !interrupted &&
        files_copy_out(vm->files, r->opt.out_dir, r->err, sizeof r->err) < 0)
        jx_err("%s", r->err); /* the program's own files, copied at its end */
    if (r->explore) {
        struct explore_stats xst;
        char js[1536];
        explore_stats(vm, &xst);
        if (explore_stats_json(&xst, js, sizeof js) == 0)
            fprintf(stderr, "jinx-vmm: explore: %s\n", js);
        explore_shutdown(vm);
    }
    return status;
}

/* --trace, --report and --stats, then the VM goes. */
static void report_and_free(struct run *r, struct vm *vm)
{
    if (r->want_serial && !r->explore) {
        fprintf(stderr, "jinx-vmm: serial: %llu cue points (%llu memory accesses, %llu shared "
                "pages of %zu watched), %llu scheduled steps, %llu divergences, %llu spin "
                "deprioritisations\n",
                (unsigned long long)vm->ser->cues, (unsigned long long)vm->crew->accesses,
                (unsigned long long)vm->crew->shared_pages, vm->crew->watched,
                (unsigned long long)vm->ser->cursor.steps,
                (unsigned long long)vm->ser->cursor.divergences,
                (unsigned long long)vm->ser->spin.detections);
        if (vm->ser->sched.ntimers) /* a schedule's timers that end early: docs/timers.md */
            fprintf(stderr, "jinx-vmm: timers: %u of the schedule's %u timers ended early, %llu "
                    "found no timer to end\n", vm->ser->nended, vm->ser->sched.ntimers,
                    (unsigned long long)vm->ser->timer_diverged);
        fprintf(stderr, "jinx-vmm: steps: %llu single steps, %llu ended in the guest (%llu "
                "kicks ran on to the handler's end)\n",
                (unsigned long long)vm->crew->steps, (unsigned long long)vm->crew->guest_steps,
                (unsigned long long)vm->crew->guest_busy);
        fprintf(stderr, "jinx-vmm: guest cues: %llu memory cue points taken in the guest, %llu "
                "runs allowed them\n", (unsigned long long)vm->crew->guest_cues,
                (unsigned long long)vm->crew->guest_cue_runs);
        if (r->opt.trace_path) {
            FILE *tf = strcmp(r->opt.trace_path, "-") ? fopen(r->opt.trace_path, "w") : stdout;
            if (!tf)
                jx_err("cannot write trace %s", r->opt.trace_path);
            else {
                ex_trace_print(tf, &vm->ser->trace);
                if (tf != stdout)
                    fclose(tf);
            }
        }
    }
    if (r->opt.report_path && outcome_write_json(vm, &vm->out, r->opt.report_path) < 0)
        jx_err("cannot write report %s", r->opt.report_path);
    if (r->opt.stats && r->had_rounds) {
        char js[3072];
        if (round_status_json(&r->rstats, js, sizeof js) == 0)
            fprintf(stderr, "jinx-vmm: rounds: %s\n", js);
    }
    if (r->opt.stats) {
        uint64_t end = mono_ns();
        unsigned scan_hits, scan_misses;
        scancache_counts(&scan_hits, &scan_misses);
        fprintf(stderr,
                "jinx-vmm: stats: boot_to_first_guest_instruction_us=%.1f "
                "boot_to_first_syscall_us=%.1f boot_to_first_clone_us=%.1f wall_ms=%.2f exits=%llu syscalls=%llu vcpus=%d "
                "guest_frames_used=%llu cpu_model_cache=%s scan_cache_hits=%u scan_cache_misses=%u "
                "pin_cpu=%d\n",
                vm->t_first_run ? (vm->t_first_run - vm->t_process_start) / 1e3 : -1.0,
                vm->t_first_exit ? (vm->t_first_exit - vm->t_process_start) / 1e3 : -1.0,
                vm->t_first_clone ? (vm->t_first_clone - vm->t_process_start) / 1e3 : -1.0,
                (end - vm->t_process_start) / 1e6, (unsigned long long)atomic_load(&vm->n_exits),
                (unsigned long long)atomic_load(&vm->n_syscalls), vm->nvcpus,
                (unsigned long long)vm->gm.used, cpucache_last(), scan_hits, scan_misses,
                pin_cpu_of(vm));
    }
    if (r->want_serial || r->had_rounds)
        serialize_free(vm);
    vm_destroy(vm);
}

int cmd_run(int argc, char **argv)
{
    static struct run r;
    r.opt = (struct vm_options){.max_vcpus = MAX_VCPUS, .mem = 512ULL << 20, .seed = 1,
                                .thread_stack = 1ULL << 20, .selftest_interval_ns = 5000000,
                                .roundrobin = true, .spin_threshold = EX_SPIN_THRESHOLD,
                                .max_dump_size = 4ULL << 30};
    round_config_default(&r.rcfg);
    explore_config_default(&r.ecfg);
    char *posv[argc > 0 ? argc : 1];
    int rc = parse_args(&r, argc, argv, posv);
    if (rc != 0)
        return rc > 0 ? 0 : EXIT_VMM_ERROR;
    if (check_args(&r) < 0)
        return EXIT_VMM_ERROR;
    static struct vm vm;
    if (set_up(&r, &vm) < 0)
        return EXIT_VMM_ERROR;
    run_vm(&r, &vm);
    int status = end_run(&r, &vm);
    report_and_free(&r, &vm);
    return status;
}
