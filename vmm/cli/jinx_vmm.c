/* jinx-vmm: command line. */
#include "cli/options.h"
#include "control/control.h"
#include "dump/dump.h"
#include "rounds/dumpround.h"
#include "dump/replay.h"
#include "linux/outcome.h"
#include "rounds/round.h"
#include "rounds/round_config.h"
#include "control/shutdown.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "sched/crew.h"
#include "sched/selftest.h"
#include "sched/serialize.h"
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ENV 256

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jinx-vmm run [options] IMAGE [ARG...] [options] [-- ARG...]\n"
        "       jinx-vmm replay [--verbose] [--image PATH] [--timeout DUR] DUMP.jinxdump\n"
        "\n"
        "Boots IMAGE (a static x86-64 Linux program, e.g. built with musl-gcc -static) in a\n"
        "KVM virtual machine, one vCPU per guest thread, all running in parallel.\n"
        "\n"
        "options:\n"
        "  --vcpus N          most guest threads at once (default and max %d; past it\n"
        "                     clone() returns EAGAIN, a jinx limit)\n"
        "  --mem SIZE         guest memory (default 512M; 16M..3G; the program's mmap/brk get\n"
        "                     ENOMEM past it)\n"
        "  --timeout DUR      stop with outcome 'timeout' after DUR wall time (10s, 500ms, 2m)\n"
        "  --seed N           seed for getrandom and AT_RANDOM (default 1)\n"
        "  --thread-stack SIZE  default stack for new threads (default 1M; musl's is 128K)\n"
        "  --env K=V          add to the guest's environment (repeatable; default empty)\n"
        "  --report FILE      write the outcome as JSON to FILE\n"
        "  --dump-dir DIR     on a fatal signal or deadlock, write DIR/<image>-<time>.core (for\n"
        "                     gdb) and .jinxdump (for jinxctl inspect); default: no dump\n"
        "  --max-dump-size SIZE  refuse (never truncate) a dump whose files would take more\n"
        "                     than SIZE on disk together (default 4G; 0: no cap)\n"
        "  --stats            print boot time, exits and syscalls on stderr\n"
        "  --quiet            no report when the program exits with status 0\n"
        "  --no-control       no control socket (by default jinxctl can reach the VM through\n"
        "                     one: $JINX_RUNTIME_DIR, else $XDG_RUNTIME_DIR/jinx, else /tmp/jinx-UID)\n"
        "  --attach RATE      start simulation rounds at once, e.g. 5/s (as jinxctl attach), with\n"
        "                     --strategy S --depth D --sims K --fragment DUR --fragment-wall DUR\n"
        "                     --tail DUR --max-duty PCT\n"
        "                     (see jinxctl --help)\n"
        "  --serial           one thread at a time, switching at cue points (deterministic)\n"
        "  --schedule FILE    (with --serial) follow this schedule (text or JSON, docs/explorer.md)\n"
        "  --policy P         (with --serial) after the schedule: roundrobin (default) or continue\n"
        "  --trace FILE       (with --serial) write the cue-point trace to FILE (- for stdout)\n"
        "  --no-memory-cues   (with --serial) cue points at synchronization syscalls only\n"
        "  --spin-threshold N (with --serial) a thread that reads one unchanged location N\n"
        "                     times in a row is deprioritised (default 8; 0: off)\n"
        "  --after DUR --record DUR  run free for DUR, then record a serialized fragment of\n"
        "                     DUR virtual time (1 us per cue point), print its trace, go on\n"
        "  --simulate N       (with --record) run the fragment N times from one snapshot\n"
        "  --first DUR        (with --attach) free run before the first round (1ms)\n"
        "  --verbose-rounds   (with --attach) a line per round, not only notable ones\n"
        "  --workers N        (with --attach) worker VMs that simulate beside this one, 0..8\n"
        "                     (0: simulations one after the other here; default: docs/rounds.md)\n"
        "  --check-workers    (with --attach) re-run every simulation in the other VM and\n"
        "                     report any difference (worker determinism test)\n"
        "  --snapshot-selftest N  N times while it runs: snapshot, run on, restore, and check\n"
        "                     memory and vCPUs match exactly (--selftest-interval DUR, 5ms)\n"
        "\n"
        "Options may come before or after IMAGE; the program's arguments that start with\n"
        "'-' go after --.\n"
        "\n"
        "exit status: the program's own; 128+N if killed by signal N; 123 deadlock;\n"
        "124 timeout; 125 jinx-vmm could not run the image.\n",
        MAX_VCPUS);
}

