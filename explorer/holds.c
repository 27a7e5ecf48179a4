#include "holds.h"

static int held_at(const struct ex_holds *h, uint64_t w)
{
    for (unsigned i = 0; i < h->n && i < EX_HOLDS_MAX; i++)
        if (h->w[i] == w)
            return (int)i;
    return -1;
}

bool ex_holds_note(struct ex_holds *h, const struct ex_event *e)
{
    uint64_t x = ex_loc_of(e);
    int at = held_at(h, x);
    if (at >= 0 && ex_is_write(e)) {
        h->w[at] = h->w[--h->n]; /* released */
        return true;
    }
    if (e->kind == EX_RMW && ex_is_atomic(e)) {
        if (h->n < EX_HOLDS_MAX)
            h->w[h->n++] = x;
        return true;
    }
    return false;
}
