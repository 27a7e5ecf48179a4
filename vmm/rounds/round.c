/* The round driver. One host thread per VM, started by the first attach. A round:
 *
 *   stop (vm_pause) -> snapshot -> record a fragment under the default schedule
 *   (roundrobin, record_quantum cue points a turn) -> restore -> the explorer proposes
 *   up to K schedules -> each runs from the snapshot in the sandbox (a guest outcome ends
 *   the simulation, not the VM), here or on a worker VM, and is restored -> score ->
 *   retire the winner by replaying its schedule on the live VM (sandbox off: a crash now
 *   really happens) -> back to free execution.
 *
 * The K simulations form one batch (simulation.h) that this VM and the worker VMs (worker.h,
 * --workers; none with one CPU) work off together; the recording and the retirement
 * always run in this VM. docs/rounds.md has the measurements behind the default.
 *
 * Rate control: a round starts no earlier than 1/rate after the previous one started,
 * and the program always gets free execution for at least
 * round_time * (100 - max_duty_pct) / max_duty_pct after each round, so however slow
 * rounds are, the program keeps (by default) at least half of the wall time. */
#include "rounds/round.h"
#include "rounds/driver.h"
#include "rounds/round_config.h"
#include "explorer/explorer.h"
#include "rounds/simulation.h"
#include "kvm/snapshot.h"
#include "rounds/worker.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "sched/serialize.h"
#include "sched/simdiff.h"
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* To whoever listens (vm->event_sink: the control socket's followers). */
static void send_event(struct round_driver *d, const char *kind, const char *line)
{
    if (d->vm->event_sink)
        d->vm->event_sink(d->vm->event_ctx, kind, line);
}

/* A notable event: a line on stderr and a JSON event on the control socket. */
void round_notable(struct round_driver *d, const char *kind, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "jinx: %s\n", line);
    pthread_mutex_lock(&d->mu);
    size_t ll = strnlen(line, sizeof d->st.last_event - 1);
    memcpy(d->st.last_event, line, ll);
    d->st.last_event[ll] = '\0';
    pthread_mutex_unlock(&d->mu);
    send_event(d, kind, line);
}

/* One round's state, handed from phase to phase (do_round). t[0..8]: when each phase
 * began and the last ended (stop, snapshot, record, explore, simulate, score, retire,
 * resume). */
struct round_work {
    struct vm *vm;
    struct round_config cfg;
    uint64_t round_no, want, vtime;
    uint64_t t[9];
    struct ex_schedule rec_sched;
    int k;                      /* simulations the strategy may ask for */
    struct sim_result *res;     /* [0] the recording, [1..nsim] the simulations */
    struct ex_schedule_set ss;
    struct ex_analysis a;
    bool analysed;
    struct ex_rng rng;
    int nsim, on_workers, best;
    uint64_t ns_sync;
    bool ok, bug, retire, tail_crash, over;
    bool single;                /* skipped: one thread alive (round_stop) */
    uint64_t divergences, tail_cues;
    bool sparse;                /* the K simulations are sparse (round_kind) */
    bool recorded;              /* ... and this round records first (it always does when
                                 * not sparse) */
};

/* Stops the world and takes the round's snapshot (the serialized machinery is set up
 * the first time). False when the round cannot go on (the VM resumed if it can). */
static bool round_stop(struct round_driver *d, struct round_work *rw)
{
    struct vm *vm = rw->vm;
    char err[256];
    rw->t[0] = mono_ns();
    vm_pause(vm);
    if (vm_over(vm)) {
        vm_resume(vm);
        return false;
    }
    if (vm->live < 2) {
        /* One thread (it exited after driver_main looked): every schedule is the
         * same, a round would only rerun it. Its crash is met in free execution (jinx
         * test then searches the snapshots for a replayable run). */
        rw->single = true;
        vm_resume(vm);
        return false;
    }
    rw->t[1] = mono_ns();
    if (!d->serial_ready) {
        /* The serialized machinery, set up while the world is stopped. */
        if (serialize_init(vm, NULL, true, EX_SPIN_THRESHOLD, err, sizeof err) < 0) {
            jx_err("round: %s", err);
            vm_resume(vm);
            return false;
        }
        vm->ser->on = false;
        vm->ser->turn_claims = true; /* a turn ends by cue points (crew.h) */
        d->serial_ready = true;
    }
    if (!d->snap_ready) {
        if (snapshot_init(&d->snap, vm, err, sizeof err) < 0) {
            jx_err("round: %s", err);
            vm_resume(vm);
            return false;
        }
        d->snap_ready = true;
    }
    if (snapshot_take(&d->snap, err, sizeof err) < 0) {
        jx_err("round: %s", err);
        vm_resume(vm);
        return false;
    }
    rw->vtime = d->snap.vtime;
    rw->t[2] = mono_ns();
    return true;
}

