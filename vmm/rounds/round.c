/* The round driver. One host thread per VM, started by the first attach. A round:
 *
 *   stop (vm_pause) -> snapshot -> record a fragment under the default schedule
 *   (roundrobin, record_quantum cue points a turn) -> restore -> the explorer proposes
 *   up to K schedules -> each runs from the snapshot in the sandbox (a guest outcome ends
 *   the simulation, not the VM), here or on a worker VM, and is restored -> score ->
 *   retire the winner by replaying its schedule on the live VM (sandbox off: a crash now
 *   really happens) -> back to free execution.
 *
 * The K simulations form one batch (sim.h) that this VM and the worker VMs (worker.h,
 * --workers; none with one CPU) work off together; the recording and the retirement
 * always run in this VM. docs/rounds.md has the measurements behind the default.
 *
 * Rate control: a round starts no earlier than 1/rate after the previous one started,
 * and the program always gets free execution for at least
 * round_time * (100 - max_duty_pct) / max_duty_pct after each round, so however slow
 * rounds are, the program keeps (by default) at least half of the wall time. */
#include "rounds/round.h"
#include "rounds/round_config.h"
#include "explorer/explorer.h"
#include "rounds/simulation.h"
#include "kvm/snapshot.h"
#include "rounds/worker.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "sched/serialize.h"
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct round_driver {
    struct vm *vm;
    pthread_t thread;
    pthread_mutex_t mu;         /* guards cfg, st, attached, quit, busy */
    pthread_cond_t cv;
    bool attached, quit, busy;
    struct round_config cfg;
    struct round_stats st;
    uint64_t attach_ns, last_progress_ns;
    struct snapshot snap;
    bool snap_ready;
    bool serial_ready;
    struct ex_coverage cov;
    struct worker *workers[WORKER_MAX]; /* created at the first round that wants them */
    bool have_retired;          /* a retired bug ended the program: `retired` holds it */
    struct round_retired retired;
};

static void describe_outcome(const struct sim_result *r, char *buf, size_t len)
{
    if (r->out.kind == OUT_SIGNAL)
        snprintf(buf, len, "crashed (%s in thread %d)", signal_name(r->out.signal), r->out.thread);
    else if (r->out.kind == OUT_DEADLOCK)
        snprintf(buf, len, "deadlocked (%d threads blocked)", r->out.nthreads_total);
    else
        snprintf(buf, len, "ended");
}

/* To whoever listens (vm->event_sink: the control socket's followers). */
static void send_event(struct round_driver *d, const char *kind, const char *line)
{
    if (d->vm->event_sink)
        d->vm->event_sink(d->vm->event_ctx, kind, line);
}

