#include "avio.h"
#include "u64map.h"
#include <stdlib.h>

struct entry {
    uint32_t tid;
    int32_t next;
    int32_t last;       /* this thread's last access to the location */
    int32_t remote_r;   /* latest remote read since `last`, or -1 */
    int32_t remote_w;   /* latest remote write since `last`, or -1 */
};

const char *ex_avio_name(enum ex_avio_pattern p)
{
    static const char *names[] = { "R-W-R", "W-W-R", "W-R-W", "R-W-W" };
    return p < EX_AVIO_NPATTERNS ? names[p] : "?";
}

uint64_t ex_avio_key(const struct ex_trace *t, const struct ex_avio *a)
{
    return ex_hash2(ex_hash2(a->pattern, t->ev[a->p].rip),
                    ex_hash2(t->ev[a->r].rip, t->ev[a->c].rip));
}

int ex_avio_find(const struct ex_trace *t, size_t max, struct ex_avio **out, size_t *nout)
{
    struct ex_u64map heads;
    struct entry *pool = NULL;
    size_t npool = 0, cappool = 0, cap = 0;
    *out = NULL;
    *nout = 0;
    ex_u64map_init(&heads);

    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        bool added;
        uint64_t *head = ex_u64map_put(&heads, ex_loc_of(e), 0, &added);
        if (!head)
            goto fail;
        int32_t mine = -1;
        for (int32_t k = added ? -1 : (int32_t)*head; k >= 0; k = pool[k].next) {
            struct entry *x = &pool[k];
            if (x->tid == e->tid) {
                mine = k;
                continue;
            }
            if (ex_is_write(e))
                x->remote_w = (int32_t)i;
            if (ex_is_read(e))
                x->remote_r = (int32_t)i;
        }
        if (mine < 0) {
            if (npool == cappool) {
                size_t ncap = cappool ? cappool * 2 : 256;
                struct entry *nv = realloc(pool, ncap * sizeof *nv);
                if (!nv)
                    goto fail;
                pool = nv;
                cappool = ncap;
            }
            pool[npool] = (struct entry){ e->tid, added ? -1 : (int32_t)*head, (int32_t)i, -1, -1 };
            mine = (int32_t)npool++;
            *head = (uint64_t)mine;
            continue;   /* first access of this thread: nothing to pair with */
        }
        struct entry *me = &pool[mine];
        const struct ex_event *p = &t->ev[me->last];
        int pat = -1, r = -1;
        if (!(ex_is_atomic(p) && ex_is_atomic(e))) {
            bool pw = ex_is_write(p), cw = ex_is_write(e);
            if (!pw && !cw && me->remote_w >= 0)
                pat = EX_AVIO_RWR, r = me->remote_w;
            else if (pw && !cw && me->remote_w >= 0)
                pat = EX_AVIO_WWR, r = me->remote_w;
            else if (pw && cw && me->remote_r >= 0)
                pat = EX_AVIO_WRW, r = me->remote_r;
            else if (!pw && cw && me->remote_w >= 0)
                pat = EX_AVIO_RWW, r = me->remote_w;
        }
        if (pat >= 0 && (!max || *nout < max)) {
            if (*nout == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct ex_avio *nv = realloc(*out, ncap * sizeof *nv);
                if (!nv)
                    goto fail;
                *out = nv;
                cap = ncap;
            }
            (*out)[(*nout)++] = (struct ex_avio){ (uint32_t)me->last, (uint32_t)r, (uint32_t)i,
                                                  (uint8_t)pat };
        }
        me->last = (int32_t)i;
        me->remote_r = me->remote_w = -1;
    }
    ex_u64map_free(&heads);
    free(pool);
    return 0;
fail:
    ex_u64map_free(&heads);
    free(pool);
    free(*out);
    *out = NULL;
    *nout = 0;
    return -1;
}