/* Records the fragment from the snapshot (round-robin) into res[0] and rewinds, unless
 * the round is sparse and learns nothing this time (then res[0] stays empty: a
 * recording of no cue point, which scores nothing). False when out of memory (the VM
 * resumed). */
static bool round_record(struct round_driver *d, struct round_work *rw)
{
    struct vm *vm = rw->vm;
    ex_schedule_init(&rw->rec_sched);
    rw->rec_sched.policy = EX_DEFAULT_ROUNDROBIN;
    rw->rec_sched.quantum = rw->cfg.record_quantum ? rw->cfg.record_quantum : 1;
    ex_schedule_set_note(&rw->rec_sched, "recording (roundrobin %u)", rw->rec_sched.quantum);
    rw->k = (int)rw->cfg.params.max_schedules;
    rw->res = calloc((size_t)rw->k + 1, sizeof *rw->res);
    ex_schedule_set_init(&rw->ss);
    if (!rw->res) {
        vm_resume(vm);
        return false;
    }
    for (int i = 0; i <= rw->k; i++)
        sim_result_init(&rw->res[i]);
    if (!rw->recorded) {
        rw->t[3] = mono_ns();
        rw->ok = !vm_over(vm);
        return true;
    }
    sim_run_fragment(vm, &rw->rec_sched, rw->want, rw->cfg.fragment_wall_ns, rw->vtime, false,
                     &rw->res[0]);
    rw->t[3] = mono_ns();
    rw->ok = !vm_over(vm) && sim_rewind(vm, &d->snap) == 0;
    return true;
}

/* Sparse rounds. A traced simulation pays a cue point for every shared access and runs
 * until the fragment's wall budget: a round with K = 8 costs 0.5 s here, and with the
 * duty limit the program loses half its wall time. A sparse simulation pays for its
 * decisions only (sched/sparse.h): K of them take a few milliseconds each. So rounds
 * turn sparse (--sim-kind auto) from round ROUND_TRACED_FIRST + 1 on: a short test ends
 * within its first rounds, which stay traced (their strategies and scores see every
 * access: a short test's bugs are found there today), while a long-running program gets
 * cheap rounds for the rest of its run. A sparse round records (traced, as any round)
 * only every ROUND_SPARSE_RECORD_EVERY rounds, to learn the racy sites its change points
 * are drawn over (the driver's model keeps them across rounds); the others only
 * snapshot, simulate and maybe retire. */
#define ROUND_TRACED_FIRST 2u
#define ROUND_SPARSE_RECORD_EVERY 8u

static void round_kind(struct round_driver *d, struct round_work *rw)
{
    switch (rw->cfg.sim_kind) {
    case ROUND_SIMS_TRACED: rw->sparse = false; break;
    case ROUND_SIMS_SPARSE: rw->sparse = true; break;
    case ROUND_SIMS_AUTO: rw->sparse = rw->round_no > ROUND_TRACED_FIRST; break;
    }
    if (rw->sparse && !d->sparse_from)
        d->sparse_from = rw->round_no;
    rw->recorded = !rw->sparse || (rw->round_no - d->sparse_from) % ROUND_SPARSE_RECORD_EVERY == 0;
}

/* The strategy's schedules for the recorded trace (rw->ss), and what sparse simulations
 * learn from it. */
