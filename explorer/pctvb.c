/* PCT with variable bounding: change points only at accesses to v chosen
 * shared variables, so the d-1 preemptions land where threads communicate
 * instead of being spread over thousands of private cue points. The scheduler
 * itself is pct.c's. */
#include "pct.h"
#include <stdlib.h>

void ex_pctvb_plan_make(const struct ex_analysis *a, uint32_t depth, uint32_t nvars,
                        struct ex_rng *rng, struct ex_pct_plan *plan)
{
    ex_pct_plan_start(a, depth, rng, plan);
    plan->by_event = true;
    if (nvars > EX_PCTVB_MAX_VARS)
        nvars = EX_PCTVB_MAX_VARS;
    if (a->nlocs == 0 || nvars == 0)
        return;
    uint32_t *idx = malloc(a->nlocs * sizeof *idx);
    uint32_t *cand = malloc((a->tr->n ? a->tr->n : 1) * sizeof *cand);
    if (!idx || !cand) {
        /* Without memory the plan keeps no change points: still a valid PCT run. */
        free(idx);
        free(cand);
        return;
    }
    for (uint32_t i = 0; i < a->nlocs; i++)
        idx[i] = i;
    uint32_t chosen[EX_PCTVB_MAX_VARS];
    plan->nvars = ex_rng_sample_u32(rng, idx, (uint32_t)a->nlocs, nvars, chosen);
    /* Variables in sharedness order, so notes and tests read the same way. */
    qsort(chosen, plan->nvars, sizeof *chosen, ex_cmp_u32);
    for (uint32_t i = 0; i < plan->nvars; i++)
        plan->vars[i] = a->locs[chosen[i]].key;
    uint32_t n = 0;
    for (size_t e = 0; e < a->tr->n; e++) {
        const struct ex_event *ev = &a->tr->ev[e];
        if (!ex_is_access(ev))
            continue;
        for (uint32_t i = 0; i < plan->nvars; i++)
            if (plan->vars[i] == ex_loc_of(ev)) {
                cand[n++] = (uint32_t)e;
                break;
            }
    }
    plan->nchange = ex_rng_sample_u32(rng, cand, n, plan->depth - 1, plan->change);
    qsort(plan->change, plan->nchange, sizeof *plan->change, ex_cmp_u32);
    free(idx);
    free(cand);
}

static void make_pctvb(const struct ex_analysis *a, const struct ex_params *p,
                       struct ex_rng *rng, struct ex_pct_plan *plan)
{
    ex_pctvb_plan_make(a, p->pct_depth, p->pctvb_vars, rng, plan);
}

int ex_pctvb_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                      struct ex_schedule_set *out)
{
    return ex_pct_generate_plans(a, p, rng, out, make_pctvb, "pctvb");
}
