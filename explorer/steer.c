#include "steer.h"
#include <stdlib.h>
#include <string.h>

static bool is_held(const struct ex_steer *st, const uint8_t *dropped, const struct ex_model *m,
                    uint32_t e)
{
    for (size_t i = 0; i < st->nholds; i++)
        if (!dropped[i] && st->holds[i].event == e && !m->done[st->holds[i].until])
            return true;
    return false;
}

int ex_steer_run(const struct ex_analysis *a, const struct ex_steer *st, struct ex_schedule *s,
                 uint32_t *order, bool *relaxed)
{
    struct ex_model m;
    if (relaxed)
        *relaxed = false;
    ex_schedule_reset(s);
    if (ex_model_init(&m, a) != 0)
        return -1;
    uint8_t *dropped = calloc(st->nholds ? st->nholds : 1, 1);
    uint32_t *tids = malloc((a->tr->n ? a->tr->n : 1) * sizeof *tids);
    if (!dropped || !tids)
        goto fail;
    bool prefer_on = false, prefer_over = st->prefer_after < 0;
    uint32_t nthreads = a->tr->nthreads;

    while (!ex_model_finished(&m)) {
        uint32_t pick = 0, first_enabled = 0;
        int32_t best = -1, best_enabled = -1;
        for (uint32_t t = 1; t <= nthreads; t++) {
            if (!ex_model_is_enabled(&m, t))
                continue;
            int32_t e = ex_model_next_event(&m, t);
            if (best_enabled < 0 || e < best_enabled)
                best_enabled = e, first_enabled = t;
            if (is_held(st, dropped, &m, (uint32_t)e))
                continue;
            if (best < 0 || e < best)
                best = e, pick = t;
        }
        if (!first_enabled)
            break; /* cannot happen (the model never deadlocks); be safe */
        if (prefer_on) {
            int32_t e = ex_model_next_event(&m, st->prefer_tid);
            if (e >= 0 && ex_model_is_enabled(&m, st->prefer_tid) &&
                !is_held(st, dropped, &m, (uint32_t)e))
                pick = st->prefer_tid;
            else
                prefer_on = false, prefer_over = true;
        }
        if (!pick) {
            for (size_t i = 0; i < st->nholds; i++)
                if (st->holds[i].event == (uint32_t)best_enabled)
                    dropped[i] = 1;
            if (relaxed)
                *relaxed = true;
            pick = first_enabled;
        }
        uint32_t e = ex_model_step(&m, pick);
        tids[m.n - 1] = pick;
        if (!prefer_over && !prefer_on && (int32_t)e == st->prefer_after)
            prefer_on = true;
        if (prefer_on && st->prefer_until >= 0 && m.done[st->prefer_until])
            prefer_on = false, prefer_over = true;
    }
    if (ex_schedule_from_choices(s, tids, m.n) != 0)
        goto fail;
    if (order)
        memcpy(order, m.order, m.n * sizeof *order);
    free(dropped);
    free(tids);
    ex_model_free(&m);
    return 0;
fail:
    free(dropped);
    free(tids);
    ex_model_free(&m);
    return -1;
}