static void round_explore(struct round_driver *d, struct round_work *rw)
{
    ex_rng_seed(&rw->rng, rw->cfg.seed ^ ex_hash_mix(rw->round_no));
    if (rw->sparse) {
        /* A prefix of the fragment: its counts, from this round's snapshot, are lower
         * bounds for the next. No memory: fewer sites, still valid. */
        if (rw->ok && rw->recorded && !rw->res[0].ended)
            ex_sparse_learn(&d->sparse_model, &rw->res[0].trace, false, NULL);
    } else if (rw->ok && !rw->res[0].ended) {
        char why[160];
        if (ex_analyze(&rw->res[0].trace, &rw->a, why, sizeof why) == EX_OK) {
            rw->analysed = true;
            struct ex_params p = rw->cfg.params;
            ex_params_sanitize(&p);
            if (ex_generate(rw->cfg.strategy, &rw->a, &p, &rw->rng, &rw->ss) < 0)
                rw->ss.n = 0;
            /* Past its segments, every other simulation interleaves as finely as it
             * can (round-robin, one cue point a turn), the others keep the strategy's
             * `continue` (the running thread runs on). Fine interleaving shows an
             * atomicity violation's consequences within the fragment (circle: 11 of 12
             * runs failed, against 2 of 12 with `continue` alone), but an order bug that
             * needs one thread to run far ahead (race-lock-x) wants `continue`. */
            for (size_t i = 1; i < rw->ss.n; i += 2) {
                rw->ss.v[i].policy = EX_DEFAULT_ROUNDROBIN;
                rw->ss.v[i].quantum = 1;
            }
        } else {
            jx_err("round %llu: recorded trace not usable: %s",
                   (unsigned long long)rw->round_no, why);
        }
    }
    rw->t[4] = mono_ns();
}

/* Scores every simulation (the recording competes too: a crash in it is a bug like any
 * other) and picks the best (rw->best). */
static void round_score(struct round_driver *d, struct round_work *rw)
{
    if (rw->ok) {
        struct ex_baseline base;
        bool have_base = rw->analysed && ex_baseline_build(&base, &rw->a, NULL) == 0;
        struct ex_score *sc = calloc((size_t)rw->nsim + 1, sizeof *sc);
        for (int i = 0; sc && i <= rw->nsim; i++) {
            struct sim_result *r = &rw->res[i];
            if (have_base && i > 0 && !r->sparse)
                ex_score_simulation(&base, &r->trace, r->outcome, &d->cov, &r->score);
            else {
                memset(&r->score, 0, sizeof r->score);
                r->score.outcome = (uint8_t)r->outcome;
                r->score.bug = ex_outcome_is_bug(r->outcome);
                /* A sparse simulation's trace has no accesses to compare: it is
                 * suspicious by the change points that fired in it (a thread preempted
                 * at a racy site), which its retirement and tail carry on from. */
                r->score.suspicion = r->sparse ? r->fired : 0;
                r->score.rank = r->score.bug ? EX_SCORE_BUG : r->score.suspicion;
            }
            sc[i] = r->score;
        }
        if (sc)
            rw->best = (int)ex_select_best(sc, (size_t)rw->nsim + 1, &rw->rng);
        free(sc);
        if (have_base)
            ex_baseline_free(&base);
        for (int i = 0; i <= rw->nsim; i++)
            if (!rw->res[i].sparse) /* its trace has no accesses: no pairs */
                ex_coverage_add_trace(&d->cov, &rw->res[i].trace);
    }
    rw->t[6] = mono_ns();
}

/* A sparse simulation's wall budget: a 50th of a traced fragment's (1 ms by default, at
 * least 0.5 ms). Its threads run at native speed between decisions, millions of
 * instructions in that time, and its change points, drawn with small counts, fire early;
 * K of them then cost less than one traced simulation did. */
static uint64_t sparse_wall(const struct round_config *c)
{
    uint64_t w = c->fragment_wall_ns / 50;
    return w < 500000 ? 500000 : w;
}

/* Replays the retired simulation live: exactly its cue points, then (when it did not
 * end) the tail. A bug that ends the program is kept for the dump (keep_retired). */
