#include "pct.h"
#include "model.h"
#include <stdlib.h>
#include <string.h>

void ex_pct_plan_start(const struct ex_analysis *a, uint32_t depth, struct ex_rng *rng,
                       struct ex_pct_plan *plan)
{
    uint32_t perm[EX_MAX_TID + 1], n = 0;
    memset(plan, 0, sizeof *plan);
    if (depth < 1)
        depth = 1;
    if (depth > EX_PCT_MAX_DEPTH)
        depth = EX_PCT_MAX_DEPTH;
    plan->depth = depth;
    for (uint32_t t = 1; t <= a->tr->nthreads; t++)
        if (ex_tidset_has(&a->threads, t))
            perm[n++] = t;
    ex_rng_shuffle_u32(rng, perm, n);
    for (uint32_t i = 0; i < n; i++)
        plan->prio[perm[i]] = depth + i;
}

void ex_pct_plan_make(const struct ex_analysis *a, uint32_t depth, struct ex_rng *rng,
                      struct ex_pct_plan *plan)
{
    ex_pct_plan_start(a, depth, rng, plan);
    uint32_t k = (uint32_t)a->tr->n, want = plan->depth - 1;
    if (want > k)
        want = k;
    /* Rejection sampling of distinct steps: want <= 31, so this is cheap and
     * needs no O(k) candidate array. */
    for (uint32_t i = 0; i < want;) {
        uint32_t s = (uint32_t)ex_rng_below(rng, k);
        bool dup = false;
        for (uint32_t j = 0; j < i; j++)
            dup |= plan->change[j] == s;
        if (!dup)
            plan->change[i++] = s;
    }
    plan->nchange = want;
    qsort(plan->change, want, sizeof *plan->change, ex_cmp_u32);
}

static uint32_t highest(const struct ex_model *m, const uint32_t *prio)
{
    uint32_t best = 0;
    for (uint32_t t = 1; t <= m->a->tr->nthreads; t++)
        if (ex_model_is_enabled(m, t) && (!best || prio[t] > prio[best]))
            best = t;
    return best;
}

int ex_pct_run(const struct ex_analysis *a, const struct ex_pct_plan *plan, struct ex_schedule *s,
               uint32_t *order, struct ex_pct_result *res)
{
    struct ex_model m;
    struct ex_pct_result r;
    uint32_t prio[EX_MAX_TID + 1];
    bool fired[EX_PCT_MAX_DEPTH] = { false };
    memset(&r, 0, sizeof r);
    memcpy(prio, plan->prio, sizeof prio);
    ex_schedule_reset(s);
    if (ex_model_init(&m, a) != 0)
        return -1;
    uint32_t *tids = malloc((a->tr->n ? a->tr->n : 1) * sizeof *tids);
    if (!tids) {
        ex_model_free(&m);
        return -1;
    }
    uint32_t next_cp = 0; /* pct: change points are reached in step order */
    for (uint32_t step = 0; !ex_model_finished(&m); step++) {
        uint32_t t = highest(&m, prio);
        if (!t)
            break;
        if (!plan->by_event) {
            if (next_cp < plan->nchange && plan->change[next_cp] == step) {
                r.fired_step[r.nfired] = step;
                r.fired_tid[r.nfired] = t;
                r.fired_event[r.nfired] = (uint32_t)ex_model_next_event(&m, t);
                r.nfired++;
                prio[t] = ++next_cp;
                t = highest(&m, prio);
            }
        } else {
            /* Lowering t may hand the step to a thread that is itself at a
             * change point; each change point fires once, so this ends. */
            for (bool again = true; again;) {
                again = false;
                uint32_t e = (uint32_t)ex_model_next_event(&m, t);
                for (uint32_t i = 0; i < plan->nchange; i++) {
                    if (fired[i] || plan->change[i] != e)
                        continue;
                    fired[i] = true;
                    r.fired_step[r.nfired] = step;
                    r.fired_tid[r.nfired] = t;
                    r.fired_event[r.nfired] = e;
                    r.nfired++;
                    prio[t] = r.nfired;
                    t = highest(&m, prio);
                    again = true;
                    break;
                }
            }
        }
        ex_model_step(&m, t);
        tids[step] = t;
    }
    int rc = ex_schedule_from_choices(s, tids, m.n);
    if (order)
        memcpy(order, m.order, m.n * sizeof *order);
    if (res)
        *res = r;
    free(tids);
    ex_model_free(&m);
    return rc;
}

static void note_plan(struct ex_schedule *s, const struct ex_pct_plan *plan, const char *name)
{
    char cps[96];
    size_t n = 0;
    cps[0] = 0;
    for (uint32_t i = 0; i < plan->nchange && n + 12 < sizeof cps; i++)
        n += (size_t)snprintf(cps + n, sizeof cps - n, "%s%u", i ? "," : "", plan->change[i]);
    ex_schedule_set_note(s, "%s d=%u %s=%s", name, plan->depth,
                         plan->by_event ? "events" : "steps", cps);
}

int ex_pct_generate_plans(const struct ex_analysis *a, const struct ex_params *p,
                          struct ex_rng *rng, struct ex_schedule_set *out, ex_pct_plan_fn make,
                          const char *name)
{
    int made = 0;
    struct ex_schedule s;
    ex_schedule_init(&s);
    for (uint32_t tries = 0; (uint32_t)made < p->max_schedules && tries < 4 * p->max_schedules;
         tries++) {
        struct ex_pct_plan plan;
        make(a, p, rng, &plan);
        if (ex_pct_run(a, &plan, &s, NULL, NULL) != 0)
            goto fail;
        note_plan(&s, &plan, name);
        int rc = ex_schedule_set_add_unique(out, &s);
        if (rc < 0)
            goto fail;
        made += rc;
    }
    ex_schedule_free(&s);
    return made;
fail:
    ex_schedule_free(&s);
    return -1;
}

static void make_pct(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                     struct ex_pct_plan *plan)
{
    ex_pct_plan_make(a, p->pct_depth, rng, plan);
}

int ex_pct_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                    struct ex_schedule_set *out)
{
    return ex_pct_generate_plans(a, p, rng, out, make_pct, "pct");
}
