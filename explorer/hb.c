#include "hb.h"
#include "u64map.h"
#include <stdlib.h>
#include <string.h>

void ex_hb_free(struct ex_hb *hb)
{
    free(hb->clock);
    free(hb->snap);
    free(hb->vcs);
    memset(hb, 0, sizeof *hb);
}

/* Appends a copy of vector `from` (or zeros if from < 0); copies after growing,
 * since growing may move the source. */
static int push_vc(struct ex_hb *hb, long from)
{
    if (hb->nvcs == hb->capvcs) {
        size_t ncap = hb->capvcs ? hb->capvcs * 2 : 64;
        uint32_t *nv = realloc(hb->vcs, ncap * hb->width * sizeof *nv);
        if (!nv)
            return -1;
        hb->vcs = nv;
        hb->capvcs = ncap;
    }
    uint32_t *dst = hb->vcs + hb->nvcs * hb->width;
    if (from >= 0)
        memcpy(dst, hb->vcs + (size_t)from * hb->width, hb->width * sizeof *dst);
    else
        memset(dst, 0, hb->width * sizeof *dst);
    hb->nvcs++;
    return 0;
}

uint32_t ex_hb_component(const struct ex_hb *hb, size_t e, uint32_t tid)
{
    if (tid == hb->tr->ev[e].tid)
        return hb->clock[e];
    if (tid >= hb->width)
        return 0;
    return hb->vcs[(size_t)hb->snap[e] * hb->width + tid];
}

/* Thread tid (currently at vector cur[tid]) acquires event s's vector. */
static int acquire(struct ex_hb *hb, uint32_t *cur, uint32_t tid, size_t s)
{
    uint32_t w = hb->width;
    const uint32_t *mine = hb->vcs + (size_t)cur[tid] * w;
    bool newer = false;
    for (uint32_t u = 1; u < w && !newer; u++)
        newer = u != tid && ex_hb_component(hb, s, u) > mine[u];
    if (!newer)
        return 0;
    if (push_vc(hb, (long)cur[tid]) != 0)
        return -1;
    uint32_t *nv = hb->vcs + (hb->nvcs - 1) * w;
    for (uint32_t u = 1; u < w; u++) {
        uint32_t c = ex_hb_component(hb, s, u);
        if (u != tid && c > nv[u])
            nv[u] = c;
    }
    cur[tid] = (uint32_t)(hb->nvcs - 1);
    return 0;
}

int ex_hb_build(struct ex_hb *hb, const struct ex_trace *t, const int32_t *dep)
{
    memset(hb, 0, sizeof *hb);
    hb->tr = t;
    hb->width = t->nthreads + 1;
    size_t n = t->n ? t->n : 1;
    hb->clock = calloc(n, sizeof *hb->clock);
    hb->snap = calloc(n, sizeof *hb->snap);
    uint32_t cur[EX_MAX_TID + 1] = { 0 }, own[EX_MAX_TID + 1] = { 0 };
    struct ex_u64map last_release; /* address -> 1 + last atomic write */
    ex_u64map_init(&last_release);
    if (!hb->clock || !hb->snap || push_vc(hb, -1) != 0)
        goto fail;

    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        uint32_t tid = e->tid;
        if (dep && dep[i] >= 0 && acquire(hb, cur, tid, (size_t)dep[i]) != 0)
            goto fail;
        if (ex_is_access(e) && ex_is_atomic(e) && ex_is_read(e)) {
            uint64_t *rel = ex_u64map_get(&last_release, e->addr);
            if (rel && acquire(hb, cur, tid, (size_t)(*rel - 1)) != 0)
                goto fail;
        }
        hb->clock[i] = ++own[tid];
        hb->snap[i] = cur[tid];
        if (ex_is_access(e) && ex_is_atomic(e) && ex_is_write(e)) {
            uint64_t *rel = ex_u64map_put(&last_release, e->addr, 0, NULL);
            if (!rel)
                goto fail;
            *rel = i + 1;
        }
    }
    ex_u64map_free(&last_release);
    return 0;
fail:
    ex_u64map_free(&last_release);
    ex_hb_free(hb);
    return -1;
}

bool ex_hb_before(const struct ex_hb *hb, size_t a, size_t b)
{
    if (a >= b)
        return false;   /* every edge points forward in the trace */
    uint32_t ta = hb->tr->ev[a].tid;
    if (ta == hb->tr->ev[b].tid)
        return true;
    return hb->clock[a] <= ex_hb_component(hb, b, ta);
}

bool ex_hb_ordered(const struct ex_hb *hb, size_t a, size_t b)
{
    return ex_hb_before(hb, a, b) || ex_hb_before(hb, b, a);
}