static void round_replay_retired(struct round_driver *d, struct round_work *rw)
{
    struct vm *vm = rw->vm;
    struct sim_result *w = &rw->res[rw->best];
    struct sim_result live;
    memset(&live, 0, sizeof live);
    ex_trace_init(&live.trace);
    /* Exactly the simulation's cue points: a simulation cut by the wall budget
     * stopped a thread mid-computation, which the replay need not repeat. Then, for
     * a simulation that did not end, the tail: the same schedule's default policy
     * goes on serialized, so a crash that the retired interleaving causes a little
     * later still happens at a known cue point of a known schedule, and the dump's
     * replay (the same schedule up to the same limit) reproduces it. */
    uint64_t exact = w->ended ? rw->want : w->cues;
    uint64_t tail = w->ended ? 0 : rw->cfg.tail_ns / SERIALIZE_CUE_NS;
    const struct ex_schedule *ws = w->sparse ? &w->sched
                                   : rw->best ? &rw->ss.v[rw->best - 1] : &rw->rec_sched;
    /* A sparse tail runs at native speed between decisions: a few of its simulations'
     * budgets take it far, and it is stopped as they are (simulation.h). */
    uint64_t tail_wall = rw->cfg.tail_wall_ns;
    if (w->sparse && tail_wall > 4 * sparse_wall(&rw->cfg))
        tail_wall = 4 * sparse_wall(&rw->cfg);
    pthread_mutex_lock(&vm->lock);
    vm->ser->hard_mult = w->sparse ? 2 : 0;
    pthread_mutex_unlock(&vm->lock);
    sim_run_fragment_from(vm, ws, exact + tail, tail ? exact : 0, tail ? tail_wall : 0,
                          rw->vtime, true, &live);
    pthread_mutex_lock(&vm->lock);
    vm->ser->hard_mult = 0;
    pthread_mutex_unlock(&vm->lock);
    long diff = ex_trace_first_difference(&live.trace, &w->trace);
    bool same = diff < 0 || (size_t)diff >= w->trace.n; /* the simulation's part */
    if (!vm_over(vm)) {
        if (!same || live.cues < w->cues) {
            rw->divergences++;
            char where[512];
            simdiff_describe_events(where, sizeof where, &w->trace, &live.trace, diff);
            round_notable(d, "divergence", "round %llu: the replay of simulation %d diverged at "
                    "%s (a bug in jinx: please report it)",
                    (unsigned long long)rw->round_no, rw->best, where);
        }
        rw->tail_cues = live.cues > w->cues ? live.cues - w->cues : 0;
        serialize_fragment_end(vm);
    } else if (rw->bug && !ex_outcome_is_bug(sim_outcome_class(&vm->out, true)) &&
               vm->out.kind != OUT_TIMEOUT && vm->out.kind != OUT_ERROR) {
        /* The simulation ended in a bug, its live replay in the program's clean end: the
         * live program is the judge (no bug is reported), and the difference is jinx's. */
        rw->divergences++;
        rw->bug = false;
        round_notable(d, "divergence", "round %llu: simulation %d ended in a bug, its replay in "
                      "the program's end (a bug in jinx: please report it)",
                      (unsigned long long)rw->round_no, rw->best);
    } else if (rw->bug) {
        round_keep_retired(d, &rw->cfg, rw->round_no, rw->best, rw->nsim, ws, &rw->res[0].trace,
                     &live, w, exact + tail, false);
    } else if (same && live.cues >= w->cues) {
        /* Past the simulation's end: the tail met the program's end. */
        rw->tail_cues = live.cues - w->cues;
        if (ex_outcome_is_bug(sim_outcome_class(&vm->out, true))) {
            rw->tail_crash = true;
            live.out = vm->out;
            round_keep_retired(d, &rw->cfg, rw->round_no, rw->best, rw->nsim, ws, &rw->res[0].trace,
                         &live, w, exact + tail, true);
        }
    } else if (vm->out.kind == OUT_TIMEOUT || vm->out.kind == OUT_ERROR) {
        /* jinx-vmm stopped the program mid-replay (--timeout, a signal, an error): not
         * the program's end, so nothing to compare with the simulation. */
    } else {
        rw->divergences++; /* the simulation did not end there, the replay did */
        round_notable(d, "divergence", "round %llu: the replay of simulation %d ended the program "
                "at cue point %llu (trace differs at %ld), the simulation ran on to cue point "
                "%llu (a bug in jinx: please report it)", (unsigned long long)rw->round_no,
                rw->best, (unsigned long long)live.cues, diff, (unsigned long long)w->cues);
    }
    ex_trace_free(&live.trace);
}

