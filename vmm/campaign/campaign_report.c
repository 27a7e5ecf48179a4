/* Merge's three outputs: a table for humans, report.json and junit.xml. Deterministic:
 * bugs come sorted by signature, tasks by index, and nothing reads the clock, so merging
 * the same results twice gives the same bytes. Paths are the campaign directory's
 * relative ones and the image paths of tasks.tsv, never where the merge ran. */
#include "campaign/campaign.h"
#include "lib/json.h"
#include <stdio.h>
#include <string.h>

struct counts {
    size_t found, nothing, notest, missing, bad;
    double seconds;            /* task time, summed over the results */
};

static struct counts count(const struct camp_tasks *ts, const struct camp_entry *e)
{
    struct counts c = {0};
    for (size_t i = 0; i < ts->n; i++) {
        if (e[i].state == CAMP_E_MISSING) {
            c.missing++;
            continue;
        }
        if (e[i].state == CAMP_E_BAD) {
            c.bad++;
            continue;
        }
        c.seconds += e[i].r.seconds;
        if (e[i].r.status == CAMP_FOUND)
            c.found++;
        else if (e[i].r.status == CAMP_NOTEST)
            c.notest++;
        else
            c.nothing++;
    }
    return c;
}

static void task_list(FILE *f, const uint32_t *t, size_t n, size_t most)
{
    for (size_t i = 0; i < n && i < most; i++)
        fprintf(f, "%s%u", i ? "," : "", t[i]);
    if (n > most)
        fprintf(f, ",... (%zu more)", n - most);
}

void campaign_report_table(FILE *f, const struct camp_tasks *ts, const struct camp_entry *e,
                           const struct camp_merge *m)
{
    struct counts c = count(ts, e);
    fprintf(f, "campaign: %zu tasks: %zu found a bug, %zu nothing found, %zu could not test, "
            "%zu no result yet, %zu bad results; %.1f task-seconds\n", ts->n, c.found,
            c.nothing, c.notest, c.missing, c.bad, c.seconds);
    fprintf(f, "bugs: %zu distinct (%zu hits, %zu duplicates merged)\n", m->nbugs, c.found,
            c.found - m->nbugs);
    for (size_t j = 0; j < m->nbugs; j++) {
        const struct camp_bug *b = &m->bugs[j];
        fprintf(f, "  %3u hits  %s\n            tasks ", b->hits, b->signature);
        task_list(f, b->tasks, b->ntasks, 20);
        fprintf(f, "\n            smallest: task %u, seed %llu, ", b->best->task,
                (unsigned long long)b->best->seed);
        if (b->best->replayable)
            fprintf(f, "%llu cue points, replayable", (unsigned long long)b->best->cues);
        else
            fprintf(f, "not replayable");
        fprintf(f, "; dump %s\n", b->best->dump[0] ? b->best->dump : "none");
    }
    for (size_t i = 0; i < ts->n; i++) {
        if (e[i].state == CAMP_E_OK && e[i].r.status == CAMP_NOTEST)
            fprintf(f, "could not test: task %zu (%s, seeds %llu-%llu): %s\n", i, ts->t[i].image,
                    (unsigned long long)ts->t[i].first_seed,
                    (unsigned long long)ts->t[i].last_seed, e[i].r.reason);
        else if (e[i].state == CAMP_E_BAD)
            fprintf(f, "bad result: task %zu: results/%zu.json: %s\n", i, i, e[i].why);
    }
    if (c.missing) {
        fprintf(f, "no result yet: %zu tasks:", c.missing);
        size_t shown = 0;
        for (size_t i = 0; i < ts->n && shown < 50; i++)
            if (e[i].state == CAMP_E_MISSING)
                fprintf(f, "%s%zu", shown++ ? "," : " ", i);
        fprintf(f, "%s\n", c.missing > shown ? ",..." : "");
    }
}

static void jstr(FILE *f, const char *s)
{
    json_fput_str(f, s, true);
}

static void json_bug(FILE *f, const struct camp_bug *b)
{
    const struct camp_result *r = b->best;
    fprintf(f, "{\"signature\":");
    jstr(f, b->signature);
    fprintf(f, ",\"image\":");
    jstr(f, r->image);
    fprintf(f, ",\"outcome\":");
    jstr(f, r->outcome);
    fprintf(f, ",\"function\":");
    jstr(f, r->function);
    fprintf(f, ",\"race\":");
    race_pair_fput_json(f, b->named->has_race, b->named->race[0], b->named->race[1]);
    fprintf(f, ",\"hits\":%u,\"tasks\":[", b->hits);
    for (size_t i = 0; i < b->ntasks; i++)
        fprintf(f, "%s%u", i ? "," : "", b->tasks[i]);
    fprintf(f, "],\"task\":%u,\"seed\":%llu,\"cues\":%llu,\"replayable\":%s,\"dump\":",
            r->task, (unsigned long long)r->seed, (unsigned long long)r->cues,
            r->replayable ? "true" : "false");
    if (r->dump[0])
        jstr(f, r->dump);
    else
        fprintf(f, "null");
    fputc('}', f);
}

