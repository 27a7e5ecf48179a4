/* jinx-vmm replay (replay.h). */
#include "cli/replay.h"
#include "dump/dumpfile.h"
#include "dump/dump_files.h"
#include "dump/cpuidrec.h"
#include "dump/patchrec.h"
#include "dump/sanrec.h"
#include "kvm/cpuidpatch.h"
#include "kvm/cputable.h"
#include "linux/outcome.h"
#include "dump/roundrec.h"
#include "lib/sha256.h"
#include "kvm/snapshot.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "sched/serialize.h"
#include "sched/crew.h"
#include "lib/options.h"
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jinx-vmm replay [--verbose] [--image PATH] [--timeout DUR] [--no-pin] DUMP.jinxdump\n"
        "\n"
        "Reproduces the crash of a dump written by `jinx-vmm run --attach R --dump-dir DIR`:\n"
        "rebuilds the VM from the snapshot the retired fragment started from, replays the\n"
        "retired schedule, then runs free. Exits with the replayed outcome's status.\n"
        "\n"
        "  --verbose        narrate every cue point (thread, kind, address, instruction)\n"
        "  --image PATH     the image, when it moved since the dump was written\n"
        "  --timeout DUR    give up on the program after DUR (default 60s; status 124)\n"
        "  --no-pin         leave host threads' CPU affinity alone (by default the replayed\n"
        "                   fragment's vCPU host threads share one CPU, as in jinx-vmm run)\n"
        "\n"
        "The guest sees exactly the CPU the dump recorded (its model and CPUID table).\n"
        "\n"
        "status 2: the dump was refused (damaged, no round records, another image build, or\n"
        "a CPU this host cannot present: the message names the missing features).\n");
}

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    jx_verr("replay refused", fmt, ap);
    va_end(ap);
    return REPLAY_EXIT_REFUSED;
}

static void narrate(struct vm *vm, const struct ex_trace *t, size_t from, FILE *f)
{
    for (size_t i = from; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        char where[96] = "";
        if (e->addr)
            vm_symbolize(vm, e->addr, where, sizeof where);
        fprintf(f, "replay: cue %4zu  T%-3u %-10s", i, e->tid, ex_kind_name((enum ex_kind)e->kind));
        if (ex_is_access(e))
            fprintf(f, " %u bytes at 0x%llx %-24s", e->size, (unsigned long long)e->addr, where);
        else if (e->addr)
            fprintf(f, " 0x%llx %-24s", (unsigned long long)e->addr, where);
        if (e->kind == EX_THREAD_CREATE || e->kind == EX_FUTEX_WAKE)
            fprintf(f, " arg %u", e->arg);
        fprintf(f, "  rip 0x%llx %s%s%s\n", (unsigned long long)e->rip, e->sym,
                e->insn[0] ? ": " : "", e->insn);
    }
}

static void describe_event(const struct ex_event *e, char *buf, size_t len)
{
    snprintf(buf, len, "T%u %s 0x%llx (%u bytes) at %s (rip 0x%llx)", e->tid,
             ex_kind_name((enum ex_kind)e->kind), (unsigned long long)e->addr, e->size,
             e->sym[0] ? e->sym : "?", (unsigned long long)e->rip);
}

/* Checks the replayed trace against the dump's retired one. Returns true if they agree
 * (the replay may stop earlier only where the dump's does). */
static bool check_trace(const struct ex_trace *got, const struct ex_trace *want)
{
    long diff = ex_trace_first_difference(got, want);
    if (diff < 0)
        return true;
    char a[200] = "(none: the replay stopped)", b[200] = "(none: the dump's trace ends)";
    if ((size_t)diff < got->n)
        describe_event(&got->ev[diff], a, sizeof a);
    if ((size_t)diff < want->n)
        describe_event(&want->ev[diff], b, sizeof b);
    jx_err("replay DIVERGED from the dump at cue point %ld of %zu:\n"
           "  recorded: %s\n  replayed: %s\n"
           "(a bug in jinx, or a dump from another jinx build: please report it)",
           diff, want->n, b, a);
    return false;
}