/* Retires the best simulation if it scored (a bug, or with --verbose-rounds anything
 * ranked), replaying it live; else free execution goes on from the snapshot. */
static void round_retire(struct round_driver *d, struct round_work *rw)
{
    struct vm *vm = rw->vm;
    struct sim_result *w = &rw->res[rw->best];
    rw->bug = rw->ok && w->score.bug;
    rw->retire = rw->ok && w->score.rank > 0;
    if (rw->ok && rw->bug) {
        char what[400];
        round_describe_outcome(w, what, sizeof what);
        round_notable(d, "bug", "round %llu: simulation %d/%d %s -> retired",
                (unsigned long long)rw->round_no, rw->best, rw->nsim, what);
    } else if (rw->ok && rw->retire && rw->cfg.verbose) {
        round_notable(d, "retire", "round %llu: simulation %d/%d scored %llu (races made adjacent %u, "
                "unserializable %u, new writers %u, novel pairs %u) -> retired",
                (unsigned long long)rw->round_no, rw->best, rw->nsim,
                (unsigned long long)w->score.suspicion, w->score.races_adjacent,
                w->score.avio_new, w->score.new_writers, w->score.novel_pairs);
    }
    if (rw->retire) {
        round_replay_retired(d, rw);
    } else if (rw->ok) {
        /* Nothing worth retiring: free execution goes on from the snapshot. */
        pthread_mutex_lock(&vm->lock);
        vm->ser->on = false;
        vm->ser->limit = 0;
        pthread_mutex_unlock(&vm->lock);
    }
    rw->t[7] = mono_ns();
}

/* Free execution again, unless the program ended. */
static void round_resume(struct round_work *rw)
{
    struct vm *vm = rw->vm;
    rw->over = vm_over(vm);
    if (!rw->over)
        serialize_free_run(vm);
    rw->t[8] = mono_ns();
}

/* What the round achieved (round_progress.h): its recording, its simulations, and when
 * it ran none, why. */
static void round_progress_of(const struct round_work *rw, struct round_progress_round *p)
{
    memset(p, 0, sizeof *p);
    p->unrecorded = !rw->recorded;
    p->rec_cues = rw->res[0].cues;
    p->rec_cut = rw->res[0].cut;
    p->rec_stopped = rw->res[0].stopped;
    p->sims = (unsigned)rw->nsim;
    uint64_t c[ROUND_MAX_SIMS];
    int n = 0;
    for (int i = 1; i <= rw->nsim && n < ROUND_MAX_SIMS; i++)
        c[n++] = rw->res[i].cues;
    p->sim_cues = round_progress_median(c, (size_t)n);
    /* The program's end during the round (its exit, a bug, the run's timeout) counts as
     * the recording's end: no round could have simulated there. */
    p->why = rw->res[0].ended || rw->over ? ROUND_NOSIM_ENDED
             : !rw->ok        ? ROUND_NOSIM_OTHER
             : !rw->analysed  ? ROUND_NOSIM_UNUSABLE
             : rw->ss.n == 0  ? ROUND_NOSIM_NONE
                              : ROUND_NOSIM_OTHER;
}