enum { OPT_VCPUS = 256, OPT_MEM, OPT_TIMEOUT, OPT_SEED, OPT_ENV, OPT_REPORT, OPT_STATS,
       OPT_QUIET, OPT_TSTACK, OPT_HELP, OPT_SELFTEST, OPT_SELFTEST_INT, OPT_SERIAL,
       OPT_SCHEDULE, OPT_TRACE, OPT_POLICY, OPT_NO_CREW, OPT_AFTER, OPT_RECORD, OPT_SIMULATE,
       OPT_NO_CONTROL, OPT_ATTACH, OPT_ROUND, OPT_VERBOSE_ROUNDS, OPT_FIRST,
       OPT_DUMP_DIR, OPT_SPIN, OPT_CHECK_WORKERS, OPT_MAX_DUMP };

/* Runs the program: thread 1 starts, the developer modes (--record, --simulate,
 * --snapshot-selftest) drive the VM from this thread (they pause and resume it), then
 * the outcome is waited for. */
static void run_vm(struct vm *vm)
{
    if (vm_start(vm) < 0)
        return;
    if (vm->opt.record_ns) {
        if (vm->opt.simulate)
            vm->simulations_same = serial_simulate(vm, vm->opt.after_ns, vm->opt.record_ns,
                                                   vm->opt.simulate);
        else
            serial_record_fragment(vm, vm->opt.after_ns, vm->opt.record_ns);
    }
    if (vm->opt.selftest_rounds)
        vm->selftest_failed = selftest_run(vm, vm->opt.selftest_rounds,
                                           vm->opt.selftest_interval_ns);
    vm_wait(vm);
}