/* A notable event: a line on stderr and a JSON event on the control socket. */
static void notable(struct round_driver *d, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void notable(struct round_driver *d, const char *kind, const char *fmt, ...)
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

static bool vm_over(struct vm *vm) { return atomic_load(&vm->stopping); }

/* The retired simulation's live replay ended the program with its bug: keep what the
 * crash dump needs (the snapshot itself stays in d->snap until round_shutdown). */
static void keep_retired(struct round_driver *d, const struct round_config *cfg,
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
    snprintf(r->strategy, sizeof r->strategy, "%s", ex_strategy_name(cfg->strategy));
    char what[120];
    describe_outcome(in_tail ? live : w, what, sizeof what);
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

/* Checks every simulation against a run of the same schedule in another VM (workers'
 * results in the program's VM, the program's VM's on worker 1), for exactly the first
 * run's length: --check-workers. Returns the simulations compared; *mismatches counts
 * the differences, each reported. */
static int check_workers(struct round_driver *d, int nw, uint64_t round_no,
                         const struct ex_schedule *const *sp, struct sim_result *res, int n,
                         uint64_t want, uint64_t vtime, uint64_t *mismatches, bool *ok)
{
    struct vm *vm = d->vm;
    const struct ex_schedule **sa = calloc((size_t)n + 1, sizeof *sa), **sb = calloc((size_t)n + 1, sizeof *sb);
    const struct sim_result **ra = calloc((size_t)n + 1, sizeof *ra), **rb = calloc((size_t)n + 1, sizeof *rb);
    struct sim_result *oa = calloc((size_t)n + 1, sizeof *oa), *ob = calloc((size_t)n + 1, sizeof *ob);
    int ia[ROUND_MAX_SIMS], ib[ROUND_MAX_SIMS], na = 0, nb = 0, checked = 0;
    if (!sa || !sb || !ra || !rb || !oa || !ob)
        goto out;
    for (int i = 0; i < n; i++) {
        ex_trace_init(&oa[i].trace);
        ex_trace_init(&ob[i].trace);
        if (!res[i].done)
            continue;
        if (res[i].vm_id != 0) { /* ran on a worker: again in the program's VM */
            sa[na] = sp[i];
            ra[na] = &res[i];
            ia[na++] = i;
        } else if (nw > 0) {     /* ran in the program's VM: again on worker 1 */
            sb[nb] = sp[i];
            rb[nb] = &res[i];
            ib[nb++] = i;
        }
    }
    struct sim_batch ba = {.sched = sa, .out = oa, .n = (size_t)na, .want = want, .vtime = vtime,
                           .ref = ra};
    struct sim_batch bb = {.sched = sb, .out = ob, .n = (size_t)nb, .want = want, .vtime = vtime,
                           .ref = rb};
    atomic_init(&ba.next, 0);
    atomic_init(&bb.next, 0);
    if (nb)
        worker_start(d->workers[0], &bb);
    if (sim_batch_work(&ba, vm, &d->snap, 0) < 0)
        *ok = false;
    if (nb)
        worker_wait(d->workers[0]);
    for (int j = 0; j < na + nb; j++) {
        bool a = j < na;
        const struct sim_result *ref = a ? ra[j] : rb[j - na], *got = a ? &oa[j] : &ob[j - na];
        if (!got->done)
            continue;
        checked++;
        if (!sim_same(ref, got)) {
            (*mismatches)++;
            long diff = ex_trace_first_difference(&ref->trace, &got->trace);
            notable(d, "divergence", "round %llu: simulation %d gave another result in %s than "
                    "on %s %d (cue points %llu vs %llu, first difference at %ld; a bug in jinx: "
                    "please report it)", (unsigned long long)round_no, (a ? ia[j] : ib[j - na]) + 1,
                    a ? "the program's VM" : "worker 1", a ? "worker" : "the program's VM",
                    ref->vm_id, (unsigned long long)got->cues, (unsigned long long)ref->cues, diff);
        }
    }
out:
    for (int i = 0; oa && ob && i < n; i++) {
        ex_trace_free(&oa[i].trace);
        ex_trace_free(&ob[i].trace);
    }
    free(sa);
    free(sb);
    free(ra);
    free(rb);
    free(oa);
    free(ob);
    return checked;
}

/* Runs the round's schedules from the snapshot: in the program's VM and on the workers
 * at once when there are any (worker.h), else one after the other here. Returns the
 * simulations run (results in res[1..]); *ok goes false if the program's VM failed. */
static int simulate(struct round_driver *d, const struct round_config *cfg,
                    const struct ex_schedule_set *ss, int k, uint64_t want, uint64_t vtime,
                    struct sim_result *res, uint64_t *ns_sync, bool *ok)
{
    struct vm *vm = d->vm;
    int n = (int)ss->n < k ? (int)ss->n : k;
    if (n <= 0)
        return 0;
    const struct ex_schedule **sp = calloc((size_t)n, sizeof *sp);
    if (!sp) {
        *ok = false;
        return 0;
    }
    for (int i = 0; i < n; i++)
        sp[i] = &ss->v[i];
    /* Workers, brought to the snapshot while the program's VM is stopped at it. */
    int nw = n > 1 ? worker_count(cfg->workers) : 0, usable = 0;
    struct worker *ready[WORKER_MAX];
    uint64_t t0 = mono_ns();
    for (int i = 0; i < nw; i++) {
        if (!d->workers[i] && !(d->workers[i] = worker_new(vm, i + 1)))
            break;
        if (worker_sync(d->workers[i], &d->snap) == 0)
            ready[usable++] = d->workers[i];
        else
            break; /* keep the usable ones a prefix: check mode uses worker 1 */
    }
    *ns_sync = mono_ns() - t0;
    struct sim_batch b = {.sched = sp, .out = res + 1, .n = (size_t)n, .want = want,
                          .wall = cfg->fragment_wall_ns, .vtime = vtime};
    atomic_init(&b.next, 0);
    for (int i = 0; i < usable; i++)
        worker_start(ready[i], &b);
    if (sim_batch_work(&b, vm, &d->snap, 0) < 0)
        *ok = false;
    for (int i = 0; i < usable; i++)
        worker_wait(ready[i]);
    /* What a failed worker left undone runs here. */
    for (int i = 0; i < n && *ok; i++)
        if (!res[i + 1].done) {
            sim_run_fragment(vm, sp[i], want, cfg->fragment_wall_ns, vtime, false, &res[i + 1]);
            if (vm_over(vm) || sim_rewind(vm, &d->snap) < 0)
                *ok = false;
            res[i + 1].done = true;
            res[i + 1].vm_id = 0;
        }
    uint64_t on_workers = 0, checked = 0, mismatches = 0;
    for (int i = 1; i <= n; i++)
        on_workers += res[i].done && res[i].vm_id != 0;
    if (*ok && cfg->check_workers && usable) {
        pthread_mutex_lock(&d->mu);
        uint64_t round_no = d->st.rounds + 1;
        pthread_mutex_unlock(&d->mu);
        checked = (uint64_t)check_workers(d, usable, round_no, sp, res + 1, n, want, vtime,
                                          &mismatches, ok);
    }
    free(sp);
    pthread_mutex_lock(&d->mu);
    struct round_stats *st = &d->st;
    st->workers = usable;
    st->worker_sims += on_workers;
    st->worker_checked += checked;
    st->worker_mismatches += mismatches;
    st->ns_worker_sync = *ns_sync;
    st->sum_worker_sync += *ns_sync;
    st->worker_builds = st->worker_syncs = st->worker_pages = 0;
    for (int i = 0; i < WORKER_MAX && d->workers[i]; i++) {
        const struct worker_stats *ws = worker_stats(d->workers[i]);
        st->worker_builds += ws->builds;
        st->worker_syncs += ws->syncs;
        st->worker_pages += ws->pages;
    }
    pthread_mutex_unlock(&d->mu);
    return *ok ? n : 0;
}

/* One round. Returns false when the VM is over (stopped by an outcome). */
static bool do_round(struct round_driver *d)
{
    struct vm *vm = d->vm;
    struct round_config cfg;
    pthread_mutex_lock(&d->mu);
    cfg = d->cfg;
    uint64_t round_no = d->st.rounds + 1;
    pthread_mutex_unlock(&d->mu);
    uint64_t want = cfg.fragment_ns / SERIAL_CUE_NS;
    char err[256];

    uint64_t t0 = mono_ns();
    vm_pause(vm);
    if (vm_over(vm)) {
        vm_resume(vm);
        return false;
    }
    uint64_t t1 = mono_ns();
    if (!d->serial_ready) {
        /* The serialized machinery, set up while the world is stopped. */
        if (serial_init(vm, NULL, true, EX_SPIN_THRESHOLD, err, sizeof err) < 0) {
            jx_err("round: %s", err);
            vm_resume(vm);
            return false;
        }
        vm->ser->on = false;
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
    uint64_t vtime = d->snap.vtime;
    uint64_t t2 = mono_ns();

    /* Record. */
    struct ex_schedule rec_sched;
    ex_schedule_init(&rec_sched);
    rec_sched.policy = EX_DEFAULT_ROUNDROBIN;
    rec_sched.quantum = cfg.record_quantum ? cfg.record_quantum : 1;
    ex_schedule_set_note(&rec_sched, "recording (roundrobin %u)", rec_sched.quantum);
    int k = (int)cfg.params.max_schedules;
    struct sim_result *res = calloc((size_t)k + 1, sizeof *res);
    struct ex_schedule_set ss;
    ex_schedule_set_init(&ss);
    if (!res) {
        vm_resume(vm);
        return true;
    }
    for (int i = 0; i <= k; i++)
        ex_trace_init(&res[i].trace);
    sim_run_fragment(vm, &rec_sched, want, cfg.fragment_wall_ns, vtime, false, &res[0]);
    uint64_t t3 = mono_ns();
    bool ok = !vm_over(vm) && sim_rewind(vm, &d->snap) == 0;

    /* Explore. */
    struct ex_analysis a;
    bool analysed = false;
    struct ex_rng rng;
    ex_rng_seed(&rng, cfg.seed ^ ex_hash_mix(round_no));
    if (ok && !res[0].ended) {
        char why[160];
        if (ex_analyze(&res[0].trace, &a, why, sizeof why) == EX_OK) {
            analysed = true;
            struct ex_params p = cfg.params;
            ex_params_sanitize(&p);
            if (ex_generate(cfg.strategy, &a, &p, &rng, &ss) < 0)
                ss.n = 0;
            /* Past its segments, every other simulation interleaves as finely as it
             * can (round-robin, one cue point a turn), the others keep the strategy's
             * `continue` (the running thread runs on). Fine interleaving shows an
             * atomicity violation's consequences within the fragment (circle: 11 of 12
             * runs failed, against 2 of 12 with `continue` alone), but an order bug that
             * needs one thread to run far ahead (race-lock-x) wants `continue`. */
            for (size_t i = 1; i < ss.n; i += 2) {
                ss.v[i].policy = EX_DEFAULT_ROUNDROBIN;
                ss.v[i].quantum = 1;
            }
        } else {
            jx_err("round %llu: recorded trace not usable: %s", (unsigned long long)round_no, why);
        }
    }
    uint64_t t4 = mono_ns();

    /* Simulate: the program's VM and the workers work off one batch together. */
    int nsim = 0;
    uint64_t ns_sync = 0;
    if (ok)
        nsim = simulate(d, &cfg, &ss, k, want, vtime, res, &ns_sync, &ok);
    int on_workers = 0;
    for (int i = 1; i <= nsim; i++)
        on_workers += res[i].vm_id != 0;
    uint64_t t5 = mono_ns();

    /* Score: the recording competes too (a crash in it is a bug like any other). */
    int best = 0;
    if (ok) {
        struct ex_baseline base;
        bool have_base = analysed && ex_baseline_build(&base, &a, NULL) == 0;
        struct ex_score *sc = calloc((size_t)nsim + 1, sizeof *sc);
        for (int i = 0; sc && i <= nsim; i++) {
            struct sim_result *r = &res[i];
            if (have_base && i > 0)
                ex_score_simulation(&base, &r->trace, r->outcome, &d->cov, &r->score);
            else {
                memset(&r->score, 0, sizeof r->score);
                r->score.outcome = (uint8_t)r->outcome;
                r->score.bug = ex_outcome_is_bug(r->outcome);
                r->score.rank = r->score.bug ? EX_SCORE_BUG : 0;
            }
            sc[i] = r->score;
        }
        if (sc)
            best = (int)ex_select_best(sc, (size_t)nsim + 1, &rng);
        free(sc);
        if (have_base)
            ex_baseline_free(&base);
        for (int i = 0; i <= nsim; i++)
            ex_coverage_add_trace(&d->cov, &res[i].trace);
    }
    uint64_t t6 = mono_ns();

    /* Retire. */
    struct sim_result *w = &res[best];
    bool bug = ok && w->score.bug;
    bool retire = ok && w->score.rank > 0;
    uint64_t divergences = 0;
    if (ok && bug) {
        char what[400];
        describe_outcome(w, what, sizeof what);
        notable(d, "bug", "round %llu: simulation %d/%d %s -> retired", (unsigned long long)round_no,
                best, nsim, what);
    } else if (ok && retire && cfg.verbose) {
        notable(d, "retire", "round %llu: simulation %d/%d scored %llu (races made adjacent %u, "
                "unserializable %u, new writers %u, novel pairs %u) -> retired",
                (unsigned long long)round_no, best, nsim, (unsigned long long)w->score.suspicion,
                w->score.races_adjacent, w->score.avio_new, w->score.new_writers,
                w->score.novel_pairs);
    }
    bool tail_crash = false;
    uint64_t tail_cues = 0;
    if (retire) {
        struct sim_result live;
        memset(&live, 0, sizeof live);
        ex_trace_init(&live.trace);
        /* Exactly the simulation's cue points: a simulation cut by the wall budget
         * stopped a thread mid-computation, which the replay need not repeat. Then, for
         * a simulation that did not end, the tail: the same schedule's default policy
         * goes on serialized, so a crash that the retired interleaving causes a little
         * later still happens at a known cue point of a known schedule, and the dump's
         * replay (the same schedule up to the same limit) reproduces it. */
        uint64_t exact = w->ended ? want : w->cues;
        uint64_t tail = w->ended ? 0 : cfg.tail_ns / SERIAL_CUE_NS;
        const struct ex_schedule *ws = best ? &ss.v[best - 1] : &rec_sched;
        sim_run_fragment_from(vm, ws, exact + tail, tail ? exact : 0, tail ? cfg.tail_wall_ns : 0,
                              vtime, true, &live);
        long diff = ex_trace_first_difference(&live.trace, &w->trace);
        bool same = diff < 0 || (size_t)diff >= w->trace.n; /* the simulation's part */
        if (!vm_over(vm)) {
            if (!same || live.cues < w->cues) {
                divergences++;
                notable(d, "divergence", "round %llu: the replay of simulation %d diverged at cue "
                        "point %ld (a bug in jinx: please report it)", (unsigned long long)round_no,
                        best, diff);
            }
            tail_cues = live.cues > w->cues ? live.cues - w->cues : 0;
            serial_fragment_end(vm);
        } else if (bug) {
            keep_retired(d, &cfg, round_no, best, nsim, ws, &res[0].trace, &live, w, exact + tail,
                         false);
        } else if (same && live.cues >= w->cues) {
            /* Past the simulation's end: the tail met the program's end. */
            tail_cues = live.cues - w->cues;
            if (ex_outcome_is_bug(sim_outcome_class(&vm->out, true))) {
                tail_crash = true;
                live.out = vm->out;
                keep_retired(d, &cfg, round_no, best, nsim, ws, &res[0].trace, &live, w,
                             exact + tail, true);
            }
        } else {
            divergences++; /* the simulation did not end there, the replay did */
            notable(d, "divergence", "round %llu: the replay of simulation %d ended the program "
                    "at cue point %llu (trace differs at %ld), the simulation ran on to cue point "
                    "%llu (a bug in jinx: please report it)", (unsigned long long)round_no, best,
                    (unsigned long long)live.cues, diff, (unsigned long long)w->cues);
        }
        ex_trace_free(&live.trace);
    } else if (ok) {
        /* Nothing worth retiring: free execution goes on from the snapshot. */
        pthread_mutex_lock(&vm->lock);
        vm->ser->on = false;
        vm->ser->limit = 0;
        pthread_mutex_unlock(&vm->lock);
    }
    uint64_t t7 = mono_ns();
    bool over = vm_over(vm);
    if (!over) {
        pthread_mutex_lock(&vm->lock);
        vm->ser->on = false;
        vm->ser->limit = 0;
        for (int i = 0; i < vm->nvcpus; i++)
            pthread_cond_broadcast(&vm->vcpus[i]->cv);
        pthread_mutex_unlock(&vm->lock);
        vm_resume(vm);
    }
    uint64_t t8 = mono_ns();

    pthread_mutex_lock(&d->mu);
    struct round_stats *st = &d->st;
    st->rounds++;
    st->simulations += (uint64_t)nsim;
    st->cues_total += res[0].cues;
    st->last_cues = res[0].cues;
    st->last_sims = (uint64_t)nsim;
    for (int i = 0; i <= nsim; i++)
        st->sim_bugs += res[i].score.bug;
    st->retired += retire && best > 0;
    st->divergences += divergences;
    st->tail_cues += tail_cues;
    st->tail_crashes += tail_crash;
    if (ok && w->score.rank > st->best_rank)
        st->best_rank = w->score.rank;
    if (bug)
        st->last_bug_round = round_no;
    st->ns_stop = t1 - t0;
    st->ns_snapshot = t2 - t1;
    st->ns_record = t3 - t2;
    st->ns_explore = t4 - t3;
    st->ns_simulate = t5 - t4;
    st->ns_score = t6 - t5;
    st->ns_retire = t7 - t6;
    st->ns_resume = t8 - t7;
    st->ns_round = t8 - t0;
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

    if (over && (bug || tail_crash))
        notable(d, "crash", "guest %s in real execution (round %llu, %s%s)",
                vm->out.kind == OUT_DEADLOCK ? "deadlocked" : "crashed",
                (unsigned long long)round_no,
                vm->out.kind == OUT_SIGNAL ? signal_name(vm->out.signal) : "deadlock",
                tail_crash ? ", in the serialized tail after the retired schedule" : "");
    uint64_t sim_cues = 0;
    for (int i = 1; i <= nsim; i++)
        sim_cues += res[i].cues;
    if (cfg.verbose)
        fprintf(stderr, "jinx: round %llu: %llu cue points, %d simulations, best %d, tail %llu "
                "cue points, %.2f ms (stop %.3f snapshot %.3f record %.3f explore %.3f simulate "
                "%.3f score %.3f retire %.3f resume %.3f ms; worker sync %.3f ms; %llu cue points "
                "a simulation, %d on workers)\n",
                (unsigned long long)round_no, (unsigned long long)res[0].cues, nsim, best,
                (unsigned long long)tail_cues, (t8 - t0) / 1e6, (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6,
                (t4 - t3) / 1e6, (t5 - t4) / 1e6, (t6 - t5) / 1e6, (t7 - t6) / 1e6,
                (t8 - t7) / 1e6, ns_sync / 1e6,
                (unsigned long long)(nsim ? sim_cues / (uint64_t)nsim : 0), on_workers);
    if (analysed)
        ex_analysis_free(&a);
    ex_schedule_set_free(&ss);
    ex_schedule_free(&rec_sched);
    for (int i = 0; i <= k; i++)
        ex_trace_free(&res[i].trace);
    free(res);
    return !over;
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
        if (next > now) {
            uint64_t wait = next - now;
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
        if (pthread_create(&d->thread, NULL, driver_main, d) != 0) {
            snprintf(err, errlen, "cannot start the round thread");
            ex_coverage_free(&d->cov);
            free(d);
            return -1;
        }
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
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
    vm->rounds = NULL;
}