/* The round's counts and phase times into d->st (round_status). */
static void round_account(struct round_driver *d, const struct round_work *rw)
{
    const uint64_t *t = rw->t;
    const struct sim_result *w = &rw->res[rw->best];
    struct round_progress_round pr;
    round_progress_of(rw, &pr);
    pthread_mutex_lock(&d->mu);
    struct round_stats *st = &d->st;
    round_progress_add(&st->prog, &pr);
    st->rounds++;
    st->simulations += (uint64_t)rw->nsim;
    for (int i = 1; i <= rw->nsim; i++) {
        st->sim_cues += rw->res[i].cues;
        st->sparse_sims += rw->res[i].sparse;
        st->sparse_fired += rw->res[i].fired;
    }
    st->cues_total += rw->res[0].cues;
    st->last_cues = rw->res[0].cues;
    st->last_sims = (uint64_t)rw->nsim;
    for (int i = 0; i <= rw->nsim; i++)
        st->sim_bugs += rw->res[i].score.bug;
    st->retired += rw->retire && rw->best > 0;
    st->divergences += rw->divergences;
    st->tail_cues += rw->tail_cues;
    st->tail_crashes += rw->tail_crash;
    if (rw->ok && w->score.rank > st->best_rank)
        st->best_rank = w->score.rank;
    if (rw->bug)
        st->last_bug_round = rw->round_no;
    st->ns_stop = t[1] - t[0];
    st->ns_snapshot = t[2] - t[1];
    st->ns_record = t[3] - t[2];
    st->ns_explore = t[4] - t[3];
    st->ns_simulate = t[5] - t[4];
    st->ns_score = t[6] - t[5];
    st->ns_retire = t[7] - t[6];
    st->ns_resume = t[8] - t[7];
    st->ns_round = t[8] - t[0];
    st->sum_stop += st->ns_stop;
    st->sum_snapshot += st->ns_snapshot;
    st->sum_record += st->ns_record;
    st->sum_explore += st->ns_explore;
    st->sum_simulate += st->ns_simulate;
    st->sum_score += st->ns_score;
    st->sum_retire += st->ns_retire;
    st->sum_resume += st->ns_resume;
    st->sum_round += st->ns_round;
    pthread_mutex_unlock(&d->mu);
}

/* A crash in real execution, and with --verbose-rounds the round's line. */
static void round_report(struct round_driver *d, const struct round_work *rw)
{
    const struct vm *vm = rw->vm;
    const uint64_t *t = rw->t;
    if (rw->over && (rw->bug || rw->tail_crash))
        round_notable(d, "crash", "guest %s in real execution (round %llu, %s%s)",
                vm->out.kind == OUT_DEADLOCK ? "deadlocked" : "crashed",
                (unsigned long long)rw->round_no,
                vm->out.kind == OUT_SIGNAL ? signal_name(vm->out.signal) : "deadlock",
                rw->tail_crash ? ", in the serialized tail after the retired schedule" : "");
    uint64_t sim_cues = 0, fired = 0;
    int sparse = 0;
    for (int i = 1; i <= rw->nsim; i++) {
        sim_cues += rw->res[i].cues;
        sparse += rw->res[i].sparse;
        fired += rw->res[i].fired;
    }
    if (rw->cfg.verbose)
        fprintf(stderr, "jinx: round %llu: %llu cue points, %d simulations, best %d, tail %llu "
                "cue points, %.2f ms (stop %.3f snapshot %.3f record %.3f explore %.3f simulate "
                "%.3f score %.3f retire %.3f resume %.3f ms; worker sync %.3f ms; %llu cue points "
                "a simulation, %d on workers; %d sparse, %llu change points fired, %zu racy "
                "variables learnt)\n",
                (unsigned long long)rw->round_no, (unsigned long long)rw->res[0].cues, rw->nsim,
                rw->best, (unsigned long long)rw->tail_cues, (t[8] - t[0]) / 1e6,
                (t[1] - t[0]) / 1e6, (t[2] - t[1]) / 1e6, (t[3] - t[2]) / 1e6,
                (t[4] - t[3]) / 1e6, (t[5] - t[4]) / 1e6, (t[6] - t[5]) / 1e6,
                (t[7] - t[6]) / 1e6, (t[8] - t[7]) / 1e6, rw->ns_sync / 1e6,
                (unsigned long long)(rw->nsim ? sim_cues / (uint64_t)rw->nsim : 0),
                rw->on_workers, sparse, (unsigned long long)fired,
                sparse ? ex_sparse_racy_vars(&d->sparse_model) : (size_t)0);
}

/* One round: stop, snapshot, record, explore, simulate, score, retire, resume. False
 * when the program is over (no more rounds). */
