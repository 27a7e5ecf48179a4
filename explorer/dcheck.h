/* Double-checked updates in a trace: the second gate of the portfolio's early
 * slot (online.h, "portfolio"; online_portfolio.c).
 *
 *   a DOUBLE CHECK of a variable X: a thread reads X holding no lock, its next
 *   access to X is a read while it holds one, and its next a store to X,
 *   still holding it (double-checked initialisation: the lock guards the
 *   store, the first check skips it, so another thread can see X published
 *   before what X points to is filled).
 *
 * A thread HOLDS a word by holds.h's rule. The re-read must be by
 * another instruction than the first read: the same one is a loop re-reading
 * its condition. Only the thread's own accesses count, so the rule needs no
 * happens-before; a variable is an access's start address (ex_loc_of).
 *
 * Measured (docs/explore.md): in the portfolio's first runs (seed 1) it holds
 * for dcl-singleton (from run 1), and for token-ring and bb-shared-cond, whose
 * predicate loops around a condition wait look the same (the wait gives the
 * mutex back and retakes it inside libc: RMWs of the lock word that the rule
 * cannot tell from a release): the early slot leaves out programs with a
 * condition wait. musl's __lock (read libc.need_locks, take the lock, store
 * it without a re-read) is no double check.
 * Pure data, no KVM; the trace is only read (any content is safe). */
#ifndef EXPLORER_DCHECK_H
#define EXPLORER_DCHECK_H
#include "trace.h"
#include "u64map.h"

/* The number of variables of t with a double check, counting only those
 * `conflict` classes DATA (NULL: all); *first = the first in trace order. */
uint64_t ex_trace_double_checks(const struct ex_trace *t, const struct ex_u64map *conflict,
                                uint64_t *first);

#endif
