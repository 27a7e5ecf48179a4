/* libFuzzer harness for jinx test's reading of a run's log (vmm/cli/jinx_test_read.c):
 * jinx-vmm's messages and exploration summary, among the program's own output
 * (untrusted). The input is read twice, as a run that found nothing and as one that
 * found a bug, into the same result (as jinx test sums its runs); then a bug met in
 * exploration only may become the verdict, and the three reports are written. Beyond "no
 * crash, no leak": the strings read stay terminated, and a verdict adopted is a found
 * one with no dump. */
#include "cli/jinx_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct result r;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memset(&r, 0, sizeof r);
    r.seed = 3;
    for (int found = 0; found < 2; found++) {
        FILE *f = fmemopen((void *)data, size, "r");
        if (!f)
            return 0;
        r.runs++;
        jt_read_log_stream(f, &r, !found);
        fclose(f);
    }
    if (!memchr(r.strategy, 0, sizeof r.strategy) || !memchr(r.dump, 0, sizeof r.dump) ||
        !memchr(r.detail, 0, sizeof r.detail) || r.nbt < 0 || r.nbt > MAX_BT ||
        !memchr(r.unreplayed.outcome, 0, sizeof r.unreplayed.outcome) ||
        !memchr(r.unreplayed.replay, 0, sizeof r.unreplayed.replay))
        abort();
    r.found = false;
    if (jt_adopt_unreplayed(&r) && (!r.found || r.dump[0] || !r.unreplayed.met))
        abort();
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        jt_report_text("images/bin/x", &r, null);
        jt_report_json("images/bin/x", &r, null);
        fclose(null);
    }
    return 0;
}
