/* `jinx test`'s verdict as the user reads it (text), as scripts read it (--json) and as CI
 * reads it (--junit): cli/jinx_test.h. */
#include "cli/jinx_test.h"
#include "lib/json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double jt_schedules_per_second(const struct result *r)
{
    double wall = r->explore_wall > 0 ? r->explore_wall : r->explore_seconds;
    return wall > 0 ? r->schedules / wall : 0.0;
}

void jt_print_tail(const char *tail, FILE *f)
{
    const char *p = tail;
    bool first = true;
    while (*p) {
        const char *e = strchr(p, '\n');
        int len = e ? (int)(e - p) : (int)strlen(p);
        fprintf(f, "  %s %.*s\n", first ? "stderr:   " : "          ", len, p);
        first = false;
        p += len + (e ? 1 : 0);
    }
}

void jt_json_limits(FILE *f, const struct jt_limit *l, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s{\"kind\":", i ? "," : "");
        json_fput_str(f, l[i].kind, true);
        fprintf(f, ",\"what\":");
        json_fput_str(f, l[i].what, true);
        fprintf(f, ",\"option\":");
        json_fput_str(f, l[i].option, true);
        fprintf(f, ",\"count\":%llu}", (unsigned long long)l[i].count);
    }
    fputc(']', f);
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

/* The rest of a verdict that is a bug met in exploration only (jt_adopt_unreplayed). */
static void report_unreplayed(const struct result *r, FILE *f)
{
    const struct jt_unreplayed *u = &r->unreplayed;
    fprintf(f, "  found by:  whole-run schedule %llu (strategy %s; %.1f schedules/s), in "
            "exploration only: %s\n", (unsigned long long)r->schedules_to_bug, r->strategy,
            jt_schedules_per_second(r),
            !strcmp(u->replay, "stopped")
                ? "its live replay was stopped (its time bound, or the timeout) before it "
                  "got there"
                : "its time-slice decisions were not found again live");
    fprintf(f, "  outcome:   %s, in that run (the live program went on, and ended with exit "
            "status %d)\n", r->outcome, r->status);
    fprintf(f, "  dump:      none: no run met the bug live within the budget; a longer "
            "--budget, or more seeds, may meet it with a dump that replays\n");
}