static bool do_round(struct round_driver *d)
{
    struct round_work work;
    struct round_work *rw = &work;
    memset(rw, 0, sizeof *rw);
    rw->vm = d->vm;
    pthread_mutex_lock(&d->mu);
    rw->cfg = d->cfg;
    rw->round_no = d->st.rounds + 1;
    pthread_mutex_unlock(&d->mu);
    rw->want = rw->cfg.fragment_ns / SERIALIZE_CUE_NS;
    bool go_on = true;
    round_kind(d, rw);
    if (!round_stop(d, rw)) {
        go_on = rw->single;
    } else if (round_record(d, rw)) {
        round_explore(d, rw);
        /* Simulate: the program's VM and the workers work off one batch together. */
        /* A recording that ended the fragment (the program's end, a bug) left nothing to
         * simulate, sparse or not. */
        bool sims = rw->sparse && !(rw->recorded && rw->res[0].ended);
        struct round_sparse rs = {.n = sims ? rw->k : 0, .model = &d->sparse_model,
                                  .seed = rw->cfg.seed ^ ex_hash_mix(rw->round_no),
                                  .wall = sparse_wall(&rw->cfg)};
        if (rw->ok)
            rw->nsim = round_simulate(d, &rw->cfg, &rw->ss, rw->k, &rs, rw->want, rw->vtime,
                                      rw->res, &rw->ns_sync, &rw->ok);
        for (int i = 1; i <= rw->nsim; i++)
            rw->on_workers += rw->res[i].vm_id != 0;
        rw->t[5] = mono_ns();
        round_score(d, rw);
        round_retire(d, rw);
        round_resume(rw);
        round_account(d, rw);
        round_report(d, rw);
        go_on = !rw->over;
        if (rw->analysed)
            ex_analysis_free(&rw->a);
        ex_schedule_set_free(&rw->ss);
        ex_schedule_free(&rw->rec_sched);
        for (int i = 0; i <= rw->k; i++)
            sim_result_free(&rw->res[i]);
        free(rw->res);
    }
    return go_on;
}

static void progress(struct round_driver *d, uint64_t now)
{
    if (now - d->last_progress_ns < 10000000000ULL)
        return;
    d->last_progress_ns = now;
    pthread_mutex_lock(&d->mu);
    struct round_stats st = d->st;
    pthread_mutex_unlock(&d->mu);
    double n = st.rounds ? (double)st.rounds : 1;
    char line[200];
    snprintf(line, sizeof line, "%llu rounds, %llu simulations (%llu bugs), %.0f cue points/round, "
             "%.1f ms/round, %llu retired",
             (unsigned long long)st.rounds, (unsigned long long)st.simulations,
             (unsigned long long)st.sim_bugs, (double)st.cues_total / n, st.sum_round / n / 1e6,
             (unsigned long long)st.retired);
    fprintf(stderr, "jinx: %s\n", line);
    send_event(d, "progress", line);
}

