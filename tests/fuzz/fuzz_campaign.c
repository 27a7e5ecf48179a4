/* libFuzzer harness for `jinx campaign`'s file parsers, the input of which may be anyone's
 * (a shared campaign directory): the first byte picks the parser, the rest is the file.
 *   even: a results/N.json (campaign_result_parse, vmm/campaign_result.c)
 *   odd:  a tasks.tsv (campaign_tasks_parse, vmm/campaign_tasks.c)
 * Checked beyond "no crash, no leak":
 *  - a rejected input gets a non-empty, terminated error message;
 *  - an accepted result, written back with campaign_result_write, parses again and
 *    writes the same bytes (what merge reads is what run-task would have written);
 *  - every accepted task, formatted with campaign_task_format, parses to the same line. */
#include "campaign/campaign.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(const char *err, size_t cap)
{
    if (!memchr(err, 0, cap) || !err[0])
        abort();
}

static char *write_result(const struct camp_result *r, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        abort();
    if (campaign_result_write(f, r) < 0)
        abort();
    fclose(f);
    return buf;
}

static void fuzz_result(const char *s, size_t n)
{
    static struct camp_result r, again;
    char err[300];
    if (campaign_result_parse(s, n, &r, err, sizeof err) < 0) {
        check_err(err, sizeof err);
        return;
    }
    size_t l1, l2;
    char *w1 = write_result(&r, &l1);
    if (campaign_result_parse(w1, l1, &again, err, sizeof err) < 0)
        abort(); /* what we write, we must read */
    char *w2 = write_result(&again, &l2);
    if (l1 != l2 || memcmp(w1, w2, l1))
        abort();
    char sig[1024];
    campaign_signature(&r, sig, sizeof sig);
    free(w1);
    free(w2);
}

static void fuzz_tasks(const char *s, size_t n)
{
    struct camp_tasks ts;
    char err[400];
    if (campaign_tasks_parse(s, n, &ts, err, sizeof err) < 0) {
        check_err(err, sizeof err);
        if (ts.t || ts.n)
            abort(); /* nothing left to free on failure */
        return;
    }
    static char line[CAMP_MAX_LINE], line2[CAMP_MAX_LINE];
    static struct camp_task back;
    for (size_t i = 0; i < ts.n; i++) {
        if (campaign_task_format(&ts.t[i], line, sizeof line) < 0)
            continue; /* fields that cannot be written (too long once escaped) */
        if (campaign_task_parse(line, &back, err, sizeof err) < 0 ||
            campaign_task_format(&back, line2, sizeof line2) < 0 || strcmp(line, line2))
            abort();
    }
    campaign_tasks_free(&ts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    const char *s = (const char *)data + 1;
    if (data[0] & 1)
        fuzz_tasks(s, size - 1);
    else
        fuzz_result(s, size - 1);
    return 0;
}
