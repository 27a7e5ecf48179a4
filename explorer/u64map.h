/* An open-addressing hash map from uint64_t to uint64_t (also used as a set).
 * The explorer's analyses key things by location, (rip, rip) pair, etc.; this
 * keeps them linear-time without pulling in a dependency. */
#ifndef EXPLORER_U64MAP_H
#define EXPLORER_U64MAP_H
#include "lib/splitmix.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ex_u64map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t cap;     /* power of two, or 0 */
    size_t n;
};

void ex_u64map_init(struct ex_u64map *m);
void ex_u64map_free(struct ex_u64map *m);
void ex_u64map_clear(struct ex_u64map *m);
/* Pointer to the value of key, or NULL. Invalidated by the next insertion. */
uint64_t *ex_u64map_get(const struct ex_u64map *m, uint64_t key);
/* Pointer to the value of key, inserting it with value `init` if absent; *added
 * (if non-NULL) says which. NULL on allocation failure. */
uint64_t *ex_u64map_put(struct ex_u64map *m, uint64_t key, uint64_t init, bool *added);
/* Iteration: for (size_t i = 0; i < m.cap; i++) if (m.used[i]) ... */

/* Appends x to a growable array (*v of *n, room for *cap; doubling from 256): 0, or -1
 * with the array unchanged when memory runs out. The strategies' recorded choices. */
int ex_u32_append(uint32_t **v, size_t *n, size_t *cap, uint32_t x);

/* qsort's comparator for uint64_t, ascending (keys, pages, change points). */
int ex_u64_cmp(const void *x, const void *y);

/* A 64-bit mixer (splitmix64's finaliser); combine with ex_hash_mix(a ^ ex_hash_mix(b)). */
static inline uint64_t ex_hash_mix(uint64_t z)
{
    return splitmix64_mix(z);
}
static inline uint64_t ex_hash2(uint64_t a, uint64_t b)
{
    return ex_hash_mix(a * 0x9e3779b97f4a7c15ULL + ex_hash_mix(b + 0x632be59bd9b4e019ULL));
}

#endif
