#include "race.h"
#include "u64map.h"
#include <stdlib.h>

/* Per (location, thread): the last plain/atomic read/write. */
enum { S_RD, S_RD_AT, S_WR, S_WR_AT, NSLOT };
struct entry {
    uint32_t tid;
    int32_t next;           /* next entry of the same location, -1 at the end */
    int32_t slot[NSLOT];    /* event index or -1 */
};

struct pool {
    struct entry *v;
    size_t n, cap;
};

static int32_t pool_new(struct pool *p, uint32_t tid, int32_t next)
{
    if (p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 256;
        struct entry *nv = realloc(p->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        p->v = nv;
        p->cap = ncap;
    }
    struct entry *e = &p->v[p->n];
    e->tid = tid;
    e->next = next;
    for (int i = 0; i < NSLOT; i++)
        e->slot[i] = -1;
    return (int32_t)p->n++;
}

static int add_race(struct ex_race **out, size_t *n, size_t *cap, uint32_t a, uint32_t b)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct ex_race *nv = realloc(*out, ncap * sizeof *nv);
        if (!nv)
            return -1;
        *out = nv;
        *cap = ncap;
    }
    (*out)[(*n)++] = (struct ex_race){ a, b };
    return 0;
}

int ex_races_find(const struct ex_trace *t, const struct ex_hb *hb, size_t max,
                  struct ex_race **out, size_t *nout)
{
    struct ex_u64map heads; /* location -> first entry */
    struct pool pool = { 0 };
    size_t cap = 0;
    *out = NULL;
    *nout = 0;
    ex_u64map_init(&heads);

    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        bool added;
        uint64_t *head = ex_u64map_put(&heads, ex_word_of(e), 0, &added);
        if (!head)
            goto fail;
        int32_t mine = -1;
        for (int32_t k = added ? -1 : (int32_t)*head; k >= 0; k = pool.v[k].next) {
            struct entry *x = &pool.v[k];
            if (x->tid == e->tid) {
                mine = k;
                continue;
            }
            for (int s = 0; s < NSLOT; s++) {
                int32_t o = x->slot[s];
                if (o < 0)
                    continue;
                bool o_write = s == S_WR || s == S_WR_AT, o_atomic = s == S_RD_AT || s == S_WR_AT;
                if (!o_write && !ex_is_write(e))
                    continue;
                if (o_atomic && ex_is_atomic(e))
                    continue;
                if (!ex_overlap(&t->ev[o], e) || ex_hb_before(hb, (size_t)o, i))
                    continue;
                if (max && *nout >= max)
                    continue;
                if (add_race(out, nout, &cap, (uint32_t)o, (uint32_t)i) != 0)
                    goto fail;
            }
        }
        if (mine < 0) {
            mine = pool_new(&pool, e->tid, added ? -1 : (int32_t)*head);
            if (mine < 0)
                goto fail;
            head = ex_u64map_get(&heads, ex_word_of(e));
            *head = (uint64_t)mine;
        }
        int s = ex_is_write(e) ? S_WR : S_RD;
        if (ex_is_atomic(e))
            s++;
        pool.v[mine].slot[s] = (int32_t)i;
    }
    ex_u64map_free(&heads);
    free(pool.v);
    return 0;
fail:
    ex_u64map_free(&heads);
    free(pool.v);
    free(*out);
    *out = NULL;
    *nout = 0;
    return -1;
}

uint64_t ex_race_key(const struct ex_trace *t, const struct ex_race *r)
{
    uint64_t x = t->ev[r->a].rip, y = t->ev[r->b].rip;
    return x < y ? ex_hash2(x, y) : ex_hash2(y, x);
}
