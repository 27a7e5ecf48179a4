/* jinxctl inspect: the human (and JSON) view of a crash dump. */
#include "dump/inspect_cpu.h"
#include "dump/inspect.h"
#include "dump/inspect_outcome.h"
#include "linux/backtrace.h"
#include "dump/srcline.h"
#include "dump/inspect_files.h"
#include "dump/inspect_libs.h"
#include "dump/corefile.h"
#include "kvm/decode.h"
#include "dump/dumpfile.h"
#include "linux/elfparse.h"
#include "kvm/layout.h"
#include "dump/roundrec.h"
#include "dump/timer_names.h"
#include "lib/json.h"
#include "lib/util.h"
#include "dump/inspect_html.h"
#include <errno.h>
#include <fcntl.h>
#include "lib/options.h"
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_BT 32
#define MAX_DISASM 200

struct ictx {
    struct dumpfile d;
    struct elf_image img;
    uint64_t bias;
    struct corefile core;
    uint8_t *core_map;
    size_t core_len;
    char core_path[4096];
    char image_path[4096];
    struct dump_round r;        /* the round that retired the bug, if the dump has one */
    struct cpuid_rec cpu;       /* the CPU model and table the guest saw, if recorded */
    struct inspect_libs *libs;  /* its shared libraries, NULL for a static program */
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jinxctl inspect [--thread N] [--disasm N] [--json] [--image PATH] DUMP\n"
        "       jinxctl inspect --html OUT.html [--image PATH] DUMP\n"
        "\n"
        "Prints a crash dump written by `jinx-vmm run --dump-dir DIR`: the outcome, and for\n"
        "each thread its state, registers, backtrace and the code around its RIP. The .core\n"
        "named by the dump is read from the dump's directory.\n"
        "\n"
        "  --thread N     only thread N (a tid as the outcome names it)\n"
        "  --disasm N     N instructions around each RIP (default 8; 0: none)\n"
        "  --json         one JSON object instead of text\n"
        "  --image PATH   the program, when it is no longer at the path the dump recorded\n"
        "  --html OUT     write the retired interleaving as one self-contained HTML page:\n"
        "                 a column per thread, the crash at the bottom (open it offline)\n"
        "\n"
        "exit status: 0; 1 when OUT cannot be written; 2 when the dump, its core or the image\n"
        "is refused (message says why).\n");
}

/* ---- memory and symbols ------------------------------------------------------------ */

static bool mem_read(void *ctx, uint64_t va, void *dst, size_t len)
{
    struct ictx *x = ctx;
    return core_read(&x->core, va, dst, len);
}

static bool mem_is_text(void *ctx, uint64_t va)
{
    struct ictx *x = ctx;
    for (int i = 0; i < x->img.nseg; i++) {
        const struct elf_segment *s = &x->img.seg[i];
        if ((s->prot & PROT_X) && va >= x->bias + s->vaddr && va - x->bias - s->vaddr < s->memsz)
            return true;
    }
    return inspect_libs_text(x->libs, va);
}

/* Source lines of a backtrace (srcline.h): return addresses looked up one byte back, so
 * the line is the call's. Without addr2line or debug info the lines stay empty. */
static void bt_lines(struct ictx *x, const uint64_t *bt, int nbt, char lines[][SRCLINE_LEN])
{
    uint64_t a[MAX_BT];
    for (int i = 0; i < nbt; i++)
        a[i] = bt[i] - x->bias - (i > 0);
    char err[200];
    srcline_resolve(x->image_path, a, (size_t)nbt, lines, err, sizeof err);
}

/* Over the dump's image and its shared libraries. */
static void symbolize(struct ictx *x, uint64_t addr, bool is_return, char *buf, size_t len)
{
    inspect_libs_symbolize(x->libs, &x->img, x->bias, addr, is_return, buf, len);
}

/* ---- disassembly ------------------------------------------------------------------- */

struct dis_line {
    uint64_t addr;
    bool ok, current;
    char text[DECODE_TEXT];
};

static bool decode_at(struct ictx *x, uint64_t a, struct insn_info *ii)
{
    uint8_t code[15];
    size_t n = sizeof code;
    while (n && !core_read(&x->core, a, code, n))
        n--; /* near the end of a segment: decode what there is */
    if (!n) {
        memset(ii, 0, sizeof *ii);
        return false;
    }
    return decode_insn(code, n, a, ii) == 0;
}

/* x86 cannot be decoded backwards: find a start before rip whose instruction stream
 * lands exactly on rip (the function's own start is best), then keep the last `before`
 * instructions of it, and decode forward from rip. */
