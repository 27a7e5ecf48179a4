/* Following a schedule at run time: the one piece of policy the VMM and the
 * explorer's own model share, so that what a strategy predicts is what the VMM
 * does.
 *
 * At every cue point the VMM calls ex_cursor_next() (or ex_cursor_next_avoiding())
 * with the set of threads that can run (not blocked in a futex wait or join, not
 * exited) and runs the thread it returns until that thread's next cue point.
 *
 * Rules:
 *  - The current segment's thread runs if it is enabled; each step uses one of
 *    the segment's steps.
 *  - If it is not enabled, the rest of that segment is dropped (counted in
 *    `skipped` and `divergences`) and the next segment is tried. A strategy's
 *    schedule is a prediction from the recorded trace, and a thread that blocks
 *    earlier than predicted has nothing to do until someone else runs, so
 *    moving on keeps the rest of the interleaving meaningful. In replay mode
 *    any divergence means the replay went wrong.
 *  - When the segments are used up, the schedule's default policy decides
 *    (schedule.h), among the enabled threads minus `avoid` (threads found
 *    spinning, spin.h) unless that leaves nobody. The segments ignore `avoid`:
 *    a schedule (a replay above all) is obeyed as written.
 *  - With no thread enabled, it returns 0 (a deadlock, or the end). */
#ifndef EXPLORER_CURSOR_H
#define EXPLORER_CURSOR_H
#include "schedule.h"
#include "trace.h"

struct ex_cursor {
    const struct ex_schedule *s;
    size_t seg;             /* current segment */
    uint32_t used;          /* steps used in it */
    uint32_t last;          /* thread chosen at the previous step (0 = none yet) */
    uint32_t turn_left;     /* roundrobin: steps left in last's turn */
    uint64_t steps;         /* steps taken */
    uint64_t divergences;   /* segments whose thread was not enabled when due */
    uint64_t skipped;       /* scheduled steps dropped because of that */
};

/* The schedule must outlive the cursor and not change while in use. */
void ex_cursor_init(struct ex_cursor *c, const struct ex_schedule *s);
/* Picks the thread for this cue point (see above); 0 if enabled is empty. */
uint32_t ex_cursor_next(struct ex_cursor *c, const struct ex_tidset *enabled);
/* The same, keeping the default policy away from `avoid` (NULL: nobody) while some
 * enabled thread is not in it. */
uint32_t ex_cursor_next_avoiding(struct ex_cursor *c, const struct ex_tidset *enabled,
                                 const struct ex_tidset *avoid);
/* True while the segments still decide (false once the default policy has
 * taken over). */
bool ex_cursor_in_schedule(const struct ex_cursor *c);

#endif
