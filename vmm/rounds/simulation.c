/* Simulations from a snapshot (simulation.h). */
#include "rounds/simulation.h"
#include "kvm/snapshot.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "sched/crew.h"
#include "sched/serialize.h"
#include <signal.h>
#include <string.h>

enum ex_outcome sim_outcome_class(const struct outcome *o, bool ended)
{
    if (!ended)
        return EX_OUTCOME_NORMAL;
    switch (o->kind) {
    case OUT_SIGNAL: return o->signal == SIGABRT ? EX_OUTCOME_ASSERT : EX_OUTCOME_CRASH;
    case OUT_DEADLOCK: return EX_OUTCOME_DEADLOCK;
    default: return EX_OUTCOME_NORMAL;
    }
}

void sim_run_fragment(struct vm *vm, const struct ex_schedule *s, uint64_t want, uint64_t wall,
                      uint64_t vtime, bool live, struct sim_result *r)
{
    sim_run_fragment_from(vm, s, want, 0, wall, vtime, live, r);
}

void sim_run_fragment_from(struct vm *vm, const struct ex_schedule *s, uint64_t want,
                           uint64_t exact, uint64_t wall, uint64_t vtime, bool live,
                           struct sim_result *r)
{
    serialize_set_schedule(vm, s);
    pthread_mutex_lock(&vm->lock);
    vm->sandbox = !live;
    vm->sim_ended = false;
    pthread_mutex_unlock(&vm->lock);
    serialize_fragment_begin(vm, vtime);
    r->cut = serialize_fragment_run_from(vm, want, exact, wall);
    pthread_mutex_lock(&vm->lock);
    r->ended = vm->sim_ended;
    if (r->ended)
        r->out = vm->sim_out;
    vm->sandbox = false;
    vm->sim_ended = false;
    r->cues = vm->ser->cues;
    r->stopped = vm->ser->stopped;
    pthread_mutex_unlock(&vm->lock);
    r->outcome = sim_outcome_class(&r->out, r->ended);
    ex_trace_free(&r->trace);
    ex_trace_init(&r->trace);
    ex_trace_copy(&r->trace, &vm->ser->trace);
}

void sim_result_init(struct sim_result *r)
{
    memset(r, 0, sizeof *r);
    ex_trace_init(&r->trace);
    ex_schedule_init(&r->sched);
}

void sim_result_free(struct sim_result *r)
{
    ex_trace_free(&r->trace);
    ex_schedule_free(&r->sched);
}

/* The serializer's picker during a sparse simulation: PCT over decisions
 * (explorer/sparse.h). Caller holds vm->lock. */
static uint32_t sparse_pick(void *ctx, struct vm *vm, const struct ex_tidset *enabled,
                            const struct ex_tidset *avoid)
{
    const struct ex_trace *t = &vm->ser->trace;
    return ex_sparse_next(ctx, enabled, avoid, t->n ? &t->ev[t->n - 1] : NULL);
}

void sim_run_sparse(struct vm *vm, const struct ex_sparse_model *m, uint64_t seed,
                    uint64_t index, uint64_t want, uint64_t wall, uint64_t vtime,
                    struct sim_result *r)
{
    struct ex_sparse_run run;
    struct ex_schedule plan;
    ex_sparse_run_init(&run);
    ex_schedule_init(&plan);
    r->sparse = true;
    ex_schedule_free(&r->sched);
    ex_schedule_init(&r->sched);
    if (ex_sparse_begin(&run, m, seed, index, &plan) < 0)
        ex_schedule_init(&plan); /* no memory: PCT over syscalls alone */
    pthread_mutex_lock(&vm->lock);
    vm->ser->pick = sparse_pick;
    vm->ser->pick_ctx = &run;
    vm->ser->hard_mult = 2;
    pthread_mutex_unlock(&vm->lock);
    sim_run_fragment(vm, &plan, want, wall, vtime, false, r);
    pthread_mutex_lock(&vm->lock);
    vm->ser->pick = NULL;
    vm->ser->pick_ctx = NULL;
    vm->ser->hard_mult = 0;
    r->fired = vm->ser->sparse.decisions;
    r->hits = vm->ser->sparse.hits;
    pthread_mutex_unlock(&vm->lock);
    if (ex_sparse_schedule(&run, &plan, &r->sched) < 0) {
        /* The choices were lost (no memory): the result cannot be replayed, so it must
         * not be retired (round.c scores it as nothing). */
        ex_schedule_free(&r->sched);
        ex_schedule_init(&r->sched);
        r->outcome = EX_OUTCOME_NORMAL;
        r->ended = false;
    } else {
        ex_schedule_set_note(&r->sched, "sparse simulation %llu (%s)",
                             (unsigned long long)index + 1, plan.note);
    }
    ex_schedule_free(&plan);
    ex_sparse_run_free(&run);
}

int sim_rewind(struct vm *vm, struct snapshot *snap)
{
    char err[256];
    crew_stop(vm);
    pthread_mutex_lock(&vm->lock);
    vm->ser->on = false;
    sparse_unplant_all_locked(vm);
    vm->ser->sparse.on = false; /* free execution (a stress run, the end) plants nothing */
    pthread_mutex_unlock(&vm->lock);
    if (snapshot_restore(snap, NULL, err, sizeof err) < 0) {
        jx_err("round: %s", err);
        return -1;
    }
    pthread_mutex_lock(&vm->lock);
    sparse_forget_steps_locked(vm);
    pthread_mutex_unlock(&vm->lock);
    return 0;
}

bool sim_same(const struct sim_result *a, const struct sim_result *b)
{
    if (a->cues != b->cues || a->ended != b->ended || a->outcome != b->outcome ||
        a->trace.n != b->trace.n || ex_trace_first_difference(&a->trace, &b->trace) >= 0)
        return false;
    if (!a->ended)
        return true;
    return a->out.kind == b->out.kind && a->out.signal == b->out.signal &&
           a->out.thread == b->out.thread && a->out.rip == b->out.rip &&
           a->out.status == b->out.status;
}

void sim_batch_run(struct sim_batch *b, size_t i, struct vm *vm)
{
    if (b->sched[i])
        sim_run_fragment(vm, b->sched[i], b->want, b->wall, b->vtime, false, &b->out[i]);
    else
        sim_run_sparse(vm, b->model, b->seed, i, b->want, b->sparse_wall, b->vtime, &b->out[i]);
}

int sim_batch_work(struct sim_batch *b, struct vm *vm, struct snapshot *snap, int vm_id)
{
    int ran = 0;
    for (;;) {
        size_t i = atomic_fetch_add(&b->next, 1);
        if (i >= b->n)
            return ran;
        if (atomic_load(&vm->stopping))
            return -1;
        uint64_t want = b->want, wall = b->wall;
        if (b->ref) {
            /* A fragment cut by the wall budget is its cue points' prefix: replay exactly
             * that many, with no budget (as the round's retirement does). */
            want = b->ref[i]->ended ? b->want : b->ref[i]->cues;
            wall = 0;
        }
        struct sim_result *r = &b->out[i];
        if (b->ref && !b->ref[i]->ended && b->ref[i]->cues == 0)
            continue; /* cut before its first cue point: no limit can stop a re-run there
                       * (0 means none), and there is nothing to compare */
        if (b->ref)
            sim_run_fragment(vm, b->sched[i], want, wall, b->vtime, false, r);
        else
            sim_batch_run(b, i, vm);
        if (atomic_load(&vm->stopping) || sim_rewind(vm, snap) < 0)
            return -1;
        r->vm_id = vm_id;
        r->done = true;
        ran++;
    }
}
