#include "rng.h"
#include "lib/splitmix.h"

void ex_rng_seed(struct ex_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t ex_rng_next(struct ex_rng *r)
{
    return splitmix64(&r->state);
}

uint64_t ex_rng_below(struct ex_rng *r, uint64_t n)
{
    if (n == 0)
        return 0;
    /* Reject the top partial bucket so every residue is equally likely. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
    uint64_t x;
    do
        x = ex_rng_next(r);
    while (x >= limit);
    return x % n;
}

struct ex_rng ex_rng_split(struct ex_rng *r)
{
    struct ex_rng child;
    ex_rng_seed(&child, ex_rng_next(r) ^ 0x5851f42d4c957f2dULL);
    return child;
}

void ex_rng_shuffle_u32(struct ex_rng *r, uint32_t *v, uint32_t n)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)ex_rng_below(r, i);
        uint32_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

uint32_t ex_rng_sample_u32(struct ex_rng *r, uint32_t *cand, uint32_t n, uint32_t k,
                           uint32_t *out)
{
    if (k > n)
        k = n;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t j = i + (uint32_t)ex_rng_below(r, n - i);
        uint32_t t = cand[i];
        cand[i] = cand[j];
        cand[j] = t;
        out[i] = cand[i];
    }
    return k;
}

int ex_cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}