static bool same_outcome(const struct outcome *o, const struct dump_outcome *d)
{
    switch (o->kind) {
    case OUT_SIGNAL:
        return d->kind == DOUT_SIGNAL && d->signal == o->signal &&
               d->thread == (uint32_t)o->thread && d->rip == o->rip;
    case OUT_DEADLOCK: return d->kind == DOUT_DEADLOCK;
    case OUT_EXIT: return d->kind == DOUT_EXIT && d->exit_status == o->status;
    default: return false;
    }
}

/* A sanitizer's report is part of the outcome (dump/sanrec.h): the replay must print one
 * of the same tool and kind. True when it did, or the dump has none; says which. */
static bool same_report(struct vm *vm, const struct dumpfile *d)
{
    struct san_report want, got;
    char err[160];
    if (sanrec_find(d, &want, err, sizeof err) <= 0)
        return true;
    bool has = outcome_sanreport(vm, &got);
    if (has && !strcmp(want.tool, got.tool) && !strcmp(want.kind, got.kind)) {
        fprintf(stderr, "jinx-vmm: replay printed the dump's sanitizer report: %s %s\n",
                want.tool, want.kind);
        return true;
    }
    jx_err("replay did NOT print the dump's sanitizer report (%s %s): %s%s%s", want.tool,
           want.kind, has ? got.tool : "none", has ? " " : "", has ? got.kind : "");
    return false;
}

/* What is replayed: a whole run (rounds/explore.h: round 0) or a round's simulation. */
static void announce(const struct dump_round *r, double load_ms)
{
    if (r->score.round == 0) /* a whole run (explore.h) */
        fprintf(stderr, "jinx-vmm: replaying whole run %u (%s) from its snapshot at the first "
                "thread creation (%zu pages, %u vCPUs, loaded in %.1f ms)\n", r->score.sim,
                r->score.strategy, r->snap.npages, r->snap.nvcpus, load_ms);
    else
        fprintf(stderr, "jinx-vmm: replaying round %llu's %s (%s, %llu cue points) from its snapshot "
                "(%zu pages, %u vCPUs, loaded in %.1f ms)\n", (unsigned long long)r->score.round,
                r->score.sim ? "simulation" : "recording", r->score.strategy,
                (unsigned long long)r->score.cue_limit, r->snap.npages, r->snap.nvcpus, load_ms);
}

/* The image must be the very build the dump came from, and every file the program read
 * must read the same: files are guest input too. 0, or -1 after refusing. */
static int check_inputs(const struct dumpfile *d, const char *image)
{
    char err[1024];
    struct elf_image probe;
    if (elf_open(image, &probe, err, sizeof err) < 0) {
        refuse("cannot read the image: %s (moved? give it with --image PATH)", err);
        return -1;
    }
    uint8_t h[SHA256_LEN];
    sha256(probe.data, probe.size, h);
    bool same = memcmp(h, d->image.sha256, SHA256_LEN) == 0 && probe.size == d->image.size;
    elf_free(&probe);
    if (!same) {
        refuse("%s is not the build this dump came from (its SHA-256 differs): rebuild the "
               "image from the same sources, or point to the right file with --image PATH",
               image);
        return -1;
    }
    if (dump_check_files(d, err, sizeof err) < 0) {
        refuse("%s", err);
        return -1;
    }
    return 0;
}

/* The recorded run's patched CPUID sites (patchrec.h) as a table for the VM (*out NULL:
 * none recorded): the snapshot's memory holds them rewritten. -1 after a refusal. */
static int recorded_patches(const struct dumpfile *d, const char *path,
                            struct cpuid_patches **out)
{
    char err[256];
    struct patch_rec pr;
    *out = NULL;
    if (patchrec_find(d, &pr, err, sizeof err) < 0) {
        refuse("%s: %s", path, err);
        return -1;
    }
    *out = pr.present ? cpuidpatch_new() : NULL;
    for (size_t i = 0; *out && i < pr.n; i++)
        cpuidpatch_add_kind(*out, pr.va[i], pr.kind[i]);
    patchrec_free(&pr);
    return 0;
}

/* The dump's CPU (cpu: its record, if any) and whether this host can present it: 0, or
 * the exit status after a message. */
