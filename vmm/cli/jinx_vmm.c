/* jinx-vmm: the command dispatch and its usage; each command has its file (run.c,
 * dump/replay.c). */
#include "cli/commands.h"
#include "cli/check_kvm.h"
#include "cli/replay.h"
#include "kvm/layout.h"
#include "lib/util.h"
#include "linux/outcome.h"
#include <stdio.h>
#include <string.h>

void jinx_vmm_usage(FILE *f)
{
    fprintf(f,
        "usage: jinx-vmm run [options] IMAGE [ARG...] [options] [-- ARG...]\n"
        "       jinx-vmm replay [--verbose] [--image PATH] [--timeout DUR] [--no-pin] DUMP.jinxdump\n"
        "       jinx-vmm check-kvm [--json] [--root DIR]   (can this machine run guests? why not?)\n"
        "\n"
        "Boots IMAGE (an x86-64 Linux program: static, or dynamically linked against the\n"
        "host's glibc, e.g. built with gcc -pthread or g++) in a\n"
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
        "  --cpu-model NAME   the CPU the guest sees: a libvirt x86 model (virsh cpu-models\n"
        "                     x86_64) or host (KVM's whole table); default kvm64, which hides\n"
        "                     SSSE3..AVX-512 (docs/cpu-models.md)\n"
        "  --env K=V          add to the guest's environment (repeatable; default empty,\n"
        "                     but LD_BIND_NOW=1 for a dynamic sanitizer build and\n"
        "                     detect_leaks=0 in ASAN_/LSAN_OPTIONS for an ASan/LSan build)\n"
        "  --ro-dir DIR       let the program read DIR and below, read-only (repeatable; by\n"
        "                     default it reads only itself, its loader and libraries)\n"
        "  --file-mem SIZE    the most the program may write in files, which live in the VM\n"
        "                     (its cwd, /tmp, the --ro-dir directories; default 256M)\n"
        "  --out-dir DIR      at the end, copy the files the program wrote to DIR/<path>\n"
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
        "                     --tail DUR --max-duty PCT --sim-kind auto|traced|sparse\n"
        "                     (see jinxctl --help)\n"
        "  --explore DUR      whole-run exploration for DUR (what jinx test runs): snapshot at\n"
        "                     the first thread creation, then run the program to its end again\n"
        "                     and again from there, one thread at a time, choosing threads by\n"
        "                     --explore-strategy S (portfolio, pct, pos, random, rf, window, flip,\n"
        "                     nest, sweep, wake, lanes, timed; default portfolio) with\n"
        "                     --explore-depth D (PCT depth, default 3),\n"
        "                     at most --explore-runs N runs; a bug is replayed live (dump).\n"
        "                     With --attach, a program too long for whole runs gets rounds\n"
        "  --verbose-explore  (with --explore) a line per run\n"
        "  --no-stress-runs   (with --explore) no stress runs (the program free from the\n"
        "                     snapshot for a quarter of the time once traced runs are\n"
        "                     slow, or after 5 s) and no timed runs (change points where\n"
        "                     a time slice ends): no run whose course is the host's\n"
        "                     timing, docs/sparse.md\n"
        "  --replayable-only  (with --explore) only runs whose bugs replay: traced and sparse\n"
        "                     runs, no stress or timed run (what jinx test runs to find a\n"
        "                     replayable dump of a bug whose dump does not replay)\n"
        "  --timers MODE      (with --explore) early (default): a run may end a thread's sleep\n"
        "                     or timed wait (at most 1 s away) before its deadline, as a busy\n"
        "                     machine can; strict: every timer runs to its deadline (docs/timers.md)\n"
        "  --serial           one thread at a time, switching at cue points (deterministic)\n"
        "  --schedule FILE    (with --serial) follow this schedule (text or JSON, docs/explorer.md)\n"
        "  --policy P         (with --serial) after the schedule: roundrobin (default) or continue\n"
        "  --trace FILE       (with --serial) write the cue-point trace to FILE (- for stdout)\n"
        "  --no-memory-cues   (with --serial) cue points at synchronization syscalls only\n"
        "  --no-guest-cues    single steps of shared-page accesses end by an exit to the VMM,\n"
        "                     not in the guest-agent, and --guest-cue-points is off (same\n"
        "                     traces; for measurements)\n"
        "  --no-guest-answers every syscall exits to the VMM, none is answered in the guest-\n"
        "                     agent (same outcomes; for measurements, docs/architecture.md)\n"
        "  --guest-cue-points (with --serial) the guest-agent takes memory cue points itself\n"
        "                     while the schedule surely keeps the running thread (same traces;\n"
        "                     off by default: no faster on a nested PVM host, docs/benchmarks.md)\n"
        "  --no-pin           leave host threads' CPU affinity alone: by default, while the VM\n"
        "                     runs serialized (--serial, --record/--simulate, rounds, --explore,\n"
        "                     replays), its vCPU host threads share one CPU, which makes a switch\n"
        "                     of thread cheaper (docs/benchmarks.md), and get the process's\n"
        "                     affinity mask back for free execution\n"
        "  --pin-cpu N        serialized execution on CPU N, one of this process's affinity\n"
        "                     mask (see taskset); default: the CPU it starts on, unless another\n"
        "                     VM of this process or another jinx-vmm of yours holds it\n"
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

int main(int argc, char **argv)
{
    jx_set_progname("jinx-vmm");
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        jinx_vmm_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_VMM_ERROR : 0;
    }
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "replay"))
        return cmd_replay(argc - 1, argv + 1);
    if (!strcmp(argv[1], "check-kvm"))
        return cmd_check_kvm(argc - 1, argv + 1);
    jx_err("unknown command '%s' (try: jinx-vmm run IMAGE, jinx-vmm replay DUMP, jinx-vmm "
           "check-kvm)", argv[1]);
    return EXIT_VMM_ERROR;
}