void jt_report_text(const char *image, const struct result *r, FILE *f)
{
    if (r->could_not_test) {
        fprintf(f, "jinx test: %s: could not test: %s\n", image, r->reason);
        char how[96];
        if (!strncmp(r->outcome, "exit ", 5))
            snprintf(how, sizeof how, "exit status %d", r->status);
        else
            snprintf(how, sizeof how, "%s (exit status %d)", r->outcome, r->status);
        if (r->status == 125)
            fprintf(f, "  why:       jinx-vmm stopped run %d (seed %llu) itself (exit status "
                    "125): no verdict on the program\n", r->runs, (unsigned long long)r->seed);
        else if (r->limited_unreplayed && r->status == 124)
            fprintf(f, "  why:       in run %d (seed %llu) a whole-run schedule met jinx's own "
                    "limit; the budget ran out before the live program got as far (a longer "
                    "--budget shows how it ends), and whatever it does after the limit may be "
                    "jinx's doing, not the program's: no verdict\n", r->runs,
                    (unsigned long long)r->seed);
        else
            fprintf(f, "  why:       run %d (seed %llu) failed (%s) after it met jinx's own "
                    "limit, so the failure may be jinx's, not the program's: it is not "
                    "reported as a bug\n", r->runs, (unsigned long long)r->seed, how);
        for (int i = 1; i < r->nlim; i++)
            fprintf(f, "  also:      %s; %s\n", r->lim[i].what,
                    r->lim[i].option[0] ? r->lim[i].option : "no option raises it");
        jt_print_tail(r->stderr_tail, f);
        return;
    }
    if (!r->found) {
        char jobs[32] = "";
        if (r->jobs > 1)
            snprintf(jobs, sizeof jobs, ", %d at once", r->jobs);
        char beside[160] = "";
        if (r->sparse || r->timed || r->stress)
            snprintf(beside, sizeof beside, " (%llu sparse; %llu timed runs beside; %llu stress "
                     "runs, free from the snapshot, %.0f ms each)", (unsigned long long)r->sparse,
                     (unsigned long long)r->timed, (unsigned long long)r->stress,
                     r->stress ? r->stress_seconds * 1e3 / (double)r->stress : 0.0);
        fprintf(f, "jinx test: %s: nothing found in %.1f s (%d runs, seeds %llu..%llu%s; %llu "
                "whole-run schedules%s, %.1f/s%s)\n", image, r->seconds, r->runs,
                (unsigned long long)(r->seed - (uint64_t)(r->runs ? r->runs - 1 : 0)),
                (unsigned long long)r->seed, jobs, (unsigned long long)r->schedules, beside,
                jt_schedules_per_second(r),
                r->gave_up ? "; too long for whole runs: simulation rounds instead" : "");
        for (int i = 0; i < r->nnotes; i++)
            fprintf(f, "  note:      runs met a jinx limit and still ended well: %s; %s\n",
                    r->notes[i].what,
                    r->notes[i].option[0] ? r->notes[i].option : "no option raises it");
        if (r->jinx_mismatches)
            fprintf(f, "  note:      in %d run%s a schedule met a bug that its live replay did "
                    "not reproduce (a different run): a bug in jinx, not a verdict on the "
                    "program; please report it with jinx-vmm's log\n", r->jinx_mismatches,
                    r->jinx_mismatches == 1 ? "" : "s");
        return;
    }
    char others[64] = "";
    if (r->jobs > 1)
        snprintf(others, sizeof others, "; %d at once, %d other run%s stopped", r->jobs,
                 r->stopped, r->stopped == 1 ? "" : "s");
    fprintf(f, "jinx test: %s: BUG FOUND after %.1f s (run %d, seed %llu%s%s", image, r->seconds,
            r->runs, (unsigned long long)r->seed, others, r->round ? ", round " : ")\n");
    if (r->round)
        fprintf(f, "%llu)\n", (unsigned long long)r->round);
    if (r->unreplayed.adopted) {
        report_unreplayed(r, f);
        return;
    }
    if (r->whole_run)
        fprintf(f, "  found by:  whole-run schedule %llu (strategy %s; %.1f schedules/s)%s\n",
                (unsigned long long)r->schedules_to_bug, r->strategy,
                jt_schedules_per_second(r),
                r->reproduced                     ? ""
                : strcmp(r->strategy, "timed") == 0 ? ", its time-slice decisions were not "
                                                      "found again live: no schedule replays it"
                                                    : ", NOT reproduced live (a bug in jinx)");
    for (size_t i = 0; i < r->ntimers; i++) /* explorer/timers.h: a sleep is no synchronization */
        fprintf(f, "  %s %s\n", i ? "          " : "timer:    ", r->timers[i].text);
    fprintf(f, "  outcome:   %s (exit status %d)\n", r->outcome, r->status);
    if (r->has_report) {
        fprintf(f, "  report:    %s %s\n", r->report.tool, r->report.kind);
        for (int i = 0; i < r->report.nlines; i++)
            fprintf(f, "             %s\n", r->report.lines[i]);
    }
    if (r->thread)
        fprintf(f, "  thread:    %u\n", r->thread);
    if (r->function[0])
        fprintf(f, "  function:  %s (rip 0x%llx)\n", r->function, (unsigned long long)r->rip);
    for (int i = 0; i < r->nbt; i++)
        fprintf(f, "  %s %s\n", i ? "          " : "backtrace:", r->bt[i]);
    jt_print_tail(r->stderr_tail, f);
    if (r->dump[0]) {
        fprintf(f, "  dump:      %s (+ %s)\n", r->dump, r->core);
        if (r->replayable)
            fprintf(f, "  next:      jinxctl inspect %s; jinx-vmm replay %s\n", r->dump, r->dump);
        else
            fprintf(f, "  next:      jinxctl inspect %s (met in free execution: no replay)\n",
                    r->dump);
        if (r->searched && r->search_found)
            fprintf(f, "  replay:    first met in free execution (seed %llu, dump %s); the "
                    "search from snapshots met it again in %d run%s: the dump above replays\n",
                    (unsigned long long)r->first_seed, r->first_dump, r->search_runs,
                    r->search_runs == 1 ? "" : "s");
        else if (r->searched)
            fprintf(f, "  replay:    met in free execution; the search from snapshots did not "
                    "meet it again in %d run%s\n", r->search_runs, r->search_runs == 1 ? "" : "s");
    } else {
        fprintf(f, "  dump:      none (the program's own failure exit, not a crash)\n");
    }
}

