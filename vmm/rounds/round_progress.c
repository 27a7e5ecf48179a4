/* Round progress counters and medians (round_progress.h). */
#include "rounds/round_progress.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const nosim_names[ROUND_NOSIM_KINDS] = {"ended", "unusable", "none", "other"};

const char *round_nosim_name(enum round_nosim w)
{
    return (unsigned)w < ROUND_NOSIM_KINDS ? nosim_names[w] : "?";
}

void round_progress_add(struct round_progress *p, const struct round_progress_round *r)
{
    size_t at = (size_t)(p->rounds % ROUND_PROGRESS_RING);
    p->rounds++;
    unsigned sims = r->sims < ROUND_PROGRESS_HIST ? r->sims : ROUND_PROGRESS_HIST - 1;
    p->hist[sims]++;
    if (r->sims)
        p->with_sims++;
    else
        p->nosim[(unsigned)r->why < ROUND_NOSIM_KINDS ? r->why : ROUND_NOSIM_OTHER]++;
    p->rec_cut += r->rec_cut;
    p->rec_stopped += r->rec_stopped;
    p->ring_cues[at] = r->unrecorded ? UINT64_MAX : r->rec_cues;
    p->ring_sims[at] = r->sims;
    p->ring_sim_cues[at] = r->sims ? r->sim_cues : UINT64_MAX; /* not a sample */
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t round_progress_median(const uint64_t *v, size_t n)
{
    if (!n || n > ROUND_PROGRESS_RING)
        return 0;
    uint64_t tmp[ROUND_PROGRESS_RING];
    memcpy(tmp, v, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, cmp_u64);
    return tmp[(n - 1) / 2];
}

void round_progress_medians(const struct round_progress *p, uint64_t *cues, uint64_t *sims,
                            uint64_t *sim_cues)
{
    size_t n = p->rounds < ROUND_PROGRESS_RING ? (size_t)p->rounds : ROUND_PROGRESS_RING;
    uint64_t s[ROUND_PROGRESS_RING], sc[ROUND_PROGRESS_RING], rc[ROUND_PROGRESS_RING];
    size_t nsc = 0, nrc = 0;
    for (size_t i = 0; i < n; i++) {
        s[i] = p->ring_sims[i];
        if (p->ring_sim_cues[i] != UINT64_MAX)
            sc[nsc++] = p->ring_sim_cues[i];
        if (p->ring_cues[i] != UINT64_MAX)
            rc[nrc++] = p->ring_cues[i];
    }
    *cues = round_progress_median(rc, nrc);
    *sims = round_progress_median(s, n);
    *sim_cues = round_progress_median(sc, nsc);
}

static bool put(char *buf, size_t len, size_t *used, const char *fmt, unsigned long long v)
{
    if (*used >= len)
        return false;
    int k = snprintf(buf + *used, len - *used, fmt, v);
    if (k < 0 || (size_t)k >= len - *used)
        return false;
    *used += (size_t)k;
    return true;
}

bool round_progress_json(const struct round_progress *p, char *buf, size_t len, size_t *used)
{
    uint64_t cues, sims, sim_cues;
    round_progress_medians(p, &cues, &sims, &sim_cues);
    bool ok = put(buf, len, used, ",\"progress\":{\"rounds_with_sims\":%llu", p->with_sims) &&
              put(buf, len, used, ",\"rounds_without_sims\":%llu", p->rounds - p->with_sims);
    for (int i = 0; ok && i < ROUND_NOSIM_KINDS; i++) {
        char fmt[48];
        snprintf(fmt, sizeof fmt, ",\"nosim_%s\":%%llu", nosim_names[i]);
        ok = put(buf, len, used, fmt, p->nosim[i]);
    }
    ok = ok && put(buf, len, used, ",\"record_cut\":%llu", p->rec_cut) &&
         put(buf, len, used, ",\"record_stopped\":%llu", p->rec_stopped) &&
         put(buf, len, used, ",\"median_cues\":%llu", cues) &&
         put(buf, len, used, ",\"median_sims\":%llu", sims) &&
         put(buf, len, used, ",\"median_sim_cues\":%llu", sim_cues) &&
         put(buf, len, used, ",\"sims_hist\":[%llu", p->hist[0]);
    size_t last = 0; /* up to the largest count of simulations seen */
    for (size_t i = 0; i < ROUND_PROGRESS_HIST; i++)
        if (p->hist[i])
            last = i;
    for (size_t i = 1; ok && i <= last; i++)
        ok = put(buf, len, used, ",%llu", p->hist[i]);
    if (!ok || len - *used < 3)
        return false;
    memcpy(buf + *used, "]}", 3);
    *used += 2;
    return true;
}
