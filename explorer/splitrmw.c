#include "splitrmw.h"
#include "conflict.h"
#include "holds.h"
#include <string.h>

/* A thread's last access to a variable (the key: ex_hash2(addr, tid)). */
enum { LAST_OTHER = 1, LAST_PLAIN_READ = 2 };

/* Per variable: the first thread seen splitting an update of it (low 8 bits),
 * SECOND once another thread did too, COUNTED once it was judged. */
#define SECOND (1u << 8)
#define COUNTED (1u << 9)

uint64_t ex_trace_split_updates(const struct ex_trace *t, const struct ex_u64map *conflict,
                                uint64_t *first)
{
    if (!t || !t->ev)
        return 0;
    struct ex_u64map last, vars;
    ex_u64map_init(&last);
    ex_u64map_init(&vars);
    struct ex_holds held[EX_MAX_TID + 1];
    memset(held, 0, sizeof held);
    uint64_t found = 0, lastx[EX_MAX_TID + 1]; /* each thread's last variable accessed */
    for (size_t k = 0; k <= EX_MAX_TID; k++)
        lastx[k] = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e) || e->tid == 0 || e->tid > EX_MAX_TID)
            continue;
        uint64_t x = ex_loc_of(e);
        if (conflict && !ex_u64map_get(conflict, x))
            continue; /* private (its own stack: the compiler's pushes between the two) */
        bool next = lastx[e->tid] == x; /* nothing of its own between the read and this */
        lastx[e->tid] = x;
        bool step = ex_holds_note(&held[e->tid], e), locked = step || held[e->tid].n > 0;
        uint64_t *l = ex_u64map_put(&last, ex_hash2(x, e->tid), 0, NULL);
        if (!l)
            continue; /* no memory: this access is not seen (at worst X missed) */
        bool split = *l == LAST_PLAIN_READ && next && !locked && e->kind == EX_WRITE &&
                     !ex_is_atomic(e);
        *l = e->kind == EX_READ && !ex_is_atomic(e) && !locked ? LAST_PLAIN_READ : LAST_OTHER;
        if (!split)
            continue;
        uint64_t *v = ex_u64map_put(&vars, x, 0, NULL);
        if (!v)
            continue;
        if (*v == 0)
            *v = e->tid;
        else if ((*v & 0xff) != (e->tid & 0xff))
            *v |= SECOND;
        if (!(*v & SECOND) || (*v & COUNTED))
            continue;
        *v |= COUNTED;
        const uint64_t *cls = conflict ? ex_u64map_get(conflict, x) : NULL;
        if (conflict && !(cls && (*cls & EX_CONFLICT_DATA)))
            continue;
        if (found++ == 0 && first)
            *first = x;
    }
    ex_u64map_free(&last);
    ex_u64map_free(&vars);
    return found;
}
