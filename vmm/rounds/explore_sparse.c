/* Sparse runs in whole-run exploration (explore_sparse.h). */
#include "rounds/explore_sparse.h"
#include "rounds/explore.h"
#include "kvm/vm.h"
#include "linux/vmlibs.h"
#include "sched/serialize.h"
#include <string.h>

void explore_sparse_init(struct explore_sparse *es, uint64_t traced_wall_ns)
{
    memset(es, 0, sizeof *es);
    ex_sparse_model_init(&es->model);
    ex_sparse_run_init(&es->run);
    ex_schedule_init(&es->plan);
    es->wall_ns = es->traced_wall_ns = traced_wall_ns;
}

void explore_sparse_free(struct explore_sparse *es)
{
    ex_sparse_model_free(&es->model);
    ex_sparse_run_free(&es->run);
    ex_schedule_free(&es->plan);
}

void explore_sparse_skip_runtimes(struct explore_sparse *es, struct vm *vm)
{
    if (es->skip_set)
        return;
    es->skip_set = true;
    uint64_t r[EX_SPARSE_MAX_SKIP][2];
    size_t n = vmlibs_sanitizer_text(vm, r, EX_SPARSE_MAX_SKIP / 4);
    es->skip_libs = (uint32_t)n;
    /* A runtime linked into the program (clang's, gcc's -static-libasan): by its symbols
     * (a few ranges: its objects lie together). The rest of the room is the C library's. */
    es->skip_program = (uint32_t)vmlibs_program_sanitizer_text(vm, r + n, EX_SPARSE_MAX_SKIP / 2 - n);
    n += es->skip_program;
    for (size_t i = 0; i < n; i++)
        ex_sparse_skip_code(&es->model, r[i][0], r[i][1]);
    /* ... and with it the C library's (libc, ld.so): in a sanitizer build those are
     * nearly all of the racy variables left (san_dfree_asan: 377 -> 8), the C library's
     * own synchronized state (its locks, thread start-up, the TCB), where a point shows
     * nothing the program can get wrong, and they drowned the program's own few. */
    if (n) {
        size_t k = vmlibs_c_library_text(vm, r, EX_SPARSE_MAX_SKIP - n);
        es->skip_libc = (uint32_t)k;
        for (size_t i = 0; i < k; i++)
            ex_sparse_skip_code(&es->model, r[i][0], r[i][1]);
    }
}

/* Whether most of t's memory cue points (EXPLORE_SPARSE_RUNTIME_MIN or more) were made by
 * the code sparse runs skip (the sanitizer runtimes': ex_sparse_skip_code). */
static bool runtime_bound(const struct explore_sparse *es, const struct ex_trace *t)
{
    const struct ex_sparse_model *m = &es->model;
    uint64_t mem = 0, rt = 0;
    for (size_t i = 0; m->nskip && i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        mem++;
        for (uint32_t k = 0; k < m->nskip; k++)
            if (e->rip >= m->skip[k][0] && e->rip < m->skip[k][1]) {
                rt++;
                break;
            }
    }
    return mem >= EXPLORE_SPARSE_RUNTIME_MIN && 2 * rt >= mem;
}

uint64_t explore_sparse_prefix_cues(const struct explore_sparse *es, bool *decider)
{
    *decider = false;
    if (es->on || es->off || es->only || es->probe)
        return 0;
    if (es->candidate) {
        *decider = true;
        return EXPLORE_SPARSE_PREFIX;
    }
    return !es->traced_runs ? EXPLORE_SPARSE_PREFIX : 0;
}

void explore_sparse_after_prefix(struct explore_sparse *es, const struct ex_trace *t,
                                 uint64_t cues, uint64_t cpu_ns, const struct ex_u64map *shared)
{
    ex_sparse_learn(&es->model, t, false, shared); /* no memory: fewer sites, still valid */
    es->cost_traced += cues;
    es->traced_runs++;
    if (es->candidate) {
        es->candidate = false;
        es->on = true;
        return;
    }
    es->prefixed = true;
    if (!es->probed) {
        es->probe = true;
        /* The run goes on past its prefix: a probe EXPLORE_SPARSE_PREFIX_GAIN times shorter
         * than the prefix is EXPLORE_SPARSE_GAIN times shorter than a run that makes twice
         * the prefix's cue points (a cut 2 s run made 10-12k on this host). */
        es->probe_ref = cues * EXPLORE_SPARSE_GAIN / EXPLORE_SPARSE_PREFIX_GAIN;
        es->probe_cpu_ref = cpu_ns;
        es->probe_sync_ref = 0;
        for (size_t i = 0; i < t->n; i++)
            es->probe_sync_ref += !ex_is_access(&t->ev[i]);
    }
}

void explore_sparse_after_decider_ended(struct explore_sparse *es, const struct ex_trace *t,
                                        uint64_t cues, const struct ex_u64map *shared)
{
    ex_sparse_learn(&es->model, t, true, shared);
    es->cost_traced += cues;
    es->traced_runs++;
    es->candidate = false;
    es->off = true;
}