void jt_report_json(const char *image, const struct result *r, FILE *f)
{
    fprintf(f, "{\"image\":");
    json_fput_str(f, image, false);
    fprintf(f, ",\"found\":%s,\"could_not_test\":%s,\"runs\":%d,\"seed\":%llu,\"seconds\":%.3f",
            r->found ? "true" : "false", r->could_not_test ? "true" : "false", r->runs,
            (unsigned long long)r->seed, r->seconds);
    fprintf(f, ",\"schedules\":%llu,\"schedules_per_second\":%.1f,\"whole_runs_too_long\":%s",
            (unsigned long long)r->schedules, jt_schedules_per_second(r),
            r->gave_up ? "true" : "false");
    fprintf(f, ",\"sparse_schedules\":%llu,\"timed_schedules\":%llu,\"cues_per_schedule\":%.1f"
            ",\"decisions_per_sparse_schedule\":%.2f",
            (unsigned long long)r->sparse, (unsigned long long)r->timed, r->schedules ? (double)r->cues / r->schedules : 0.0,
            r->sparse ? r->sparse_fired / (double)r->sparse : 0.0);
    fprintf(f, ",\"stress_runs\":%llu,\"stress_seconds\":%.3f", (unsigned long long)r->stress,
            r->stress_seconds);
    fprintf(f, ",\"jobs\":%d,\"runs_stopped\":%d,\"timers_early_all\":%llu", r->jobs, r->stopped,
            (unsigned long long)r->timers_early);
    fprintf(f, ",\"leak_check\":\"%s\"", r->leaks_off ? "off" : "none");
    if (r->could_not_test) {
        fprintf(f, ",\"reason\":");
        json_fput_str(f, r->reason, true);
        fprintf(f, ",\"outcome\":");
        json_fput_str(f, r->outcome, false);
        fprintf(f, ",\"status\":%d,\"limits\":", r->status);
        jt_json_limits(f, r->lim, r->nlim);
        fprintf(f, ",\"stderr_tail\":");
        json_fput_str(f, r->stderr_tail, true);
    } else if (r->found) {
        fprintf(f, ",\"outcome\":");
        json_fput_str(f, r->outcome, false);
        fprintf(f, ",\"status\":%d,\"thread\":%u,\"rip\":\"0x%llx\",\"function\":", r->status,
                r->thread, (unsigned long long)r->rip);
        json_fput_str(f, r->function, false);
        fprintf(f, ",\"round\":%llu,\"replayable\":%s,\"whole_run\":%s,"
                "\"schedules_to_bug\":%llu,\"reproduced\":%s,\"strategy\":",
                (unsigned long long)r->round, r->replayable ? "true" : "false",
                r->whole_run ? "true" : "false", (unsigned long long)r->schedules_to_bug,
                r->reproduced ? "true" : "false");
        json_fput_str(f, r->whole_run ? r->strategy : "rounds", false);
        fprintf(f, ",\"timers_early\":%zu,\"early_timers\":", r->ntimers);
        timer_names_fput_json(f, &r->sched_timers, r->timers, r->ntimers);
        fprintf(f, ",\"seconds_to_bug\":%.3f", r->seconds_to_bug);
        fprintf(f, ",\"replay_search\":%s", !r->searched ? "null"
                : r->search_found ? "\"found\"" : "\"not found\"");
        fprintf(f, ",\"exploration_only\":"); /* met in exploration, no dump holds it */
        if (r->unreplayed.adopted) {
            fprintf(f, "{\"seed\":%llu,\"schedule\":%llu,\"class\":",
                    (unsigned long long)r->unreplayed.seed,
                    (unsigned long long)r->unreplayed.schedule);
            json_fput_str(f, r->unreplayed.outcome, false);
            fprintf(f, ",\"replay\":");
            json_fput_str(f, r->unreplayed.replay, false);
            fprintf(f, "}");
        } else {
            fprintf(f, "null");
        }
        fprintf(f, ",\"backtrace\":[");
        for (int i = 0; i < r->nbt; i++) {
            fprintf(f, "%s", i ? "," : "");
            json_fput_str(f, r->bt[i], false);
        }
        fprintf(f, "],\"cues\":%llu,\"race\":", (unsigned long long)r->bug_cues);
        race_pair_fput_json(f, r->has_race == 1, r->race[0], r->race[1]);
        fprintf(f, ",\"stderr_tail\":");
        json_fput_str(f, r->stderr_tail, true);
        fprintf(f, ",\"report\":");
        if (r->has_report) {
            fprintf(f, "{\"tool\":");
            json_fput_str(f, r->report.tool, true);
            fprintf(f, ",\"kind\":");
            json_fput_str(f, r->report.kind, true);
            fprintf(f, ",\"first_lines\":[");
            for (int i = 0; i < r->report.nlines; i++) {
                fprintf(f, "%s", i ? "," : "");
                json_fput_str(f, r->report.lines[i], true);
            }
            fprintf(f, "]}");
        } else {
            fprintf(f, "null");
        }
        fprintf(f, ",\"dump\":");
        if (r->dump[0])
            json_fput_str(f, r->dump, false);
        else
            fprintf(f, "null");
        fprintf(f, ",\"core\":");
        if (r->core[0])
            json_fput_str(f, r->core, false);
        else
            fprintf(f, "null");
    } else {
        fprintf(f, ",\"limits\":"); /* met by runs that ended well: notes only */
        jt_json_limits(f, r->notes, r->nnotes);
        fprintf(f, ",\"jinx_mismatches\":%d", r->jinx_mismatches);
    }
    fprintf(f, "}\n");
}

