/* Whole-run exploration (explore.h). */
#include "rounds/explore.h"
#include "rounds/explore_int.h"
#include "rounds/explore_replay.h"
#include "rounds/explore_sparse.h"
#include "rounds/explore_stress.h"
#include "rounds/explore_timed.h"
#include "rounds/explore_timers.h"
#include "rounds/explore_wall.h"
#include "rounds/simulation.h"
#include "kvm/snapshot.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "sched/crew.h"
#include "sched/serialize.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void explore_config_default(struct explore_config *c)
{
    memset(c, 0, sizeof *c);
    c->budget_ns = 30000000000ULL;
    c->run_cues = EXPLORE_RUN_CUES;
    c->run_wall_ns = EXPLORE_RUN_WALL_NS;
    c->strategy = EX_ONLINE_PORTFOLIO;
    ex_online_params_default(&c->params);
    c->seed = 1;
    round_config_default(&c->rounds);
}

/* The serializer's picker (sched/serialize.h): at every cue point of a run, the strategy chooses
 * among the enabled threads, spinners left out while others can go (as the cursor's
 * default policy does). Each waiting thread's trapped access (crew.h) is its known next
 * event. Caller holds vm->lock. */
static uint32_t pick(void *ctx, struct vm *vm, const struct ex_tidset *enabled,
                     const struct ex_tidset *avoid)
{
    struct explore_driver *d = ctx;
    struct ex_tidset buf;
    bool forced;
    enabled = explore_timers_pick(&d->timers, vm, enabled, avoid, &buf, &forced,
                                  d->run_sparse ? 0 : ex_online_following(&d->online));
    if (forced)
        avoid = NULL; /* the thread whose timer ended early goes on: explore_timers.h */
    if (d->run_sparse) {
        const struct ex_trace *t = &vm->ser->trace;
        return ex_sparse_next(d->run_timed ? &d->timed.run : &d->sparse.run, enabled, avoid,
                              t->n ? &t->ev[t->n - 1] : NULL);
    }
    struct ex_tidset from = *enabled, yielded;
    /* A thread that just yielded lets the others go (explorer/yielders.h), as a spinner
     * does (avoid), unless nobody else can: in a learning prefix and in the traced runs
     * of a program whose prefix was cut. A short test's other runs choose as they always
     * did (a flip that follows its parent's choices diverged at one yield: order-done-flag). */
    const struct ex_trace *t = &vm->ser->trace;
    ex_yielders_observe(&d->yielders, t->n ? &t->ev[t->n - 1] : NULL);
    ex_yielders_avoid(&d->yielders, &yielded);
    if (!d->hand_over)
        ex_tidset_clear(&yielded);
    for (int k = 0; k < 2; k++) {
        const struct ex_tidset *out = k ? &yielded : avoid;
        if (!out)
            continue;
        struct ex_tidset rest = from;
        bool any = false;
        for (int i = 0; i < 4; i++) {
            rest.w[i] &= ~out->w[i];
            any |= rest.w[i] != 0;
        }
        if (any)
            from = rest;
    }
    size_t n = 0;
    for (int i = 0; i < vm->nvcpus && n < MAX_VCPUS; i++) {
        const struct vcpu *w = vm->vcpus[i];
        if (!w->tid || w->xid <= 0 || !ex_tidset_has(&from, (uint32_t)w->xid))
            continue;
        const struct crew_access *a = &vm->crew->acc[w->index];
        d->pend[n++] = (struct ex_pending){.tid = (uint32_t)w->xid, .kind = a->kind,
                                           .addr = a->addr, .size = a->size,
                                           .known = w->acc_pending, .rip = a->rip};
    }
    struct ex_view v = {.enabled = &from, .next = d->pend, .nnext = n, .step = 0};
    return ex_online_next(&d->online, &v);
}

/* The driver's picker for the next run (d), or none after it (NULL); a sparse run the
 * plan samples asks for it (sched/crew_sample.h). */