static int disasm_around(struct ictx *x, uint64_t rip, int n, struct dis_line *out)
{
    if (n <= 0)
        return 0;
    if (n > MAX_DISASM)
        n = MAX_DISASM;
    int before = n / 3, k = 0;
    struct insn_info ii;
    uint64_t starts[65];
    int ns = 0;
    uint64_t off;
    const struct elf_symbol *s = rip >= x->bias ? elf_symbolize(&x->img, rip - x->bias, &off)
                                                : NULL;
    if (s && off && off <= 4096)
        starts[ns++] = rip - off;
    for (uint64_t d = 64; d >= 1 && ns < 65; d--)
        if (rip > d)
            starts[ns++] = rip - d;
    for (int si = 0; si < ns && before > 0; si++) {
        struct dis_line ring[MAX_DISASM];
        int nr = 0;
        uint64_t a = starts[si];
        for (int steps = 0; a < rip && steps < 2048; steps++) {
            if (!decode_at(x, a, &ii) || ii.len <= 0)
                break;
            struct dis_line *l = &ring[nr % before];
            l->addr = a;
            l->ok = true;
            l->current = false;
            snprintf(l->text, sizeof l->text, "%s", ii.text);
            nr++;
            a += (uint64_t)ii.len;
        }
        if (a != rip)
            continue;
        int have = nr < before ? nr : before;
        for (int i = 0; i < have; i++)
            out[k++] = ring[(nr - have + i) % before];
        break;
    }
    uint64_t a = rip;
    for (int i = 0; k < n; i++) {
        struct dis_line *l = &out[k++];
        l->addr = a;
        l->current = i == 0;
        l->ok = decode_at(x, a, &ii);
        snprintf(l->text, sizeof l->text, "%s", l->ok ? ii.text : "(bad or unreadable)");
        if (!l->ok)
            break;
        a += (uint64_t)ii.len;
    }
    return k;
}

/* ---- loading ----------------------------------------------------------------------- */

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    jx_verr("inspect", fmt, ap);
    va_end(ap);
    return INSPECT_EXIT_REFUSED;
}

