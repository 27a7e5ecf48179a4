/* `jinx test IMAGE [--budget 60s] [--rate R] [--json] [--junit FILE] [--dump-dir DIR]
 * [-- ARGS]`: the CI command. Runs IMAGE under `jinx-vmm run --attach R --dump-dir DIR`
 * again and again (seed 1, 2, ...) until a run fails or the budget is spent.
 *
 * Exit status: 0 nothing found within the budget; 1 a bug was found (the dump's path and
 * a short report: outcome, thread, function, round, time to find); 2 usage errors, or
 * jinx-vmm could not run the image at all. --json prints the result as one JSON object
 * on stdout, --junit writes a JUnit XML file (one test case: the image). The guest's own
 * output is not shown (it would interleave with the progress line); the last run's
 * jinx-vmm report is kept in DIR/jinx-test-last.log. */
#include "dumpfile.h"
#include "elfparse.h"
#include "roundrec.h"
#include "json.h"
#include "util.h"
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

#define EXIT_NONE 0
#define EXIT_FOUND 1
#define EXIT_USAGE 2
#define MAX_BT 8

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jinx test IMAGE [--budget 60s] [--rate R] [--json] [--junit FILE]\n"
        "                 [--dump-dir DIR] [-- ARGS...]\n"
        "\n"
        "Runs IMAGE with simulation rounds (jinx-vmm run --attach R) again and again, seed 1,\n"
        "2, ..., until a run fails or the budget is spent.\n"
        "\n"
        "  --budget DUR    wall time to spend (default 60s)\n"
        "  --rate R        simulation rounds per second (default 5/s)\n"
        "  --dump-dir DIR  where a found bug's dump goes (default jinx-dumps)\n"
        "  --json          print the result as one JSON object on stdout\n"
        "  --junit FILE    also write the result as a JUnit XML file\n"
        "\n"
        "exit status: 0 nothing found, 1 a bug was found (dump written), 2 usage error or\n"
        "the image could not be run. jinx-vmm is taken from this program's directory\n"
        "($JINX_VMM overrides).\n");
}

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
    uint64_t round;             /* 0: unknown (no round records) */
    bool replayable;            /* the dump has round records (jinx-vmm replay) */
    char dump[PATH_MAX], core[PATH_MAX];
    char detail[512];
};

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

/* One run; returns its exit status (or -1 when it could not be started). */
static int run_once(const char *vmm, const char *image, uint64_t seed, const char *rate,
                    const char *dir, uint64_t timeout_ms, const char *log, int nargs,
                    char **args)
{
    char seed_s[32], to_s[32];
    snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)seed);
    snprintf(to_s, sizeof to_s, "%llums", (unsigned long long)timeout_ms);
    const char *fixed[] = {vmm, "run", "--no-control", "--quiet", "--seed", seed_s, "--attach",
                           rate, "--dump-dir", dir, "--timeout", to_s, image};
    size_t nf = sizeof fixed / sizeof fixed[0];
    char **argv = calloc(nf + (size_t)nargs + 2, sizeof *argv);
    if (!argv)
        return -1;
    for (size_t i = 0; i < nf; i++)
        argv[i] = (char *)fixed[i];
    size_t k = nf;
    if (nargs) {
        argv[k++] = "--";
        for (int i = 0; i < nargs; i++)
            argv[k++] = args[i];
    }
    pid_t pid = fork();
    if (pid == 0) {
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(out, 2) < 0)
            _exit(127);
        execv(vmm, argv);
        dprintf(2, "jinx test: cannot run %s: %s\n", vmm, strerror(errno));
        _exit(127);
    }
    free(argv);
    if (pid < 0)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
}

/* The dump's path and the backtrace, from jinx-vmm's report. */
static void read_log(const char *log, struct result *r)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *p = strstr(line, "dump written to ");
        if (p) {
            p += strlen("dump written to ");
            const char *e = strstr(p, ".jinxdump");
            if (e)
                snprintf(r->dump, sizeof r->dump, "%.*s.jinxdump", (int)(e - p), p);
            continue;
        }
        unsigned n;
        unsigned long long a;
        char sym[160];
        /* "jinx-vmm:     #1 0x000000401b04 fprintf+0x94" (a blank matches any run) */
        if (r->nbt < MAX_BT && sscanf(line, "jinx-vmm: #%u 0x%llx %159s", &n, &a, sym) == 3)
            snprintf(r->bt[r->nbt++], sizeof r->bt[0], "%s", sym);
        if (!r->detail[0] && strstr(line, "jinx-vmm: program "))
            snprintf(r->detail, sizeof r->detail, "%.400s", line + strlen("jinx-vmm: "));
    }
    fclose(f);
}

