/* Preemption-bounded exhaustive search (CHESS-style, Musuvathi & Qadeer).
 *
 * Enumerates, over the model, every interleaving of the recorded events with
 * at most c preemptions, each exactly once (depth-first, so each is a distinct
 * path of choices). A preemption is a switch away from a thread that could
 * have continued; switching when the running thread blocks, exits or runs out
 * of recorded events is free, as is the very first choice.
 *
 * Branching happens only inside a window of cue points [start, start+len):
 * before it the recorded order is followed (so the schedule reproduces the
 * recording up to there), and the schedule ends at the window's end, after
 * which the default policy ("continue") runs on without preemptions. len = 0
 * means "to the end of the trace". Children are tried continue-first, then
 * other threads by ascending tid; enumeration stops at max_schedules. */
#ifndef EXPLORER_BOUNDED_H
#define EXPLORER_BOUNDED_H
#include "strategy.h"

/* Calls visit(tids, n, ctx) for each schedule (the full choice sequence,
 * prefix included) until it returns nonzero or `max` schedules were visited
 * (max 0 = no limit). Returns the number visited, or -1 on no memory. */
long ex_bounded_enumerate(const struct ex_analysis *a, uint32_t preemptions,
                          uint32_t window_start, uint32_t window_len, uint64_t max,
                          int (*visit)(const uint32_t *tids, size_t n, void *ctx), void *ctx);

#endif
