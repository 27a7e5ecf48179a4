/* The portfolio's early slot (online.h, "portfolio", EARLY SLOT): index 2 runs
 * the sweep with a target at a variable a run's trace named, once one did:
 *
 *   a SPLIT UPDATE (splitrmw.h: two threads each read a DATA variable and
 *   store to it right after; h->split_updates from h->split_from): the
 *   sweep's PAIR at it (h->split_var: its read window, then another thread's
 *   write window of it, online_sweep.c), the lost update that must also land
 *   before the other thread's next update (a reference count freed early);
 *
 *   else a DOUBLE CHECK (dcheck.h: a thread reads a DATA variable unlocked,
 *   again under a lock, then stores to it; h->dchecks from h->dcheck_from) in
 *   a program with no CONDITION wait known by then (condwait.h): the sweep's
 *   WRITE window at it (h->dcheck_var: the creator stopped right after it
 *   published the variable, before it filled what it points to). A predicate
 *   loop around a condition wait shows the same shape (the wait gives the
 *   mutex back and retakes it inside libc, by RMWs of the lock word a trace
 *   cannot tell from a release; token-ring, bb-shared-cond), and those
 *   programs' early slots are the wake slots'.
 *
 * A program whose runs show neither runs the layout without the slot, so the
 * flips of the first indexes, which learn from run 0's races, keep their
 * schedules there.
 *
 * Index 2 (docs/explore.md, "Split updates and double checks: the early
 * slot"): index 3 found the split-update programs one schedule later; index 1
 * comes before the run that shows most of them (run 0 records a thread's
 * second access to a page it owns only once the page is pre-shared: rc-uaf,
 * atom-counter and dcl-singleton show theirs from run 1). */
#include "online_impl.h"

#define EX_SPLIT_SLOT 2u

static bool split_gate(const struct ex_history *h, uint64_t index)
{
    return h->split_updates && index >= h->split_from;
}

static bool dcheck_gate(const struct ex_history *h, uint64_t index)
{
    return h->dchecks && index >= h->dcheck_from && !(h->cond_waits && index >= h->cond_from);
}

static bool split_slot(const struct ex_history *h, uint64_t index)
{
    uint8_t kind;
    uint64_t ordinal;
    return h && index == EX_SPLIT_SLOT && (split_gate(h, index) || dcheck_gate(h, index)) &&
           !ex_online_portfolio_sweeps(h, index) &&
           !ex_online_portfolio_wake(h, index, &kind, &ordinal);
}

bool ex_online_portfolio_split(const struct ex_history *h, uint64_t index, uint8_t *kind,
                               uint64_t *ordinal)
{
    if (!split_slot(h, index))
        return false;
    *kind = EX_ONLINE_SWEEP;
    *ordinal = EX_SWEEP_SPLIT | (split_gate(h, index) ? 2 : 1); /* the pair, or the write window */
    return true;
}

uint64_t ex_online_portfolio_splits_before(const struct ex_history *h, uint64_t index)
{
    return EX_SPLIT_SLOT < index && split_slot(h, EX_SPLIT_SLOT);
}
