#include "jinx.h"
#include "steer.h"
#include <stdlib.h>
#include <string.h>

void ex_jinx_site_free(struct ex_jinx_site *site)
{
    free(site->a_acc);
    memset(site, 0, sizeof *site);
}

int ex_jinx_site_find(const struct ex_analysis *a, uint64_t loc, uint32_t a_tid, uint32_t b_tid,
                      struct ex_jinx_site *site)
{
    memset(site, 0, sizeof *site);
    site->loc = loc;
    site->a_tid = a_tid;
    site->b_tid = b_tid;
    site->b_next = -1;
    if (a_tid == b_tid)
        return 1;
    int64_t b1 = -1;
    uint32_t na = ex_thread_nevents(a, a_tid), cap = 0;
    for (uint32_t k = 0; k < ex_thread_nevents(a, b_tid); k++) {
        uint32_t e = ex_thread_event(a, b_tid, k);
        if (!ex_is_access(&a->tr->ev[e]) || ex_loc_of(&a->tr->ev[e]) != loc)
            continue;
        if (b1 < 0) {
            b1 = e;
        } else {
            site->b_next = (int32_t)e;
            break;
        }
    }
    if (b1 < 0)
        return 1;
    site->b1 = (uint32_t)b1;
    for (uint32_t k = 0; k < na; k++) {
        uint32_t e = ex_thread_event(a, a_tid, k);
        if (!ex_is_access(&a->tr->ev[e]) || ex_loc_of(&a->tr->ev[e]) != loc)
            continue;
        if (site->n == cap) {
            cap = cap ? cap * 2 : 8;
            uint32_t *nv = realloc(site->a_acc, cap * sizeof *nv);
            if (!nv) {
                ex_jinx_site_free(site);
                return -1;
            }
            site->a_acc = nv;
        }
        site->a_acc[site->n++] = e;
        if (e < site->b1)
            site->recorded_pos++;
    }
    if (site->n == 0) {
        ex_jinx_site_free(site);
        return 1;
    }
    return 0;
}

int ex_jinx_schedule(const struct ex_analysis *a, const struct ex_jinx_site *site, uint32_t pos,
                     struct ex_schedule *s, uint32_t *order)
{
    struct ex_hold holds[2];
    struct ex_steer st = { .holds = holds };
    if (pos > site->n)
        return -1;
    if (pos > 0)
        holds[st.nholds++] = (struct ex_hold){ site->b1, site->a_acc[pos - 1] };
    if (pos < site->n)
        holds[st.nholds++] = (struct ex_hold){ site->a_acc[pos], site->b1 };
    st.prefer_after = (int32_t)site->b1;
    st.prefer_tid = site->b_tid;
    st.prefer_until = site->b_next >= 0 ? site->b_next : (int32_t)site->b1;
    bool relaxed;
    if (ex_steer_run(a, &st, s, order, &relaxed) != 0)
        return -1;
    ex_schedule_set_note(s, "jinx loc=%#llx A=T%u B=T%u pos=%u/%u%s",
                         (unsigned long long)site->loc, site->a_tid, site->b_tid, pos,
                         site->n, relaxed ? " (relaxed)" : "");
    return 0;
}

/* Emits the positions of one site; returns schedules added or -1. */
static int do_site(const struct ex_analysis *a, const struct ex_jinx_site *site,
                   const struct ex_params *p, struct ex_rng *rng, uint32_t budget,
                   struct ex_schedule_set *out)
{
    uint32_t *pos = malloc((site->n + 1) * sizeof *pos), npos = 0;
    struct ex_schedule s;
    int made = 0;
    if (!pos)
        return -1;
    ex_schedule_init(&s);
    for (uint32_t i = 0; i <= site->n; i++)
        if (i != site->recorded_pos || p->jinx_include_recorded)
            pos[npos++] = i;
    uint32_t want = p->jinx_max_positions < budget ? p->jinx_max_positions : budget;
    if (npos > want) {
        uint32_t *sample = malloc(want * sizeof *sample);
        if (!sample)
            goto fail;
        npos = ex_rng_sample_u32(rng, pos, npos, want, sample);
        memcpy(pos, sample, npos * sizeof *pos);
        free(sample);
        qsort(pos, npos, sizeof *pos, ex_cmp_u32);
    }
    for (uint32_t i = 0; i < npos && (uint32_t)made < budget; i++) {
        if (ex_jinx_schedule(a, site, pos[i], &s, NULL) != 0)
            goto fail;
        int rc = ex_schedule_set_add_unique(out, &s);
        if (rc < 0)
            goto fail;
        made += rc;
    }
    free(pos);
    ex_schedule_free(&s);
    return made;
fail:
    free(pos);
    ex_schedule_free(&s);
    return -1;
}

int ex_jinx_generate(const struct ex_analysis *a, const struct ex_params *p, struct ex_rng *rng,
                     struct ex_schedule_set *out)
{
    uint32_t made = 0;
    for (size_t li = 0; li < a->nlocs && made < p->max_schedules; li++) {
        const struct ex_loc *l = &a->locs[li];
        /* Per thread: accesses to l, and threads in order of first access. */
        uint32_t cnt[EX_MAX_TID + 1] = { 0 };
        uint32_t tids[EX_MAX_TID], nt = 0;
        for (size_t e = l->first; e < a->tr->n; e++) {
            const struct ex_event *ev = &a->tr->ev[e];
            if (!ex_is_access(ev) || ex_loc_of(ev) != l->key)
                continue;
            if (cnt[ev->tid]++ == 0)
                tids[nt++] = ev->tid;   /* in order of first access */
        }
        uint32_t as[EX_MAX_TID];
        memcpy(as, tids, nt * sizeof *as);
        /* A: most accesses first (stable on first-access order). */
        for (uint32_t i = 1; i < nt; i++)
            for (uint32_t j = i; j > 0 && cnt[as[j]] > cnt[as[j - 1]]; j--) {
                uint32_t t = as[j];
                as[j] = as[j - 1];
                as[j - 1] = t;
            }
        for (uint32_t i = 0; i < nt && made < p->max_schedules; i++) {
            for (uint32_t j = 0; j < nt && made < p->max_schedules; j++) {
                struct ex_jinx_site site;
                int rc = ex_jinx_site_find(a, l->key, as[i], tids[j], &site);
                if (rc < 0)
                    return -1;
                if (rc > 0)
                    continue;
                rc = do_site(a, &site, p, rng, p->max_schedules - made, out);
                ex_jinx_site_free(&site);
                if (rc < 0)
                    return -1;
                made += (uint32_t)rc;
            }
        }
    }
    return (int)made;
}