static void set_picker(struct vm *vm, struct explore_driver *d)
{
    pthread_mutex_lock(&vm->lock);
    vm->ser->pick = d ? pick : NULL;
    vm->ser->pick_ctx = d;
    vm->ser->sample_next = d && d->run_sparse && !d->run_timed && d->sparse.sample;
    pthread_mutex_unlock(&vm->lock);
}

static bool over(struct vm *vm) { return atomic_load(&vm->stopping); }

static void learn_page(void *ctx, uint64_t page)
{
    struct explore_driver *d = ctx;
    if (d->learnt.n < EX_MAX_SHARED_PAGES) /* a bound the schedule format can carry */
        ex_u64map_put(&d->learnt, page, 1, NULL); /* no memory: learnt later, or never */
}

/* The next run pre-shares every page an earlier run shared: a page is shared only from its
 * second thread's first touch on, so in the run that learnt it the first toucher's accesses
 * before that (a store and the store that ends its window, the load and store of a lost
 * update) were no cue points and could never be separated. Without memory the previous set
 * stays, which is still a valid run. */
static void preshare_learnt(struct explore_driver *d)
{
    /* Those the strategy's history learnt (a lane's own for "lanes": online.h). */
    size_t need = d->hist.pages.n;
    if (need > d->cappreshare) {
        uint64_t *nv = realloc(d->preshare, need * sizeof *nv);
        if (nv) {
            d->preshare = nv;
            d->cappreshare = need;
        }
    }
    if (need <= d->cappreshare)
        d->npreshare = ex_online_pages(&d->online, &d->hist, d->preshare, d->cappreshare);
    if (crew_preshare(d->vm, d->preshare, d->npreshare) < 0)
        d->npreshare = 0; /* the crew's set is empty then: say so in the schedule */
}

/* Waits for the stop at the first thread creation (sched/serialize.h's stop_at_clone). False if
 * the program ended first: nothing concurrent to explore. */
static bool wait_first_clone(struct vm *vm)
{
    pthread_mutex_lock(&vm->lock);
    while (!over(vm) && vm->ser->current >= 0)
        pthread_cond_wait(&vm->done_cv, &vm->lock);
    pthread_mutex_unlock(&vm->lock);
    if (over(vm))
        return false;
    vm_pause(vm);
    if (over(vm)) {
        vm_resume(vm);
        return false;
    }
    return true;
}

static void note_run(struct explore_driver *d, uint64_t i, const struct sim_result *r,
                     uint64_t wall_ns, uint64_t cpu_ns_used)
{
    if (d->run_sparse) {
        d->st.schedules = i + 1;
        d->st.cut += !r->ended;
        d->st.cues_total += r->cues;
        d->st.sparse++;
        d->st.sparse_cut += !r->ended;
        d->st.sparse_cues += r->cues;
        d->st.sparse_fired += d->vm->ser->sparse.decisions;
        d->st.sparse_hits += d->vm->ser->sparse.hits;
        if (d->cfg.verbose)
            fprintf(stderr, "jinx-vmm: explore: run %llu (sparse): %s, %llu cue points (%llu "
                    "decisions of %u points, %llu counted hits, %llu yields) in %.1f ms (%.1f ms CPU) (%s)\n",
                    (unsigned long long)(i + 1),
                    r->ended ? ex_outcome_name(r->outcome) : "cut by the run budget",
                    (unsigned long long)r->cues, (unsigned long long)d->vm->ser->sparse.decisions,
                    d->sparse.plan.npreempt, (unsigned long long)d->vm->ser->sparse.hits,
                    (unsigned long long)d->vm->ser->sparse.yields,
                    wall_ns / 1e6, cpu_ns_used / 1e6, d->sparse.plan.note);
        if (d->cfg.verbose && r->ended && ex_outcome_is_bug(r->outcome)) {
            char sym[EX_SYM_LEN];
            vm_symbolize(d->vm, r->out.rip, sym, sizeof sym);
            fprintf(stderr, "jinx-vmm: explore:   outcome: %s (signal %d, vector %d) in thread %d "
                    "at 0x%llx %s\n", r->out.detail, r->out.signal, r->out.vector, r->out.thread,
                    (unsigned long long)r->out.rip, sym);
        }
        for (uint32_t k = 0; d->cfg.verbose && k < d->sparse.plan.npreempt; k++) {
            const struct ex_preempt *p = &d->sparse.plan.preempt[k];
            char sym[EX_SYM_LEN];
            vm_symbolize(d->vm, p->rip, sym, sizeof sym);
            fprintf(stderr, "jinx-vmm: explore:   point: T%u%s before its execution %u of 0x%llx %s\n",
                    p->thread, p->thread ? "" : " (any thread)", p->count,
                    (unsigned long long)p->rip, sym);
        }
        return;
    }
    d->st.schedules = i + 1;
    d->st.cues_total += r->cues;
    if (r->cues > d->st.cues_max)
        d->st.cues_max = r->cues;
    d->st.cut += !r->ended;
    if (d->cfg.verbose) {
        char note[160];
        ex_online_describe(&d->online, note, sizeof note);
        fprintf(stderr, "jinx-vmm: explore: run %llu: %s, %llu cue points in %.1f ms (%.1f ms "
                        "CPU) (%s)\n",
                (unsigned long long)(i + 1),
                r->ended ? ex_outcome_name(r->outcome)
                : d->prefix_run ? "learning prefix, cut at its cue-point cap"
                : "cut by the run budget",
                (unsigned long long)r->cues, wall_ns / 1e6, cpu_ns_used / 1e6, note);
    }
}

