/* Random synthetic traces for the explorer's "any content is safe" tests: the
 * trace analyses (condition waits, split updates, double checks, ...) read what a
 * guest made, so every one of them must give an answer, never a crash, on events
 * with any kind, tid (past EX_MAX_TID too), size, flags and address (near the
 * variables the test cares about, so that patterns half form, or anywhere up to
 * the top of the address space). */
#ifndef TESTS_UNIT_TRACE_FIXTURE_H
#define TESTS_UNIT_TRACE_FIXTURE_H
#include "explorer/explorer.h"
#include <string.h>

/* Appends n random events to t: half of the addresses are base + stride * k for
 * k < nvars, the others any 64-bit value; rips among four (so that "same
 * instruction" and "another instruction" both occur); wakers anywhere up to
 * past the trace's end. */
static inline void fixture_random_events(struct ex_trace *t, struct ex_rng *rng, int n,
                                         uint64_t base, uint64_t stride, uint64_t nvars)
{
    for (int i = 0; i < n; i++) {
        struct ex_event e;
        memset(&e, 0, sizeof e);
        e.tid = (uint32_t)ex_rng_below(rng, 3 * EX_MAX_TID / 2 + 2);
        e.kind = (uint8_t)(1 + ex_rng_below(rng, EX_KIND_MAX_));
        e.addr = ex_rng_below(rng, 2) ? base + stride * ex_rng_below(rng, nvars)
                                      : ex_rng_next(rng);
        e.rip = 0x400 + ex_rng_below(rng, 4);
        e.arg = (uint32_t)ex_rng_below(rng, EX_MAX_TID + 2);
        e.waker = ex_rng_below(rng, (uint64_t)t->n + 3);
        e.size = (uint16_t)ex_rng_below(rng, 40);
        e.flags = (uint8_t)ex_rng_below(rng, 4);
        ex_trace_append(t, &e);
    }
}

#endif
