#include "syncdep.h"
#include <string.h>

struct thr {
    int32_t block_ev;       /* the wait/join this thread performed last and is blocked in, or -1 */
    int32_t matched;        /* the wake that released it (inferred), or -1 */
    int32_t created_by;     /* create event of this thread, or -1 */
    bool started;           /* performed an event already */
    bool exited;
    int32_t exit_ev;
};

/* Wakes up to `count` of the oldest unmatched waiters blocked on addr. */
static void wake_fifo(struct thr *th, const struct ex_trace *t, uint64_t addr, uint32_t count,
                      int32_t waker)
{
    while (count--) {
        int best = -1;
        for (uint32_t tid = 1; tid <= t->nthreads; tid++) {
            struct thr *x = &th[tid];
            if (x->block_ev < 0 || x->matched >= 0)
                continue;
            const struct ex_event *w = &t->ev[x->block_ev];
            if (w->kind != EX_FUTEX_WAIT || w->addr != addr)
                continue;
            if (best < 0 || x->block_ev < th[best].block_ev)
                best = (int)tid;
        }
        if (best < 0)
            return;
        th[best].matched = waker;
    }
}

int ex_syncdeps(const struct ex_trace *t, int32_t *dep)
{
    struct thr th[EX_MAX_TID + 1];
    for (int i = 0; i <= EX_MAX_TID; i++)
        th[i] = (struct thr){ .block_ev = -1, .matched = -1, .created_by = -1, .exit_ev = -1 };

    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        struct thr *me = &th[e->tid];
        int32_t d = -1;
        if (e->waker) {
            d = (int32_t)(e->waker - 1);
        } else if (me->block_ev >= 0) {
            const struct ex_event *b = &t->ev[me->block_ev];
            if (b->kind == EX_THREAD_JOIN && b->arg <= EX_MAX_TID)
                d = th[b->arg].exit_ev;
            else
                d = me->matched;
        } else if (!me->started) {
            d = me->created_by;
        }
        dep[i] = d;
        me->block_ev = -1;
        me->matched = -1;
        me->started = true;

        switch (e->kind) {
        case EX_FUTEX_WAIT:
            if (!(e->flags & EX_F_NOBLOCK))
                me->block_ev = (int32_t)i;
            break;
        case EX_THREAD_JOIN:
            if (!(e->flags & EX_F_NOBLOCK))
                me->block_ev = (int32_t)i;
            break;
        case EX_FUTEX_WAKE:
            wake_fifo(th, t, e->addr, e->arg, (int32_t)i);
            break;
        case EX_THREAD_EXIT:
            me->exited = true;
            me->exit_ev = (int32_t)i;
            if (e->addr)
                wake_fifo(th, t, e->addr, e->arg, (int32_t)i);
            break;
        case EX_THREAD_CREATE:
            if (e->arg >= 1 && e->arg <= EX_MAX_TID) {
                /* An id a thread that exited used before (the VMM reuses ids past
                 * EX_MAX_TID, vmm/sched/serialize.h): a new thread from here on. */
                if (th[e->arg].started || th[e->arg].exited)
                    th[e->arg] = (struct thr){ .block_ev = -1, .matched = -1, .exit_ev = -1 };
                th[e->arg].created_by = (int32_t)i;
            }
            break;
        default:
            break;
        }
    }
    return 0;
}
