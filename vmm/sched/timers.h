/* Timers that end early in serialized execution (explorer/timers.h, docs/timers.md).
 *
 * A thread blocked in a sleep or a timed wait whose deadline has not come may have its
 * timer end early at a pick: virtual time jumps to that deadline (vm->skipped_ns, as
 * when every thread waits), every wait due by then wakes with the result Linux gives at
 * expiry (futex_expire_locked: 0 for a sleep, -ETIMEDOUT for a timed futex wait), and the
 * ending is recorded in the fragment's list (serializer.ended) with the choice it came
 * before (serializer.picks), so that the run's schedule carries it and a replay ends the
 * same timer at the same choice. Time only moves forward, by what the thread asked for:
 * a clock read after the sleep never shows less than the sleep.
 *
 * Whole-run exploration decides (its picker calls timers_end_locked); a schedule that
 * carries endings (a replay, --schedule) has them followed by the serializer itself
 * (timers_follow_locked). All functions: caller holds vm->lock. */
#ifndef JINX_SCHED_TIMERS_H
#define JINX_SCHED_TIMERS_H
#include "explorer/explorer.h"
#include <stdbool.h>
#include <stdint.h>

struct vm;

/* The threads (explorer ids) blocked on a timer that may end early now: its deadline
 * not come, at most EX_TIMER_EARLY_MAX_NS away. */
void timers_timed_locked(struct vm *vm, struct ex_tidset *out);
/* Ends thread xid's timer now (above), at the cue point thread by_tid made (0: none).
 * False, with nothing done, when xid is not blocked on a timer whose deadline is still
 * to come, or the fragment's list is full (EX_MAX_TIMERS). */
bool timers_end_locked(struct vm *vm, uint32_t xid, int by_tid);
/* Following a schedule (no picker): ends the timer the schedule ends at this choice, if
 * any. True when one ended (the enabled set changed). A thread not blocked on a timer
 * there is a divergence (counted in serializer.timer_diverged), as a segment whose
 * thread is not enabled is the cursor's. */
bool timers_follow_locked(struct vm *vm, int by_tid);
/* The choice at which the schedule ends its next timer (UINT64_MAX: none): the
 * guest-agent's cue points stop before it (guest_cue.h). */
uint64_t timers_next_step_locked(const struct vm *vm);

#endif