static int cmd_run(int argc, char **argv)
{
    struct vm_options opt = {.max_vcpus = MAX_VCPUS, .mem = 512ULL << 20, .seed = 1,
                             .thread_stack = 1ULL << 20, .selftest_interval_ns = 5000000,
                             .roundrobin = true, .spin_threshold = EX_SPIN_THRESHOLD,
                             .max_dump_size = 4ULL << 30};
    static char *envp[MAX_ENV];
    int envc = 0;
    static const struct option lo[] = {
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
    /* Control socket and --attach (control.h, round.h). */
    bool no_control = false, attach = false, seed_given = false;
    const char *round_opt = NULL;
    struct round_config rcfg;
    round_config_default(&rcfg);
    char rerr[256];
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    cli_init(&cl, "run", argc, argv, posv);
    int c, li;
    uint64_t n;
    while ((c = cli_next(&cl, "h", lo, &li)) != CLI_END) {
        switch (c) {
        case CLI_ERROR:
            jx_err("%s (jinx-vmm --help lists the options; arguments of the program that "
                   "start with '-' go after --)", cl.err);
            return EXIT_VMM_ERROR;
        case OPT_NO_CONTROL: no_control = true; break;
        case OPT_CHECK_WORKERS:
            rcfg.check_workers = true;
            round_opt = "check-workers";
            break;
        case OPT_ATTACH:
        case OPT_ROUND:
            if (round_config_set(&rcfg, c == OPT_ATTACH ? "rate" : lo[li].name, optarg, rerr,
                                 sizeof rerr) < 0) {
                if (c == OPT_ATTACH)
                    jx_err("--attach %s: expected rounds per second such as 5/s or 0.5/s "
                           "(more than 0, at most 1000/s)", optarg);
                else
                    jx_err("--%s", rerr);
                return EXIT_VMM_ERROR;
            }
            attach |= c == OPT_ATTACH;
            if (c == OPT_ROUND)
                round_opt = lo[li].name;
            break;
        case OPT_VCPUS:
            if (!parse_u64(optarg, &n) || n < 1 || n > MAX_VCPUS) {
                jx_err("--vcpus %s: expected a number from 1 to %d", optarg, MAX_VCPUS);
                return EXIT_VMM_ERROR;
            }
            opt.max_vcpus = (int)n;
            opt.vcpus_given = true;
            break;
        case OPT_MEM:
            if (!parse_size(optarg, &opt.mem) || opt.mem < (16ULL << 20) ||
                opt.mem > MAX_GUEST_MEM || opt.mem % (2ULL << 20)) {
                jx_err("--mem %s: expected a size from 16M to 3G in whole MiB pairs (e.g. 256M)",
                       optarg);
                return EXIT_VMM_ERROR;
            }
            break;
        case OPT_TIMEOUT:
            if (!parse_duration(optarg, &opt.timeout_ns) || !opt.timeout_ns) {
                jx_err("--timeout %s: expected a duration such as 10s, 500ms or 2m", optarg);
                return EXIT_VMM_ERROR;
            }
            break;
        case OPT_SEED:
            if (!parse_u64(optarg, &opt.seed)) {
                jx_err("--seed %s: expected an unsigned number", optarg);
                return EXIT_VMM_ERROR;
            }
            seed_given = true;
            break;
        case OPT_TSTACK:
            if (!parse_size(optarg, &opt.thread_stack) || opt.thread_stack < (16 << 10) ||
                opt.thread_stack > (8 << 20)) {
                jx_err("--thread-stack %s: expected a size from 16K to 8M", optarg);
                return EXIT_VMM_ERROR;
            }
            break;
        case OPT_ENV:
            if (!strchr(optarg, '=') || envc == MAX_ENV) {
                jx_err("--env %s: expected K=V (at most %d)", optarg, MAX_ENV);
                return EXIT_VMM_ERROR;
            }
            envp[envc++] = optarg;
            break;
        case OPT_SELFTEST:
            if (!parse_u64(optarg, &n) || n < 1 || n > 100000) {
                jx_err("--snapshot-selftest %s: expected a number of rounds", optarg);
                return EXIT_VMM_ERROR;
            }
            opt.selftest_rounds = (int)n;
            break;
        case OPT_SELFTEST_INT:
            if (!parse_duration(optarg, &opt.selftest_interval_ns) || !opt.selftest_interval_ns) {
                jx_err("--selftest-interval %s: expected a duration such as 5ms", optarg);
                return EXIT_VMM_ERROR;
            }
            break;
        case OPT_SERIAL: opt.serial = true; break;
        case OPT_SCHEDULE: opt.schedule_path = optarg; break;
        case OPT_TRACE: opt.trace_path = optarg; break;
        case OPT_NO_CREW: opt.no_crew = true; break;
        case OPT_SPIN:
            if (!parse_u64(optarg, &n) || n > 1000000) {
                jx_err("--spin-threshold %s: expected a number of reads (0: off)", optarg);
                return EXIT_VMM_ERROR;
            }
            opt.spin_threshold = (uint32_t)n;
            break;
        case OPT_SIMULATE:
            if (!parse_u64(optarg, &n) || n < 1 || n > 100000) {
                jx_err("--simulate %s: expected a number of simulations", optarg);
                return EXIT_VMM_ERROR;
            }
            opt.simulate = (int)n;
            break;
        case OPT_AFTER:
        case OPT_RECORD:
            if (!parse_duration(optarg, c == OPT_AFTER ? &opt.after_ns : &opt.record_ns) ||
                (c == OPT_RECORD && opt.record_ns < 1000)) {
                jx_err("--%s %s: expected a duration such as 50ms or 1ms",
                       c == OPT_AFTER ? "after" : "record", optarg);
                return EXIT_VMM_ERROR;
            }
            break;
        case OPT_POLICY:
            if (!strcmp(optarg, "roundrobin"))
                opt.roundrobin = true;
            else if (!strcmp(optarg, "continue"))
                opt.roundrobin = false;
            else {
                jx_err("--policy %s: expected roundrobin or continue", optarg);
                return EXIT_VMM_ERROR;
            }
            break;
        case OPT_VERBOSE_ROUNDS: rcfg.verbose = true; break;
        case OPT_FIRST:
            if (!parse_duration(optarg, &rcfg.first_ns) || rcfg.first_ns > 3600000000000ULL) {
                jx_err("--first %s: expected a duration such as 1ms or 2s", optarg);
                return EXIT_VMM_ERROR;
            }
            break;
        case OPT_REPORT: opt.report_path = optarg; break;
        case OPT_DUMP_DIR: opt.dump_dir = optarg; break;
        case OPT_MAX_DUMP:
            if (!parse_size(optarg, &opt.max_dump_size)) {
                jx_err("--max-dump-size %s: expected a size such as 512M or 2G (0: no cap)",
                       optarg);
                return EXIT_VMM_ERROR;
            }
            break;
        case OPT_STATS: opt.stats = true; break;
        case OPT_QUIET: opt.quiet = true; break;
        case OPT_HELP: case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_VMM_ERROR;
        }
    }
    if (opt.schedule_path && !opt.record_ns)
        opt.serial = true; /* a schedule alone means a serialized run from the start */
    if (opt.simulate && !opt.record_ns) {
        jx_err("--simulate needs --record (the fragment to simulate)");
        return EXIT_VMM_ERROR;
    }
    if (opt.record_ns && opt.serial) {
        jx_err("--record records one fragment of a free run; it cannot be combined with --serial");
        return EXIT_VMM_ERROR;
    }
    if ((opt.serial || opt.record_ns) && opt.selftest_rounds) {
        jx_err("--serial and --snapshot-selftest cannot be combined yet");
        return EXIT_VMM_ERROR;
    }
    if (opt.trace_path && !opt.serial && !opt.record_ns) {
        jx_err("--trace needs --serial or --record (cue points are recorded in serialized "
               "execution)");
        return EXIT_VMM_ERROR;
    }
    if (round_opt && !attach) {
        jx_err("--%s configures --attach: add --attach RATE (e.g. --attach 5/s)", round_opt);
        return EXIT_VMM_ERROR;
    }
    bool dev_mode = opt.serial || opt.record_ns || opt.selftest_rounds;
    if (attach && dev_mode) {
        jx_err("--attach needs free execution: it cannot be combined with --serial, --record, "
               "--schedule or --snapshot-selftest");
        return EXIT_VMM_ERROR;
    }
    if (seed_given)
        rcfg.seed = opt.seed; /* one --seed makes the whole run reproducible */
    if (cl.npos < 1) {
        jx_err("run: no IMAGE given");
        usage(stderr);
        return EXIT_VMM_ERROR;
    }
    /* IMAGE, then the program's arguments (options of ours may sit among them; "--"
     * is ours, not the guest's, and cli has taken it out). */
    const char *image = cl.pos[0];
    int gargc = cl.npos;
    char **gargv = cl.pos;

    char err[512] = "";
    if (opt.dump_dir && dump_check_dir(opt.dump_dir, err, sizeof err) < 0) {
        jx_err("%s", err);
        return EXIT_VMM_ERROR;
    }
    struct elf_image probe;
    if (elf_open(image, &probe, err, sizeof err) < 0) {
        jx_err("%s", err);
        return EXIT_VMM_ERROR;
    }
    elf_free(&probe);

    static struct vm vm;
    if (vm_create(&vm, &opt, err, sizeof err) < 0) {
        jx_err("%s", err);
        vm_destroy(&vm);
        return EXIT_VMM_ERROR;
    }
    if (vm_load(&vm, image, gargc, gargv, envc, envp, err, sizeof err) < 0) {
        jx_err("%s", err);
        vm_destroy(&vm);
        return EXIT_VMM_ERROR;
    }
    bool want_serial = opt.serial || opt.record_ns;
    if (want_serial && !vm.cpuid_hidden)
        jx_err("warning: this host cannot hide RDRAND/RDSEED from the guest (PVM without "
               "CPUID faulting): a program that uses them, or the APIC ID that CPUID leaf 1 "
               "shows (glibc's startup reads it), is not deterministic here");
    if (want_serial && serial_init(&vm, opt.schedule_path, opt.roundrobin, opt.spin_threshold, err, sizeof err) < 0) {
        jx_err("%s", err);
        vm_destroy(&vm);
        return EXIT_VMM_ERROR;
    }
    if (opt.record_ns)
        vm.ser->on = false; /* free until the fragment */
    if (opt.serial && !opt.no_crew && crew_start(&vm) < 0) {
        jx_err("%s", err[0] ? err : "cannot start page-ownership recording");
        vm_destroy(&vm);
        return EXIT_VMM_ERROR;
    }
    /* Clean SIGINT/SIGTERM shutdown (sigstop_start must precede every other thread),
     * then the control socket: not in the developer modes (--serial, --record,
     * --snapshot-selftest), whose output must be the same from run to run and which
     * rounds cannot join. */
    if (sigstop_start(&vm, err, sizeof err) < 0) {
        jx_err("%s", err);
        vm_destroy(&vm);
        return EXIT_VMM_ERROR;
    }
    if (!no_control && !dev_mode) {
        vm.control = control_start(&vm, err, sizeof err);
        if (!vm.control) {
            jx_err("%s", err);
            sigstop_end();
            vm_destroy(&vm);
            return EXIT_VMM_ERROR;
        }
        sigstop_cleanup_path(control_path(vm.control));
        fprintf(stderr, "jinx-vmm: control socket %s (jinxctl attach --rate 5/s)\n",
                control_path(vm.control));
    }
    if (attach && round_attach(&vm, &rcfg, err, sizeof err) < 0) {
        jx_err("--attach: %s", err);
        control_stop(vm.control);
        sigstop_end();
        vm_destroy(&vm);
        return EXIT_VMM_ERROR;
    }
    run_vm(&vm);
    bool had_rounds = vm.rounds != NULL;
    /* A retired bug's round records go into the dump; they borrow from the round driver
     * (its snapshot), so they are encoded before round_shutdown frees it. */
    struct dump_record *rrec = NULL;
    size_t nrrec = 0;
    const struct round_retired *retired = round_retired(&vm);
    if (opt.dump_dir && dump_wanted(&vm.out) && retired &&
        dumpround_build(&vm, retired, &rrec, &nrrec, err, sizeof err) < 0)
        jx_err("the crash dump will lack the round's records (no replay): %s", err);
    struct round_stats rstats;
    round_status(&vm, &rstats);
    round_shutdown(&vm); /* no events after this: the socket goes next */
    fflush(stdout);
    control_stop(vm.control); /* tells followers how the VM ended, removes the socket */
    vm.control = NULL;
    int interrupted = sigstop_end();
    int status = outcome_exit_status(&vm.out);
    if (interrupted) {
        fprintf(stderr, "jinx-vmm: interrupted by %s: the guest was stopped%s; exit status %d\n",
                signal_name(interrupted), no_control || dev_mode ? "" : ", control socket removed",
                128 + interrupted);
        status = 128 + interrupted;
    }
    if (opt.selftest_rounds) {
        fprintf(stderr, "jinx-vmm: snapshot selftest: %s\n",
                vm.selftest_failed == 0 ? "PASS" : "FAIL");
        if (vm.selftest_failed)
            status = EXIT_VMM_ERROR;
    }
    if (!(opt.quiet && vm.out.kind == OUT_EXIT && vm.out.status == 0) && !interrupted)
        outcome_print(&vm, &vm.out, stderr);
    if (opt.dump_dir && dump_wanted(&vm.out)) {
        /* vm_run has joined every vCPU thread: the VM is stopped as the crash left it. */
        struct dump_result dr;
        int drc = dump_write(&vm, &vm.out, opt.dump_dir, rrec, nrrec, &dr, err, sizeof err);
        if (drc < 0)
            jx_err("no crash dump written: %s", err);
        else
            fprintf(stderr, "jinx-vmm: dump written to %s (+ .core)\n", dr.jinxdump);
        if (opt.stats && drc == 0)
            fprintf(stderr, "jinx-vmm: stats: dump_ms=%.2f core_bytes=%llu core_disk_bytes=%llu "
                    "jinxdump_bytes=%llu snapshot_bytes=%llu\n", dr.ns / 1e6,
                    (unsigned long long)dr.core_size, (unsigned long long)dr.core_disk,
                    (unsigned long long)dr.jinxdump_size,
                    (unsigned long long)(nrrec ? rrec[0].len : 0));
    }
    dumpround_free(rrec, nrrec);
    if (want_serial) {
        fprintf(stderr, "jinx-vmm: serial: %llu cue points (%llu memory accesses, %llu shared "
                "pages of %zu watched), %llu scheduled steps, %llu divergences, %llu spin "
                "deprioritisations\n",
                (unsigned long long)vm.ser->cues, (unsigned long long)vm.crew->accesses,
                (unsigned long long)vm.crew->shared_pages, vm.crew->watched,
                (unsigned long long)vm.ser->cursor.steps,
                (unsigned long long)vm.ser->cursor.divergences,
                (unsigned long long)vm.ser->spin.detections);
        if (opt.trace_path) {
            FILE *tf = strcmp(opt.trace_path, "-") ? fopen(opt.trace_path, "w") : stdout;
            if (!tf)
                jx_err("cannot write trace %s", opt.trace_path);
            else {
                ex_trace_print(tf, &vm.ser->trace);
                if (tf != stdout)
                    fclose(tf);
            }
        }
    }
    if (opt.report_path && outcome_write_json(&vm, &vm.out, opt.report_path) < 0)
        jx_err("cannot write report %s", opt.report_path);
    if (opt.stats && had_rounds) {
        char js[2048];
        if (round_status_json(&rstats, js, sizeof js) == 0)
            fprintf(stderr, "jinx-vmm: rounds: %s\n", js);
    }
    if (opt.stats) {
        uint64_t end = mono_ns();
        fprintf(stderr,
                "jinx-vmm: stats: boot_to_first_guest_instruction_us=%.1f "
                "boot_to_first_syscall_us=%.1f wall_ms=%.2f exits=%llu syscalls=%llu vcpus=%d "
                "guest_frames_used=%llu\n",
                vm.t_first_run ? (vm.t_first_run - vm.t_process_start) / 1e3 : -1.0,
                vm.t_first_exit ? (vm.t_first_exit - vm.t_process_start) / 1e3 : -1.0,
                (end - vm.t_process_start) / 1e6, (unsigned long long)atomic_load(&vm.n_exits),
                (unsigned long long)atomic_load(&vm.n_syscalls), vm.nvcpus,
                (unsigned long long)vm.gm.used);
    }
    if (want_serial || had_rounds)
        serial_free(&vm);
    vm_destroy(&vm);
    return status;
}

int main(int argc, char **argv)
{
    jx_set_progname("jinx-vmm");
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_VMM_ERROR : 0;
    }
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "replay"))
        return cmd_replay(argc - 1, argv + 1);
    jx_err("unknown command '%s' (try: jinx-vmm run IMAGE, jinx-vmm replay DUMP)", argv[1]);
    return EXIT_VMM_ERROR;
}