int jt_write_junit(const char *path, const char *image, const struct result *r)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
            "  <testsuite name=\"jinx\" tests=\"1\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n"
            "    <testcase classname=\"jinx.test\" name=\"", r->found ? 1 : 0,
            r->could_not_test ? 1 : 0, r->seconds);
    xml_str(f, image);
    fprintf(f, "\" time=\"%.3f\">\n", r->seconds);
    if (r->found || r->could_not_test) {
        char msg[600];
        if (r->found && r->has_report) /* the sanitizer's words first */
            snprintf(msg, sizeof msg, "%s %s (%s)", r->report.tool, r->report.kind, r->outcome);
        else if (r->found && r->unreplayed.adopted)
            snprintf(msg, sizeof msg, "%s, met in exploration only (seed %llu, no dump)",
                     r->outcome, (unsigned long long)r->unreplayed.seed);
        else if (r->found)
            snprintf(msg, sizeof msg, "%s in thread %u at %s", r->outcome, r->thread,
                     r->function[0] ? r->function : "?");
        else
            snprintf(msg, sizeof msg, "could not test: %s", r->reason);
        fprintf(f, "      <%s type=\"", r->found ? "failure" : "error");
        xml_str(f, r->found ? r->outcome : "could-not-test");
        fprintf(f, "\" message=\"");
        xml_str(f, msg);
        fprintf(f, "\">");
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (m) {
            jt_report_text(image, r, m);
            fclose(m);
            xml_str(f, buf);
            free(buf);
        }
        fprintf(f, "</%s>\n", r->found ? "failure" : "error");
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
