/* Internal to the online strategies (online.c dispatches to these). */
#ifndef EXPLORER_ONLINE_IMPL_H
#define EXPLORER_ONLINE_IMPL_H
#include "online.h"

/* Pending events by tid, built once per cue point: ev[t] is valid only for
 * t in listed (the rest is not initialised, to keep a cue point cheap). */
struct ex_pending_table {
    struct ex_tidset listed;
    const struct ex_pending *ev[EX_MAX_TID + 1];
};
typedef struct ex_pending_table ex_pending_table;

/* Removes and returns the smallest member of *s, 0 if it is empty: the
 * strategies visit set members with it instead of scanning all 255 tids. */
static inline uint32_t ex_tidset_pop(struct ex_tidset *s)
{
    for (uint32_t w = 0; w < 4; w++)
        if (s->w[w]) {
            uint32_t b = (uint32_t)__builtin_ctzll(s->w[w]);
            s->w[w] &= s->w[w] - 1;
            return w * 64 + b;
        }
    return 0;
}

/* t's next event re-reads the variable t accessed last, a read, and nobody wrote
 * it since: a spin, which sees nothing new until another thread runs. */
bool ex_online_spinning(const struct ex_online *o, const ex_pending_table *pend, uint32_t t);
/* Whether running t now is a racy step (online.h). */
bool ex_online_racy(const struct ex_online *o, const ex_pending_table *pend,
                    const struct ex_tidset *enabled, uint32_t t);

/* Whether running t now is a window step: t's last step was a racy DATA access, its next
 * one is a known access (not a spin's re-read) and another thread is enabled. */
bool ex_online_window(const struct ex_online *o, const ex_pending_table *pend,
                      const struct ex_tidset *enabled, uint32_t t);

/* Whether running t now is a nested lock step (online_nest.c): t's pending event is an
 * RMW of a SYNC word while t holds another one, and another thread is enabled. */
bool ex_online_nested(const struct ex_online *o, const ex_pending_table *pend,
                      const struct ex_tidset *enabled, uint32_t t);
/* After t performed its pending event: the SYNC words it holds. */
void ex_online_nest_note(struct ex_online *o, const ex_pending_table *pend, uint32_t t);
/* After a run: whether its nested lock steps chain (online.h), for the portfolio. */
void ex_history_learn_nested(struct ex_history *h, const struct ex_online *o);
/* Records t's nested lock step (online_nest.c): its last held word, the word it takes. */
void ex_online_nest_edge(struct ex_online *o, const ex_pending_table *pend, uint32_t t);

/* PCT, window and nest schedule number `nth` of their kind (online_pct.c): odd ones
 * count data races only (nest: lower by a coin). */
void ex_online_pct_begin(struct ex_online *o, const struct ex_history *h, uint64_t nth);
/* fresh: the enabled threads seen for the first time at this cue point. */
/* PCT's ranked list (online_pct.c): inserts t at rank pos (0 = highest) of
 * o->pct.order; moves t below every priority given so far; the highest-ranked
 * enabled thread that is not spinning (the highest if all spin). */
void ex_online_pct_insert(struct ex_online *o, uint32_t pos, uint32_t t);
void ex_online_pct_lower(struct ex_online *o, uint32_t t);
uint32_t ex_online_pct_highest(const struct ex_online *o, const struct ex_tidset *enabled,
                               const ex_pending_table *pend);
uint32_t ex_online_pct_pick(struct ex_online *o, const struct ex_tidset *enabled,
                            const struct ex_tidset *fresh, const ex_pending_table *pend);

/* The sweep (online_sweep.c). Variables it targets by name, at most; windows it
 * counts through, at most (a run with hundreds: the first ones). */
#define EX_SWEEP_VARS 8u
#define EX_SWEEP_MAX_K 64u
/* Targets per variable: its read window, its write window, the pair. */
#define EX_SWEEP_PER_VAR 3u
/* An ordinal of EX_SWEEP_PAIR_OF | r: the pair target of the r-th newest DATA
 * variable (the oldest if there are fewer), whatever the cycle gives. */
#define EX_SWEEP_PAIR_OF (1ull << 63)
/* An ordinal of EX_SWEEP_SPLIT | k: target k (1 the write window at
 * h->dcheck_var, 2 the pair at h->split_var), whatever the cycle gives. */
#define EX_SWEEP_SPLIT (1ull << 62)
/* Schedule number `ordinal` of the sweep: its target (online_sweep.c). */
void ex_online_sweep_begin(struct ex_online *o, const struct ex_history *h, uint64_t ordinal);
/* The sweep's targets in one pass over them (2 per DATA variable, then the n-th
 * windows), as h gives them. */
