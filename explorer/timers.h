/* Timers that end early: a strategy layer shared by every whole-run strategy (online.h)
 * and sparse runs (sparse.h). docs/timers.md.
 *
 * A thread blocked in a sleep (nanosleep, clock_nanosleep) or a timed wait (a futex wait
 * with a timeout: pthread_cond_timedwait, sem_timedwait, ...) under serialized execution
 * wakes when its deadline comes, and virtual time moves 1 us per cue point, so a 50 ms
 * sleep ends only when every other thread has blocked (time then jumps). On a busy
 * machine the others can be descheduled for that long: a sleep is no synchronization.
 * So at a TIMED STEP (a pick with at least one enabled thread while at least one thread
 * waits on a timer that may end early: the VMM names them, those with at most
 * EX_TIMER_EARLY_MAX_NS left) a run may end one timer early: virtual time jumps to its
 * deadline and its thread runs next.
 *
 * The plan (ex_timers_begin, from (seed, index) alone, never from the strategy's own
 * generator, so the strategy's choices are those of before wherever no timer ends early):
 * with probability 1/2 a run ends none (today's behaviour, --timers strict); otherwise it
 * ends 1 (or, with probability 1/4, 2) timers, at timed steps drawn uniformly from
 * [1, K], K the most timed steps a run of the history showed (PCT's change points over
 * timed steps instead of racy ones). With no timed step known yet (K = 0), none. At a
 * planned step the thread whose timer ends is drawn uniformly among the timed ones.
 *
 * After its timer ended the thread goes on while it is enabled (ex_timers_forced: the
 * others are the slow ones, as on the busy machine), until it blocks, sleeps again, is
 * found spinning, or EX_TIMER_BOOST steps pass. A loop that waits on time (a poll with
 * nanosleep(1 ms), a timed wait retried) therefore ends at most 2 of its waits early and
 * then runs as before: no livelock.
 *
 * Pure logic: the VMM applies the ending (time, wake, the schedule's record). */
#ifndef EXPLORER_TIMERS_H
#define EXPLORER_TIMERS_H
#include "rng.h"
#include "trace.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EX_TIMER_EARLY_MAX_NS 1000000000ULL /* a longer wait is a watchdog: never ended early */
#define EX_TIMERS_MAX_ENDS 2u               /* endings a run plans, at most */
#define EX_TIMER_BOOST 4096u                /* steps the woken thread keeps the turn, at most */

/* What earlier runs showed: the most timed steps in one run. */
struct ex_timers_hist {
    uint64_t max_timed;
    uint64_t runs;
};

struct ex_timers_run {
    struct ex_rng rng;
    bool strict;                /* --timers strict: never */
    uint32_t nplan;
    uint64_t at[EX_TIMERS_MAX_ENDS]; /* timed-step ordinals (1-based), ascending */
    uint64_t timed;             /* timed steps so far */
    uint32_t ended;             /* timers ended early so far */
    uint32_t boost;             /* the thread that keeps the turn (0: none) */
    uint32_t boost_left;
};

void ex_timers_hist_init(struct ex_timers_hist *h);
/* Plans run `index` of the exploration seeded `seed` (h NULL: no history). */
void ex_timers_begin(struct ex_timers_run *r, const struct ex_timers_hist *h, uint64_t seed,
                     uint64_t index, bool strict);
/* At a pick: enabled (the threads that can run), timed (the threads whose timer may end
 * early; the VMM checks the bound). Returns the thread whose timer ends now (0: none):
 * the VMM ends it, then the thread is the one to run (ex_timers_forced names it). */
uint32_t ex_timers_fire(struct ex_timers_run *r, const struct ex_tidset *enabled,
                        const struct ex_tidset *timed);
/* The thread this pick must take (0: the strategy chooses): the one whose timer ended,
 * while it is enabled, not in avoid (may be NULL) and within EX_TIMER_BOOST steps. Call
 * once per pick, after ex_timers_fire, with the enabled set after the ending. */
uint32_t ex_timers_forced(struct ex_timers_run *r, const struct ex_tidset *enabled,
                          const struct ex_tidset *avoid);
/* After a run: its timed steps join h. */
void ex_timers_learn(struct ex_timers_hist *h, const struct ex_timers_run *r);

struct ex_timer_end;
/* The ending in words, into buf (len > 0): "thread 2's nanosleep(50 ms) ended early
 * while thread 1 was at WHERE" (a timed futex wait: "thread 2's futex wait (timeout
 * 100 ms) ended early ..."; at the thread's own cue point, the one that began the wait:
 * "... ended early, right as it began (at WHERE)"); where may be NULL or "" (then the
 * "while" clause names the thread alone, or nothing without one). Returns buf. */
char *ex_timer_end_describe(const struct ex_timer_end *t, const char *where, char *buf,
                            size_t len);

#endif
