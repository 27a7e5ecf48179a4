/* Spin detection for serialized execution: a thread that re-reads one unchanged
 * location over and over (a spin loop on a plain flag) is deprioritised, so that a
 * policy like `continue`, which keeps the running thread for as long as it can run,
 * does not livelock on it: at its next cue points the scheduler picks another enabled
 * thread instead, if there is one.
 *
 * The detector is fed every cue point in the order they are performed (the trace
 * order), with the value a read returned. It is a pure function of that sequence, so
 * a serialized execution that uses it stays deterministic.
 *
 * Rules (thread T, its "spin location" = the last location it read):
 *  - T reads (addr, size) and gets the same value as at its previous cue point, which
 *    was a read of the same (addr, size), and nobody wrote the location in between:
 *    T's run grows by one; any other cue point of T (another location, another value,
 *    a write, a sync event) starts T's run afresh. Other threads' cue points that do not
 *    write the location do not break T's run ("in a row" is about T's own cue points).
 *  - When the run reaches `threshold` (default 8) reads, T is deprioritised (counted in
 *    `detections`).
 *  - A write or read-modify-write by any thread overlapping T's spin location ends T's
 *    deprioritisation and its run: the location changed, T has something new to see.
 *  - So does `patience` (default 64) cue points performed by other threads since T was
 *    deprioritised: the writer T waits for may need T's help after all. T's run then
 *    stays one short of the threshold, so one more identical read deprioritises it again.
 *
 * The scheduler removes deprioritised threads from its choice unless that leaves no
 * one (ex_spin_avoid() gives the set; cursor.h applies it to the default policy only:
 * an explicit schedule is obeyed as written). Pure C, no KVM. */
#ifndef EXPLORER_SPIN_H
#define EXPLORER_SPIN_H
#include "trace.h"

#define EX_SPIN_THRESHOLD 8
#define EX_SPIN_PATIENCE 64

struct ex_spin_thread {
    uint64_t addr, value;
    uint32_t run;        /* identical reads in a row */
    uint32_t others;     /* other threads' cue points since deprioritised */
    uint16_t size;
    bool spinning;       /* deprioritised */
};

struct ex_spin {
    uint32_t threshold;  /* 0: detection off */
    uint32_t patience;
    struct ex_tidset avoid;     /* the deprioritised threads */
    uint64_t detections;        /* times a thread was deprioritised */
    uint32_t maxtid;            /* largest tid observed */
    struct ex_spin_thread t[EX_MAX_TID + 1];
};

/* threshold 0 turns detection off; patience 0 means EX_SPIN_PATIENCE. */
void ex_spin_init(struct ex_spin *s, uint32_t threshold, uint32_t patience);
/* One performed cue point: thread tid did kind at [addr, addr+size); value is what a
 * read returned (little-endian, size <= 8 bytes; ignored for other kinds). */
void ex_spin_observe(struct ex_spin *s, uint32_t tid, enum ex_kind kind, uint64_t addr,
                     uint16_t size, uint64_t value);
/* The same for a recorded event (value as above). */
static inline void ex_spin_observe_event(struct ex_spin *s, const struct ex_event *e,
                                         uint64_t value)
{
    ex_spin_observe(s, e->tid, (enum ex_kind)e->kind, e->addr, e->size, value);
}
/* The deprioritised threads. */
static inline const struct ex_tidset *ex_spin_avoid(const struct ex_spin *s)
{
    return &s->avoid;
}
static inline bool ex_spin_is_spinning(const struct ex_spin *s, uint32_t tid)
{
    return ex_tidset_has(&s->avoid, tid);
}

#endif