uint64_t ex_online_sweep_targets(const struct ex_history *h);
/* Whether t must wait for the sweep's read target (t is about to write its
 * variable, the target has not fired, another thread is enabled). */
bool ex_online_sweep_defers(const struct ex_online *o, const ex_pending_table *pend,
                            const struct ex_tidset *enabled, uint32_t t);
/* Whether running t now is the sweep's preemption: t's window is the target. */
bool ex_online_sweep_fires(const struct ex_online *o, const ex_pending_table *pend,
                           const struct ex_tidset *enabled, uint32_t t);

/* The wake strategy (online_wake.c): schedule `ordinal`'s start order and wake rule;
 * its choice; its note (" start=... lower=... wakes=N lowered=M"). */
void ex_online_wake_begin(struct ex_online *o, const struct ex_history *h, uint64_t ordinal);
uint32_t ex_online_wake_pick(struct ex_online *o, const struct ex_tidset *enabled,
                             const struct ex_tidset *fresh, const ex_pending_table *pend);
void ex_online_wake_describe(const struct ex_online *o, char *buf, size_t len);
/* At every cue point, before the choice (every strategy): the creator (the
 * lowest tid at the first cue point), the threads woken now (seen before,
 * not enabled at the last cue point, enabled now, with another enabled), and
 * o->wake.child_wakes. */
void ex_online_wake_note(struct ex_online *o, const struct ex_tidset *enabled,
                         const struct ex_tidset *fresh);
/* After a run: whether it woke a thread other than the creator (h->woke). */
void ex_history_learn_wakes(struct ex_history *h, const struct ex_online *o);

void ex_online_pos_fresh(struct ex_online *o, const struct ex_tidset *fresh);
uint32_t ex_online_pos_pick(struct ex_online *o, const struct ex_tidset *enabled);
/* After thread t was chosen to perform its pending event. */
void ex_online_pos_after(struct ex_online *o, const ex_pending_table *pend, uint32_t t);

uint32_t ex_online_random_pick(struct ex_online *o, const struct ex_tidset *enabled,
                               const ex_pending_table *pend);

/* Returns 0 or -1 (no memory: then it is pos). */
int ex_online_rf_begin(struct ex_online *o, const struct ex_history *h);
uint32_t ex_online_rf_pick(struct ex_online *o, const struct ex_tidset *enabled,
                           const struct ex_tidset *fresh, const ex_pending_table *pend);

/* Returns 0 or -1 (no memory: then it is pos). */
int ex_online_flip_begin(struct ex_online *o, const struct ex_history *h);
uint32_t ex_online_flip_pick(struct ex_online *o, const struct ex_tidset *enabled,
                             const struct ex_tidset *fresh, const ex_pending_table *pend);
/* What a portfolio gives schedule `index` (online_portfolio.c): the strategy, its
 * ordinal (its schedule number among its kind's: the sweep's target, wake's
 * variant, PCT's data-races-only and nest's coin on odd ones), its place in the
 * cycle (0 outside it) and, for "lanes", the lane it runs in. */
enum { LANE_CYCLE = 0, LANE_FLIP = 1, LANE_SWEEP = 2, LANE_NEST = 3 };
struct ex_online_slot {
    uint8_t kind;
    uint8_t lane;
    uint64_t ordinal;
    uint64_t cycle;
};
struct ex_online_slot ex_online_portfolio_slot(const struct ex_history *h, uint64_t index);
struct ex_online_slot ex_online_lanes_slot(const struct ex_history *h, uint64_t index);
/* The slot of `kind` alone: ordinal `index` (the sweep's: its schedules since the
 * first whose history knew a DATA variable). */
struct ex_online_slot ex_online_alone(enum ex_online_kind kind, const struct ex_history *h,
                                      uint64_t index);
/* ex_online_begin for schedule `index` as `slot` gives it (the strategy, its ordinal
 * and place in the cycle), reported as `asked`. */
int ex_online_begin_as(struct ex_online *o, enum ex_online_kind asked,
                       const struct ex_online_slot *slot, const struct ex_online_params *params,
                       const struct ex_history *h, uint64_t seed, uint64_t index);
/* The lanes portfolio's ex_online_begin (online_lanes.c). */
int ex_online_lanes_begin(struct ex_online *o, const struct ex_online_params *params,
                          const struct ex_history *h, uint64_t seed, uint64_t index);
/* ex_history_learn_flips; own: the flip o made is one of h's (else h only learns
 * the run's flips: o ran in another lane's history). */
long ex_online_learn_flips(struct ex_history *h, const struct ex_online *o, bool own);
/* Appends t's pending event (the one it performs now) to o->rec. */
void ex_online_record_step(struct ex_online *o, const ex_pending_table *pend, uint32_t t);

#endif
