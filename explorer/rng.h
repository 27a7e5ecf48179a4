/* Seeded pseudo-random numbers for the explorer.
 *
 * Every random choice the explorer makes comes from a struct ex_rng the caller
 * owns and passes in: there is no global state, so a round is reproducible from
 * its seed alone (same seed + same trace + same parameters = same schedules).
 * The generator is splitmix64 (lib/splitmix.h): tiny, fast, and its output stream is stable
 * across platforms and compilers, which matters more here than statistical
 * strength. */
#ifndef EXPLORER_RNG_H
#define EXPLORER_RNG_H
#include <stdint.h>

struct ex_rng {
    uint64_t state;
};

void ex_rng_seed(struct ex_rng *r, uint64_t seed);
uint64_t ex_rng_next(struct ex_rng *r);
/* Uniform in [0, n); n == 0 returns 0. Unbiased (rejection sampling). */
uint64_t ex_rng_below(struct ex_rng *r, uint64_t n);
/* An independent generator derived from r (advances r by one draw). Used to give
 * each sub-strategy its own stream, so adding draws in one strategy does not
 * shift the choices of the others. */
struct ex_rng ex_rng_split(struct ex_rng *r);
/* Draws min(k, n) distinct elements of cand[0..n) uniformly into out[], in
 * draw order; reorders cand (a partial Fisher-Yates). Returns the count. */
uint32_t ex_rng_sample_u32(struct ex_rng *r, uint32_t *cand, uint32_t n, uint32_t k,
                           uint32_t *out);
/* qsort comparator for uint32_t, to put samples in ascending order. */
int ex_cmp_u32(const void *x, const void *y);
/* Fisher-Yates shuffle of n uint32_t. */
void ex_rng_shuffle_u32(struct ex_rng *r, uint32_t *v, uint32_t n);

#endif