/* Thread, RIP, function and round from the dump itself. */
static void read_dump(const char *image, struct result *r)
{
    struct dumpfile d;
    char err[512];
    if (!r->dump[0] || dumpfile_read(r->dump, &d, err, sizeof err) < 0)
        return;
    r->thread = d.outcome.thread;
    r->rip = d.outcome.rip;
    snprintf(r->core, sizeof r->core, "%.*s%s",
             (int)(strrchr(r->dump, '/') ? strrchr(r->dump, '/') + 1 - r->dump : 0), r->dump,
             d.core.name);
    struct dump_round rd;
    if (dump_round_parse(&d, &rd, err, sizeof err) == 0 && rd.present) {
        r->round = rd.score.round;
        r->replayable = true;
        dump_round_free(&rd);
    }
    struct elf_image img;
    if (d.outcome.kind == DOUT_SIGNAL && elf_open(image, &img, err, sizeof err) == 0) {
        uint64_t off;
        const struct elf_symbol *s = r->rip >= d.image.bias
            ? elf_symbolize(&img, r->rip - d.image.bias, &off) : NULL;
        if (s)
            snprintf(r->function, sizeof r->function, "%s+0x%llx", s->name,
                     (unsigned long long)off);
        elf_free(&img);
    }
    dumpfile_free(&d);
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

static void xml_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (c >= 0x20 || c == '\n' || c == '\t')
                fputc(c, f);
        }
    }
}

static void report_text(const char *image, const struct result *r, FILE *f)
{
    if (!r->found) {
        fprintf(f, "jinx test: %s: nothing found in %.1f s (%d runs, seeds 1..%llu)\n", image,
                r->seconds, r->runs, (unsigned long long)r->seed);
        return;
    }
    fprintf(f, "jinx test: %s: BUG FOUND after %.1f s (run %d, seed %llu%s", image, r->seconds,
            r->runs, (unsigned long long)r->seed, r->round ? ", round " : ")\n");
    if (r->round)
        fprintf(f, "%llu)\n", (unsigned long long)r->round);
    fprintf(f, "  outcome:   %s (exit status %d)\n", r->outcome, r->status);
    if (r->thread)
        fprintf(f, "  thread:    %u\n", r->thread);
    if (r->function[0])
        fprintf(f, "  function:  %s (rip 0x%llx)\n", r->function, (unsigned long long)r->rip);
    for (int i = 0; i < r->nbt; i++)
        fprintf(f, "  %s %s\n", i ? "          " : "backtrace:", r->bt[i]);
    if (r->dump[0]) {
        fprintf(f, "  dump:      %s (+ %s)\n", r->dump, r->core);
        if (r->replayable)
            fprintf(f, "  next:      jinxctl inspect %s; jinx-vmm replay %s\n", r->dump, r->dump);
        else
            fprintf(f, "  next:      jinxctl inspect %s (met in free execution after the "
                    "rounds: no replay)\n", r->dump);
    } else {
        fprintf(f, "  dump:      none (the program's own failure exit, not a crash)\n");
    }
}

static void report_json(const char *image, const struct result *r, FILE *f)
{
    fprintf(f, "{\"image\":");
    json_fput_str(f, image, false);
    fprintf(f, ",\"found\":%s,\"runs\":%d,\"seed\":%llu,\"seconds\":%.3f", r->found ? "true" : "false",
            r->runs, (unsigned long long)r->seed, r->seconds);
    if (r->found) {
        fprintf(f, ",\"outcome\":");
        json_fput_str(f, r->outcome, false);
        fprintf(f, ",\"status\":%d,\"thread\":%u,\"rip\":\"0x%llx\",\"function\":", r->status,
                r->thread, (unsigned long long)r->rip);
        json_fput_str(f, r->function, false);
        fprintf(f, ",\"round\":%llu,\"replayable\":%s,\"backtrace\":[",
                (unsigned long long)r->round, r->replayable ? "true" : "false");
        for (int i = 0; i < r->nbt; i++) {
            fprintf(f, "%s", i ? "," : "");
            json_fput_str(f, r->bt[i], false);
        }
        fprintf(f, "],\"dump\":");
        if (r->dump[0])
            json_fput_str(f, r->dump, false);
        else
            fprintf(f, "null");
        fprintf(f, ",\"core\":");
        if (r->core[0])
            json_fput_str(f, r->core, false);
        else
            fprintf(f, "null");
    }
    fprintf(f, "}\n");
}