static int load(struct ictx *x, const char *dump_path, const char *image_override)
{
    char err[1024];
    if (dumpfile_read(dump_path, &x->d, err, sizeof err) < 0)
        return refuse("refusing %s", err);
    if (dump_round_parse(&x->d, &x->r, err, sizeof err) < 0)
        return refuse("refusing %s: %s", dump_path, err);
    if (cpuidrec_find(&x->d, &x->cpu, err, sizeof err) < 0)
        return refuse("refusing %s: %s", dump_path, err);
    /* The core lives next to the .jinxdump: its recorded name is a plain file name. */
    const char *slash = strrchr(dump_path, '/');
    int dl = slash ? (int)(slash - dump_path) : 1;
    snprintf(x->core_path, sizeof x->core_path, "%.*s/%s", dl, slash ? dump_path : ".",
             x->d.core.name);
    int fd = open(x->core_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* never hang on a FIFO */
    if (fd < 0)
        return refuse("cannot open the dump's core file %s: %s (it must sit next to the "
                      ".jinxdump)", x->core_path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return refuse("%s: not a regular file", x->core_path);
    }
    if ((uint64_t)st.st_size != x->d.core.size) {
        close(fd);
        return refuse("refusing %s: it is %llu bytes, the dump recorded %llu (truncated or "
                      "replaced)", x->core_path, (unsigned long long)st.st_size,
                      (unsigned long long)x->d.core.size);
    }
    x->core_len = (size_t)st.st_size;
    x->core_map = x->core_len ? mmap(NULL, x->core_len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (x->core_map == MAP_FAILED || !x->core_map) {
        x->core_map = NULL;
        return refuse("cannot map %s: %s", x->core_path, strerror(errno));
    }
    uint8_t sha[SHA256_LEN];
    sha256(x->core_map, x->core_len, sha);
    if (memcmp(sha, x->d.core.sha256, SHA256_LEN) != 0)
        return refuse("refusing %s: its SHA-256 differs from the one the dump recorded (the "
                      "core is corrupted or from another crash)", x->core_path);
    if (core_parse(x->core_map, x->core_len, &x->core, err, sizeof err) < 0)
        return refuse("refusing %s: %s", x->core_path, err);
    if (x->core.nthreads != x->d.nthreads)
        return refuse("refusing %s: %zu threads in the core, %zu in the dump", x->core_path,
                      x->core.nthreads, x->d.nthreads);
    for (size_t i = 0; i < x->d.nthreads; i++)
        if (x->core.threads[i].tid != x->d.threads[i].tid)
            return refuse("refusing %s: thread %zu is tid %u in the core, %u in the dump",
                          x->core_path, i, x->core.threads[i].tid, x->d.threads[i].tid);

    const char *ip = image_override ? image_override : x->d.image.path;
    snprintf(x->image_path, sizeof x->image_path, "%s", ip);
    if (elf_open(ip, &x->img, err, sizeof err) < 0)
        return refuse("cannot read the image the dump was taken from: %s; if it moved, point to "
                      "it with --image PATH", err);
    sha256(x->img.data, x->img.size, sha);
    if (memcmp(sha, x->d.image.sha256, SHA256_LEN) != 0) {
        char want[65], got[65];
        sha256_hex(x->d.image.sha256, want);
        sha256_hex(sha, got);
        return refuse("the image %s is not the build the dump was taken from (SHA-256 %.16s..., "
                      "the dump recorded %.16s...): rebuild it from the same sources or point "
                      "to the right file with --image PATH", ip, got, want);
    }
    x->bias = x->d.image.bias;
    x->libs = inspect_libs_open(&x->d, &x->core, &x->img, x->bias);
    return 0;
}

static void unload(struct ictx *x)
{
    inspect_libs_close(x->libs);
    dump_round_free(&x->r);
    cpuidrec_free(&x->cpu);
    dumpfile_free(&x->d);
    core_free(&x->core);
    if (x->core_map)
        munmap(x->core_map, x->core_len);
    elf_free(&x->img);
}

/* ---- text output ------------------------------------------------------------------- */

static void print_thread_text(struct ictx *x, const struct dump_thread *t, int ndis, FILE *f)
{
    char sym[256], wsym[256];
    const uint64_t *R = t->regs;
    fprintf(f, "\nthread %u%s: %s", t->tid, (t->flags & DT_F_CRASHED) ? " (crashed)" : "",
            dump_tstate_name(t->state));
    if (t->state == DT_BLOCKED) {
        symbolize(x, t->wait_addr, false, wsym, sizeof wsym);
        fprintf(f, " in futex wait on 0x%llx", (unsigned long long)t->wait_addr);
        if (wsym[0] != '0')
            fprintf(f, " %s", wsym); /* a symbol, not just the address again */
    }
    if (t->state == DT_IN_SYSCALL || t->state == DT_BLOCKED || t->state == DT_SLEEPING)
        fprintf(f, " (syscall %llu)", (unsigned long long)R[DR_ORIG_RAX]);
    fprintf(f, "  [vcpu %u]\n", t->vcpu);
    symbolize(x, R[DR_RIP], false, sym, sizeof sym);
    fprintf(f, "  rip %016llx  %s\n", (unsigned long long)R[DR_RIP], sym);
    static const int order[] = {DR_RAX, DR_RBX, DR_RCX, DR_RDX, DR_RSI, DR_RDI, DR_RBP, DR_RSP,
                                DR_R8, DR_R9, DR_R10, DR_R11, DR_R12, DR_R13, DR_R14, DR_R15};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        fprintf(f, "%s%-3s %016llx%s", i % 4 ? " " : "  ", dump_reg_names[order[i]],
                (unsigned long long)R[order[i]], i % 4 == 3 ? "\n" : "");
    fprintf(f, "  eflags %08llx fs_base %016llx gs_base %016llx\n",
            (unsigned long long)R[DR_EFLAGS], (unsigned long long)R[DR_FS_BASE],
            (unsigned long long)R[DR_GS_BASE]);
    if (t->has_fpregs) {
        uint32_t mxcsr;
        uint16_t fcw;
        memcpy(&fcw, t->fpregs, 2);
        memcpy(&mxcsr, t->fpregs + 24, 4);
        fprintf(f, "  fpu: fcw %04x mxcsr %08x\n", fcw, mxcsr);
    }
    {
        uint64_t bt[MAX_BT];
        struct bt_mem m = {.read = mem_read, .is_text = mem_is_text, .ctx = x};
        int nbt = bt_walk(&m, R[DR_RIP], R[DR_RSP], R[DR_RBP], bt, MAX_BT);
        char lines[MAX_BT][SRCLINE_LEN];
        bt_lines(x, bt, nbt, lines);
        fprintf(f, "  backtrace:\n");
        for (int i = 0; i < nbt; i++) {
            symbolize(x, bt[i], i > 0, sym, sizeof sym);
            fprintf(f, "    #%d 0x%012llx %s%s%s%s\n", i, (unsigned long long)bt[i], sym,
                    lines[i][0] ? " (" : "", lines[i], lines[i][0] ? ")" : "");
        }
    }
    if (ndis > 0) {
        struct dis_line l[MAX_DISASM];
        int nl = disasm_around(x, R[DR_RIP], ndis, l);
        fprintf(f, "  code:\n");
        for (int i = 0; i < nl; i++) {
            symbolize(x, l[i].addr, false, sym, sizeof sym);
            fprintf(f, "  %s 0x%012llx %-28s %s\n", l[i].current ? "=>" : "  ",
                    (unsigned long long)l[i].addr, sym, l[i].text);
        }
    }
}

static bool is_round_record(uint32_t type)
{
    return (type >= DREC_SNAPSHOT && type <= DREC_VMOPTS) || type == DREC_CPUID;
}

/* The cue point where the retired interleaving first differs from the recording. */
static long first_difference(const struct dump_round *r)
{
    return ex_trace_first_difference(&r->retired, &r->recorded);
}

static void print_round_text(struct ictx *x, FILE *f)
{
    const struct dump_round *r = &x->r;
    const struct rr_score *sc = &r->score;
    if (sc->round == 0) /* whole-run exploration (explore.h): run sim of nsim */
        fprintf(f, "\nrun:     whole run %u of %u from the first thread creation (strategy "
                "%s); %s\n", sc->sim, sc->nsim, sc->strategy, sc->why);
    else
        fprintf(f, "\nround:   %llu, %s %u of %u (strategy %s) retired; %s\n",
                (unsigned long long)sc->round, sc->sim ? "simulation" : "the recording",
                sc->sim, sc->nsim, sc->strategy, sc->why);
    fprintf(f, "score:   %s, rank %llu: races made adjacent %u, unserializable %u, new writers "
            "%u, novel pairs %u (suspicion %llu)\n",
            ex_outcome_name((enum ex_outcome)sc->outcome), (unsigned long long)sc->rank,
            sc->races_adjacent, sc->avio_new, sc->new_writers, sc->novel_pairs,
            (unsigned long long)sc->suspicion);
    char *sched = ex_schedule_to_text(&r->sched);
    fprintf(f, "replay:  %llu of at most %llu cue points from a snapshot of %zu pages and %u "
            "vCPUs (jinx-vmm replay DUMP); schedule:\n", (unsigned long long)r->retired.n,
            (unsigned long long)sc->cue_limit, r->snap.npages, r->snap.nvcpus);
    for (char *line = sched ? strtok(sched, "\n") : NULL; line; line = strtok(NULL, "\n"))
        fprintf(f, "           %s\n", line);
    free(sched);
    timer_names_print(f, x->image_path, x->bias, &r->sched); /* timers ended early */
    long diff = first_difference(r);
    if (diff >= 0 && (size_t)diff < r->retired.n) {
        const struct ex_event *e = &r->retired.ev[diff];
        fprintf(f, "differs: from the recording first at cue point %ld: thread %u %s 0x%llx at "
                "%s\n", diff, e->tid, ex_kind_name((enum ex_kind)e->kind),
                (unsigned long long)e->addr, e->sym);
    } else {
        fprintf(f, "differs: the retired interleaving is the recording's%s\n",
                diff >= 0 ? " (a prefix of it)" : "");
    }
    fprintf(f, "\ninterleaving (shared accesses and synchronization of the retired fragment, "
            "one column per thread):\n");
    ex_trace_print_timeline_marked(f, &r->retired, diff >= 0 && (size_t)diff < r->retired.n
                                                       ? diff : -1);
    fprintf(f, "\nshared variables: %zu\n", r->nvars);
    for (size_t i = 0; i < r->nvars; i++)
        fprintf(f, "  0x%012llx %-32s %u threads, %u accesses (%u writes)\n",
                (unsigned long long)r->vars[i].addr, r->vars[i].sym, r->vars[i].threads,
                r->vars[i].accesses, r->vars[i].writes);
}

static void print_text(struct ictx *x, const char *dump_path, const struct dump_thread *only,
                       int ndis, FILE *f)
{
    const struct dumpfile *d = &x->d;
    const struct dump_outcome *o = &d->outcome;
    char sym[256], when[64] = "?";
    if (d->has_run) {
        time_t t = (time_t)d->run.created;
        struct tm tm;
        if (localtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    }
    char sha[65];
    sha256_hex(d->image.sha256, sha);
    fprintf(f, "dump:    %s (format %u.%u, written %s by jinx %s)\n", dump_path, d->major,
            d->minor, when, d->has_run ? d->run.jinx_version : "?");
    fprintf(f, "image:   %s (sha256 %.16s..., matches)\n", x->image_path, sha);
    fprintf(f, "core:    %s (%zu bytes, %zu memory segments, sha256 verified)\n", x->core_path,
            x->core_len, x->core.nloads);
    if (d->has_run)
        fprintf(f, "command: %s (seed %llu%s)\n", d->run.cmdline,
                (unsigned long long)d->run.seed, (d->run.flags & DRUN_F_SERIAL) ? ", serial" : "");
    inspect_files_text(d, f);
    inspect_cpu_text(&x->cpu, f);
    switch (o->kind) {
    case DOUT_SIGNAL:
        symbolize(x, o->rip, false, sym, sizeof sym);
        fprintf(f, "outcome: killed by %s (signal %d) in thread %u at 0x%llx %s\n",
                inspect_sig_name(o->signal), o->signal, o->thread, (unsigned long long)o->rip, sym);
        break;
    case DOUT_DEADLOCK:
        fprintf(f, "outcome: deadlock\n");
        break;
    default:
        fprintf(f, "outcome: %s (exit status %d)\n", dump_out_kind_name(o->kind), o->exit_status);
    }
    if (o->detail[0])
        fprintf(f, "         %s\n", o->detail);
    inspect_report_text(d, f);
    fprintf(f, "threads: %zu\n", d->nthreads);
    for (size_t i = 0; i < d->nthreads; i++)
        if (!only || only == &d->threads[i])
            print_thread_text(x, &d->threads[i], ndis, f);
    if (x->r.present)
        print_round_text(x, f);
    else
        fprintf(f, "\nround:   none (the crash was met in free execution: no interleaving to "
                "show, no replay)\n");
    for (size_t i = 0; i < d->nextra; i++)
        if (!is_round_record(d->extra[i].type))
            fprintf(f, "\n(record of type %u, %llu bytes, not shown by this version)\n",
                    d->extra[i].type, (unsigned long long)d->extra[i].len);
}

/* ---- JSON output ------------------------------------------------------------------- */

static void json_hex(FILE *f, const char *key, uint64_t v, bool comma)
{
    fprintf(f, "%s\"%s\":\"0x%llx\"", comma ? "," : "", key, (unsigned long long)v);
}

static void print_thread_json(struct ictx *x, const struct dump_thread *t, int ndis, FILE *f)
{
    char sym[256];
    const uint64_t *R = t->regs;
    fprintf(f, "{\"tid\":%u,\"state\":", t->tid);
    json_fput_str(f, dump_tstate_name(t->state), true);
    fprintf(f, ",\"crashed\":%s,\"vcpu\":%u", (t->flags & DT_F_CRASHED) ? "true" : "false",
            t->vcpu);
    if (t->state == DT_BLOCKED) {
        json_hex(f, "wait_addr", t->wait_addr, true);
        symbolize(x, t->wait_addr, false, sym, sizeof sym);
        fprintf(f, ",\"wait_symbol\":");
        json_fput_str(f, sym, true);
    }
    json_hex(f, "rip", R[DR_RIP], true);
    symbolize(x, R[DR_RIP], false, sym, sizeof sym);
    fprintf(f, ",\"symbol\":");
    json_fput_str(f, sym, true);
    fprintf(f, ",\"registers\":{");
    for (int i = 0; i < DUMP_NREGS; i++)
        json_hex(f, dump_reg_names[i], R[i], i > 0);
    fprintf(f, "}");
    uint64_t bt[MAX_BT];
    struct bt_mem m = {.read = mem_read, .is_text = mem_is_text, .ctx = x};
    int nbt = bt_walk(&m, R[DR_RIP], R[DR_RSP], R[DR_RBP], bt, MAX_BT);
    char lines[MAX_BT][SRCLINE_LEN];
    bt_lines(x, bt, nbt, lines);
    fprintf(f, ",\"backtrace\":[");
    for (int i = 0; i < nbt; i++) {
        symbolize(x, bt[i], i > 0, sym, sizeof sym);
        fprintf(f, "%s{\"pc\":\"0x%llx\",\"symbol\":", i ? "," : "", (unsigned long long)bt[i]);
        json_fput_str(f, sym, true);
        if (lines[i][0]) {
            fprintf(f, ",\"line\":");
            json_fput_str(f, lines[i], true);
        }
        fprintf(f, "}");
    }
    fprintf(f, "],\"disassembly\":[");
    struct dis_line l[MAX_DISASM];
    int nl = disasm_around(x, R[DR_RIP], ndis, l);
    for (int i = 0; i < nl; i++) {
        symbolize(x, l[i].addr, false, sym, sizeof sym);
        fprintf(f, "%s{\"addr\":\"0x%llx\",\"symbol\":", i ? "," : "",
                (unsigned long long)l[i].addr);
        json_fput_str(f, sym, true);
        fprintf(f, ",\"text\":");
        json_fput_str(f, l[i].text, true);
        fprintf(f, ",\"current\":%s,\"ok\":%s}", l[i].current ? "true" : "false",
                l[i].ok ? "true" : "false");
    }
    fprintf(f, "]}");
}

static void print_round_json(struct ictx *x, FILE *f)
{
    const struct dump_round *r = &x->r;
    const struct rr_score *sc = &r->score;
    fprintf(f, "{\"round\":%llu,\"simulation\":%u,\"simulations\":%u,\"strategy\":",
            (unsigned long long)sc->round, sc->sim, sc->nsim);
    json_fput_str(f, sc->strategy, true);
    fprintf(f, ",\"why\":");
    json_fput_str(f, sc->why, true);
    fprintf(f, ",\"score\":{\"outcome\":\"%s\",\"bug\":%s,\"rank\":%llu,\"suspicion\":%llu,"
            "\"races_adjacent\":%u,\"avio_new\":%u,\"new_writers\":%u,\"novel_pairs\":%u}",
            ex_outcome_name((enum ex_outcome)sc->outcome), sc->bug ? "true" : "false",
            (unsigned long long)sc->rank, (unsigned long long)sc->suspicion, sc->races_adjacent,
            sc->avio_new, sc->new_writers, sc->novel_pairs);
    fprintf(f, ",\"cue_limit\":%llu,\"cues_retired\":%zu,\"cues_recorded\":%zu,"
            "\"snapshot\":{\"pages\":%zu,\"vcpus\":%u},\"schedule\":",
            (unsigned long long)sc->cue_limit, r->retired.n, r->recorded.n, r->snap.npages,
            r->snap.nvcpus);
    char *js = ex_schedule_to_json(&r->sched);
    fprintf(f, "%s", js ? js : "null");
    free(js);
    timer_names_json_field(f, x->image_path, x->bias, &r->sched); /* ,"early_timers":[...] */
    long diff = first_difference(r);
    if (diff >= 0 && (size_t)diff >= r->retired.n)
        diff = -1;
    fprintf(f, ",\"first_difference\":%ld,\"timeline\":[", diff);
    bool first = true;
    for (size_t i = 0; i < r->retired.n; i++) {
        const struct ex_event *e = &r->retired.ev[i];
        bool shared = !ex_is_access(e);
        for (size_t k = 0; !shared && k < r->nvars; k++)
            shared = r->vars[k].addr == e->addr;
        if (!shared && (long)i != diff)
            continue;
        fprintf(f, "%s{\"seq\":%zu,\"thread\":%u,\"kind\":\"%s\"", first ? "" : ",", i, e->tid,
                ex_kind_name((enum ex_kind)e->kind));
        json_hex(f, "addr", e->addr, true);
        fprintf(f, ",\"size\":%u", e->size);
        json_hex(f, "rip", e->rip, true);
        fprintf(f, ",\"symbol\":");
        json_fput_str(f, e->sym, true);
        fprintf(f, ",\"insn\":");
        json_fput_str(f, e->insn, true);
        fprintf(f, ",\"differs\":%s}", (long)i == diff ? "true" : "false");
        first = false;
    }
    fprintf(f, "],\"shared_variables\":[");
    for (size_t i = 0; i < r->nvars; i++) {
        fprintf(f, "%s{", i ? "," : "");
        json_hex(f, "addr", r->vars[i].addr, false);
        fprintf(f, ",\"symbol\":");
        json_fput_str(f, r->vars[i].sym, true);
        fprintf(f, ",\"threads\":%u,\"accesses\":%u,\"writes\":%u}", r->vars[i].threads,
                r->vars[i].accesses, r->vars[i].writes);
    }
    fprintf(f, "]}");
}

static void print_json(struct ictx *x, const char *dump_path, const struct dump_thread *only,
                       int ndis, FILE *f)
{
    const struct dumpfile *d = &x->d;
    const struct dump_outcome *o = &d->outcome;
    char sym[256], sha[65];
    fprintf(f, "{\"dump\":");
    json_fput_str(f, dump_path, true);
    fprintf(f, ",\"format\":\"%u.%u\",\"image\":{\"path\":", d->major, d->minor);
    json_fput_str(f, x->image_path, true);
    sha256_hex(d->image.sha256, sha);
    fprintf(f, ",\"sha256\":\"%s\",\"bias\":\"0x%llx\"},\"core\":{\"path\":", sha,
            (unsigned long long)d->image.bias);
    json_fput_str(f, x->core_path, true);
    sha256_hex(d->core.sha256, sha);
    fprintf(f, ",\"size\":%llu,\"sha256\":\"%s\"}", (unsigned long long)d->core.size, sha);
    if (d->has_run) {
        fprintf(f, ",\"run\":{\"created\":%llu,\"seed\":%llu,\"serial\":%s,\"jinx\":",
                (unsigned long long)d->run.created, (unsigned long long)d->run.seed,
                (d->run.flags & DRUN_F_SERIAL) ? "true" : "false");
        json_fput_str(f, d->run.jinx_version, true);
        fprintf(f, ",\"command\":");
        json_fput_str(f, d->run.cmdline, true);
        fprintf(f, "}");
    }
    inspect_files_json(d, f);
    inspect_cpu_json(&x->cpu, f);
    fprintf(f, ",\"outcome\":{\"kind\":");
    json_fput_str(f, dump_out_kind_name(o->kind), true);
    fprintf(f, ",\"exit_status\":%d", o->exit_status);
    if (o->kind == DOUT_SIGNAL) {
        fprintf(f, ",\"signal\":%d,\"signame\":\"%s\",\"thread\":%u,\"vector\":%d", o->signal,
                inspect_sig_name(o->signal), o->thread, o->vector);
        json_hex(f, "rip", o->rip, true);
        symbolize(x, o->rip, false, sym, sizeof sym);
        fprintf(f, ",\"symbol\":");
        json_fput_str(f, sym, true);
        if (o->vector == 14)
            json_hex(f, "cr2", o->cr2, true);
    }
    fprintf(f, ",\"detail\":");
    json_fput_str(f, o->detail, true);
    inspect_report_json(d, f);
    fprintf(f, "},\"threads\":[");
    bool first = true;
    for (size_t i = 0; i < d->nthreads; i++) {
        if (only && only != &d->threads[i])
            continue;
        fprintf(f, "%s", first ? "" : ",");
        first = false;
        print_thread_json(x, &d->threads[i], ndis, f);
    }
    fprintf(f, "],\"round\":");
    if (x->r.present)
        print_round_json(x, f);
    else
        fprintf(f, "null");
    fprintf(f, ",\"other_records\":[");
    bool firstx = true;
    for (size_t i = 0; i < d->nextra; i++) {
        if (is_round_record(d->extra[i].type))
            continue;
        fprintf(f, "%s{\"type\":%u,\"bytes\":%llu}", firstx ? "" : ",", d->extra[i].type,
                (unsigned long long)d->extra[i].len);
        firstx = false;
    }
    fprintf(f, "]}\n");
}

/* ---- HTML page (inspect_html.h) --------------------------------------------------- */

static void html_data_sym(void *ctx, uint64_t addr, char *buf, size_t len)
{
    symbolize(ctx, addr, false, buf, len);
}

static void html_code(void *ctx, const uint64_t *rips, size_t n, struct html_code *out)
{
    struct ictx *x = ctx;
    struct insn_info ii;
    for (size_t i = 0; i < n; i++) {
        symbolize(x, rips[i], false, out[i].sym, sizeof out[i].sym);
        if (decode_at(x, rips[i], &ii))
            snprintf(out[i].insn, sizeof out[i].insn, "%s", ii.text);
    }
    for (size_t i = 0; i < n; i += SRCLINE_MAX) { /* addr2line, SRCLINE_MAX at a time */
        size_t k = n - i < SRCLINE_MAX ? n - i : SRCLINE_MAX;
        uint64_t a[SRCLINE_MAX];
        char lines[SRCLINE_MAX][SRCLINE_LEN], err[200];
        for (size_t j = 0; j < k; j++)
            a[j] = rips[i + j] - x->bias;
        if (srcline_resolve(x->image_path, a, k, lines, err, sizeof err) < 0)
            break; /* no addr2line: no lines anywhere */
        for (size_t j = 0; j < k; j++)
            memcpy(out[i + j].line, lines[j], SRCLINE_LEN);
    }
}

static int write_html(struct ictx *x, const char *dump_path, const char *out_path)
{
    const struct dumpfile *d = &x->d;
    const struct dump_outcome *o = &d->outcome;
    const struct dump_thread *t = d->nthreads ? &d->threads[0] : NULL; /* crashed first */
    char sym[256], outcome[512], err[4400];
    if (o->kind == DOUT_SIGNAL) {
        symbolize(x, o->rip, false, sym, sizeof sym);
        snprintf(outcome, sizeof outcome, "killed by %s (signal %d) in thread %u at 0x%llx %s",
                 inspect_sig_name(o->signal), o->signal, o->thread, (unsigned long long)o->rip, sym);
    } else {
        snprintf(outcome, sizeof outcome, "%s (exit status %d)", dump_out_kind_name(o->kind),
                 o->exit_status);
    }
    static struct html_frame fr[MAX_BT];
    static struct html_dis dis[HTML_MAX_DIS];
    int nbt = 0, nl = 0;
    if (t) {
        uint64_t bt[MAX_BT];
        struct bt_mem m = {.read = mem_read, .is_text = mem_is_text, .ctx = x};
        nbt = bt_walk(&m, t->regs[DR_RIP], t->regs[DR_RSP], t->regs[DR_RBP], bt, MAX_BT);
        char lines[MAX_BT][SRCLINE_LEN];
        bt_lines(x, bt, nbt, lines);
        for (int i = 0; i < nbt; i++) {
            fr[i].pc = bt[i];
            symbolize(x, bt[i], i > 0, fr[i].sym, sizeof fr[i].sym);
            memcpy(fr[i].line, lines[i], SRCLINE_LEN);
        }
        struct dis_line l[24];
        nl = disasm_around(x, t->regs[DR_RIP], 24, l);
        for (int i = 0; i < nl; i++) {
            dis[i].addr = l[i].addr;
            dis[i].current = l[i].current;
            symbolize(x, l[i].addr, false, dis[i].sym, sizeof dis[i].sym);
            snprintf(dis[i].text, sizeof dis[i].text, "%s", l[i].text);
        }
    }
    struct html_page p = {
        .dump_path = dump_path, .image_path = x->image_path,
        .cmdline = d->has_run ? d->run.cmdline : NULL, .outcome = outcome,
        .detail = o->detail, .report = inspect_report_line(d), .crash_tid = t ? t->tid : 0,
        .frames = fr,
        .nframes = (size_t)nbt, .dis = dis, .ndis = (size_t)nl, .round = &x->r,
        .src = {.ctx = x, .data_sym = html_data_sym, .code = html_code}};
    if (o->kind == DOUT_DEADLOCK)
        p.crash_tid = 0;
    if (inspect_html_save(out_path, &p, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "jinxctl inspect: %s\n", err);
        return 1;
    }
    return 0;
}

/* ---- command ----------------------------------------------------------------------- */

int cmd_inspect(int argc, char **argv)
{
    static const struct option lo[] = {
        {"thread", required_argument, 0, 't'}, {"disasm", required_argument, 0, 'd'},
        {"json", no_argument, 0, 'j'}, {"image", required_argument, 0, 'i'},
        {"html", required_argument, 0, 'H'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    uint64_t tid = 0, ndis = 8;
    bool json = false, want_thread = false;
    const char *image = NULL, *html = NULL;
    char *posv[argc > 0 ? argc : 1];
    struct cli cl;
    cli_init(&cl, "inspect", argc, argv, posv);
    int c;
    while ((c = cli_next(&cl, "h", lo, NULL)) != CLI_END) {
        switch (c) {
        case CLI_ERROR:
            return refuse("%s (see jinxctl --help)", cl.err);
        case 't':
            if (!parse_u64(optarg, &tid) || tid == 0 || tid > 0x3FFFFFFF)
                return refuse("--thread %s: expected a thread id (1, 2, ...)", optarg);
            want_thread = true;
            break;
        case 'd':
            if (!parse_u64(optarg, &ndis) || ndis > MAX_DISASM)
                return refuse("--disasm %s: expected a number of instructions, 0 to %d", optarg,
                              MAX_DISASM);
            break;
        case 'j': json = true; break;
        case 'i': image = optarg; break;
        case 'H': html = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return INSPECT_EXIT_REFUSED;
        }
    }
    if (cl.npos != 1)
        return refuse("inspect: expected one DUMP (a .jinxdump file), got %d arguments "
                      "(see jinxctl --help)", cl.npos);
    if (html && (json || want_thread))
        return refuse("--html draws every thread as a page: it does not combine with %s",
                      json ? "--json" : "--thread");
    const char *path = cl.pos[0];
    struct ictx *x = calloc(1, sizeof *x);
    if (!x)
        return refuse("out of memory");
    int rc = load(x, path, image);
    const struct dump_thread *only = NULL;
    if (rc == 0 && want_thread) {
        for (size_t i = 0; i < x->d.nthreads; i++)
            if (x->d.threads[i].tid == tid)
                only = &x->d.threads[i];
        if (!only) {
            char list[512] = "";
            size_t pos = 0;
            for (size_t i = 0; i < x->d.nthreads && pos + 12 < sizeof list; i++)
                pos += (size_t)snprintf(list + pos, sizeof list - pos, " %u", x->d.threads[i].tid);
            rc = refuse("no thread %llu in this dump (threads:%s)", (unsigned long long)tid, list);
        }
    }
    if (rc == 0 && html) {
        rc = write_html(x, path, html);
    } else if (rc == 0) {
        if (json)
            print_json(x, path, only, (int)ndis, stdout);
        else
            print_text(x, path, only, (int)ndis, stdout);
        if (fflush(stdout) != 0)
            rc = 1;
    }
    unload(x);
    free(x);
    return rc;
}
