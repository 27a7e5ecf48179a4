/* jinx test: what a run left behind, read back (its --report JSON, its log's exploration
 * summary, its dump): all of it written by jinx-vmm, still checked as input. */
#include "cli/jinx_test.h"
#include "dump/dumpfile.h"
#include "dump/roundrec.h"
#include "explorer/explorer.h"
#include "lib/json.h"
#include "lib/util.h"
#include "linux/elfparse.h"
#include "linux/limitlog.h"
#include "linux/sanreport.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sanitizer report of a --report JSON's "report" (null when none): tool and kind as
 * sanreport_parse makes them, lines printable. True when there is a valid one. */
static bool read_sanreport(const char *buf, size_t n, struct san_report *rep)
{
    const char *raw, *v, *el;
    size_t rawlen, vlen, elen, pos = 0;
    char err[128];
    memset(rep, 0, sizeof *rep);
    if (json_find(buf, n, "report", &raw, &rawlen, err, sizeof err) != 1 || rawlen < 2 ||
        raw[0] != '{')
        return false;
    if (json_find(raw, rawlen, "tool", &v, &vlen, err, sizeof err) != 1 ||
        json_decode_string(v, vlen, rep->tool, sizeof rep->tool) < 0 ||
        json_find(raw, rawlen, "kind", &v, &vlen, err, sizeof err) != 1 ||
        json_decode_string(v, vlen, rep->kind, sizeof rep->kind) < 0 ||
        !sanreport_valid(rep->tool, rep->kind) ||
        json_find(raw, rawlen, "first_lines", &v, &vlen, err, sizeof err) != 1) {
        memset(rep, 0, sizeof *rep);
        return false;
    }
    while (rep->nlines < SANREPORT_LINES && json_array_next(v, vlen, &pos, &el, &elen) == 1) {
        char *line = rep->lines[rep->nlines];
        if (json_decode_string(el, elen, line, SANREPORT_LINE_LEN) < 0)
            line[0] = 0;
        for (char *c = line; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                *c = '?';
        rep->nlines++;
    }
    return true;
}

/* The limits, the last stderr lines and the sanitizer report from a run's --report JSON
 * (written by jinx-vmm, still checked as input). 0, or -1 when there is no valid report. */
int jt_read_report(const char *path, struct jt_limit *lim, int *nlim, char *tail,
                       size_t tailcap, char *error, size_t errorcap, struct san_report *rep,
                       bool *has_rep)
{
    *has_rep = false;
    *nlim = 0;
    tail[0] = 0;
    error[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    bool whole = feof(f) && !ferror(f);
    fclose(f);
    if (!whole)
        return -1;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        n--;
    const char *raw;
    size_t rawlen;
    char err[200];
    if (json_find(buf, n, "limits", &raw, &rawlen, err, sizeof err) != 1)
        return -1;
    size_t pos = 0;
    const char *el;
    size_t elen;
    int rc;
    static struct json_obj o;
    while ((rc = json_array_next(raw, rawlen, &pos, &el, &elen)) == 1) {
        if (*nlim == LIMITS_MAX)
            break;
        const char *kind, *what, *option;
        uint64_t count = 0;
        if (json_parse_object(el, elen, 0, &o, err, sizeof err) < 0 ||
            json_get_str(&o, "kind", &kind) != 1 || json_get_str(&o, "what", &what) != 1 ||
            json_get_str(&o, "option", &option) != 1 || json_get_u64(&o, "count", &count) != 1)
            return -1;
        struct jt_limit *l = &lim[(*nlim)++];
        snprintf(l->kind, sizeof l->kind, "%s", kind);
        snprintf(l->what, sizeof l->what, "%s", what);
        snprintf(l->option, sizeof l->option, "%s", option);
        l->count = count;
    }
    if (rc < 0)
        return -1;
    *has_rep = read_sanreport(buf, n, rep);
    if (json_find(buf, n, "stderr_tail", &raw, &rawlen, err, sizeof err) == 1 &&
        json_decode_string(raw, rawlen, tail, tailcap) < 0)
        tail[0] = 0;
    /* An "error" outcome: jinx-vmm stopped the running program itself (e.g. KVM could not
     * run one of its instructions); its detail says why. */
    char kind[16];
    if (json_find(buf, n, "outcome", &raw, &rawlen, err, sizeof err) == 1 &&
        json_decode_string(raw, rawlen, kind, sizeof kind) == 0 && !strcmp(kind, "error") &&
        (json_find(buf, n, "detail", &raw, &rawlen, err, sizeof err) != 1 ||
         json_decode_string(raw, rawlen, error, errorcap) < 0 || !error[0]))
        snprintf(error, errorcap, "jinx-vmm stopped the program (outcome \"error\")");
    for (char *c = error; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?';
    /* The text goes to a terminal: printable ASCII and newlines only. */
    for (char *c = tail; *c; c++)
        if (*c != '\n' && *c != '\t' && ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f))
            *c = '?';
    return 0;
}

/* Adds what is not there yet (by text) to a list of notes. */
void jt_add_notes(struct jt_limit *dst, int *n, const struct jt_limit *src, int k)
{
    for (int i = 0; i < k; i++) {
        bool have = false;
        for (int j = 0; j < *n && !have; j++)
            have = !strcmp(dst[j].what, src[i].what);
        if (!have && *n < LIMITS_MAX)
            dst[(*n)++] = src[i];
    }
}

/* A run that found nothing met a bug in exploration and did not replay it live (the
 * "replay" of explore.h's stats, strategy and outcome as the JSON gives them): kept in
 * r->unreplayed when the failure is the program's (a replay stopped before its end, or a
 * timed run's decisions not found again), counted as jinx's own mismatch otherwise. */
static void note_unreplayed(struct result *r, uint64_t schedule, const char *replay,
                            const char *strategy, const char *outcome)
{
    bool timed = strategy && !strcmp(strategy, "timed");
    bool stopped = replay && !strcmp(replay, "stopped");
    bool differs = replay && !strcmp(replay, "differs");
    bool known = outcome && (!strcmp(outcome, "assert") || !strcmp(outcome, "crash") ||
                             !strcmp(outcome, "deadlock"));
    if (!known || !(stopped || differs))
        return; /* an older jinx-vmm, or garbage: nothing to say */
    if (differs && !timed) {
        r->jinx_mismatches++;
        return;
    }
    if (r->unreplayed.met)
        return;
    struct jt_unreplayed *u = &r->unreplayed;
    u->met = true;
    u->seed = r->seed;
    u->schedule = schedule;
    snprintf(u->outcome, sizeof u->outcome, "%s", outcome);
    snprintf(u->strategy, sizeof u->strategy, "%s", strategy ? strategy : "");
    snprintf(u->replay, sizeof u->replay, "%s", replay);
}

/* An outcome class of explorer/score.h ("assert", "crash", "deadlock") in a report's words. */
static const char *jt_outcome_class_words(const char *cls)
{
    return !strcmp(cls, "assert") ? "abort or failure exit"
           : !strcmp(cls, "crash") ? "fatal signal"
           : cls;
}

bool jt_adopt_unreplayed(struct result *r)
{
    struct jt_unreplayed *u = &r->unreplayed;
    if (r->found || r->could_not_test || !u->met)
        return false;
    u->adopted = true;
    r->found = true;
    r->whole_run = true;
    r->reproduced = r->replayable = false;
    r->schedules_to_bug = u->schedule;
    r->seed = u->seed;
    r->status = u->status;
    r->seconds_to_bug = u->seconds;
    snprintf(r->strategy, sizeof r->strategy, "%s", u->strategy);
    snprintf(r->outcome, sizeof r->outcome, "%s", jt_outcome_class_words(u->outcome));
    r->dump[0] = r->core[0] = r->function[0] = '\0';
    r->nbt = 0;
    r->stderr_tail[0] = '\0'; /* the live program's, which did not fail */
    return true;
}

/* The exploration summary line of a run's log (explore.h's stats JSON; written by
 * jinx-vmm, still checked as input). Adds this run's schedules to r's. run_found: the run
 * ended in a bug (the bug run's details are r's); else a bug its exploration met and did
 * not replay is noted (note_unreplayed). */
static void read_explore(const char *js, struct result *r, bool run_found)
{
    struct json_obj o;
    char err[128];
    if (json_parse_object(js, strlen(js), 0, &o, err, sizeof err) < 0)
        return;
    uint64_t sched = 0, to_bug = 0, sparse = 0, cues_mean = 0;
    double secs = 0;
    bool reproduced = false, gave_up = false, limited = false;
    const char *strategy = NULL;
    json_get_u64(&o, "schedules", &sched);
    json_get_u64(&o, "schedules_to_bug", &to_bug);
    json_get_u64(&o, "sparse_schedules", &sparse);
    uint64_t timed = 0, stress = 0;
    json_get_u64(&o, "timed_runs", &timed);
    r->timed += timed;
    double stress_secs = 0;
    json_get_u64(&o, "stress_runs", &stress);
    json_get_double(&o, "stress_seconds", &stress_secs);
    if (stress_secs >= 0 && stress_secs < 1e7) { /* bounded: a sum the report divides */
        r->stress += stress;
        r->stress_seconds += stress_secs;
    }
    json_get_u64(&o, "cues_mean", &cues_mean);
    double fired_mean = 0;
    json_get_double(&o, "sparse_fired_mean", &fired_mean);
    if (fired_mean > 0 && fired_mean <= EX_MAX_PREEMPTS) /* a run fires at most that many */
        r->sparse_fired += fired_mean * (double)sparse;
    uint64_t early = 0;
    json_get_u64(&o, "timers_early", &early);
    r->timers_early += early;
    json_get_double(&o, "seconds", &secs);
    json_get_bool(&o, "reproduced", &reproduced);
    json_get_bool(&o, "gave_up", &gave_up);
    json_get_bool(&o, "limited", &limited);
    r->limited_unreplayed = limited && !reproduced;
    json_get_str(&o, "strategy", &strategy);
    if (to_bug && run_found && !r->whole_run) {
        r->whole_run = true;
        r->schedules_to_bug = r->schedules + to_bug;
        r->reproduced = reproduced;
        snprintf(r->strategy, sizeof r->strategy, "%s", strategy ? strategy : "");
    } else if (to_bug && !run_found && !reproduced && !limited) {
        const char *replay = NULL, *outcome = NULL;
        json_get_str(&o, "replay", &replay);
        json_get_str(&o, "bug_outcome", &outcome);
        note_unreplayed(r, r->schedules + to_bug, replay, strategy, outcome);
    }
    r->schedules += sched;
    r->sparse += sparse;
    r->cues += cues_mean * sched;
    r->explore_seconds += secs;
    r->gave_up |= gave_up;
}

/* A run's log: its exploration summary, and unless explore_only (a run that found
 * nothing) the dump's path, the backtrace and the outcome line. */
void jt_read_log(const char *log, struct result *r, bool explore_only)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    jt_read_log_stream(f, r, explore_only);
    fclose(f);
}

void jt_read_log_stream(FILE *f, struct result *r, bool explore_only)
{
    /* The program's own output is in the log too: only the last summary line counts
     * (jinx-vmm writes it after the program's end), and the rest of a line longer than
     * the buffer is skipped, not read as a line of its own. */
    char line[JSON_MAX_TEXT + 64], last[JSON_MAX_TEXT + 64];
    last[0] = '\0';
    bool rest = false;
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\n");
        bool whole = line[len] == '\n' || feof(f);
        line[len] = '\0';
        bool skip = rest;
        rest = !whole;
        if (skip || !whole)
            continue;
        const char *p = strstr(line, "jinx-vmm: explore: {");
        if (p) {
            snprintf(last, sizeof last, "%s", p + strlen("jinx-vmm: explore: "));
            continue;
        }
        if (explore_only)
            continue;
        p = strstr(line, "dump written to ");
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
    if (last[0])
        read_explore(last, r, !explore_only);
}

/* Thread, RIP, function and round from the dump itself. */
void jt_read_dump(const char *image, struct result *r)
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
        r->bug_cues = rd.retired.n;
        r->has_race = race_pair_of_round(&rd.retired, &rd.recorded, r->race[0], r->race[1],
                                         RACE_SIDE_LEN);
        r->sched_timers.ntimers = rd.sched.ntimers; /* its timers that ended early */
        memcpy(r->sched_timers.timer, rd.sched.timer, sizeof rd.sched.timer);
        r->ntimers = timer_names(image, d.image.bias, &rd.sched, r->timers, JT_MAX_TIMERS);
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

void jt_read_explore_log(const char *log, struct result *r)
{
    jt_read_log(log, r, true);
}