static int write_junit(const char *path, const char *image, const struct result *r)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
            "  <testsuite name=\"jinx\" tests=\"1\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n"
            "    <testcase classname=\"jinx.test\" name=\"", r->found ? 1 : 0, r->seconds);
    xml_str(f, image);
    fprintf(f, "\" time=\"%.3f\">\n", r->seconds);
    if (r->found) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s in thread %u at %s", r->outcome, r->thread,
                 r->function[0] ? r->function : "?");
        fprintf(f, "      <failure type=\"");
        xml_str(f, r->outcome);
        fprintf(f, "\" message=\"");
        xml_str(f, msg);
        fprintf(f, "\">");
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (m) {
            report_text(image, r, m);
            fclose(m);
            xml_str(f, buf);
            free(buf);
        }
        fprintf(f, "</failure>\n");
    } else {
        fprintf(f, "      <system-out>");
        char line[300];
        snprintf(line, sizeof line, "nothing found in %.1f s (%d runs)", r->seconds, r->runs);
        xml_str(f, line);
        fprintf(f, "</system-out>\n");
    }
    fprintf(f, "    </testcase>\n  </testsuite>\n</testsuites>\n");
    return fclose(f) == 0 ? 0 : -1;
}

static int cmd_test(int argc, char **argv)
{
    static const struct option lo[] = {
        {"budget", required_argument, 0, 'b'}, {"rate", required_argument, 0, 'r'},
        {"json", no_argument, 0, 'j'}, {"junit", required_argument, 0, 'u'},
        {"dump-dir", required_argument, 0, 'd'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    uint64_t budget = 60000000000ULL;
    const char *rate = "5/s", *junit = NULL, *dir = "jinx-dumps";
    bool json = false;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (!parse_duration(optarg, &budget) || !budget) {
                jx_err("--budget %s: expected a duration such as 60s or 5m", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'r': rate = optarg; break;
        case 'j': json = true; break;
        case 'u': junit = optarg; break;
        case 'd': dir = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        jx_err("test: no IMAGE given");
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *image = argv[optind++];
    if (optind < argc && !strcmp(argv[optind], "--"))
        optind++;
    int nargs = argc - optind;
    char **args = argv + optind;
    struct elf_image probe;
    char err[512];
    if (elf_open(image, &probe, err, sizeof err) < 0) {
        jx_err("%s", err);
        return EXIT_USAGE;
    }
    elf_free(&probe);
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
    char log[PATH_MAX];
    if ((size_t)snprintf(log, sizeof log, "%s/jinx-test-last.log", dir) >= sizeof log) {
        jx_err("--dump-dir %s: path too long", dir);
        return EXIT_USAGE;
    }
    bool tty = isatty(2);
    struct result r;
    memset(&r, 0, sizeof r);
    uint64_t t0 = mono_ns(), last_line = 0;
    for (uint64_t seed = 1;; seed++) {
        uint64_t now = mono_ns();
        if (now - t0 >= budget)
            break;
        uint64_t left_ms = (budget - (now - t0)) / 1000000;
        if (left_ms < 1)
            left_ms = 1;
        if (tty || now - last_line >= 5000000000ULL) {
            fprintf(stderr, "%sjinx test: run %llu, %.1f s of %.0f s, nothing found yet%s",
                    tty ? "\r" : "", (unsigned long long)seed, (now - t0) / 1e9, budget / 1e9,
                    tty ? "   " : "\n");
            last_line = now;
        }
        int s = run_once(vmm, image, seed, rate, dir, left_ms, log, nargs, args);
        r.runs++;
        r.seed = seed;
        if (s < 0 || s == 125 || s == 127) {
            if (tty)
                fprintf(stderr, "\n");
            jx_err("jinx-vmm could not run %s (status %d); its report (%s):", image, s, log);
            FILE *lf = fopen(log, "r");
            char line[512];
            while (lf && fgets(line, sizeof line, lf))
                fputs(line, stderr);
            if (lf)
                fclose(lf);
            return EXIT_USAGE;
        }
        if (s == 0 || s == 124)
            continue; /* a normal end, or the budget ran out mid-run */
        r.found = true;
        r.status = s;
        classify(s, &r);
        read_log(log, &r);
        read_dump(image, &r);
        break;
    }
    r.seconds = (mono_ns() - t0) / 1e9;
    if (tty)
        fprintf(stderr, "\r%*s\r", 70, "");
    report_text(image, &r, json ? stderr : stdout);
    if (json)
        report_json(image, &r, stdout);
    if (junit && write_junit(junit, image, &r) < 0) {
        jx_err("cannot write --junit %s: %s", junit, strerror(errno));
        return EXIT_USAGE;
    }
    return r.found ? EXIT_FOUND : EXIT_NONE;
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
    jx_err("unknown command '%s' (try: jinx test IMAGE --budget 60s)", argv[1]);
    return EXIT_USAGE;
}
