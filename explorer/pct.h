/* PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS 2010) and its
 * variable-bounded variant, as plans that can be inspected and replayed.
 *
 * A plan gives the n threads distinct random priorities d .. d+n-1 and picks
 * d-1 change points. The scheduler always runs the highest-priority enabled
 * thread. When change point i (1-based, in the order they are reached) is
 * reached, the thread that was about to run has its priority dropped to i,
 * below every initial priority, and the scheduler picks again: so each change
 * point is a preemption exactly there (unless nothing else is enabled).
 *
 *  - pct:   change points are step numbers, d-1 distinct ones drawn uniformly
 *           from [0, number of recorded cue points).
 *  - pctvb: v shared locations ("variables") are drawn uniformly from the
 *           trace's shared locations, and the change points are d-1 distinct
 *           recorded accesses to them; change point i is reached when the
 *           thread about to run would perform that access. */
#ifndef EXPLORER_PCT_H
#define EXPLORER_PCT_H
#include "strategy.h"

struct ex_pct_plan {
    uint32_t depth;
    bool by_event;                      /* pctvb: change[] are event indices */
    uint32_t prio[EX_MAX_TID + 1];      /* initial priorities (0 = thread has no events) */
    uint32_t nchange;                   /* d-1, or fewer if there are not enough candidates */
    uint32_t change[EX_PCT_MAX_DEPTH];  /* sorted ascending: step numbers or event indices */
    uint32_t nvars;                     /* pctvb */
    uint64_t vars[EX_PCTVB_MAX_VARS];   /* pctvb: chosen location keys (ex_loc_of) */
};

/* What running a plan did, for tests and logs. */
struct ex_pct_result {
    uint32_t nfired;
    uint32_t fired_step[EX_PCT_MAX_DEPTH];  /* step at which change point i fired */
    uint32_t fired_tid[EX_PCT_MAX_DEPTH];   /* the thread lowered */
    uint32_t fired_event[EX_PCT_MAX_DEPTH]; /* the event that thread was about to perform */
};

/* Draws a pct plan of depth d. */
void ex_pct_plan_make(const struct ex_analysis *a, uint32_t depth, struct ex_rng *rng,
                      struct ex_pct_plan *plan);
/* Draws a pctvb plan: depth d, v variables (pctvb.c). */
void ex_pctvb_plan_make(const struct ex_analysis *a, uint32_t depth, uint32_t nvars,
                        struct ex_rng *rng, struct ex_pct_plan *plan);
/* Shared by both plan makers: clears the plan, sets depth (clamped to
 * 1..EX_PCT_MAX_DEPTH) and distinct random priorities depth..depth+n-1 for the
 * n threads that have events. */
void ex_pct_plan_start(const struct ex_analysis *a, uint32_t depth, struct ex_rng *rng,
                       struct ex_pct_plan *plan);
/* Runs the plan over the model: writes the schedule, and optionally the event
 * order (capacity >= trace length) and what fired. Returns 0 or -1. */
int ex_pct_run(const struct ex_analysis *a, const struct ex_pct_plan *plan, struct ex_schedule *s,
               uint32_t *order, struct ex_pct_result *res);

/* Shared by pct and pctvb: K plans from make(), each run and added unless a
 * duplicate (duplicates are retried a bounded number of times, since small
 * traces have few distinct PCT schedules). */
typedef void (*ex_pct_plan_fn)(const struct ex_analysis *a, const struct ex_params *p,
                               struct ex_rng *rng, struct ex_pct_plan *plan);
int ex_pct_generate_plans(const struct ex_analysis *a, const struct ex_params *p,
                          struct ex_rng *rng, struct ex_schedule_set *out, ex_pct_plan_fn make,
                          const char *name);

#endif
