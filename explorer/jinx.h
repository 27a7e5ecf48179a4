/* The Jinx article's exploration: for a shared location l, take thread B's
 * first access b1 to l and move it to each insertion position among thread
 * A's accesses a1..an to l: before a1, between a1/a2, ..., after an. For the
 * Circle class (A: lock l, SetRadius, unlock, lock, UpdateCircumference,
 * unlock -- four accesses to l; B: GetArea under l) that gives five
 * positions; the one the recording already has is skipped (unless asked for),
 * and the others are the article's simulations, among them B's GetArea
 * between A's unlock and relock, which fails the assertion.
 *
 * Each placement is a steered recorded order (steer.h): b1 held until a_p has
 * run, a_{p+1} held until b1 has run, and once b1 has run, B keeps running
 * until its next access to l (for a lock: through its critical section), so
 * the moved access brings its consequences with it.
 *
 * ex_jinx_generate() picks locations by how shared they are (analysis.h
 * order); per location, A is tried in decreasing number of accesses to l and
 * B in order of first access; at most jinx_max_positions positions per (l, A,
 * B), a seeded sample when there are more. */
#ifndef EXPLORER_JINX_H
#define EXPLORER_JINX_H
#include "strategy.h"

struct ex_jinx_site {
    uint64_t loc;           /* location key (ex_loc_of) */
    uint32_t a_tid, b_tid;
    uint32_t n;             /* A's accesses to loc: positions are 0..n */
    uint32_t recorded_pos;  /* where b1 is in the recording */
    uint32_t b1;            /* B's first access to loc (event index) */
    int32_t b_next;         /* B's next access to loc after b1, or -1 */
    uint32_t *a_acc;        /* A's accesses to loc (event indices), n of them */
};

/* Finds the site; returns 0, 1 if A or B never accesses loc (or A == B),
 * -1 on no memory. Free with ex_jinx_site_free. */
int ex_jinx_site_find(const struct ex_analysis *a, uint64_t loc, uint32_t a_tid, uint32_t b_tid,
                      struct ex_jinx_site *site);
void ex_jinx_site_free(struct ex_jinx_site *site);
/* The schedule placing b1 at position pos (0..site->n); order (optional,
 * capacity >= trace length) receives the predicted event order. */
int ex_jinx_schedule(const struct ex_analysis *a, const struct ex_jinx_site *site, uint32_t pos,
                     struct ex_schedule *s, uint32_t *order);

#endif
