/* Timed runs in whole-run exploration (explore_timed.h). */
#include "rounds/explore_timed.h"
#include "sched/sparse.h"
#include <string.h>

void explore_timed_init(struct explore_timed *t, uint64_t first_wall_ns, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    ex_sparse_model_init(&t->none);
    ex_sparse_run_init(&t->run);
    ex_schedule_init(&t->plan);
    ex_rng_seed(&t->rng, ex_hash2(seed ^ 0x7133edULL, 0));
    t->wall_ns = first_wall_ns;
    t->after_ns = UINT64_MAX;
}

void explore_timed_free(struct explore_timed *t)
{
    ex_sparse_model_free(&t->none);
    ex_sparse_run_free(&t->run);
    ex_schedule_free(&t->plan);
}

void explore_timed_start(struct explore_timed *t, uint64_t elapsed_ns)
{
    if (elapsed_ns < t->after_ns)
        t->after_ns = elapsed_ns;
}

bool explore_timed_due(const struct explore_timed *t, uint64_t elapsed_ns)
{
    return !t->off && elapsed_ns >= t->after_ns &&
           (t->always || t->ns * 100 <= EXPLORE_TIMED_SHARE_PCT * (elapsed_ns - t->after_ns));
}

int explore_timed_begin(struct explore_timed *t, uint64_t seed, const uint64_t *yields,
                        uint32_t nyield)
{
    /* Run indexes apart from the sparse runs' (their sequence stays the seed's). */
    if (ex_sparse_begin(&t->run, &t->none, seed, EXPLORE_TIMED_INDEX + t->runs, &t->plan) < 0)
        return -1;
    for (uint32_t i = 0; i < nyield; i++)
        ex_schedule_add_yield(&t->plan, yields[i]);
    t->nat = 0;
    if (t->span) {
        /* 1..EXPLORE_TIMED_MAX times, uniform over a run's length, ascending. */
        t->nat = 1 + (uint32_t)ex_rng_below(&t->rng, EXPLORE_TIMED_MAX);
        for (uint32_t i = 0; i < t->nat; i++)
            t->at[i] = ex_rng_below(&t->rng, t->span);
        for (uint32_t i = 1; i < t->nat; i++)
            for (uint32_t k = i; k > 0 && t->at[k - 1] > t->at[k]; k--) {
                uint64_t x = t->at[k];
                t->at[k] = t->at[k - 1];
                t->at[k - 1] = x;
            }
    }
    ex_schedule_set_note(&t->plan, "timed pct: %u change points in time, over a %.1f ms run",
                         t->nat, t->span / 1e6);
    return 0;
}

uint64_t explore_timed_budget(const struct explore_timed *t)
{
    return t->wall_ns;
}

void explore_timed_after(struct explore_timed *t, bool ended, uint64_t wall_ns,
                         uint32_t decisions)
{
    t->runs++;
    t->ns += wall_ns;
    t->decisions += decisions;
    if (ended) {
        t->ended++;
        if (!t->span)
            t->span = wall_ns;
        if (wall_ns > t->longest)
            t->longest = wall_ns;
        uint64_t w = EXPLORE_TIMED_FACTOR * t->longest;
        t->wall_ns = w > EXPLORE_TIMED_MIN_NS ? w : EXPLORE_TIMED_MIN_NS;
    } else {
        t->cut++;
        if (!t->ended && t->cut >= EXPLORE_TIMED_FIRST_CUTS)
            t->off = true; /* it does not end within its budget: a long program */
    }
}

int explore_timed_schedule(const struct explore_timed *t, const struct sparse *sp,
                           struct ex_schedule *out)
{
    if (ex_sparse_schedule(&t->run, &t->plan, out) < 0)
        return -1;
    for (uint32_t i = 0; i < sp->ntimed; i++)
        if (ex_schedule_add_match(out, sp->timed[i].xid, sp->timed[i].rip, sp->timed[i].hash,
                                  sp->timed[i].cue) < 0)
            return -1;
    return 0;
}

int explore_timed_counts(const struct sparse *sp, struct ex_schedule *s)
{
    for (uint32_t i = 0; i < s->npreempt; i++) {
        struct ex_preempt *p = &s->preempt[i];
        if (!p->match)
            continue;
        const struct sparse_point *q = NULL;
        for (uint32_t k = 0; k < sp->n && !q; k++)
            if (sp->pt[k].match == p->match && sp->pt[k].rip == p->rip &&
                sp->pt[k].xid == p->thread)
                q = &sp->pt[k];
        if (!q || !q->done || q->count != q->hits || q->count == 0)
            return -1;
        p->count = q->count;
        p->match = 0;
    }
    return 0;
}

bool explore_timed_has_match(const struct ex_schedule *s)
{
    for (uint32_t i = 0; i < s->npreempt; i++)
        if (s->preempt[i].match)
            return true;
    return false;
}
