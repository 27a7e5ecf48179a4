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
        sim_run_fragment(vm, b->sched[i], want, wall, b->vtime, false, r);
        if (atomic_load(&vm->stopping) || sim_rewind(vm, snap) < 0)
            return -1;
        r->vm_id = vm_id;
        r->done = true;
        ran++;
    }
}
