/* `jinx-vmm run`: the options, the VM with the mode they ask for, the run, then the
 * reports. cmd_run reads as its phases: parse, check, set up, run, end, report. */
#include "cli/commands.h"
#include "lib/options.h"
#include "control/control.h"
#include "control/shutdown.h"
#include "dump/dump.h"
#include "kvm/vm.h"
#include "lib/util.h"
#include "linux/outcome.h"
#include "rounds/dumpround.h"
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

enum { OPT_VCPUS = 256, OPT_MEM, OPT_TIMEOUT, OPT_SEED, OPT_ENV, OPT_REPORT, OPT_STATS,
       OPT_QUIET, OPT_TSTACK, OPT_HELP, OPT_SELFTEST, OPT_SELFTEST_INT, OPT_SERIAL,
       OPT_SCHEDULE, OPT_TRACE, OPT_POLICY, OPT_NO_CREW, OPT_AFTER, OPT_RECORD, OPT_SIMULATE,
       OPT_NO_CONTROL, OPT_ATTACH, OPT_ROUND, OPT_VERBOSE_ROUNDS, OPT_FIRST,
       OPT_DUMP_DIR, OPT_SPIN, OPT_CHECK_WORKERS, OPT_MAX_DUMP };

static const struct option run_options[] = {
    {"vcpus", required_argument, 0, OPT_VCPUS}, {"mem", required_argument, 0, OPT_MEM},
    {"timeout", required_argument, 0, OPT_TIMEOUT}, {"seed", required_argument, 0, OPT_SEED},
    {"env", required_argument, 0, OPT_ENV}, {"report", required_argument, 0, OPT_REPORT},
    {"stats", no_argument, 0, OPT_STATS}, {"quiet", no_argument, 0, OPT_QUIET},
    {"thread-stack", required_argument, 0, OPT_TSTACK}, {"help", no_argument, 0, OPT_HELP},
    {"snapshot-selftest", required_argument, 0, OPT_SELFTEST},
    {"selftest-interval", required_argument, 0, OPT_SELFTEST_INT},
    {"serial", no_argument, 0, OPT_SERIAL}, {"schedule", required_argument, 0, OPT_SCHEDULE},
    {"trace", required_argument, 0, OPT_TRACE}, {"policy", required_argument, 0, OPT_POLICY},
    {"no-memory-cues", no_argument, 0, OPT_NO_CREW},
    {"spin-threshold", required_argument, 0, OPT_SPIN},
    {"after", required_argument, 0, OPT_AFTER}, {"record", required_argument, 0, OPT_RECORD},
    {"simulate", required_argument, 0, OPT_SIMULATE},
    {"no-control", no_argument, 0, OPT_NO_CONTROL}, {"attach", required_argument, 0, OPT_ATTACH},
    {"strategy", required_argument, 0, OPT_ROUND}, {"depth", required_argument, 0, OPT_ROUND},
    {"sims", required_argument, 0, OPT_ROUND}, {"fragment", required_argument, 0, OPT_ROUND},
    {"tail", required_argument, 0, OPT_ROUND}, {"max-duty", required_argument, 0, OPT_ROUND},
    {"workers", required_argument, 0, OPT_ROUND},
    {"fragment-wall", required_argument, 0, OPT_ROUND},
    {"check-workers", no_argument, 0, OPT_CHECK_WORKERS},
    {"verbose-rounds", no_argument, 0, OPT_VERBOSE_ROUNDS},
    {"first", required_argument, 0, OPT_FIRST},
    {"dump-dir", required_argument, 0, OPT_DUMP_DIR},
    {"max-dump-size", required_argument, 0, OPT_MAX_DUMP},
    {0, 0, 0, 0}};

