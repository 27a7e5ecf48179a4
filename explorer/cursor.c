#include "cursor.h"
#include <string.h>

void ex_cursor_init(struct ex_cursor *c, const struct ex_schedule *s)
{
    memset(c, 0, sizeof *c);
    c->s = s;
}

bool ex_cursor_in_schedule(const struct ex_cursor *c)
{
    return c->seg < c->s->nseg;
}

static uint32_t by_default(struct ex_cursor *c, const struct ex_tidset *en)
{
    if (c->s->policy == EX_DEFAULT_ROUNDROBIN) {
        uint32_t q = c->s->quantum ? c->s->quantum : 1;
        if (c->last && ex_tidset_has(en, c->last) && c->turn_left > 0) {
            c->turn_left--;
            return c->last;
        }
        uint32_t t = ex_tidset_next_cyclic(en, c->last);
        c->turn_left = q - 1;
        return t;
    }
    if (c->last && ex_tidset_has(en, c->last))
        return c->last;
    return ex_tidset_next_cyclic(en, c->last);
}

uint32_t ex_cursor_next(struct ex_cursor *c, const struct ex_tidset *enabled)
{
    return ex_cursor_next_avoiding(c, enabled, NULL);
}

uint32_t ex_cursor_next_avoiding(struct ex_cursor *c, const struct ex_tidset *enabled,
                                 const struct ex_tidset *avoid)
{
    if (ex_tidset_empty(enabled))
        return 0;
    uint32_t t = 0;
    while (c->seg < c->s->nseg) {
        const struct ex_segment *g = &c->s->seg[c->seg];
        if (ex_tidset_has(enabled, g->thread)) {
            t = g->thread;
            if (++c->used == g->steps) {
                c->seg++;
                c->used = 0;
            }
            break;
        }
        c->divergences++;
        c->skipped += g->steps - c->used;
        c->seg++;
        c->used = 0;
    }
    if (!t) {
        struct ex_tidset pref = *enabled;
        for (int w = 0; avoid && w < 4; w++)
            pref.w[w] &= ~avoid->w[w];
        t = by_default(c, ex_tidset_empty(&pref) ? enabled : &pref);
    }
    else
        c->turn_left = 0;   /* the default policy's first turn goes to the next thread */
    c->last = t;
    c->steps++;
    return t;
}
