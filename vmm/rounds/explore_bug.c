/* Whole-run exploration's bug run (explore_int.h): the schedule that replays it, its
 * live replay, and what the dump keeps. */
#include "rounds/explore_int.h"
#include "rounds/explore_replay.h"
#include "kvm/vm.h"
#include "lib/util.h"
#include "sched/serialize.h"
#include <stdio.h>
#include <string.h>

/* A whole run's outcome: as a simulation's (rounds/simulation.h), except that a nonzero exit
 * status is a failure too. A test reports failure by its exit status as often as by an
 * assertion (jinx test counts it as one), so a run that ends so is a bug, classed with
 * assertions. */
enum ex_outcome explore_run_outcome(const struct outcome *o, bool ended)
{
    if (ended && o->kind == OUT_EXIT && o->status != 0)
        return EX_OUTCOME_ASSERT;
    return sim_outcome_class(o, ended);
}

static void keep_bug(struct explore_driver *d, const struct ex_schedule *s,
                     const struct ex_trace *reference, const struct sim_result *sim,
                     const struct sim_result *live)
{
    struct round_retired *r = &d->retired;
    ex_schedule_init(&r->sched);
    ex_trace_init(&r->recorded);
    ex_trace_init(&r->retired);
    if (ex_schedule_copy(&r->sched, s) < 0 || ex_trace_copy(&r->recorded, reference) < 0 ||
        ex_trace_copy(&r->retired, &live->trace) < 0) {
        jx_err("explore: out of memory keeping the bug's schedule for the dump (no replay)");
        ex_schedule_free(&r->sched);
        ex_trace_free(&r->recorded);
        ex_trace_free(&r->retired);
        return;
    }
    r->snap = &d->snap;
    memset(&r->score, 0, sizeof r->score);
    r->score.outcome = (uint8_t)sim->outcome;
    r->score.bug = true;
    r->score.rank = EX_SCORE_BUG;
    r->round = 0; /* a whole run, not a round */
    /* Which run of how many, as the dump's SCORE record bounds them (a timed run is counted
     * apart from the schedules; a long exploration makes thousands of sparse runs). */
    uint64_t nsim = d->st.schedules > d->st.bug_at ? d->st.schedules : d->st.bug_at;
    r->nsim = (int)(nsim < EXPLORE_DUMP_MAX_RUNS ? nsim : EXPLORE_DUMP_MAX_RUNS);
    r->sim = (int)(d->st.bug_at < (uint64_t)r->nsim ? d->st.bug_at : (uint64_t)r->nsim);
    r->cue_limit = d->cfg.run_cues;
    r->cues_sim = sim->cues;
    r->cues_live = live->cues;
    snprintf(r->strategy, sizeof r->strategy, "%s", d->st.strategy);
    snprintf(r->why, sizeof r->why, "its schedule (%.160s) ended in a bug", d->st.note);
    d->have_retired = true;
}

/* A run met one of jinx's limits and failed, or was stopped by the timeout, and the live
 * program did not get as far: its report must still list the limit, so that jinx test says
 * "could not test" rather than judging a program jinx could not run as it asked. */
void explore_note_unjudged_limits(struct explore_driver *d, uint64_t run)
{
    d->st.limited = true;
    if (limits_merge(&d->vm->limits, &d->vm->sandbox_lims) > 0)
        jx_err("explore: run %llu met the jinx limits below, and the live program did not get "
               "as far", (unsigned long long)run);
}

