/* Learning a stalled fragment's pages (stall.h). */
#include "sched/stall.h"
#include "sched/crew.h"
#include "sched/serialize.h"
#include "kvm/vm.h"
#include <stdbool.h>
#include <stdlib.h>

void stall_set_init(struct stall_set *s)
{
    s->page = NULL;
    s->n = s->cap = 0;
}

void stall_set_free(struct stall_set *s)
{
    free(s->page);
    stall_set_init(s);
}

static bool has(const struct stall_set *s, uint64_t page)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->page[i] == page)
            return true;
    return false;
}

static bool near_stack(uint64_t page, uint64_t rsp)
{
    return page + PAGE_SIZE > rsp - CREW_STACK_BELOW && page < rsp + CREW_STACK_ABOVE;
}

/* Adds tid's own pages that s lacks, stack ones or the others; count, or -1. */
static int add_owned_locked(struct vm *vm, struct stall_set *s, int tid, uint64_t rsp,
                            bool stack)
{
    struct crew *c = vm->crew;
    size_t n0 = s->n;
    for (size_t slot = 0; c->on && slot < c->npage; slot++) {
        const struct crew_page *pg = &c->page[slot];
        if (pg->shared || pg->owner != tid || near_stack(pg->va, rsp) != stack ||
            has(s, pg->va))
            continue;
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 16;
            uint64_t *p = realloc(s->page, cap * sizeof *p);
            if (!p) {
                s->n = n0;
                return -1;
            }
            s->page = p;
            s->cap = cap;
        }
        s->page[s->n++] = pg->va;
    }
    return (int)(s->n - n0);
}

int stall_learn(struct vm *vm, struct stall_set *s)
{
    pthread_mutex_lock(&vm->lock);
    int tid = vm->ser->guard_turn, got = 0;
    struct vcpu *v = NULL;
    for (int i = 0; tid > 0 && i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid == tid)
            v = vm->vcpus[i];
    if (v) {
        uint64_t rsp = v->run->s.regs.regs.rsp; /* paused: its last exit's registers */
        got = add_owned_locked(vm, s, tid, rsp, false);
        if (got == 0)
            got = add_owned_locked(vm, s, tid, rsp, true);
    }
    pthread_mutex_unlock(&vm->lock);
    if (got > 0 && crew_preshare(vm, s->page, s->n) < 0) {
        s->n -= (size_t)got;
        return -1;
    }
    return got;
}