/* A stress run if one is due (explore_stress.h): 0 go on, 1 stop exploring (the program
 * met a bug for real, or the budget is spent), -1 the VM failed. One between two
 * controlled runs (ahead_ns 0), not as many as would restore their quarter of the time
 * after a long controlled run: that catch-up made stress runs meet most compute-corpus
 * bugs first (28 of 36 runs found against 23, but 2 dumps of 28 replayed against 17 of
 * 23), and the g++ test binary's bug, found by a flip whose dump replays, came from a
 * stress run whose dump does not (dynbin.sh). A bug's dump that replays is what jinx is
 * for. Before a traced run expected to take ahead_ns (stretched after a cut: it will
 * likely be cut too, and find nothing), as many as their share of it: controlled runs
 * that slow do not find the bug first, and stress runs must not wait for them. */
static int stress_if_due(struct explore_driver *d, uint64_t t0, uint64_t deadline,
                         uint64_t ahead_ns)
{
    for (bool first = true; explore_stress_due(&d->stress, mono_ns() - t0, ahead_ns) &&
                            (first || ahead_ns);
         first = false) {
        uint64_t cut0 = d->stress.cut;
        int got = explore_stress_run(&d->stress, d->vm, &d->snap, deadline);
        if (d->cfg.verbose && got >= 0)
            fprintf(stderr, "jinx-vmm: explore: stress run %llu (free, from the snapshot): %s\n",
                    (unsigned long long)d->stress.runs,
                    got ? "the program met a bug: the VM ends in it"
                    : d->stress.cut > cut0 ? "stopped at its budget" : "ended well");
        if (got < 0)
            return -1;
        if (got > 0 || mono_ns() >= deadline)
            return 1;
    }
    return 0;
}

/* A timed run if one is due (explore_timed.h), between controlled runs i - 1 and i: 0
 * none was due, 3 it ran and ended well or was cut, 1 it ended in a bug (or met a jinx
 * limit: *bug_sched and *bug as explore_keep_bug_run sets them), 2 stop exploring (the
 * VM's end, the budget's), -1 the restore failed. */
