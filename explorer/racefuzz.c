/* Race-directed postponement (RaceFuzzer, Sen, PLDI 2008); see racefuzz.h.
 *
 * For a race (e1 by T1, e2 by T2, e1 first in the recording) found by the
 * happens-before check, T1 is postponed just before e1 until T2 is about to
 * perform e2 (T2's previous event and e2's blocking dependency done); then the
 * two accesses run back to back, once in each order:
 *   "e1,e2": e1 then immediately e2 (the race made adjacent, recorded order);
 *   "e2,e1": e2 then immediately e1 (the race flipped).
 * Everything else keeps the recorded order (steer.h). Each static race (pair
 * of rips) is tried once, at its first dynamic occurrence; which races come
 * first is a seeded shuffle. */
#include "racefuzz.h"
#include "steer.h"
#include "u64map.h"
#include <stdlib.h>

int ex_race_schedule(const struct ex_analysis *a, const struct ex_race *r, bool flip,
                     struct ex_schedule *s)
{
    uint32_t e1 = r->a, e2 = r->b;
    uint32_t t1 = a->tr->ev[e1].tid, t2 = a->tr->ev[e2].tid;
    struct ex_hold holds[2];
    struct ex_steer st = { .holds = holds, .prefer_after = -1 };
    if (flip) {
        holds[st.nholds++] = (struct ex_hold){ e1, e2 };
        st.prefer_after = (int32_t)e2;
        st.prefer_tid = t1;
        st.prefer_until = (int32_t)e1;
    } else {
        uint32_t pos = a->tpos[e2];
        if (pos > 0)
            holds[st.nholds++] = (struct ex_hold){ e1, ex_thread_event(a, t2, pos - 1) };
        if (a->dep[e2] >= 0)
            holds[st.nholds++] = (struct ex_hold){ e1, (uint32_t)a->dep[e2] };
        st.prefer_after = (int32_t)e1;
        st.prefer_tid = t2;
        st.prefer_until = (int32_t)e2;
    }
    if (ex_steer_run(a, &st, s, NULL, NULL) != 0)
        return -1;
    ex_schedule_set_note(s, "race T%u@%#llx/T%u@%#llx order=%s", t1,
                         (unsigned long long)a->tr->ev[e1].rip, t2,
                         (unsigned long long)a->tr->ev[e2].rip, flip ? "e2,e1" : "e1,e2");
    return 0;
}

int ex_race_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                     struct ex_schedule_set *out)
{
    if (a->nraces == 0 || p->max_schedules == 0)
        return 0;
    struct ex_u64map seen;
    struct ex_schedule s;
    int made = 0;
    uint32_t *pick = malloc(a->nraces * sizeof *pick), n = 0;
    ex_u64map_init(&seen);
    ex_schedule_init(&s);
    if (!pick)
        return -1;
    for (size_t i = 0; i < a->nraces; i++) {
        bool added;
        if (!ex_u64map_put(&seen, ex_race_key(a->tr, &a->races[i]), 0, &added))
            goto fail;
        if (added)
            pick[n++] = (uint32_t)i;
    }
    ex_rng_shuffle_u32(rng, pick, n);
    for (uint32_t i = 0; i < n && (uint32_t)made < p->max_schedules; i++) {
        for (int flip = 0; flip < 2 && (uint32_t)made < p->max_schedules; flip++) {
            if (ex_race_schedule(a, &a->races[pick[i]], flip, &s) != 0)
                goto fail;
            int rc = ex_schedule_set_add_unique(out, &s);
            if (rc < 0)
                goto fail;
            made += rc;
        }
    }
    free(pick);
    ex_u64map_free(&seen);
    ex_schedule_free(&s);
    return made;
fail:
    free(pick);
    ex_u64map_free(&seen);
    ex_schedule_free(&s);
    return -1;
}
