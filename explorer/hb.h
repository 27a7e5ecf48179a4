/* Happens-before over a trace, by vector clocks.
 *
 * Edges: program order; the blocking dependencies of syncdep.h (futex wake ->
 * the woken thread's next event, create -> the child's first event, exit ->
 * the joiner's next event); and release/acquire through atomic memory: every
 * access flagged EX_F_ATOMIC that reads (READ or RMW) acquires from the latest
 * atomic write (WRITE or RMW flagged EX_F_ATOMIC) to the same address, and
 * atomic writes release. LOCK-prefixed instructions are full barriers on x86
 * and musl's mutexes, condvars and once-flags are built from them plus futexes,
 * so lock-protected accesses come out ordered. Plain (non-LOCK) stores do not
 * release: a hand-rolled spinlock released by a plain `mov` shows up as racy,
 * which it formally is at the language level.
 *
 * Storage: the clocks of a thread change in other components only when it
 * acquires something new, so each event keeps its own component plus an index
 * to the thread's vector at its last acquire; memory is O(events + acquires x
 * threads) rather than O(events x threads). */
#ifndef EXPLORER_HB_H
#define EXPLORER_HB_H
#include "trace.h"

struct ex_hb {
    uint32_t width;     /* clock entries per vector (nthreads + 1, index = tid) */
    uint32_t *clock;    /* per event: its thread's own clock at the event */
    uint32_t *snap;     /* per event: vector index */
    uint32_t *vcs;      /* vectors, width entries each */
    size_t nvcs, capvcs;
    const struct ex_trace *tr;
};

/* dep from ex_syncdeps(). Returns 0 or -1 on allocation failure. */
int ex_hb_build(struct ex_hb *hb, const struct ex_trace *t, const int32_t *dep);
void ex_hb_free(struct ex_hb *hb);
/* Event a happens before event b (indices). Irreflexive. */
bool ex_hb_before(const struct ex_hb *hb, size_t a, size_t b);
/* Either order holds. */
bool ex_hb_ordered(const struct ex_hb *hb, size_t a, size_t b);
/* Component `tid` of event e's vector clock. */
uint32_t ex_hb_component(const struct ex_hb *hb, size_t e, uint32_t tid);

#endif