static int timed_if_due(struct explore_driver *d, uint64_t i, uint64_t t0, uint64_t deadline,
                        struct sim_result *r, struct ex_schedule *bug_sched,
                        struct sim_result *bug)
{
    struct vm *vm = d->vm;
    if (!explore_timed_due(&d->timed, mono_ns() - t0) ||
        explore_timed_begin(&d->timed, d->cfg.seed, d->sparse.yield, d->sparse.nyield) < 0)
        return 0;
    pthread_mutex_lock(&vm->lock);
    sparse_set_timed_locked(vm, d->timed.at, d->timed.nat); /* its next fragment's */
    pthread_mutex_unlock(&vm->lock);
    d->run_sparse = d->run_timed = true;
    explore_timers_begin(&d->timers, true, d->cfg.seed, EXPLORE_TIMED_INDEX + d->timed.runs);
    set_picker(vm, d);
    unsigned lim0 = atomic_load(&vm->sandbox_limits);
    uint64_t t_run = mono_ns();
    sim_run_fragment(vm, &d->timed.plan, d->cfg.run_cues, explore_timed_budget(&d->timed),
                     d->snap.vtime, false, r);
    t_run = mono_ns() - t_run;
    set_picker(vm, NULL);
    int got = 3;
    if (over(vm) || (!r->ended && mono_ns() >= deadline)) {
        got = over(vm) || sim_rewind(vm, &d->snap) == 0 ? 2 : -1;
    } else {
        r->outcome = explore_run_outcome(&r->out, r->ended);
        uint32_t ended = explore_timers_after(&d->timers, vm, &d->st.timers_early);
        uint32_t made = vm->ser->sparse.ntimed;
        explore_timed_after(&d->timed, r->ended, t_run, made);
        if (d->cfg.verbose)
            fprintf(stderr, "jinx-vmm: explore: timed run %llu: %s, %llu cue points, %u of %u "
                    "timed decisions, in %.1f ms (%s)\n", (unsigned long long)d->timed.runs,
                    r->ended ? ex_outcome_name(r->outcome) : "cut by its budget",
                    (unsigned long long)r->cues, made, d->timed.nat, t_run / 1e6,
                    d->timed.plan.note);
        bool limited = atomic_load(&vm->sandbox_limits) != lim0;
        if (limited && r->ended)
            d->st.limited = true;
        if (r->ended && (ex_outcome_is_bug(r->outcome) || limited) &&
            explore_keep_bug_run(d, i, r, true, ended, t_run, bug_sched, bug))
            got = 1;
        if (sim_rewind(vm, &d->snap) < 0)
            got = -1;
    }
    d->run_sparse = d->run_timed = false;
    return got;
}

/* Controlled runs are slow: stress runs begin (if they did not), and timed runs too when
 * a traced run could not end (cut, or a learning prefix stopped at its cap). A program
 * whose traced runs end, however long, keeps its seeds' controlled finds (when timed runs
 * also began after 5 s, as stress runs do, and took three quarters of the time, a
 * campaign check's tasks found the glibc circle's bug in 3 of its 4 seeds, not 4). */
static void runs_are_slow(struct explore_driver *d, uint64_t elapsed_ns, bool ended)
{
    explore_stress_start(&d->stress, elapsed_ns);
    if (!ended)
        explore_timed_start(&d->timed, elapsed_ns);
}

/* The runs due between controlled runs i - 1 and i (timed runs, then a stress run): 0 go
 * on, 1 stop exploring, 2 a timed run ended in a bug (*bug_sched, *bug), 3 timed runs
 * alone (--explore-strategy timed) go on, -1 the VM failed. */
static int between_runs(struct explore_driver *d, uint64_t i, uint64_t t0, uint64_t deadline,
                        struct sim_result *r, struct ex_schedule *bug_sched,
                        struct sim_result *bug)
{
    /* Timed runs first, catching up on their share (a controlled run may have taken a
     * second): a bug they meet has a dump that replays, a stress run's has not (when
     * the stress run came first, it met 15 of the compute corpus's 26 finds first, none
     * replayable). */
    int got;
    do
        got = timed_if_due(d, i, t0, deadline, r, bug_sched, bug);
    while (got == 3 && !d->cfg.timed_only && mono_ns() < deadline);
    if ((got == 0 || got == 3) && d->cfg.timed_only) {
        d->st.gave_up = d->timed.off; /* they do not fit: rounds, if anything */
        return d->timed.off ? 1 : 3;
    }
    if (got != 0 && got != 3)
        return got == 1 ? 2 : got == 2 ? 1 : got;
    return stress_if_due(d, t0, deadline, 0);
}