static int check_cpu(const struct dumpfile *d, struct cpuid_rec *cpu, const char *path)
{
    char err[1024];
    if (cpuidrec_find(d, cpu, err, sizeof err) < 0)
        return refuse("%s: %s", path, err);
    if (!cpu->present)
        return 0;
    int ok = cpu_check_presentable(cpu->table, cpu->model, err, sizeof err);
    if (ok < 0) {
        jx_err("replay: %s", err);
        return EXIT_VMM_ERROR;
    }
    return ok ? 0 : refuse("%s: %s", path, err);
}

static const struct option replay_lo[] = {
    {"verbose", no_argument, 0, 'v'}, {"image", required_argument, 0, 'i'},
    {"timeout", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'},
    {"no-pin", no_argument, 0, 'P'}, {0, 0, 0, 0}};

/* The timers the replay ended early, as the schedule says (docs/timers.md). */
static void tell_timers(struct vm *vm)
{
    for (uint32_t i = 0; i < vm->ser->nended; i++) {
        const struct ex_timer_end *e = &vm->ser->ended[i];
        char name[400];
        fprintf(stderr, "jinx-vmm: replay: %s (choice %llu, as the schedule says)\n",
                ex_timer_end_describe(e, e->sym, name, sizeof name), (unsigned long long)e->step);
    }
}

int cmd_replay(int argc, char **argv)
{
    bool verbose = false, no_pin = false;
    const char *image_override = NULL;
    uint64_t timeout_ns = 60000000000ULL;
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    cli_init(&cl, "replay", argc, argv, posv);
    int c;
    while ((c = cli_next(&cl, "vh", replay_lo, NULL)) != CLI_END) {
        switch (c) {
        case CLI_ERROR:
            jx_err("%s (see jinx-vmm --help)", cl.err);
            return REPLAY_EXIT_REFUSED;
        case 'v': verbose = true; break;
        case 'P': no_pin = true; break;
        case 'i': image_override = optarg; break;
        case 't':
            if (!parse_duration(optarg, &timeout_ns) || !timeout_ns) {
                jx_err("--timeout %s: expected a duration such as 10s or 2m", optarg);
                return REPLAY_EXIT_REFUSED;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return REPLAY_EXIT_REFUSED;
        }
    }
    if (cl.npos != 1) {
        if (cl.npos > 1)
            jx_err("replay: expected one DUMP (a .jinxdump file), got %d arguments: '%s', "
                   "'%s'%s", cl.npos, cl.pos[0], cl.pos[1], cl.npos > 2 ? ", ..." : "");
        else
            jx_err("replay: expected one DUMP (a .jinxdump file)");
        return REPLAY_EXIT_REFUSED;
    }
    const char *path = cl.pos[0];
    char err[1024];
    struct dumpfile d;
    if (dumpfile_read(path, &d, err, sizeof err) < 0)
        return refuse("%s", err);
    struct dump_round r;
    struct cpuid_rec cpu = {0};
    int status = REPLAY_EXIT_REFUSED;
    if (dump_round_parse(&d, &r, err, sizeof err) < 0) {
        dumpfile_free(&d);
        return refuse("%s: %s", path, err);
    }
    if (!r.present) {
        dumpfile_free(&d);
        return refuse("%s has no round records: this crash was met in free execution (or in a "
                      "run without --attach), so there is no snapshot and schedule to replay. "
                      "Dumps of bugs retired by simulation rounds (jinx-vmm run --attach R "
                      "--dump-dir DIR, or jinx test) can be replayed", path);
    }

    const char *image = image_override ? image_override : d.image.path;
    if ((status = check_cpu(&d, &cpu, path)) != 0)
        goto out_round;
    status = REPLAY_EXIT_REFUSED;
    if (check_inputs(&d, image) < 0)
        goto out_round;

    struct vm_options opt = {.max_vcpus = (int)r.opts.max_vcpus, .mem = r.opts.mem,
                             .seed = r.opts.seed, .thread_stack = r.opts.thread_stack,
                             .timeout_ns = timeout_ns, .roundrobin = true, .no_pin = no_pin,
                             /* no record (an older dump): the host's table, as it ran */
                             .cpu_model = cpu.present ? cpu.model : "host",
                             .cpuid_exact = cpu.present ? cpu.table : NULL};
    for (size_t i = 0; i < d.nro_dirs && i < VM_MAX_RO_DIRS; i++) /* the same grants */
        opt.ro_dirs[opt.n_ro_dirs++] = d.ro_dirs[i];
    if (recorded_patches(&d, path, &opt.cpuid_patches) < 0)
        goto out_round;
    static struct vm vm;
    int created = vm_create(&vm, &opt, err, sizeof err);
    cpuidpatch_unref(opt.cpuid_patches); /* the VM holds its own reference */
    if (created < 0 ||
        vm_load(&vm, image, r.opts.argc, r.opts.argv, r.opts.envc, r.opts.envp, err,
                sizeof err) < 0) {
        jx_err("replay: %s", err);
        status = EXIT_VMM_ERROR;
        goto out_vm;
    }
    uint64_t t0 = mono_ns();
    if (snapshot_load_into(&vm, &r.snap, err, sizeof err) < 0 ||
        serialize_init(&vm, NULL, true, EX_SPIN_THRESHOLD, err, sizeof err) < 0 ||
        serialize_set_schedule(&vm, &r.sched) < 0 ||
        crew_preshare(&vm, r.sched.shared, r.sched.nshared) < 0) {
        jx_err("replay: cannot rebuild the VM from the dump: %s", err[0] ? err : "out of memory");
        status = EXIT_VMM_ERROR;
        goto out_serial;
    }
    /* A round's fragment ran with turn claims (sched/crew.h), a whole run without. */
    vm.ser->turn_claims = r.score.round > 0;
    uint64_t t1 = mono_ns();
    announce(&r, (t1 - t0) / 1e6);

    /* The retired fragment, serialized, exactly as the round driver retired it. */
    vm.sandbox = false;
    serialize_fragment_begin(&vm, r.snap.vtime);
    /* A whole run may take seconds (150 threads): a long wall budget, not serialize's 5 s
     * guard; the cue-point limit ends the fragment as it ended when recorded. */
    serialize_fragment_run(&vm, r.score.cue_limit, r.score.round == 0 ? 120000000000ULL : 0);
    bool ended = atomic_load(&vm.stopping);
    pthread_mutex_lock(&vm.lock);
    struct ex_trace got;
    ex_trace_init(&got);
    bool copied = ex_trace_copy(&got, &vm.ser->trace) == 0;
    pthread_mutex_unlock(&vm.lock);
    if (verbose && copied)
        narrate(&vm, &got, 0, stderr);
    tell_timers(&vm);
    bool trace_ok = copied && check_trace(&got, &r.retired);
    ex_trace_free(&got);
    if (!ended) {
        /* The bug did not happen inside the fragment: free execution, as after a round. */
        serialize_fragment_end(&vm);
        vm_resume(&vm);
    }
    vm_wait(&vm);
    uint64_t t2 = mono_ns();
    fflush(stdout);
    outcome_print(&vm, &vm.out, stderr);
    status = outcome_exit_status(&vm.out);
    char sym[128];
    vm_symbolize_frame(&vm, vm.out.rip, false, sym, sizeof sym);
    if (same_outcome(&vm.out, &d.outcome) && trace_ok && same_report(&vm, &d)) {
        if (vm.out.kind == OUT_SIGNAL)
            fprintf(stderr, "jinx-vmm: replay reproduced the dump's crash: %s in thread %d at "
                    "0x%llx (%s), %s the fragment (%.1f ms)\n", signal_name(vm.out.signal),
                    vm.out.thread, (unsigned long long)vm.out.rip, sym,
                    ended ? "inside" : "after", (t2 - t0) / 1e6);
        else
            fprintf(stderr, "jinx-vmm: replay reproduced the dump's outcome (%s, %.1f ms)\n",
                    dump_out_kind_name(d.outcome.kind), (t2 - t0) / 1e6);
    } else if (!same_outcome(&vm.out, &d.outcome)) {
        jx_err("replay did NOT reproduce the dump's outcome: the dump has %s (signal %d, thread "
               "%u, rip 0x%llx), the replay ended with exit status %d (see above)",
               dump_out_kind_name(d.outcome.kind), d.outcome.signal, d.outcome.thread,
               (unsigned long long)d.outcome.rip, status);
    }
out_serial:
    serialize_free(&vm);
out_vm:
    vm_destroy(&vm);
out_round:
    cpuidrec_free(&cpu);
    dump_round_free(&r);
    dumpfile_free(&d);
    return status;
}
