/* Blocking dependencies between the events of a recorded trace.
 *
 * dep[i] is the event that had to be performed before event i could be: the
 * futex wake (or exit) that woke i's thread from the wait it performed just
 * before i, the exit a join waited for, or the create of i's (new) thread. It is
 * -1 when event i's thread did not block before it. These are exactly the edges
 * that make a thread runnable, so they drive both the enabledness model (a
 * thread's next event is enabled once its dep is performed) and the sync part of
 * happens-before.
 *
 * Sources, in order of preference: the event's own `waker` field (set by the
 * VMM, exact); otherwise inference from the trace: per-address FIFO futex
 * queues (a wake with arg = k wakes the k oldest blocked waiters on that word;
 * an exit with a clear_child_tid address is a wake on it), join -> the joined
 * thread's exit, first event of a thread -> its create. Waits flagged
 * EX_F_NOBLOCK never block. A create of an id whose thread has already
 * performed events (the VMM reuses the ids of exited threads once tids pass
 * EX_MAX_TID) starts a new thread under that id. */
#ifndef EXPLORER_SYNCDEP_H
#define EXPLORER_SYNCDEP_H
#include "trace.h"

/* Fills dep[0..t->n). Returns 0, or -1 on allocation failure. */
int ex_syncdeps(const struct ex_trace *t, int32_t *dep);

#endif
