/* What a round that retired a bug keeps for the crash dump (round.h's round_retired),
 * and how a simulation's outcome is told (driver.h). */
#include "rounds/driver.h"
#include "lib/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void round_describe_outcome(const struct sim_result *r, char *buf, size_t len)
{
    if (r->out.kind == OUT_SIGNAL)
        snprintf(buf, len, "crashed (%s in thread %d)", signal_name(r->out.signal), r->out.thread);
    else if (r->out.kind == OUT_DEADLOCK)
        snprintf(buf, len, "deadlocked (%d threads blocked)", r->out.nthreads_total);
    else
        snprintf(buf, len, "ended");
}

/* The retired simulation's live replay ended the program with its bug: keep what the
 * crash dump needs (the snapshot itself stays in d->snap until round_shutdown). */
void round_keep_retired(struct round_driver *d, const struct round_config *cfg,
                        uint64_t round_no, int best, int nsim, const struct ex_schedule *sched,
                        const struct ex_trace *recorded, const struct sim_result *live,
                        const struct sim_result *w, uint64_t limit, bool in_tail)
{
    struct round_retired *r = &d->retired;
    ex_schedule_init(&r->sched);
    ex_trace_init(&r->recorded);
    ex_trace_init(&r->retired);
    if (ex_schedule_copy(&r->sched, sched) < 0 || ex_trace_copy(&r->recorded, recorded) < 0 ||
        ex_trace_copy(&r->retired, &live->trace) < 0) {
        jx_err("round %llu: out of memory keeping the retired bug for the dump",
               (unsigned long long)round_no);
        ex_schedule_free(&r->sched);
        ex_trace_free(&r->recorded);
        ex_trace_free(&r->retired);
        return;
    }
    r->snap = &d->snap;
    r->score = w->score;
    r->round = round_no;
    r->sim = best;
    r->nsim = nsim;
    r->cue_limit = limit;
    r->cues_sim = w->cues;
    r->cues_live = live->cues;
    snprintf(r->strategy, sizeof r->strategy, "%s",
             w->sparse ? "sparse" : ex_strategy_name(cfg->strategy));
    char what[120];
    round_describe_outcome(in_tail ? live : w, what, sizeof what);
    if (in_tail)
        snprintf(r->why, sizeof r->why, "simulation scored %llu (suspicious) and was retired; "
                 "the program %.80s %llu cue points into the serialized tail",
                 (unsigned long long)w->score.suspicion, what,
                 (unsigned long long)(live->cues - w->cues));
    else
        snprintf(r->why, sizeof r->why, "%s %.120s: a bug outranks every other score",
                 best ? "simulation" : "the recording", what);
    d->have_retired = true;
}

const struct round_retired *round_retired(struct vm *vm)
{
    struct round_driver *d = vm->rounds;
    if (!d)
        return NULL;
    /* The program's end wakes vm_run's caller while the driver may still be finishing the
     * round whose live replay ended it (keeping what the dump needs): wait for it. */
    pthread_mutex_lock(&d->mu);
    while (d->busy)
        pthread_cond_wait(&d->cv, &d->mu);
    bool have = d->have_retired && d->snap_ready;
    pthread_mutex_unlock(&d->mu);
    return have ? &d->retired : NULL;
}

