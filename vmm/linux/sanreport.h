/* A sanitizer's error report in the program's stderr: which tool, what kind of error, and
 * its first lines, for `jinx test`'s verdict, --json, dumps, `jinxctl inspect` and replay's
 * check (docs/sanitizers.md). Recognized (gcc's and clang's runtimes):
 *   ASan   "==PID==ERROR: AddressSanitizer: heap-use-after-free on address ..."
 *          "==PID==ERROR: AddressSanitizer: attempting double-free on ..." (kind from the
 *          SUMMARY line when it is there: "SUMMARY: AddressSanitizer: double-free ...")
 *   LSan   "==PID==ERROR: LeakSanitizer: detected memory leaks"
 *   UBSan  "FILE:LINE:COL: runtime error: signed integer overflow: ..."
 *   TSan   "WARNING: ThreadSanitizer: data race (pid=...)"
 *   MSan   "WARNING: MemorySanitizer: use-of-uninitialized-value"
 * The kind is lower case with '-' for blanks: "heap-use-after-free", "double-free",
 * "signed-integer-overflow", "data-race".
 *
 * The text is the guest's: untrusted. Every byte is looked at once, lines are cut to
 * SANREPORT_LINE_LEN, kinds to SANREPORT_KIND_LEN, and what is kept is printable ASCII.
 * Pure code, no KVM: unit-tested and fuzzed (tests/fuzz/fuzz_sanreport.c). */
#ifndef JINX_SANREPORT_H
#define JINX_SANREPORT_H
#include <stdbool.h>
#include <stddef.h>

#define SANREPORT_LINES 6        /* first lines kept: the header and what follows it */
#define SANREPORT_LINE_LEN 160
#define SANREPORT_KIND_LEN 48

struct san_report {
    char tool[8];                /* "asan", "lsan", "ubsan", "tsan", "msan" */
    char kind[SANREPORT_KIND_LEN];
    int nlines;
    char lines[SANREPORT_LINES][SANREPORT_LINE_LEN];
};

/* The first report in text[0..len) (no NUL needed): true with *r filled, else false
 * (*r zeroed). */
bool sanreport_parse(const char *text, size_t len, struct san_report *r);

/* Whether tool and kind are what sanreport_parse could have produced: a lower-case name
 * and a kind of [a-z0-9-] (for reports read back from files: a dump, jinx-vmm's JSON). */
bool sanreport_valid(const char *tool, const char *kind);

#endif
