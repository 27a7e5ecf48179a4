/* Yielders (yielders.h). */
#include "yielders.h"
#include <string.h>

void ex_yielders_init(struct ex_yielders *y)
{
    memset(y, 0, sizeof *y);
}

void ex_yielders_observe(struct ex_yielders *y, const struct ex_event *last)
{
    if (!last || last->seq + 1 <= y->seen || last->tid == 0 || last->tid > EX_MAX_TID)
        return;
    y->seen = last->seq + 1;
    bool yield = last->kind == EX_SYNC_OTHER && !(last->flags & EX_F_PREEMPT);
    y->at[last->tid] = yield ? last->seq + 1 : 0;
    y->streak[last->tid] = yield ? y->streak[last->tid] + (y->streak[last->tid] < UINT32_MAX) : 0;
}

void ex_yielders_avoid(const struct ex_yielders *y, struct ex_tidset *out)
{
    ex_tidset_clear(out);
    for (uint32_t t = 1; t <= EX_MAX_TID; t++)
        if (y->at[t] && y->streak[t] >= EX_YIELD_STREAK && y->seen - y->at[t] < EX_YIELD_PATIENCE)
            ex_tidset_add(out, t);
}
