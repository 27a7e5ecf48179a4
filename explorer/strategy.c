#include "strategy.h"
#include <stdlib.h>
#include <string.h>

void ex_params_default(struct ex_params *p)
{
    memset(p, 0, sizeof *p);
    p->max_schedules = 8;
    p->pct_depth = 3;
    p->pctvb_vars = 2;
    p->bounded_preemptions = 2;
    p->jinx_max_positions = 8;
}

void ex_params_sanitize(struct ex_params *p)
{
    if (p->pct_depth < 1)
        p->pct_depth = 1;
    if (p->pct_depth > EX_PCT_MAX_DEPTH)
        p->pct_depth = EX_PCT_MAX_DEPTH;
    if (p->pctvb_vars < 1)
        p->pctvb_vars = 1;
    if (p->pctvb_vars > EX_PCTVB_MAX_VARS)
        p->pctvb_vars = EX_PCTVB_MAX_VARS;
    if (p->bounded_preemptions > 2)
        p->bounded_preemptions = 2;
    if (p->jinx_max_positions < 1)
        p->jinx_max_positions = 1;
}

static const char *const names[EX_NSTRATEGIES] = {
    [EX_STRAT_PORTFOLIO] = "portfolio", [EX_STRAT_JINX] = "jinx",       [EX_STRAT_PCT] = "pct",
    [EX_STRAT_PCTVB] = "pctvb",         [EX_STRAT_RACE] = "race",       [EX_STRAT_RANDOM] = "random",
    [EX_STRAT_BOUNDED] = "bounded",
};

const char *ex_strategy_name(enum ex_strategy s)
{
    return (unsigned)s < EX_NSTRATEGIES ? names[s] : "?";
}

int ex_strategy_from_name(const char *name, enum ex_strategy *out)
{
    for (int i = 0; i < EX_NSTRATEGIES; i++)
        if (name && strcmp(name, names[i]) == 0) {
            *out = (enum ex_strategy)i;
            return 0;
        }
    return -1;
}

ex_strategy_fn ex_strategy_fn_of(enum ex_strategy s)
{
    switch (s) {
    case EX_STRAT_PORTFOLIO: return ex_portfolio_generate;
    case EX_STRAT_JINX: return ex_jinx_generate;
    case EX_STRAT_PCT: return ex_pct_generate;
    case EX_STRAT_PCTVB: return ex_pctvb_generate;
    case EX_STRAT_RACE: return ex_race_generate;
    case EX_STRAT_RANDOM: return ex_random_generate;
    case EX_STRAT_BOUNDED: return ex_bounded_generate;
    default: return NULL;
    }
}

int ex_generate(enum ex_strategy s, const struct ex_analysis *a, const struct ex_params *p,
                struct ex_rng *rng, struct ex_schedule_set *out)
{
    ex_strategy_fn fn = ex_strategy_fn_of(s);
    struct ex_params q = *p;
    if (!fn)
        return -1;
    ex_params_sanitize(&q);
    return fn(a, &q, rng, out);
}

int ex_recorded_schedule(const struct ex_analysis *a, struct ex_schedule *s)
{
    ex_schedule_reset(s);
    for (size_t i = 0; i < a->tr->n; i++)
        if (ex_schedule_push(s, a->tr->ev[i].tid, 1) != 0)
            return -1;
    ex_schedule_set_note(s, "recorded");
    return 0;
}

int ex_schedule_set_add_unique(struct ex_schedule_set *out, struct ex_schedule *s)
{
    if (ex_schedule_set_find(out, s) >= 0)
        return 0;
    return ex_schedule_set_take(out, s) == 0 ? 1 : -1;
}
