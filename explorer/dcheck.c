#include "dcheck.h"
#include "conflict.h"
#include "holds.h"
#include <string.h>

/* The (thread, variable) states: CHECKED after an unlocked read (its rip in
 * the bits above), RECHECKED after a locked read by another instruction that
 * followed it (the same instruction is a loop re-reading its condition: a
 * condition wait's predicate, re-read after the wait re-took the lock). */
enum { NONE = 0, CHECKED = 1, RECHECKED = 2 };

uint64_t ex_trace_double_checks(const struct ex_trace *t, const struct ex_u64map *conflict,
                                uint64_t *first)
{
    if (!t || !t->ev)
        return 0;
    struct ex_holds held[EX_MAX_TID + 1];
    memset(held, 0, sizeof held);
    struct ex_u64map state, done;
    ex_u64map_init(&state);
    ex_u64map_init(&done);
    uint64_t found = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e) || e->tid == 0 || e->tid > EX_MAX_TID)
            continue;
        struct ex_holds *hd = &held[e->tid];
        uint64_t x = ex_loc_of(e);
        if (ex_holds_note(hd, e))
            continue;
        uint64_t *s = ex_u64map_put(&state, ex_hash2(x, e->tid), NONE, NULL);
        if (!s)
            continue; /* no memory: at worst X missed */
        bool plain = !ex_is_atomic(e), locked = hd->n > 0;
        uint64_t was = *s & 3, rip = *s >> 2;
        *s = NONE;
        if (e->kind == EX_READ && plain && !locked)
            *s = CHECKED | e->rip << 2;
        else if (e->kind == EX_READ && plain && locked && was == CHECKED && e->rip != rip)
            *s = RECHECKED;
        else if (e->kind == EX_WRITE && plain && locked && was == RECHECKED) {
            const uint64_t *cls = conflict ? ex_u64map_get(conflict, x) : NULL;
            bool added = false;
            if ((!conflict || (cls && (*cls & EX_CONFLICT_DATA))) &&
                ex_u64map_put(&done, x, 1, &added) && added && found++ == 0 && first)
                *first = x;
        }
    }
    ex_u64map_free(&state);
    ex_u64map_free(&done);
    return found;
}
