/* Stress runs in whole-run exploration (explore_stress.h). */
#include "rounds/explore_stress.h"
#include "rounds/simulation.h"
#include "kvm/vm.h"
#include "linux/tail.h"
#include "lib/util.h"
#include "sched/serialize.h"
#include <pthread.h>
#include <string.h>
#include <time.h>

void explore_stress_init(struct explore_stress *s, uint64_t first_wall_ns)
{
    memset(s, 0, sizeof *s);
    s->wall_ns = first_wall_ns;
    s->after_ns = EXPLORE_STRESS_AFTER_NS;
}

void explore_stress_start(struct explore_stress *s, uint64_t elapsed_ns)
{
    if (elapsed_ns < s->after_ns)
        s->after_ns = elapsed_ns;
}

bool explore_stress_due(const struct explore_stress *s, uint64_t elapsed_ns, uint64_t ahead_ns)
{
    return !s->off && elapsed_ns >= s->after_ns &&
           s->ns * EXPLORE_STRESS_SHARE_DIV <= elapsed_ns + ahead_ns - s->after_ns;
}

int explore_stress_run(struct explore_stress *s, struct vm *vm, struct snapshot *snap,
                       uint64_t until)
{
    uint64_t t0 = mono_ns(), deadline = t0 + s->wall_ns;
    bool short_of_budget = until && until < deadline; /* cut there: no verdict on its length */
    if (short_of_budget)
        deadline = until;
    /* The report's stderr tail as it was: a run that ends well leaves no lines in it. */
    struct tail_mark keep;
    tail_mark(&vm->errtail, &keep);
    pthread_mutex_lock(&vm->lock);
    vm->stress = true;
    vm->sim_ended = false;
    pthread_mutex_unlock(&vm->lock);
    serialize_free_run(vm); /* every thread in parallel, from the snapshot */
    pthread_mutex_lock(&vm->lock);
    while (!atomic_load(&vm->stopping) && !vm->sim_ended && mono_ns() < deadline) {
        struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ULL),
                              .tv_nsec = (long)(deadline % 1000000000ULL)};
        pthread_cond_timedwait(&vm->done_cv, &vm->lock, &ts);
    }
    bool ended = vm->sim_ended;
    pthread_mutex_unlock(&vm->lock);
    uint64_t took = mono_ns() - t0;
    s->runs++;
    s->ns += took;
    if (!atomic_load(&vm->stopping))
        vm_pause(vm);
    if (atomic_load(&vm->stopping))
        return 1; /* a bug, for real (or the run's own end: a timeout, a signal) */
    pthread_mutex_lock(&vm->lock);
    vm->stress = false;
    vm->sim_ended = false;
    pthread_mutex_unlock(&vm->lock);
    tail_rewind(&vm->errtail, &keep);
    if (ended) {
        s->ended++;
        if (took > s->longest)
            s->longest = took;
        uint64_t w = EXPLORE_STRESS_FACTOR * s->longest;
        s->wall_ns = w > EXPLORE_STRESS_MIN_NS ? w : EXPLORE_STRESS_MIN_NS;
    } else if (!short_of_budget || mono_ns() < until) {
        s->cut++;
        if (!s->ended && s->cut >= EXPLORE_STRESS_FIRST_CUTS)
            s->off = true; /* it does not end within a traced run's time: a long program */
    }
    return sim_rewind(vm, snap) < 0 ? -1 : 0;
}
