#include "analysis.h"
#include "u64map.h"
#include <stdlib.h>
#include <string.h>

/* Upper bounds on stored races / violations: a hot spin loop can produce one
 * per cue point, and nothing downstream needs more than a sample. */
#define MAX_RACES (1u << 18)
#define MAX_AVIO (1u << 18)

void ex_analysis_free(struct ex_analysis *a)
{
    free(a->dep);
    free(a->tev);
    free(a->tpos);
    ex_hb_free(&a->hb);
    free(a->races);
    free(a->avio);
    free(a->locs);
    memset(a, 0, sizeof *a);
}

/* Sharedness order: more threads, then more switches between threads, then
 * more accesses; the key last so the order is total and deterministic. */
static int loc_cmp(const void *x, const void *y)
{
    const struct ex_loc *a = x, *b = y;
    if (a->nthreads != b->nthreads)
        return a->nthreads > b->nthreads ? -1 : 1;
    if (a->nswitches != b->nswitches)
        return a->nswitches > b->nswitches ? -1 : 1;
    if (a->naccess != b->naccess)
        return a->naccess > b->naccess ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int find_locs(struct ex_analysis *a)
{
    const struct ex_trace *t = a->tr;
    struct ex_u64map idx; /* key -> index in all[] */
    struct ex_loc *all = NULL;
    uint32_t *lastt = NULL;
    size_t nall = 0, cap = 0;
    ex_u64map_init(&idx);
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        bool added;
        uint64_t *v = ex_u64map_put(&idx, ex_loc_of(e), nall, &added);
        if (!v)
            goto fail;
        if (added) {
            if (nall == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct ex_loc *nv = realloc(all, ncap * sizeof *nv);
                uint32_t *nl = realloc(lastt, ncap * sizeof *nl);
                if (nv)
                    all = nv;
                if (nl)
                    lastt = nl;
                if (!nv || !nl)
                    goto fail;
                cap = ncap;
            }
            memset(&all[nall], 0, sizeof all[nall]);
            all[nall].key = ex_loc_of(e);
            all[nall].first = (uint32_t)i;
            lastt[nall] = e->tid;
            nall++;
        }
        struct ex_loc *l = &all[*v];
        if (!ex_tidset_has(&l->threads, e->tid)) {
            ex_tidset_add(&l->threads, e->tid);
            l->nthreads++;
        }
        l->naccess++;
        l->nwrites += ex_is_write(e);
        l->nswitches += lastt[*v] != e->tid;
        lastt[*v] = e->tid;
    }
    size_t k = 0;
    for (size_t i = 0; i < nall; i++)
        if (all[i].nthreads >= 2 && all[i].nwrites > 0)
            all[k++] = all[i];
    if (k)
        qsort(all, k, sizeof *all, loc_cmp);
    a->locs = all;
    a->nlocs = k;
    free(lastt);
    ex_u64map_free(&idx);
    return 0;
fail:
    free(all);
    free(lastt);
    ex_u64map_free(&idx);
    return -1;
}

const struct ex_loc *ex_analysis_loc(const struct ex_analysis *a, uint64_t key)
{
    for (size_t i = 0; i < a->nlocs; i++)
        if (a->locs[i].key == key)
            return &a->locs[i];
    return NULL;
}

int ex_analyze(const struct ex_trace *t, struct ex_analysis *a, char *why, size_t whylen)
{
    memset(a, 0, sizeof *a);
    if (!ex_trace_validate(t, why, whylen))
        return EX_ERR_INVALID;
    a->tr = t;
    size_t n = t->n ? t->n : 1;
    a->dep = malloc(n * sizeof *a->dep);
    a->tev = malloc(n * sizeof *a->tev);
    a->tpos = malloc(n * sizeof *a->tpos);
    if (!a->dep || !a->tev || !a->tpos)
        goto nomem;
    uint32_t count[EX_MAX_TID + 1] = { 0 };
    for (size_t i = 0; i < t->n; i++) {
        a->tpos[i] = count[t->ev[i].tid]++;
        ex_tidset_add(&a->threads, t->ev[i].tid);
    }
    a->toff[0] = 0;
    for (uint32_t tid = 0; tid <= EX_MAX_TID; tid++)
        a->toff[tid + 1] = a->toff[tid] + count[tid];
    for (size_t i = 0; i < t->n; i++)
        a->tev[a->toff[t->ev[i].tid] + a->tpos[i]] = (uint32_t)i;

    if (ex_syncdeps(t, a->dep) != 0 || ex_hb_build(&a->hb, t, a->dep) != 0)
        goto nomem;
    if (ex_races_find(t, &a->hb, MAX_RACES, &a->races, &a->nraces) != 0)
        goto nomem;
    if (ex_avio_find(t, MAX_AVIO, &a->avio, &a->navio) != 0)
        goto nomem;
    if (find_locs(a) != 0)
        goto nomem;
    return EX_OK;
nomem:
    ex_analysis_free(a);
    return EX_ERR_NOMEM;
}