/* Replays the bug run live from the snapshot: the program really ends in the bug. */
void explore_reproduce(struct explore_driver *d, const struct ex_schedule *s,
                      const struct ex_trace *reference, const struct sim_result *sim)
{
    struct vm *vm = d->vm;
    struct sim_result live;
    memset(&live, 0, sizeof live);
    ex_trace_init(&live.trace);
    /* No wall budget cuts it short: the run took sim->ns, the live replay about as long
     * (a 150-thread program's runs take seconds; serialize's 5 s guard cut them). A timed
     * run's replay looks for its decisions by the threads' registers: one that missed
     * them runs on where the run did not, and a thread may spin there on what a lowered
     * one holds (seqlock-plain's readers: its replay spun until jinx test's 30 s timeout
     * ended the whole run, a bug met at 1.3 s reported as nothing found). Its floor is
     * EXPLORE_TIMED_REPLAY_WALL_NS (a counted execution costs an exit pair: one of
     * spin-unlock-early's replays took 4.2 s, 2 s cut two of three), and it is stopped
     * wherever it is at its end, not five times later (a spin makes no cue point). */
    bool timed = explore_timed_has_match(s);
    uint64_t floor = timed ? EXPLORE_TIMED_REPLAY_WALL_NS : EXPLORE_REPLAY_WALL_NS;
    uint64_t wall = 4 * d->bug_ns > floor ? 4 * d->bug_ns : floor;
    pthread_mutex_lock(&vm->lock);
    vm->ser->hard_mult = timed ? 1 : 0;
    pthread_mutex_unlock(&vm->lock);
    sim_run_fragment(vm, s, d->cfg.run_cues, wall, d->snap.vtime, true, &live);
    pthread_mutex_lock(&vm->lock);
    vm->ser->hard_mult = 0;
    pthread_mutex_unlock(&vm->lock);
    bool ended = atomic_load(&vm->stopping);
    pthread_mutex_lock(&vm->lock);
    enum outcome_kind out = vm->out.kind;
    bool same_outcome = explore_run_outcome(&vm->out, true) == sim->outcome;
    pthread_mutex_unlock(&vm->lock);
    struct explore_replay_result j = explore_replay_judge(
        &live.trace, &sim->trace, ended, out == OUT_TIMEOUT || out == OUT_NONE, same_outcome);
    struct ex_schedule counted; /* a timed run's: its matched points' counts (explore_timed.h) */
    ex_schedule_init(&counted);
    bool same = j.verdict == EXPLORE_REPLAY_SAME, uncounted = false;
    if (same && explore_timed_has_match(s) &&
        (ex_schedule_copy(&counted, s) < 0 || explore_timed_counts(&vm->ser->sparse, &counted) < 0)) {
        jx_err("explore: the live replay of run %llu met its bug, but a timed decision's place "
               "was not counted (or no memory): no schedule in the dump",
               (unsigned long long)d->st.bug_at);
        same = false;
        uncounted = true; /* the program ended in the bug for real: that is the outcome */
    }
    d->st.reproduced = same;
    snprintf(d->st.replay, sizeof d->st.replay, "%s",
             same ? "same" : uncounted ? "uncounted"
             : j.verdict == EXPLORE_REPLAY_STOPPED ? "stopped" : "differs");
    if (same) {
        keep_bug(d, counted.npreempt ? &counted : s, reference, sim, &live);
    } else if (!uncounted) {
        if (j.verdict == EXPLORE_REPLAY_STOPPED)
            jx_err("explore: the live replay of run %llu (%s) was stopped %s after %zu of its "
                   "%zu cue points, the same as the run's up to there: give the test more time "
                   "(--budget, --timeout) to see it end", (unsigned long long)d->st.bug_at,
                   ex_outcome_name(sim->outcome),
                   !ended ? "by its wall budget" : out == OUT_TIMEOUT ? "by the timeout"
                                                  : "from outside", j.live_n, j.run_n);
        else if (explore_timed_has_match(s))
            jx_err("explore: the live replay of timed run %llu went elsewhere at cue point %ld "
                   "of %zu: a decision made where a time slice ended is found again by the "
                   "thread's registers, and these were met at another place first; the %s "
                   "was real, but this dump has no schedule that replays it",
                   (unsigned long long)d->st.bug_at, j.diff, j.run_n,
                   ex_outcome_name(sim->outcome));
        else
            jx_err("explore: the live replay of run %llu did not reproduce its %s (trace "
                   "differs at cue point %ld of %zu, the live one has %zu%s): a bug in jinx, "
                   "please report it", (unsigned long long)d->st.bug_at,
                   ex_outcome_name(sim->outcome), j.diff, j.run_n, j.live_n,
                   ended ? "" : ", the program did not end");
        if (d->st.limited)
            explore_note_unjudged_limits(d, d->st.bug_at);
        if (!ended) {
            serialize_fragment_end(vm);
            serialize_free_run(vm);
        }
    }
    ex_trace_free(&live.trace);
    ex_schedule_free(&counted);
}


/* The bug run's strategy and description, for the stats and the dump. */
static void name_bug_run(struct explore_driver *d, bool sparse)
{
    snprintf(d->st.strategy, sizeof d->st.strategy, "%s",
             d->run_timed ? "timed" : sparse ? "sparse"
                                    : ex_online_name((enum ex_online_kind)d->online.kind));
    if (sparse)
        snprintf(d->st.note, sizeof d->st.note, "%s",
                 d->run_timed ? d->timed.plan.note : d->sparse.plan.note);
    else
        ex_online_describe(&d->online, d->st.note, sizeof d->st.note);
}

/* The run just made, as a schedule that replays it: the choices (and the sparse points or
 * the pre-shared pages) and the timers it ended early. 0, or -1 (out of memory). */
static int bug_schedule(struct explore_driver *d, bool sparse, struct ex_schedule *out)
{
    int got = d->run_timed ? explore_timed_schedule(&d->timed, &d->vm->ser->sparse, out)
              : sparse ? ex_sparse_schedule(&d->sparse.run, &d->sparse.plan, out)
              : ex_online_schedule(&d->online, out) < 0 ||
                      ex_schedule_set_shared(out, d->preshare, d->npreshare) < 0
                  ? -1 : 0;
    return got < 0 ? -1 : explore_timers_to_schedule(d->vm, out);
}


/* Run i (r) ended in a bug, or met a jinx limit (replayed live the same way): its
 * schedule (*bug_sched) and result (*bug) are what reproduce() replays. False when its
 * choices were lost (out of memory): not reported. */
bool explore_keep_bug_run(struct explore_driver *d, uint64_t i, const struct sim_result *r,
                         bool sp, uint32_t timers_ended, uint64_t t_run,
                         struct ex_schedule *bug_sched, struct sim_result *bug)
{
    if (bug_schedule(d, sp, bug_sched) < 0) {
        jx_err("explore: run %llu ended in a bug but its choices were lost (out of memory): "
               "not reported", (unsigned long long)(i + 1));
        return false;
    }
    d->st.bug_at = i + 1;
    d->st.timers_bug = timers_ended;
    name_bug_run(d, sp);
    d->st.bug_outcome = (uint8_t)r->outcome;
    bug->outcome = r->outcome;
    bug->cues = r->cues;
    d->bug_ns = t_run;
    ex_trace_copy(&bug->trace, &r->trace);
    return true;
}