void campaign_report_json(FILE *f, const struct camp_tasks *ts, const struct camp_entry *e,
                          const struct camp_merge *m)
{
    struct counts c = count(ts, e);
    fprintf(f, "{\"version\":1,\"tasks\":%zu,\"counts\":{\"found\":%zu,\"nothing\":%zu,"
            "\"could_not_test\":%zu,\"no_result\":%zu,\"bad_result\":%zu,\"bugs\":%zu,"
            "\"duplicates\":%zu},\n\"bugs\":[", ts->n, c.found, c.nothing, c.notest,
            c.missing, c.bad, m->nbugs, c.found - m->nbugs);
    for (size_t j = 0; j < m->nbugs; j++) {
        fprintf(f, "%s\n  ", j ? "," : "");
        json_bug(f, &m->bugs[j]);
    }
    fprintf(f, "],\n\"could_not_test\":[");
    size_t k = 0;
    for (size_t i = 0; i < ts->n; i++) {
        if (e[i].state != CAMP_E_OK || e[i].r.status != CAMP_NOTEST)
            continue;
        fprintf(f, "%s\n  {\"task\":%zu,\"image\":", k++ ? "," : "", i);
        jstr(f, ts->t[i].image);
        fprintf(f, ",\"seeds\":\"%llu-%llu\",\"reason\":",
                (unsigned long long)ts->t[i].first_seed,
                (unsigned long long)ts->t[i].last_seed);
        jstr(f, e[i].r.reason);
        fputc('}', f);
    }
    fprintf(f, "],\n\"no_result\":[");
    k = 0;
    for (size_t i = 0; i < ts->n; i++)
        if (e[i].state == CAMP_E_MISSING)
            fprintf(f, "%s%zu", k++ ? "," : "", i);
    fprintf(f, "],\n\"bad_result\":[");
    k = 0;
    for (size_t i = 0; i < ts->n; i++) {
        if (e[i].state != CAMP_E_BAD)
            continue;
        fprintf(f, "%s\n  {\"task\":%zu,\"error\":", k++ ? "," : "", i);
        jstr(f, e[i].why);
        fputc('}', f);
    }
    /* The only part that differs between two runs of the same plan. */
    fprintf(f, "],\n\"timing\":{\"task_seconds\":%.3f}}\n", c.seconds);
}

static void xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '<')
            fputs("&lt;", f);
        else if (ch == '>')
            fputs("&gt;", f);
        else if (ch == '&')
            fputs("&amp;", f);
        else if (ch == '"')
            fputs("&quot;", f);
        else if (ch >= 0x20 && ch < 0x7f)
            fputc(ch, f);
        else
            fputc('?', f); /* results are printable ASCII already; XML 1.0 forbids controls */
    }
}

/* One test case per task: a failure for a bug (its signature), an error for a task that
 * could not test, has no result or a bad one. */
void campaign_report_junit(FILE *f, const struct camp_tasks *ts, const struct camp_entry *e,
                           const struct camp_merge *m)
{
    (void)m;
    struct counts c = count(ts, e);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
            "  <testsuite name=\"jinx-campaign\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "time=\"%.3f\">\n", ts->n, c.found, c.notest + c.missing + c.bad, c.seconds);
    char sig[1024], name[64];
    for (size_t i = 0; i < ts->n; i++) {
        const struct camp_task *t = &ts->t[i];
        const struct camp_result *r = &e[i].r;
        snprintf(name, sizeof name, "task %zu seeds %llu-%llu", i,
                 (unsigned long long)t->first_seed, (unsigned long long)t->last_seed);
        fprintf(f, "    <testcase classname=\"");
        xml(f, t->image);
        fprintf(f, "\" name=\"%s\" time=\"%.3f\">", name,
                e[i].state == CAMP_E_OK ? r->seconds : 0.0);
        if (e[i].state == CAMP_E_MISSING) {
            fprintf(f, "\n      <error type=\"no-result\" message=\"no results/%zu.json yet: "
                    "run or rerun this task\"/>\n    ", i);
        } else if (e[i].state == CAMP_E_BAD) {
            fprintf(f, "\n      <error type=\"bad-result\" message=\"");
            xml(f, e[i].why);
            fprintf(f, "\"/>\n    ");
        } else if (r->status == CAMP_NOTEST) {
            fprintf(f, "\n      <error type=\"could-not-test\" message=\"");
            xml(f, r->reason);
            fprintf(f, "\"/>\n    ");
        } else if (r->status == CAMP_FOUND) {
            campaign_signature(r, sig, sizeof sig);
            fprintf(f, "\n      <failure type=\"");
            xml(f, r->outcome);
            fprintf(f, "\" message=\"");
            xml(f, sig);
            fprintf(f, "\">seed %llu; dump ", (unsigned long long)r->seed);
            xml(f, r->dump[0] ? r->dump : "none");
            fprintf(f, "</failure>\n    ");
        }
        fprintf(f, "</testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
}