/* What run i (r: its trace and outcome; t_run, cpu_run: its wall and CPU time) teaches:
 * a sparse run its points' counts, a traced run the shared pages, racy variables and
 * sites the next schedules draw from. A sparse candidate's deciding traced run gets the
 * usual budget (*wall). */
static void learn_from_run(struct explore_driver *d, uint64_t i, struct sim_result *r,
                           uint64_t t_run, uint64_t cpu_run, uint64_t *wall, bool prefix,
                           bool decider_ended)
{
    struct vm *vm = d->vm;
    if (d->run_sparse) {
        note_run(d, i, r, t_run, cpu_run);
        if (vm->ser->sampling)
            explore_sparse_learn_samples(&d->sparse, &vm->ser->samples);
        explore_sparse_after(&d->sparse, vm, r->ended, r->cues, cpu_run);
        d->sparse_ended |= r->ended;
        if (d->sparse.candidate)
            *wall = d->cfg.run_wall_ns;
        return;
    }
    ex_u64map_clear(&d->learnt);
    crew_each_shared(vm, learn_page, d);
    /* No memory: fewer flips or pages, still valid. */
    ex_online_learn(&d->hist, &d->online, &r->trace, r->outcome, &d->learnt);
    note_run(d, i, r, t_run, cpu_run);
    d->traced++;
    if (!d->sparse.skip_set) {
        explore_sparse_skip_runtimes(&d->sparse, vm); /* a sanitizer's races: not points */
        if (d->cfg.verbose && d->sparse.model.nskip)
            fprintf(stderr, "jinx-vmm: explore: sparse points skip %u code ranges: %u of "
                            "shared sanitizer runtimes, %u of a runtime linked into the "
                            "program, %u of the C library\n",
                    d->sparse.model.nskip, d->sparse.skip_libs, d->sparse.skip_program,
                    d->sparse.skip_libc);
    }
    if (prefix)
        explore_sparse_after_prefix(&d->sparse, &r->trace, r->cues, cpu_run, &d->learnt);
    else if (decider_ended)
        explore_sparse_after_decider_ended(&d->sparse, &r->trace, r->cues, &d->learnt);
    else
        explore_sparse_after_traced(&d->sparse, &r->trace, r->ended, r->cues, &d->learnt);
}

/* The end of the exploration loop: its statistics, and back to wall-time budgets. A
 * budget that ran out before any whole run ended (`decided` false: no bug, no run ended)
 * says whole runs are too long for it: rounds take over, as when they gave up. */
static void close_exploration(struct explore_driver *d, bool decided, uint64_t t0,
                              uint64_t deadline)
{
    struct vm *vm = d->vm;
    if (!decided && !d->st.gave_up && !over(vm) && mono_ns() >= deadline)
        d->st.gave_up = true;
    d->st.ns_explore = mono_ns() - t0;
    d->st.stress = d->stress.runs;
    d->st.stress_cut = d->stress.cut;
    d->st.stress_ns = d->stress.ns;
    d->st.timed = d->timed.runs;
    d->st.timed_cut = d->timed.cut;
    d->st.timed_ns = d->timed.ns;
    d->st.timed_decisions = d->timed.decisions;
    d->st.sampled = d->sparse.sampled;
    d->st.sampled_accesses = d->sparse.sampled_accesses;
    vm->ser->budget_cpu = false; /* the live replay and free execution: wall time */
    vm->ser->wall_deadline = 0;
}

/* Before a traced run: its strategy (traced runs keep their sequence, sparse or not), the
 * yielders, the pages it pre-shares; and one stretched after a cut run (`stretched`) will
 * likely take all of its budget `wall`: stress runs take their share of it first
 * (explore_stress.h). stress_if_due's result. */
static int begin_traced(struct explore_driver *d, bool capped, bool stretched, uint64_t t0,
                        uint64_t deadline, uint64_t wall)
{
    ex_online_begin(&d->online, d->cfg.strategy, &d->cfg.params, &d->hist, d->cfg.seed,
                    d->traced);
    ex_yielders_init(&d->yielders);
    d->hand_over = capped || d->sparse.prefixed;
    preshare_learnt(d);
    return stretched ? stress_if_due(d, t0, deadline, wall) : 0;
}