void explore_sparse_after_traced(struct explore_sparse *es, const struct ex_trace *t,
                                 bool ended, uint64_t cues, const struct ex_u64map *shared)
{
    ex_sparse_learn(&es->model, t, ended, shared); /* no memory: fewer sites, still valid */
    es->traced_runs++;
    es->cost_traced += cues;
    es->traced_ended |= ended;
    es->long_runs += ended && cues >= EXPLORE_SPARSE_CUES;
    if (es->candidate) {
        es->candidate = false;
        if (ended && cues < EXPLORE_SPARSE_CUES)
            es->off = true; /* traced runs are short after all */
        else
            es->on = true;
    }
    if (es->on || es->off)
        return;
    if (runtime_bound(es, t) && ++es->runtime_runs >= EXPLORE_SPARSE_RUNTIME_RUNS) {
        es->on = es->runtime_bound = true; /* the runtime's bookkeeping: sparse runs skip it */
        es->probe = false;
        return;
    }
    if (es->long_runs >= EXPLORE_SPARSE_LONG)
        es->on = true;
    else if (!ended && !es->probed) {
        es->probe = true;
        es->probe_ref = cues;
    }
}

bool explore_sparse_take_over(struct explore_sparse *es)
{
    if (es->off)
        return false;
    es->on = es->only = true;
    es->probe = es->candidate = false;
    return true;
}

bool explore_sparse_next_is_sparse(const struct explore_sparse *es)
{
    uint64_t share = es->traced_ended ? 1 : EXPLORE_SPARSE_SHARE;
    return es->probe || (es->on && (es->only || es->cost_sparse <= share * es->cost_traced));
}

int explore_sparse_begin(struct explore_sparse *es, uint64_t seed)
{
    if (ex_sparse_begin(&es->run, &es->model, seed, es->index++, &es->plan) < 0)
        return -1;
    if (es->probe) {
        /* The probe measures what a sparse run of the program costs: PCT over its
         * syscalls alone. A point could lower a lock's holder, and the others' futex
         * round trips while it waits would make it long for the point's sake. */
        es->plan.npreempt = 0;
        ex_schedule_set_note(&es->plan, "sparse probe (pct over syscalls, no points; the "
                             "prefix: %llu cue points at syscalls, %.0f ms of CPU)",
                             (unsigned long long)es->probe_sync_ref, es->probe_cpu_ref / 1e6);
    }
    for (uint32_t i = 0; i < es->nyield; i++)
        ex_schedule_add_yield(&es->plan, es->yield[i]);
    es->sample = !es->probe && (es->sampled < EXPLORE_SAMPLE_FIRST ||
                                es->runs % EXPLORE_SAMPLE_EVERY == 0);
    return 0;
}

/* A run stopped with no cue point: its running thread spins (or computes) at rip. */
static void learn_spin(struct explore_sparse *es, struct vm *vm)
{
    if (!vm->ser->stopped || es->nyield >= EX_MAX_YIELDS)
        return;
    for (int i = 0; i < vm->nvcpus; i++) {
        const struct vcpu *v = vm->vcpus[i];
        if (!v->tid || v->tid != vm->ser->guard_turn || v->state == T_BLOCKED)
            continue;
        uint64_t rip = v->run->s.regs.regs.rip;
        if (!rip || rip > EX_MAX_PREEMPT_RIP || uva_in_agent(rip))
            return; /* in jinx's syscall entry: not a spin without syscalls */
        for (uint32_t k = 0; k < es->nyield; k++)
            if (es->yield[k] == rip)
                return;
        es->yield[es->nyield++] = rip;
        return;
    }
}

static int live_threads(const struct vm *vm)
{
    int n = 0;
    for (int i = 0; i < vm->nvcpus; i++)
        n += vm->vcpus[i]->tid && vm->vcpus[i]->state != T_FREE;
    return n;
}

uint64_t explore_sparse_budget(const struct explore_sparse *es)
{
    uint64_t hits = 0;
    for (uint32_t i = 0; i < es->plan.npreempt; i++)
        hits += es->plan.preempt[i].count;
    /* The probe must show a gain: a tenth of a traced run's budget is plenty to show it
     * in cue points; after a prefix, EXPLORE_SPARSE_PROBE_PREFIXES times the prefix's CPU
     * time. A sparse run makes a traced one's cue points at syscalls and yields and none
     * at memory accesses, so a whole sparse run that fits there is cheaper than the whole
     * traced run the prefix was cut from: a pipeline that yields at every full or empty
     * ring (pipe-publish: ~7000 yields a run, 0.9 s of CPU, where the prefix's 5000 cue
     * points took 0.5 s) was cut at one prefix's time and turned sparse runs off. */
    uint64_t base = es->wall_ns * (es->sample ? EXPLORE_SAMPLE_BUDGET : 1u);
    if (es->probe) {
        base /= EXPLORE_SPARSE_PROBE_DIV;
        if (EXPLORE_SPARSE_PROBE_PREFIXES * es->probe_cpu_ref > base)
            base = EXPLORE_SPARSE_PROBE_PREFIXES * es->probe_cpu_ref;
    }
    return base + hits * EXPLORE_SPARSE_HIT_NS;
}

