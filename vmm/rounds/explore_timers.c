/* Whole-run exploration's timers that end early (explore_timers.h). */
#include "rounds/explore_timers.h"
#include "kvm/vm.h"
#include "sched/serialize.h"
#include "sched/timers.h"
#include <string.h>

void explore_timers_init(struct explore_timers *t, bool strict)
{
    memset(t, 0, sizeof *t);
    t->strict = strict;
    ex_timers_hist_init(&t->hist[0]);
    ex_timers_hist_init(&t->hist[1]);
}

void explore_timers_begin(struct explore_timers *t, bool sparse, uint64_t seed, uint64_t index)
{
    t->sparse = sparse;
    ex_timers_begin(&t->run, &t->hist[sparse], seed, index, t->strict);
}

const struct ex_tidset *explore_timers_pick(struct explore_timers *t, struct vm *vm,
                                            const struct ex_tidset *enabled,
                                            const struct ex_tidset *avoid, struct ex_tidset *buf,
                                            bool *forced, uint32_t follow)
{
    *forced = false;
    if (t->strict)
        return enabled;
    struct ex_tidset timed;
    timers_timed_locked(vm, &timed);
    uint32_t end = ex_timers_fire(&t->run, enabled, &timed);
    if (!end && follow && !ex_tidset_has(enabled, follow) && ex_tidset_has(&timed, follow))
        end = follow; /* as in the parent run: ex_online_following */
    const struct ex_tidset *en = enabled;
    if (end && timers_end_locked(vm, end, vm->ser->current)) {
        serialize_enabled_locked(vm, buf); /* it, and any wait due by its deadline */
        en = buf;
    }
    uint32_t keep = ex_timers_forced(&t->run, en, avoid);
    if (!keep)
        return en;
    ex_tidset_clear(buf);
    ex_tidset_add(buf, keep);
    *forced = true;
    return buf;
}

uint32_t explore_timers_after(struct explore_timers *t, const struct vm *vm, uint64_t *total)
{
    ex_timers_learn(&t->hist[t->sparse], &t->run);
    *total += vm->ser->nended;
    return vm->ser->nended;
}

void explore_timers_print(struct vm *vm, FILE *f)
{
    const struct serializer *s = vm->ser;
    for (uint32_t i = 0; i < s->nended; i++) {
        const struct ex_timer_end *e = &s->ended[i];
        char where[EX_TIMER_SYM_LEN + 32] = "", line[400];
        if (e->rip)
            snprintf(where, sizeof where, "0x%llx %.*s", (unsigned long long)e->rip,
                     (int)(EX_TIMER_SYM_LEN - 1), e->sym);
        fprintf(f, "jinx-vmm: explore:   timer: %s (choice %llu)\n",
                ex_timer_end_describe(e, where, line, sizeof line), (unsigned long long)e->step);
    }
}

int explore_timers_to_schedule(struct vm *vm, struct ex_schedule *s)
{
    const struct serializer *ser = vm->ser;
    for (uint32_t i = 0; i < ser->nended; i++)
        if (ex_schedule_add_timer(s, &ser->ended[i]) < 0)
            return -1;
    return 0;
}
