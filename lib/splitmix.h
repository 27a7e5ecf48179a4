/* splitmix64, the one generator and mixer of the tree: the VMM's seeded getrandom and
 * AT_RANDOM (vm->rng), the explorer's ex_rng, and its hash mixer (the finaliser alone).
 * Tiny, fast, and its output stream is the same on every platform and compiler, which
 * matters more here than statistical strength: runs replay from their seeds. */
#ifndef JINX_SPLITMIX_H
#define JINX_SPLITMIX_H
#include <stdint.h>

/* The finaliser: a 64-bit mixer. */
static inline uint64_t splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The next number of the stream *state (which it advances). */
static inline uint64_t splitmix64(uint64_t *state)
{
    return splitmix64_mix(*state += 0x9e3779b97f4a7c15ULL);
}

#endif