/* vm->on_clone: a second thread may have come (driver_main waits for one). */
static void clone_came(void *ctx)
{
    struct round_driver *d = ctx;
    pthread_mutex_lock(&d->mu);
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

static void *driver_main(void *arg)
{
    struct round_driver *d = arg;
    struct vm *vm = d->vm;
    sigset_t set;
    sigfillset(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    uint64_t last_start = 0, last_end = 0, last_dur = 0;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        if (d->quit || vm_over(vm))
            break;
        if (!d->attached) {
            pthread_cond_wait(&d->cv, &d->mu);
            continue;
        }
        uint64_t now = mono_ns();
        uint64_t interval = (uint64_t)(1e9 / d->cfg.rate);
        int duty = d->cfg.max_duty_pct;
        /* The first round's moment varies with the seed, from a quarter to twice
         * first_ns: a short program is at another phase in each run (a bug window open
         * for 20 us of a 2 ms program is met by some seeds, never by a fixed offset). */
        uint64_t first = d->cfg.first_ns / 4 +
                         ex_hash_mix(d->cfg.seed) % (d->cfg.first_ns * 7 / 4 + 1);
        uint64_t next = last_start ? last_start + interval : d->attach_ns + first;
        uint64_t rest = last_dur * (uint64_t)(100 - duty) / (uint64_t)duty;
        if (last_end && next < last_end + rest)
            next = last_end + rest;
        /* While one thread lives a round would be skipped (round_stop): wait for a
         * clone without stopping the world, and take the round as soon as it comes
         * (clone_came wakes us: a program whose threads end within a millisecond of
         * their creation still gets its round there). */
        bool alone = __atomic_load_n(&vm->live, __ATOMIC_RELAXED) < 2;
        if (next > now || alone) {
            uint64_t wait = next > now ? next - now : 100000000;
            if (wait > 100000000)
                wait = 100000000; /* re-check quit and the VM regularly */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            uint64_t abs = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + wait;
            ts.tv_sec = (time_t)(abs / 1000000000ULL);
            ts.tv_nsec = (long)(abs % 1000000000ULL);
            pthread_cond_timedwait(&d->cv, &d->mu, &ts);
            continue;
        }
        d->busy = true;
        if (last_end)
            d->st.free_ns += now - last_end;
        pthread_mutex_unlock(&d->mu);
        last_start = now;
        bool more = do_round(d);
        last_end = mono_ns();
        last_dur = last_end - last_start;
        progress(d, last_end);
        pthread_mutex_lock(&d->mu);
        d->busy = false;
        d->st.attached_ns = last_end - d->attach_ns;
        pthread_cond_broadcast(&d->cv);
        if (!more)
            break;
    }
    d->busy = false;
    d->attached = false;
    d->st.attached = false;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

int round_attach(struct vm *vm, const struct round_config *cfg, char *err, size_t errlen)
{
    if (round_config_check(cfg, err, errlen) < 0)
        return -1;
    if (vm->opt.serial || vm->opt.record_ns || vm->opt.selftest_rounds) {
        snprintf(err, errlen, "this VM runs --serial/--record/--snapshot-selftest; rounds need "
                 "a free-running VM");
        return -1;
    }
    if (atomic_load(&vm->stopping)) {
        snprintf(err, errlen, "the program has ended");
        return -1;
    }
    if (!vm->rounds) {
        struct round_driver *d = calloc(1, sizeof *d);
        if (!d) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        d->vm = vm;
        pthread_mutex_init(&d->mu, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&d->cv, &ca);
        pthread_condattr_destroy(&ca);
        ex_coverage_init(&d->cov);
        ex_sparse_model_init(&d->sparse_model);
        d->sparse_model.own_threads = true;
        if (pthread_create(&d->thread, NULL, driver_main, d) != 0) {
            snprintf(err, errlen, "cannot start the round thread");
            ex_coverage_free(&d->cov);
            ex_sparse_model_free(&d->sparse_model);
            free(d);
            return -1;
        }
        vm->on_clone_ctx = d;
        vm->on_clone = clone_came;
        vm->rounds = d;
    }
    struct round_driver *d = vm->rounds;
    pthread_mutex_lock(&d->mu);
    d->cfg = *cfg;
    ex_params_sanitize(&d->cfg.params);
    d->st.cfg = d->cfg;
    if (!d->attached) {
        d->attached = true;
        d->attach_ns = mono_ns();
        d->last_progress_ns = d->attach_ns;
    }
    d->st.attached = true;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return 0;
}

void round_detach(struct vm *vm)
{
    struct round_driver *d = vm->rounds;
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->attached = false;
    d->st.attached = false;
    pthread_cond_broadcast(&d->cv);
    while (d->busy)
        pthread_cond_wait(&d->cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

void round_status(struct vm *vm, struct round_stats *out)
{
    struct round_driver *d = vm->rounds;
    if (!d) {
        memset(out, 0, sizeof *out);
        round_config_default(&out->cfg);
        return;
    }
    pthread_mutex_lock(&d->mu);
    *out = d->st;
    if (d->attached)
        out->attached_ns = mono_ns() - d->attach_ns;
    pthread_mutex_unlock(&d->mu);
}

void round_shutdown(struct vm *vm)
{
    struct round_driver *d = vm->rounds;
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->quit = true;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL); /* vm->rounds is set only once the thread runs */
    vm->on_clone = NULL; /* the program has ended: no clone comes any more */
    if (d->have_retired) {
        ex_schedule_free(&d->retired.sched);
        ex_trace_free(&d->retired.recorded);
        ex_trace_free(&d->retired.retired);
    }
    for (int i = 0; i < WORKER_MAX; i++)
        worker_free(d->workers[i]);
    if (d->snap_ready)
        snapshot_free(&d->snap);
    ex_coverage_free(&d->cov);
    ex_sparse_model_free(&d->sparse_model);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
    vm->rounds = NULL;
}
