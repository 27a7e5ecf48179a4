/* The enabledness model: executing the recorded events in another order.
 *
 * A strategy only sees the recorded trace, so it predicts a schedule's effect
 * by replaying the recorded events of each thread, in program order, in the
 * new interleaving. Assumptions (the approximation, stated once):
 *  - each thread performs the same events it performed in the recording, in
 *    the same order, whatever the interleaving (no value-dependent control
 *    flow; in reality a thread may take another path, and the VMM then simply
 *    keeps following the schedule with the real events);
 *  - a thread's next event is enabled iff its blocking dependency (syncdep.h)
 *    has been performed: a thread that blocked in a futex wait or join stays
 *    disabled until the recorded waker has run, a created thread until its
 *    create; a wait whose waker has already run does not block;
 *  - a thread whose recorded events are used up is disabled: its future is
 *    unknown, and the schedule ends for it (the default policy takes over in
 *    the VMM).
 * Under these rules the model never deadlocks: the earliest unperformed event
 * in recorded order is always enabled. */
#ifndef EXPLORER_MODEL_H
#define EXPLORER_MODEL_H
#include "analysis.h"
#include "cursor.h"
#include "schedule.h"

struct ex_model {
    const struct ex_analysis *a;
    uint32_t next[EX_MAX_TID + 1];  /* per thread: position of its next event */
    uint8_t *done;                  /* per event: performed */
    uint32_t *order;                /* performed events, in order */
    size_t n;                       /* number performed */
};

int ex_model_init(struct ex_model *m, const struct ex_analysis *a);
void ex_model_free(struct ex_model *m);
void ex_model_reset(struct ex_model *m);
/* Thread tid's next event (index), or -1 if it has none left. */
int32_t ex_model_next_event(const struct ex_model *m, uint32_t tid);
bool ex_model_is_enabled(const struct ex_model *m, uint32_t tid);
void ex_model_enabled(const struct ex_model *m, struct ex_tidset *out);
/* Performs tid's next event (which must be enabled); returns its index. */
uint32_t ex_model_step(struct ex_model *m, uint32_t tid);
/* Undoes the most recent step. */
void ex_model_undo(struct ex_model *m);
static inline bool ex_model_finished(const struct ex_model *m)
{
    return m->n == m->a->tr->n;
}

/* Predicts what schedule s does to the recorded events: follows an ex_cursor
 * over the model until no thread is enabled. order (capacity >= trace length)
 * receives the event indices in predicted order, *norder their number; *cur
 * (if given) the final cursor (divergence counts). Returns 0 or -1. */
int ex_model_predict(const struct ex_analysis *a, const struct ex_schedule *s, uint32_t *order,
                     size_t *norder, struct ex_cursor *cur);

/* A trace holding t's events order[0..n) in that order (seq renumbered, wakers
 * remapped; wakers pointing outside the selection are cleared): what a
 * simulation following the predicted interleaving would record. */
int ex_trace_reorder(const struct ex_trace *t, const uint32_t *order, size_t n,
                     struct ex_trace *out);

#endif
