/* A dump's outcome in `jinxctl inspect` (inspect_outcome.h). */
#include "dump/inspect_outcome.h"
#include "dump/sanrec.h"
#include "lib/json.h"
#include <signal.h>

const char *inspect_sig_name(int sig)
{
    static const char *n[] = {
        [SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
        [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT", [SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE",
        [SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV",
        [SIGUSR2] = "SIGUSR2", [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM",
        [SIGTERM] = "SIGTERM", [SIGSYS] = "SIGSYS"};
    if (sig > 0 && sig < (int)(sizeof n / sizeof n[0]) && n[sig])
        return n[sig];
    return sig == 0 ? "none" : "SIG?";
}

void inspect_report_text(const struct dumpfile *d, FILE *f)
{
    struct san_report rep;
    char err[160];
    int hr = sanrec_find(d, &rep, err, sizeof err);
    if (hr > 0) {
        fprintf(f, "report:  %s %s (the program's sanitizer)\n", rep.tool, rep.kind);
        for (int i = 0; i < rep.nlines; i++)
            fprintf(f, "         %s\n", rep.lines[i]);
    } else if (hr < 0) {
        fprintf(f, "report:  unreadable (%s)\n", err);
    }
}

void inspect_report_json(const struct dumpfile *d, FILE *f)
{
    struct san_report rep;
    char err[160];
    fprintf(f, ",\"report\":");
    if (sanrec_find(d, &rep, err, sizeof err) <= 0) {
        fprintf(f, "null");
        return;
    }
    fprintf(f, "{\"tool\":");
    json_fput_str(f, rep.tool, true);
    fprintf(f, ",\"kind\":");
    json_fput_str(f, rep.kind, true);
    fprintf(f, ",\"first_lines\":[");
    for (int i = 0; i < rep.nlines; i++) {
        fprintf(f, "%s", i ? "," : "");
        json_fput_str(f, rep.lines[i], true);
    }
    fprintf(f, "]}");
}

const char *inspect_report_line(const struct dumpfile *d)
{
    static char out[SANREPORT_LINES * (SANREPORT_LINE_LEN + 3) + 64];
    const size_t cap = sizeof out;
    struct san_report rep;
    char err[160];
    out[0] = 0;
    if (sanrec_find(d, &rep, err, sizeof err) <= 0)
        return out;
    size_t n = (size_t)snprintf(out, cap, "%s %s", rep.tool, rep.kind);
    for (int i = 0; i < rep.nlines && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " | " : ": ", rep.lines[i]);
    return out;
}