/* What the command line asked for, and what the phases pass on. */
struct run {
    struct vm_options opt;
    char *envp[MAX_ENV];
    int envc;
    bool no_control, attach, seed_given;
    const char *round_opt;      /* a round option given (it needs --attach) */
    struct round_config rcfg;   /* --attach and its round options (round.h) */
    struct cli cl;
    bool dev_mode;              /* --serial, --record or --snapshot-selftest */
    bool want_serial;           /* serialized execution is set up (--serial, --record) */
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

/* One option c (name: its long name) with optarg. 0, or -1 after a message. */
static int parse_option(struct run *r, int c, const char *name)
{
    char rerr[256];
    uint64_t n;
    switch (c) {
    case OPT_NO_CONTROL: r->no_control = true; break;
    case OPT_CHECK_WORKERS:
        r->rcfg.check_workers = true;
        r->round_opt = "check-workers";
        break;
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
        break;
    case OPT_VCPUS:
        if (!parse_u64(optarg, &n) || n < 1 || n > MAX_VCPUS) {
            jx_err("--vcpus %s: expected a number from 1 to %d", optarg, MAX_VCPUS);
            return -1;
        }
        r->opt.max_vcpus = (int)n;
        r->opt.vcpus_given = true;
        break;
    case OPT_MEM:
        if (!parse_size(optarg, &r->opt.mem) || r->opt.mem < (16ULL << 20) ||
            r->opt.mem > MAX_GUEST_MEM || r->opt.mem % (2ULL << 20)) {
            jx_err("--mem %s: expected a size from 16M to 3G in whole MiB pairs (e.g. 256M)",
                   optarg);
            return -1;
        }
        break;
    case OPT_TIMEOUT:
        if (!parse_duration(optarg, &r->opt.timeout_ns) || !r->opt.timeout_ns) {
            jx_err("--timeout %s: expected a duration such as 10s, 500ms or 2m", optarg);
            return -1;
        }
        break;
    case OPT_SEED:
        if (!parse_u64(optarg, &r->opt.seed)) {
            jx_err("--seed %s: expected an unsigned number", optarg);
            return -1;
        }
        r->seed_given = true;
        break;
    case OPT_TSTACK:
        if (!parse_size(optarg, &r->opt.thread_stack) || r->opt.thread_stack < (16 << 10) ||
            r->opt.thread_stack > (8 << 20)) {
            jx_err("--thread-stack %s: expected a size from 16K to 8M", optarg);
            return -1;
        }
        break;
    case OPT_ENV:
        if (!strchr(optarg, '=') || r->envc == MAX_ENV) {
            jx_err("--env %s: expected K=V (at most %d)", optarg, MAX_ENV);
            return -1;
        }
        r->envp[r->envc++] = optarg;
        break;
    case OPT_SELFTEST:
        if (!parse_u64(optarg, &n) || n < 1 || n > 100000) {
            jx_err("--snapshot-selftest %s: expected a number of rounds", optarg);
            return -1;
        }
        r->opt.selftest_rounds = (int)n;
        break;
    case OPT_SELFTEST_INT:
        if (!parse_duration(optarg, &r->opt.selftest_interval_ns) || !r->opt.selftest_interval_ns) {
            jx_err("--selftest-interval %s: expected a duration such as 5ms", optarg);
            return -1;
        }
        break;
    case OPT_SERIAL: r->opt.serial = true; break;
    case OPT_SCHEDULE: r->opt.schedule_path = optarg; break;
    case OPT_TRACE: r->opt.trace_path = optarg; break;
    case OPT_NO_CREW: r->opt.no_crew = true; break;
    case OPT_SPIN:
        if (!parse_u64(optarg, &n) || n > 1000000) {
            jx_err("--spin-threshold %s: expected a number of reads (0: off)", optarg);
            return -1;
        }
        r->opt.spin_threshold = (uint32_t)n;
        break;
    case OPT_SIMULATE:
        if (!parse_u64(optarg, &n) || n < 1 || n > 100000) {
            jx_err("--simulate %s: expected a number of simulations", optarg);
            return -1;
        }
        r->opt.simulate = (int)n;
        break;
    case OPT_AFTER:
    case OPT_RECORD:
        if (!parse_duration(optarg, c == OPT_AFTER ? &r->opt.after_ns : &r->opt.record_ns) ||
            (c == OPT_RECORD && r->opt.record_ns < 1000)) {
            jx_err("--%s %s: expected a duration such as 50ms or 1ms",
                   c == OPT_AFTER ? "after" : "record", optarg);
            return -1;
        }
        break;
    case OPT_POLICY:
        if (!strcmp(optarg, "roundrobin"))
            r->opt.roundrobin = true;
        else if (!strcmp(optarg, "continue"))
            r->opt.roundrobin = false;
        else {
            jx_err("--policy %s: expected roundrobin or continue", optarg);
            return -1;
        }
        break;
    case OPT_VERBOSE_ROUNDS: r->rcfg.verbose = true; break;
    case OPT_FIRST:
        if (!parse_duration(optarg, &r->rcfg.first_ns) || r->rcfg.first_ns > 3600000000000ULL) {
            jx_err("--first %s: expected a duration such as 1ms or 2s", optarg);
            return -1;
        }
        break;
    case OPT_REPORT: r->opt.report_path = optarg; break;
    case OPT_DUMP_DIR: r->opt.dump_dir = optarg; break;
    case OPT_MAX_DUMP:
        if (!parse_size(optarg, &r->opt.max_dump_size)) {
            jx_err("--max-dump-size %s: expected a size such as 512M or 2G (0: no cap)",
                   optarg);
            return -1;
        }
        break;
    case OPT_STATS: r->opt.stats = true; break;
    case OPT_QUIET: r->opt.quiet = true; break;
    }
    return 0;
}

/* The options, before or after IMAGE. 0, 1 when --help was answered, -1 on an error. */
static int parse_args(struct run *r, int argc, char **argv, char **posv)
{
    cli_init(&r->cl, "run", argc, argv, posv);
    int c, li;
    while ((c = cli_next(&r->cl, "h", run_options, &li)) != CLI_END) {
        if (c == CLI_ERROR) {
            jx_err("%s (jinx-vmm --help lists the options; arguments of the program that "
                   "start with '-' go after --)", r->cl.err);
            return -1;
        }
        if (c == OPT_HELP || c == 'h') {
            jinx_vmm_usage(stdout);
            return 1;
        }
        if (c < OPT_VCPUS) {
            jinx_vmm_usage(stderr);
            return -1;
        }
        if (parse_option(r, c, run_options[li].name) < 0)
            return -1;
    }
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
    if (r->round_opt && !r->attach) {
        jx_err("--%s configures --attach: add --attach RATE (e.g. --attach 5/s)", r->round_opt);
        return -1;
    }
    r->dev_mode = r->opt.serial || r->opt.record_ns || r->opt.selftest_rounds;
    if (r->attach && r->dev_mode) {
        jx_err("--attach needs free execution: it cannot be combined with --serial, --record, "
               "--schedule or --snapshot-selftest");
        return -1;
    }
    if (r->seed_given)
        r->rcfg.seed = r->opt.seed; /* one --seed makes the whole run reproducible */
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
    r->want_serial = r->opt.serial || r->opt.record_ns;
    if (r->want_serial && !vm->cpuid_hidden)
        jx_err("warning: this host cannot hide RDRAND/RDSEED from the guest (PVM without "
               "CPUID faulting): a program that uses them, or the APIC ID that CPUID leaf 1 "
               "shows (glibc's startup reads it), is not deterministic here");
    if (r->want_serial && serialize_init(vm, r->opt.schedule_path, r->opt.roundrobin,
                                      r->opt.spin_threshold, r->err, sizeof r->err) < 0) {
        jx_err("%s", r->err);
        vm_destroy(vm);
        return -1;
    }
    if (r->opt.record_ns)
        vm->ser->on = false; /* free until the fragment */
    if (r->opt.serial && !r->opt.no_crew && crew_start(vm) < 0) {
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
    if (r->attach && round_attach(vm, &r->rcfg, r->err, sizeof r->err) < 0) {
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
    if (r->opt.dump_dir && dump_wanted(&vm->out) && retired &&
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
    if (r->opt.dump_dir && dump_wanted(&vm->out)) {
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
    return status;
}

/* --trace, --report and --stats, then the VM goes. */
static void report_and_free(struct run *r, struct vm *vm)
{
    if (r->want_serial) {
        fprintf(stderr, "jinx-vmm: serial: %llu cue points (%llu memory accesses, %llu shared "
                "pages of %zu watched), %llu scheduled steps, %llu divergences, %llu spin "
                "deprioritisations\n",
                (unsigned long long)vm->ser->cues, (unsigned long long)vm->crew->accesses,
                (unsigned long long)vm->crew->shared_pages, vm->crew->watched,
                (unsigned long long)vm->ser->cursor.steps,
                (unsigned long long)vm->ser->cursor.divergences,
                (unsigned long long)vm->ser->spin.detections);
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
        char js[2048];
        if (round_status_json(&r->rstats, js, sizeof js) == 0)
            fprintf(stderr, "jinx-vmm: rounds: %s\n", js);
    }
    if (r->opt.stats) {
        uint64_t end = mono_ns();
        fprintf(stderr,
                "jinx-vmm: stats: boot_to_first_guest_instruction_us=%.1f "
                "boot_to_first_syscall_us=%.1f wall_ms=%.2f exits=%llu syscalls=%llu vcpus=%d "
                "guest_frames_used=%llu\n",
                vm->t_first_run ? (vm->t_first_run - vm->t_process_start) / 1e3 : -1.0,
                vm->t_first_exit ? (vm->t_first_exit - vm->t_process_start) / 1e3 : -1.0,
                (end - vm->t_process_start) / 1e6, (unsigned long long)atomic_load(&vm->n_exits),
                (unsigned long long)atomic_load(&vm->n_syscalls), vm->nvcpus,
                (unsigned long long)vm->gm.used);
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