void explore_sparse_learn_samples(struct explore_sparse *es, const struct ex_trace *samples)
{
    es->sampled++;
    for (size_t i = 0; i < samples->n; i++)
        es->sampled_accesses += ex_is_access(&samples->ev[i]);
    ex_sparse_learn(&es->model, samples, false, NULL); /* no memory: learnt less */
}

void explore_sparse_after(struct explore_sparse *es, struct vm *vm, bool ended, uint64_t cues,
                          uint64_t cpu_ns)
{
    const struct sparse *sp = &vm->ser->sparse;
    uint32_t hits[EX_MAX_PREEMPTS] = {0};
    for (uint32_t i = 0; i < sp->n && i < es->plan.npreempt && i < EX_MAX_PREEMPTS; i++)
        hits[i] = sp->pt[i].hits;
    if (!ended)
        learn_spin(es, vm);
    explore_sparse_after_counts(es, ended, vm->ser->stopped, ended ? 0 : live_threads(vm), cues,
                                sp->decisions, sp->hits, hits,
                                cpu_ns);
}

void explore_sparse_after_counts(struct explore_sparse *es, bool ended, bool stopped, int live,
                                 uint64_t cues, uint64_t decisions, uint64_t nhits,
                                 const uint32_t *hits, uint64_t cpu_ns)
{
    es->runs++;
    es->ended += ended;
    es->cues += cues;
    es->decisions += decisions;
    es->hits += nhits;
    es->points += es->plan.npreempt;
    es->cost_sparse += EXPLORE_SPARSE_RUN_COST + cues + nhits / 2;
    if (ended)
        ex_sparse_observe(&es->model, &es->run, &es->plan, hits); /* no memory: learnt less */
    if (ended && !es->sized) {
        /* The first run that ended sizes the budget of the others: a run that spins
         * (below) then costs a few of those, not the traced runs' budget. */
        uint64_t w = EXPLORE_SPARSE_WALL_FACTOR * cpu_ns;
        if (w < EXPLORE_SPARSE_MIN_WALL_NS)
            w = EXPLORE_SPARSE_MIN_WALL_NS;
        if (w < es->wall_ns)
            es->wall_ns = w;
        es->sized = true;
    }
    if (!ended && !stopped && cues >= EXPLORE_SPARSE_BUSY_CUES && es->sized &&
        2 * es->wall_ns <= es->traced_wall_ns)
        es->wall_ns *= 2; /* cut while making progress (yields, syscalls): more room */
    if (es->probe) {
        es->probe = false;
        es->probed = true;
        /* Far fewer cue points than the traced run, or fewer than the prefix made at
         * syscalls alone: that traced run spun through sched_yield loops (a spin
         * barrier, a pipeline's full or empty ring), where a sparse run hands over at
         * every yield, and it pays for the shared accesses between them too. A probe of
         * 150 threads makes more (hundreds of clones, exits and futexes) than the
         * prefix's hundred syscalls: those keep their traced runs. */
        if (ended && (cues * EXPLORE_SPARSE_GAIN <= es->probe_ref || cues < es->probe_sync_ref)) {
            es->candidate = true;
        } else if (ended && es->probe_cpu_ref && es->probe_sync_ref &&
                   es->probe_cpu_ref / es->probe_sync_ref * cues >
                       (uint64_t)EXPLORE_STRETCH * es->traced_wall_ns) {
            /* The whole program ran sparse, not with far fewer cue points than the prefix,
             * but a traced run of it would take the prefix's CPU time per syscall cue point
             * times the probe's cue points: past a stretched traced run's budget it cannot
             * end (pipe-publish: 69 syscalls in its prefix, 7045 in its probe, ~100 s), so
             * sparse runs take over now rather than after that run is cut. Otherwise (150
             * threads' clones, exits and joins: many-150-ticket's probe 600, its prefix
             * 128) the traced runs go on, stretched, and find those bugs; sparse runs
             * between them found none there nor in many-160-claim, and 1 to 1 after each
             * run that ended put many-64-max's sweep at schedule 42-48 instead of 4. */
            es->on = es->only = true;
        } else if (!ended) {
            es->off = true; /* long even sparse (or it spins): rounds, when traced runs give up */
            es->long_alone = live == 1; /* ... or at once: one thread, no spin */
        }
    }
    if (!es->ended && es->runs >= EXPLORE_SPARSE_FIRST_CUTS) {
        es->on = false; /* they all spin or outlast the budget: sparse runs do not fit */
        es->off = true;
    }
}