static void explore(struct explore_driver *d)
{
    struct vm *vm = d->vm;
    char err[256];
    struct ex_schedule none, bug_sched;
    ex_schedule_init(&none);
    ex_schedule_init(&bug_sched);
    struct sim_result r = {0}, bug = {0};
    ex_trace_init(&r.trace);
    ex_trace_init(&bug.trace);
    struct ex_trace reference; /* the first run that did not fail, for the dump */
    ex_trace_init(&reference);
    bool have_ref = false, found = false, stretched = false, sized = false, ended_any = false;
    uint64_t wall = d->cfg.run_wall_ns;
    uint64_t t0 = mono_ns(), deadline = t0 + d->cfg.budget_ns;
    vm->ser->budget_cpu = true; /* a run's budget is CPU time: serialize.h */
    vm->ser->wall_deadline = deadline; /* ... and none outlasts the exploration's */
    for (uint64_t i = 0; !over(vm); i++) {
        if ((d->cfg.max_schedules && i >= d->cfg.max_schedules) || mono_ns() >= deadline)
            break;
        int between = between_runs(d, i, t0, deadline, &r, &bug_sched, &bug);
        if (between < 0)
            goto out;
        found = between == 2;
        if (between == 1 || found)
            break;
        if (between == 3)
            continue; /* --explore-strategy timed: nothing else */
        bool sp = explore_sparse_next_is_sparse(&d->sparse) &&
                  explore_sparse_begin(&d->sparse, d->cfg.seed) == 0;
        d->run_sparse = sp;
        explore_timers_begin(&d->timers, sp, d->cfg.seed, i);
        /* A learning prefix (explore_sparse.h): a traced run capped in cue points, and
         * cut there as a run is by its CPU budget (the first ones were cut after 2 s of
         * CPU, 10-12k cue points here: a prefix costs half of that, and the same on a
         * loaded host as on an idle one). */
        bool decider = false;
        uint64_t cap = d->cfg.run_cues, pcap = sp ? 0 : explore_sparse_prefix_cues(&d->sparse,
                                                                                 &decider);
        bool capped = pcap && pcap < cap;
        if (capped)
            cap = pcap;
        int pre = sp ? 0 : begin_traced(d, capped, !capped && stretched && !sized, t0, deadline,
                                        wall);
        if (pre < 0)
            goto out;
        if (pre > 0)
            break;
        set_picker(vm, d);
        unsigned lim0 = atomic_load(&vm->sandbox_limits);
        /* The process's CPU time, every vCPU's guest and host time: explore_wall.h. */
        uint64_t t_run = mono_ns(), cpu_run = process_cpu_ns();
        sim_run_fragment(vm, sp ? &d->sparse.plan : &none, cap,
                         sp ? explore_sparse_budget(&d->sparse) : wall, d->snap.vtime, false, &r);
        t_run = mono_ns() - t_run;
        cpu_run = process_cpu_ns() - cpu_run;
        set_picker(vm, NULL);
        if (over(vm)) {
            /* A real end (timeout, interrupt): that is the outcome. */
            if (atomic_load(&vm->sandbox_limits) != lim0)
                explore_note_unjudged_limits(d, i + 1);
            break;
        }
        if (!r.ended && mono_ns() >= deadline) {
            /* Stopped by the exploration's end (wall_deadline), not by its own budget:
             * no schedule to count or learn from. */
            if (sim_rewind(vm, &d->snap) < 0)
                goto out;
            break;
        }
        r.outcome = explore_run_outcome(&r.out, r.ended);
        uint32_t ended = explore_timers_after(&d->timers, vm, &d->st.timers_early);
        /* Stopped at its cap (or the deciding one cut by its budget: long too), or the
         * deciding one ended below it. */
        bool prefix = capped && !r.ended && (r.cues >= cap || decider);
        bool decider_ended = capped && decider && r.ended;
        d->prefix_run = prefix;
        learn_from_run(d, i, &r, t_run, cpu_run, &wall, prefix, decider_ended);
        if (!sp && (!r.ended || r.cues >= EXPLORE_SPARSE_CUES))
            runs_are_slow(d, mono_ns() - t0, r.ended);
        if (d->cfg.verbose)
            explore_timers_print(vm, stderr);
        /* A run that met one of jinx's limits (the thread cap) cannot be judged: it is
         * replayed live like a bug, so that the live program meets the limit, the run's
         * report lists it, and jinx test says "could not test". */
        bool limited = atomic_load(&vm->sandbox_limits) != lim0;
        if (limited && r.ended)
            d->st.limited = true;
        if (r.ended && (ex_outcome_is_bug(r.outcome) || limited))
            found = explore_keep_bug_run(d, i, &r, sp, ended, t_run, &bug_sched, &bug);
        else if (r.ended && !have_ref)
            have_ref = ex_trace_copy(&reference, &r.trace) == 0;
        if (sim_rewind(vm, &d->snap) < 0)
            goto out;
        if (found)
            break;
        if (sp) {
            if ((d->sparse.off && d->sparse.only) || (d->sparse.long_alone && !ended_any)) {
                d->st.gave_up = true; /* neither kind of run fits: rounds, if anything */
                break;
            }
            continue;
        }
        ended_any |= r.ended;
        if (!r.ended && !ended_any && d->traced <= EXPLORE_FIRST_CUTS) {
            if (!(r.cut || prefix) || d->traced == EXPLORE_FIRST_CUTS) {
                if (explore_sparse_take_over(&d->sparse))
                    continue; /* traced runs do not fit: sparse ones may */
                d->st.gave_up = true; /* not a short test: rounds, if anything */
                break;
            }
            /* An early run outlasted its budget: a program with many cue points
             * (150 threads take 10-40k, at a few hundred microseconds each on a loaded
             * host) may still end; try with EXPLORE_STRETCH times the time, or half of the
             * budget left if the run was busy with cue points (explore_wall.h). One slow run
             * is no verdict: the schedules differ, and so does the host's load. */
            stretched = true;
            uint64_t now = mono_ns();
            wall = explore_wall_after_cut(d->cfg.run_wall_ns, EXPLORE_STRETCH, r.cues, cpu_run,
                                          deadline > now ? deadline - now : 0);
        } else if (r.ended && stretched && !sized) {
            /* Runs take about this long (CPU time, the budget's clock): allow twice
             * that from now on. */
            sized = true;
            wall = explore_wall_sized(d->cfg.run_wall_ns, wall, cpu_run);
        }
    }
    close_exploration(d, found || ended_any || d->sparse_ended, t0, deadline);
    if (over(vm))
        goto out;
    if (found) {
        explore_reproduce(d, &bug_sched, &reference, &bug); /* with the bug run's pre-shared pages */
        crew_preshare(vm, NULL, 0);
    } else {
        crew_preshare(vm, NULL, 0); /* free execution and rounds share pages as ever */
        serialize_free_run(vm); /* on from the snapshot, to the program's own end */
        if (d->st.gave_up && d->cfg.then_rounds &&
            round_attach(vm, &d->cfg.rounds, err, sizeof err) < 0)
            jx_err("explore: cannot hand over to rounds: %s", err);
    }
out:
    vm->ser->budget_cpu = false;
    vm->ser->wall_deadline = 0;
    ex_schedule_free(&none);
    ex_schedule_free(&bug_sched);
    ex_trace_free(&r.trace);
    ex_trace_free(&bug.trace);
    ex_trace_free(&reference);
}

