/* Schedule-generation strategies: the common interface.
 *
 * A strategy looks at the analysed recorded trace (which includes the set of
 * threads), draws randomness only from the ex_rng it is given, and appends up
 * to params->max_schedules schedules to a set. Each schedule covers the
 * recorded cue points (the strategy's prediction of the interleaving, see
 * model.h) and ends with the default policy "continue". A strategy never
 * appends a schedule equal to one already in the set, so asking several
 * strategies to fill one set gives distinct simulations.
 *
 * Same analysis + same params + same rng state = same schedules. */
#ifndef EXPLORER_STRATEGY_H
#define EXPLORER_STRATEGY_H
#include "analysis.h"
#include "rng.h"
#include "schedule.h"

enum ex_strategy {
    EX_STRAT_PORTFOLIO = 0, /* the default: a reproducible mix of the others */
    EX_STRAT_JINX,          /* move a thread's first access among another's (the article) */
    EX_STRAT_PCT,           /* probabilistic concurrency testing, depth d */
    EX_STRAT_PCTVB,         /* PCT with change points only at chosen variables */
    EX_STRAT_RACE,          /* race-directed postponement (RaceFuzzer) */
    EX_STRAT_RANDOM,        /* uniform random walk over enabled threads */
    EX_STRAT_BOUNDED,       /* exhaustive preemption-bounded enumeration */
    EX_NSTRATEGIES
};

#define EX_PCT_MAX_DEPTH 32
#define EX_PCTVB_MAX_VARS 64

struct ex_params {
    uint32_t max_schedules;         /* K, default 8 */
    uint32_t pct_depth;             /* d >= 1 (d-1 change points), default 3, max EX_PCT_MAX_DEPTH */
    uint32_t pctvb_vars;            /* v >= 1, default 2, max EX_PCTVB_MAX_VARS */
    uint32_t bounded_preemptions;   /* c, 0..2, default 2 */
    uint32_t bounded_window_start;  /* first cue point where bounded may branch */
    uint32_t bounded_window_len;    /* cue points it branches over; 0 = to the end */
    uint32_t jinx_max_positions;    /* insertion positions per (location, thread pair), default 8 */
    bool jinx_include_recorded;     /* also emit the position the recording already has */
};

void ex_params_default(struct ex_params *p);
/* Clamps out-of-range values to the documented ranges. */
void ex_params_sanitize(struct ex_params *p);

const char *ex_strategy_name(enum ex_strategy s);
/* "portfolio", "jinx", "pct", "pctvb", "race", "random", "bounded". Returns 0 or -1. */
int ex_strategy_from_name(const char *name, enum ex_strategy *out);

/* All strategies have this signature. They return the number of schedules
 * appended (0..max_schedules) or -1 on allocation failure. */
typedef int (*ex_strategy_fn)(const struct ex_analysis *a, const struct ex_params *p,
                              struct ex_rng *rng, struct ex_schedule_set *out);

int ex_jinx_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                     struct ex_schedule_set *out);
int ex_pct_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                    struct ex_schedule_set *out);
int ex_pctvb_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                      struct ex_schedule_set *out);
int ex_race_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                     struct ex_schedule_set *out);
int ex_random_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                       struct ex_schedule_set *out);
int ex_bounded_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                        struct ex_schedule_set *out);
int ex_portfolio_generate(const struct ex_analysis *a, const struct ex_params *p,
                          struct ex_rng *rng, struct ex_schedule_set *out);

ex_strategy_fn ex_strategy_fn_of(enum ex_strategy s);
/* Dispatch by enum. */
int ex_generate(enum ex_strategy s, const struct ex_analysis *a, const struct ex_params *p,
                struct ex_rng *rng, struct ex_schedule_set *out);

/* The schedule that reproduces the recording (one step per recorded event). */
int ex_recorded_schedule(const struct ex_analysis *a, struct ex_schedule *s);

/* Helper for strategies: appends *s to out unless an equal schedule is there;
 * returns 1 if appended, 0 if a duplicate (s is then left as is), -1 on no memory. */
int ex_schedule_set_add_unique(struct ex_schedule_set *out, struct ex_schedule *s);

#endif
