/* Interleaving coverage across rounds: the set of interleaved access pairs
 * seen so far, for the scorer's novelty term.
 *
 * An interleaved access pair is two consecutive accesses (in trace order) to
 * the same location by different threads, at least one a write, named by
 * (rip of the first, rip of the second) -- the order matters, so "A's write
 * then B's read" and "B's read then A's write" are different pairs. Keys are
 * 64-bit hashes; a collision can only make something look less novel. */
#ifndef EXPLORER_COVERAGE_H
#define EXPLORER_COVERAGE_H
#include "trace.h"
#include "u64map.h"

struct ex_coverage {
    struct ex_u64map set;
};

void ex_coverage_init(struct ex_coverage *c);
void ex_coverage_free(struct ex_coverage *c);
size_t ex_coverage_count(const struct ex_coverage *c);
bool ex_coverage_has(const struct ex_coverage *c, uint64_t key);
/* Adds every interleaved access pair of t. Returns the number that were new,
 * or -1 on no memory. */
long ex_coverage_add_trace(struct ex_coverage *c, const struct ex_trace *t);

/* Calls fn(key, ctx) for each interleaved access pair of t, in trace order
 * (a pair may repeat). Returns 0, or -1 on no memory, or fn's nonzero value. */
int ex_pairs_foreach(const struct ex_trace *t, int (*fn)(uint64_t key, void *ctx), void *ctx);
uint64_t ex_pair_key(uint64_t rip_first, uint64_t rip_second);

#endif