static void *driver_main(void *arg)
{
    struct explore_driver *d = arg;
    struct vm *vm = d->vm;
    char err[256];
    if (!wait_first_clone(vm))
        return NULL; /* no thread was ever created: the run is the outcome */
    d->st.snapshot_cue = vm->ser->cues;
    crew_stop(vm);
    pthread_mutex_lock(&vm->lock);
    vm->ser->on = false;
    pthread_mutex_unlock(&vm->lock);
    if (snapshot_init(&d->snap, vm, err, sizeof err) < 0 ||
        snapshot_take(&d->snap, err, sizeof err) < 0) {
        jx_err("explore: cannot snapshot at the first thread creation: %s", err);
        serialize_fragment_begin(vm, 0); /* go on serialized, as without --explore */
        vm->ser->limit = 0;
        vm_resume(vm);
        return NULL;
    }
    d->have_snap = true;
    d->st.snapshot_taken = true;
    if (d->cfg.verbose)
        fprintf(stderr, "jinx-vmm: explore: snapshot at the first thread creation (cue point "
                "%llu); exploring whole runs (%s)\n", (unsigned long long)d->st.snapshot_cue,
                ex_online_name(d->cfg.strategy));
    explore(d);
    return NULL;
}

int explore_start(struct vm *vm, const struct explore_config *c, char *err, size_t errlen)
{
    if (vm->explore) {
        snprintf(err, errlen, "exploration already started");
        return -1;
    }
    if (!vm->ser->on) {
        snprintf(err, errlen, "exploration needs serialized execution from boot");
        return -1;
    }
    struct explore_driver *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->vm = vm;
    d->cfg = *c;
    ex_online_params_sanitize(&d->cfg.params);
    if (!d->cfg.run_cues)
        d->cfg.run_cues = EXPLORE_RUN_CUES;
    if (!d->cfg.run_wall_ns)
        d->cfg.run_wall_ns = EXPLORE_RUN_WALL_NS;
    ex_online_init(&d->online);
    ex_history_init(&d->hist);
    ex_u64map_init(&d->learnt);
    explore_sparse_init(&d->sparse, d->cfg.run_wall_ns);
    explore_stress_init(&d->stress, d->cfg.run_wall_ns);
    explore_timed_init(&d->timed, d->cfg.run_wall_ns, d->cfg.seed);
    if (d->cfg.timed_only)
        explore_timed_start(&d->timed, 0);
    d->timed.always = d->cfg.timed_only;
    explore_timers_init(&d->timers, d->cfg.timers_strict);
    d->stress.off = d->cfg.no_stress || d->cfg.timed_only || d->cfg.replayable_only;
    /* The host's timing decides both. A timed run's bug replays only where its decisions
     * are found again by counting executions (187 us each here): seqlock-plain's, at the
     * writer's ~158 000th, never within the replay's bound, so --replayable-only has none. */
    d->timed.off = (d->cfg.no_stress && !d->cfg.timed_only) || d->cfg.replayable_only;
    snprintf(d->st.strategy, sizeof d->st.strategy, "%s", ex_online_name(d->cfg.strategy));
    pthread_mutex_lock(&vm->lock);
    vm->ser->stop_at_clone = true;
    pthread_mutex_unlock(&vm->lock);
    if (pthread_create(&d->thread, NULL, driver_main, d) != 0) {
        snprintf(err, errlen, "cannot start the exploration thread");
        ex_online_free(&d->online);
        ex_history_free(&d->hist);
        free(d);
        return -1;
    }
    d->started = true;
    vm->explore = d;
    return 0;
}

static void join(struct explore_driver *d)
{
    if (d->started) {
        pthread_join(d->thread, NULL);
        d->started = false;
    }
}

void explore_stats(struct vm *vm, struct explore_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!vm->explore)
        return;
    join(vm->explore);
    *out = vm->explore->st;
}

const struct round_retired *explore_retired(struct vm *vm)
{
    if (!vm->explore)
        return NULL;
    join(vm->explore);
    return vm->explore->have_retired ? &vm->explore->retired : NULL;
}

void explore_shutdown(struct vm *vm)
{
    struct explore_driver *d = vm->explore;
    if (!d)
        return;
    join(d);
    if (d->have_retired) {
        ex_schedule_free(&d->retired.sched);
        ex_trace_free(&d->retired.recorded);
        ex_trace_free(&d->retired.retired);
    }
    if (d->have_snap)
        snapshot_free(&d->snap);
    ex_online_free(&d->online);
    ex_history_free(&d->hist);
    ex_u64map_free(&d->learnt);
    explore_sparse_free(&d->sparse);
    explore_timed_free(&d->timed);
    free(d->preshare);
    free(d);
    vm->explore = NULL;
}
