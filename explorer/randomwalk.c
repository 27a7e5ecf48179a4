/* Random walk: at every cue point, a thread drawn uniformly from the enabled
 * ones. The baseline the directed strategies must beat, and a filler for the
 * portfolio: it always has something new to offer. */
#include "model.h"
#include "strategy.h"
#include <stdlib.h>

static int walk(const struct ex_analysis *a, struct ex_rng *rng, struct ex_schedule *s,
                uint32_t *tids)
{
    struct ex_model m;
    if (ex_model_init(&m, a) != 0)
        return -1;
    while (!ex_model_finished(&m)) {
        uint32_t en[EX_MAX_TID], n = 0;
        for (uint32_t t = 1; t <= a->tr->nthreads; t++)
            if (ex_model_is_enabled(&m, t))
                en[n++] = t;
        if (n == 0)
            break;
        uint32_t t = en[ex_rng_below(rng, n)];
        tids[m.n] = t;
        ex_model_step(&m, t);
    }
    int rc = ex_schedule_from_choices(s, tids, m.n);
    ex_model_free(&m);
    return rc;
}

int ex_random_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                       struct ex_schedule_set *out)
{
    int made = 0;
    struct ex_schedule s;
    uint32_t *tids = malloc((a->tr->n ? a->tr->n : 1) * sizeof *tids);
    ex_schedule_init(&s);
    if (!tids)
        return -1;
    for (uint32_t tries = 0; (uint32_t)made < p->max_schedules && tries < 4 * p->max_schedules;
         tries++) {
        uint64_t draw = rng->state;
        if (walk(a, rng, &s, tids) != 0)
            goto fail;
        ex_schedule_set_note(&s, "random walk %016llx", (unsigned long long)draw);
        int rc = ex_schedule_set_add_unique(out, &s);
        if (rc < 0)
            goto fail;
        made += rc;
    }
    free(tids);
    ex_schedule_free(&s);
    return made;
fail:
    free(tids);
    ex_schedule_free(&s);
    return -1;
}
