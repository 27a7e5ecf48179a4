/* Where two simulations from one snapshot differ (`--simulate`): the first simulation
 * is kept as the reference (its trace, and one hash per guest frame); each later one
 * is compared with it, and a difference is printed as the first differing cue point
 * (index, thread, kind, address, rip and symbol of both) and the differing guest pages
 * (how many, the first one's frame and, where a user page maps it, its virtual
 * address). A user debugging determinism needs the place, not only "N of M identical".
 * Caller: the VMM's main thread, on a paused VM. */
#ifndef JINX_SIMDIFF_H
#define JINX_SIMDIFF_H
#include "explorer/explorer.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct vm;

struct simdiff {
    struct ex_trace trace;   /* the reference simulation's cue points */
    uint64_t *page_hash;     /* per frame: 0 = not in use, else a hash of its contents */
    uint64_t nframes;
    bool have;
};

void simdiff_init(struct simdiff *d);
void simdiff_free(struct simdiff *d);
/* Keeps vm's current trace and memory as the reference. 0, or -1: out of memory. */
int simdiff_take(struct simdiff *d, struct vm *vm);
/* Compares vm's current trace and memory with the reference; prints the difference to
 * f as "simulation N differs from the first: ..." lines when there is one. Returns true
 * when identical. */
bool simdiff_compare(const struct simdiff *d, struct vm *vm, int n, FILE *f);

/* The first differing pair of cue points as one line (no newline) into buf; i is the
 * index ex_trace_first_difference gave (one trace may have ended there). */
void simdiff_describe_events(char *buf, size_t len, const struct ex_trace *a,
                             const struct ex_trace *b, long i);

#endif
