/* Race flips learnt from earlier whole runs (the "flip" strategy, online.h).
 *
 * Every whole run records, per step, the pending event of the thread it chose
 * (ex_online: that thread then performed it). After the run, ex_flips_learn()
 * walks that record variable by variable (a variable is an access's start
 * address) and, wherever the accesses pass from one thread T1 to another
 * thread T2 and the two conflict (one of them writes), notes a FLIP: replay
 * the run up to T1's access e1, hold T1 there until T2 has made its access e2
 * (or until nobody else can go), then let T1 go on. That reverses the race
 * (e1, e2). T1's accesses to the variable just before e2 form a block; two
 * flips are noted, at the block's first access (e2 moves before the whole
 * block: an order violation, a lock taken by the other thread first) and at
 * its last (e2 lands inside the block: an atomicity violation, a check and
 * its use, a publish and its fill). Only variables the history classes as
 * conflicts count (conflict.h): DATA ones first, then SYNC ones; accesses to
 * anything else (lock-protected data, create and join hand-overs) cannot
 * race.
 *
 * Coverage: every run (whatever its strategy) also notes the ORDERS it showed:
 * code y accessed a variable right after another thread's block there, which
 * began or ended at code x. A flip whose reversed order (e2's code, then e1's)
 * some run already showed comes after every flip whose reversal is new: that
 * interleaving was explored (musl's own benign races, met both ways within a
 * few runs, stop costing schedules). A flip is keyed by the code of its two accesses (e1's and e2's rip
 * and which end of the block), and a key is noted once per snapshot (the same
 * race met again in a later run is not tried again), except that a race run 0
 * showed is noted once more by the next run that shows it: run 0 had no
 * pre-shared pages, so its flips cannot be followed faithfully (online.h). The
 * untried flips are handed out DATA before SYNC, newest variable first; among
 * equals, a DATA flip learnt since run 1 at its block's first end comes after
 * the others (inside a window first: the relay's and the atomicity
 * violation's preemption), the rest in the order they were learnt. A flipped
 * run that reaches new code (a branch taken only when the race went the other
 * way) contributes new flips of its own, first (a relay of two or three
 * preemptions is found as a chain of flips, depth first).
 *
 * Pure data, no KVM; deterministic: the same runs learnt in the same order
 * give the same flips. */
#ifndef EXPLORER_FLIP_H
#define EXPLORER_FLIP_H
#include "u64map.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The pending event a thread chosen at one step performed. */
struct ex_step {
    uint64_t addr, rip;
    uint32_t tid;
    uint16_t size;
    uint8_t kind;   /* enum ex_kind; 0 when not known */
};

struct ex_flip {
    uint32_t parent;    /* index in ex_flips.parents */
    uint64_t step;      /* the parent's step (0-based) where T1 performed e1 */
    uint32_t t1, t2;
    uint64_t addr;      /* the variable */
    uint8_t kind;       /* e1's kind, size */
    uint16_t size;
    uint64_t rip1, rip2;    /* e1's and e2's code (their address if unknown) */
    uint8_t rank;       /* 0 DATA, 1 SYNC */
    bool last_end;      /* e1 ends T1's block (else it begins it) */
    uint64_t born;      /* the run (0-based) that first showed the variable racing */
    uint64_t from;      /* the run (0-based) it was learnt from */
    bool tried;
};

#define EX_FLIPS_MAX 4096
#define EX_FLIPS_MAX_PARENTS 64

struct ex_flips {
    struct ex_flip *v;
    size_t n, cap;
    struct {
        uint32_t *choices;
        struct ex_step *steps;  /* the event of each choice (a flip run follows them) */
        size_t n;
    } parents[EX_FLIPS_MAX_PARENTS];
    size_t nparents;
    struct ex_u64map keys;  /* flip keys noted so far */
    struct ex_u64map orders; /* ex_flips_order_key(x, y): code y met a variable right
                                after another thread's block at it began or ended at x */
    struct ex_u64map born;  /* variable -> the run that first showed it racing */
    struct ex_u64map vars;  /* code (rip) of an access -> the first run that made it */
    uint64_t runs;          /* runs learnt */
    uint64_t tried;         /* flips handed out and run */
    uint64_t flipruns;      /* runs learnt that made a flip */
};

uint64_t ex_flips_order_key(uint64_t from_rip, uint64_t to_rip, uint64_t addr);

void ex_flips_init(struct ex_flips *f);
void ex_flips_free(struct ex_flips *f);

/* The untried flip to run next, or -1: one whose reversed order (e2's code
 * right before e1's, at the same variable) no run has shown yet before one
 * some run has (that order was explored already), DATA before SYNC, newest
 * variable first, a DATA flip learnt since run 1 at its block's first end
 * after the others, then in the order they were learnt. */
long ex_flips_next(const struct ex_flips *f);

/* Learns from one run: marks flip `used` (>= 0) tried, then notes the run's new
 * flips. steps[i] is the event of choices[i] (n of each); conflict maps a
 * variable to its EX_CONFLICT_* class (the history's, after it learnt this
 * run). Returns the number of new flips, or -1 on no memory (some may have
 * been noted; the store stays usable). */
long ex_flips_learn(struct ex_flips *f, long used, const uint32_t *choices,
                    const struct ex_step *steps, size_t n, const struct ex_u64map *conflict);

/* The same for a flip run that reversed its race (`opened`): besides the
 * conflict variables, the variables no earlier run accessed count as DATA for
 * its flips when two threads accessed them and one wrote, whatever their class
 * (not atomically: the reversed race sent a thread down a branch no run took,
 * and the next preemption of a relay is at a variable of that branch; its
 * accesses are often ordered by chance, by musl's thread-list lock at a
 * thread's exit, so no data race classes them yet). Their flips are the
 * newest, so they come next: a chain of flips goes depth first. */
long ex_flips_learn_opened(struct ex_flips *f, long used, bool opened, const uint32_t *choices,
                           const struct ex_step *steps, size_t n,
                           const struct ex_u64map *conflict);

#endif
