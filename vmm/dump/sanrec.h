/* The sanitizer-report record of a .jinxdump: the report (linux/sanreport.h) that the
 * program's stderr held when the dump was written, so that `jinxctl inspect` (and --html)
 * shows it and `jinx-vmm replay` checks that the replay printed the same one (tool and
 * kind). docs/dumps.md is the reference:
 *
 *   32 SANREPORT  u32 version (1), str tool, str kind, u32 nlines, nlines x str line
 *
 * Untrusted input: tool and kind must be what sanreport_parse makes (sanreport_valid),
 * nlines at most SANREPORT_LINES, each line shorter than SANREPORT_LINE_LEN and
 * printable ASCII. Pure code, no KVM; fuzzed with the dump parser's seeds
 * (tests/fuzz/fuzz_sanreport.c). Dumps without the record had no report. */
#ifndef JINX_SANREC_H
#define JINX_SANREC_H
#include "dump/dumpfile.h"
#include "linux/sanreport.h"
#include <stdbool.h>

#define DREC_SANREPORT 32
#define SANREC_VERSION 1

/* Adds r as d's SANREPORT record. 0, or -1 out of memory. */
int sanrec_add(struct dumpfile *d, const struct san_report *r);
/* The record's payload into *r: 1 when d has a valid one, 0 when it has none, -1 with a
 * message when it is malformed. */
int sanrec_find(const struct dumpfile *d, struct san_report *r, char *err, size_t errlen);
int sanrec_decode(const uint8_t *p, size_t len, struct san_report *r, char *err, size_t errlen);

#endif
