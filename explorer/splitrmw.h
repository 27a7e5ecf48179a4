/* Split read-modify-writes in a trace: the first gate of the portfolio's early
 * slot (online.h, "portfolio", EARLY SLOT; online_portfolio.c).
 *
 * The sweep (online_sweep.c) preempts a thread right after its racy read of a
 * variable, and its pair target holds a second thread after its write of the
 * same variable: the shapes of an update made of two steps that another thread
 * can come between. The flips of the portfolio's first indexes (flip.h) learn
 * from run 0's races and find most other bugs sooner. This module tells from a
 * trace whether a program makes such updates:
 *
 *   a SPLIT UPDATE of a variable X: at least two threads each read X with a
 *   plain (not atomic) load, holding no lock (holds.h), and make their very
 *   next recorded access, of any variable, a plain store to X, still holding
 *   none (a counter, a reference count, a maximum updated with two
 *   instructions instead of one atomic one: the lost update; under a lock it
 *   is none, whatever the conflict map says of X: a condition wait gives the
 *   mutex back inside libc by RMWs that make lock-protected data look racy,
 *   bb-shared-cond's sum).
 *   With a conflict map, "recorded access" means one to a variable the map
 *   knows (some two threads access it): the compiler schedules a thread's own
 *   stack slots (pushes of callee-saved registers) between the load and the
 *   store of one statement (thr4-barrier's `arrived = n + 1`).
 *
 * "Very next": libc's flags read on entry and written much later (musl's
 * libc.need_locks, read by __lock, written by the exit of the last thread) are
 * no update of a value just read; a program's read-modify-write is one
 * statement. Only each thread's own accesses count, so the rule needs no
 * happens-before; a variable is an access's start address (trace.h,
 * ex_loc_of). Under one lock the accesses of X are no race and X is no DATA
 * variable (conflict.h), which the caller checks.
 *
 * Measured (docs/explore.md, "Split updates and double checks: the early slot",
 * and "Early wake slots"): in the portfolio's first runs (seed 1) it holds for
 * atom-counter, atom-lazy-init, many-20-counter, many-64-max, many-150-ticket,
 * many-200-list, rc-uaf and thr4-barrier (run 0 or 1: the VMM records a
 * thread's second access to a page it owns only once the page is pre-shared),
 * for none of the programs whose bugs the first flips find, and for none of
 * the condition-variable programs whose bug is the wait itself (bb-*, lw-*,
 * token-ring).
 *
 * Pure data, no KVM; the trace is only read (any content is safe). */
#ifndef EXPLORER_SPLITRMW_H
#define EXPLORER_SPLITRMW_H
#include "trace.h"
#include "u64map.h"

/* The number of variables in t with a split update by the rule above, counting
 * only those `conflict` (address -> EX_CONFLICT_* bits, conflict.h; NULL: all)
 * classes DATA; *first (if not NULL and one was found) = the first of them in
 * trace order. 0 for t NULL. Linear in the trace. On no memory it counts what
 * it could (at worst a variable missed). */
uint64_t ex_trace_split_updates(const struct ex_trace *t, const struct ex_u64map *conflict,
                                uint64_t *first);

#endif
