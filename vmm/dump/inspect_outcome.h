/* A dump's outcome as `jinxctl inspect` words it: signal names, and the sanitizer report
 * (dump/sanrec.h) as a text block, a JSON member and the one line of the --html page's
 * summary. */
#ifndef JINX_INSPECT_OUTCOME_H
#define JINX_INSPECT_OUTCOME_H
#include "dump/dumpfile.h"
#include <stddef.h>
#include <stdio.h>

/* "SIGSEGV"; "none" for 0, "SIG?" for a number without a name. */
const char *inspect_sig_name(int sig);
/* "report:  asan heap-use-after-free ..." and its first lines; nothing without one. */
void inspect_report_text(const struct dumpfile *d, FILE *f);
/* ,"report":{...} or ,"report":null (a member of the outcome object) */
void inspect_report_json(const struct dumpfile *d, FILE *f);
/* "asan heap-use-after-free: line | line ...", "" without one: in a static buffer (the
 * command is single-threaded), valid until the next call. */
const char *inspect_report_line(const struct dumpfile *d);

#endif
