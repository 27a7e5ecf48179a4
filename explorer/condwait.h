/* Condition-variable waits in a trace: the gate of the portfolio's wake slots.
 *
 * The wake strategy (online.h, "wake") is for programs whose threads wait for a
 * CONDITION (pthread_cond_wait, a semaphore), not for programs whose threads
 * only contend for a mutex: there its slots only delay the other strategies.
 * Both kinds of wait are a futex wait (trace.h: EX_FUTEX_WAIT, recorded when the
 * thread blocks, EX_F_NOBLOCK when it did not); what tells them
 * apart is what the waiter does with the futex word W around a blocking wait:
 *
 *   a LOCK wait (musl's and glibc's mutexes, musl's internal locks): the
 *   waiter's last access to W before the wait is its own RMW (musl's cmpxchg
 *   that sets the waiters bit), or its first access to W after the wait is
 *   an RMW (glibc's xchg that takes the lock, musl's trylock cmpxchg);
 *
 *   a CONDITION wait, one of two shapes:
 *   (a) the waiter's last access to W before the wait is its own plain STORE:
 *       it waits on the value it published itself (musl stores 2 into the
 *       barrier of the waiter node on its own stack, which the signaler
 *       unlocks; recorded once that stack page is shared, i.e. from the run
 *       after the first signal on it); a lock is never taken by a plain store;
 *   (b) not an RMW before; after the wait the waiter's first access to W is a
 *       READ and its very next access, of any word, an RMW of W (glibc reloads
 *       the cond's __g_signals word, then grabs a signal with a cmpxchg);
 *
 *   not a condition wait: a JOIN (musl waits on the thread's detach_state,
 *   glibc on its tid: reads only), musl's "wait until it changes" (__wait,
 *   e.g. its thread-list lock at thread start and exit: the reload of W is
 *   followed by the waiter count, another word).
 *
 * Measured (docs/explore.md, "The condition-wait gate"): in the first five
 * portfolio runs of every corpus program, the musl builds of bb-*, lw-flag,
 * lw-wrong-waiter, thr4-barrier, token-ring and their twins show one, no
 * mutex-only program (dl-*, atom-*, pre*-*, aba-stack, many-*, rc-uaf) does;
 * the glibc builds (images/bin/dyn/corpus) the same for the ones checked.
 * An access counts for W when its bytes overlap W's 4 bytes. Only the
 * waiter's own accesses count, so the rule needs no happens-before and holds
 * whatever the schedule; a program is gated by any run that shows one.
 * Pure data, no KVM; the trace is only read (any content is safe). */
#ifndef EXPLORER_CONDWAIT_H
#define EXPLORER_CONDWAIT_H
#include "trace.h"

/* The number of blocking futex waits in t that are condition waits by the rule
 * above (0 for t NULL). Linear in the trace (one pass per thread's events
 * after each blocking wait, bounded by that thread's next futex wait). */
uint64_t ex_trace_cond_waits(const struct ex_trace *t);
/* The same, and *older (if not NULL) = those whose WAKER is older than the
 * waiter (a lower tid: created before it, as a producer created before its
 * consumers). The VMM records a blocking wait when the thread blocks; its waker
 * is the thread of the first futex wake of the word after that which woke a
 * thread (every thread blocked on the word takes it: the wake's count is not
 * matched to the queue). */
uint64_t ex_trace_cond_waits_older(const struct ex_trace *t, uint64_t *older);

#endif
