/* The budget of one whole run of exploration (vmm/rounds/explore.c; docs/explore.md,
 * "Budgets"), in the process's CPU time (serialize.h, budget_cpu; the names keep "wall"
 * from when it was wall time). Pure arithmetic, unit-tested
 * (tests/unit/test_vmm_explore_wall.c).
 *
 * A whole run starts with EXPLORE_RUN_WALL_NS. When an early run is cut by it before any
 * run ended, the program is either a long one (private computation between few shared
 * accesses: rounds should take over soon) or a short test with many threads whose cue
 * points are slow on a loaded host (150-200 threads: 20-40k cue points, 100-1000 us each).
 * The cue rate tells them apart by two orders of magnitude: a cue-bound run makes
 * thousands of cue points a second of the CPU time it got, a long computing one tens.
 * CPU time, not wall time: on a saturated host the run gets a fraction of a CPU, and its
 * cue rate per wall second falls with the load while the program is the same. */
#ifndef VMM_ROUNDS_EXPLORE_WALL_H
#define VMM_ROUNDS_EXPLORE_WALL_H
#include <stdint.h>

/* At least this many cue points per second of CPU time of a cut run: its time went into
 * cue points. */
#define EXPLORE_CUE_BOUND_RATE 200u

/* The wall budget of the runs after an early run was cut (cues cue points in cpu_ns of
 * the process's CPU time): stretch times run_wall_ns, or, for a cue-bound run, half of
 * what is left of the exploration budget (left_ns) if that is more (the other half stays
 * for the next try or for rounds). */
uint64_t explore_wall_after_cut(uint64_t run_wall_ns, unsigned stretch, uint64_t cues,
                                uint64_t cpu_ns, uint64_t left_ns);

/* Once a run ended after a cut: twice its time t_run_ns (CPU time: the run budget's
 * clock, serialize.h's budget_cpu), at least run_wall_ns, at most the stretched budget. */
uint64_t explore_wall_sized(uint64_t run_wall_ns, uint64_t stretched_ns, uint64_t t_run_ns);

#endif
