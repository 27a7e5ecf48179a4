/* Steering: the recorded interleaving, bent by a few ordering constraints.
 *
 * The directed strategies (jinx, race) want "this access before/after that
 * one" and otherwise as little change as possible, since every change they do
 * not intend moves the simulation further from what the recording can
 * predict. ex_steer_run() builds such an order over the model: at each step,
 * among the enabled threads whose next event is not held back, it runs the
 * preferred thread if a preference is active, else the thread whose next event
 * came earliest in the recording. */
#ifndef EXPLORER_STEER_H
#define EXPLORER_STEER_H
#include "model.h"

struct ex_hold {
    uint32_t event;     /* may not be performed ... */
    uint32_t until;     /* ... before this event has been */
};

struct ex_steer {
    const struct ex_hold *holds;
    size_t nholds;
    /* Once `prefer_after` is performed, thread prefer_tid runs at every step it
     * can, until event `prefer_until` has been performed (-1: for as long as it
     * can); the first step it cannot run ends the preference. prefer_after = -1
     * means no preference. */
    int32_t prefer_after;
    uint32_t prefer_tid;
    int32_t prefer_until;
};

/* Runs the steering over all recorded events. Writes the per-step thread
 * choices to *s (reset first) and, if order is given (capacity >= trace
 * length), the event order. If every enabled thread is held (contradictory
 * holds), the holds on the earliest such event are dropped and *relaxed (if
 * given) is set. Returns 0 or -1 (no memory). */
int ex_steer_run(const struct ex_analysis *a, const struct ex_steer *st, struct ex_schedule *s,
                 uint32_t *order, bool *relaxed);

#endif
