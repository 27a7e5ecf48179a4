#include "rounds/explore_wall.h"
#include <stdbool.h>

uint64_t explore_wall_after_cut(uint64_t run_wall_ns, unsigned stretch, uint64_t cues,
                                uint64_t cpu_ns, uint64_t left_ns)
{
    uint64_t wall = stretch * run_wall_ns;
    /* cues / (cpu_ns / 1e9) >= rate, without dividing by a zero time or overflowing. */
    bool cue_bound = cpu_ns > 0 && cues >= (cpu_ns / 1000000u) * EXPLORE_CUE_BOUND_RATE / 1000u;
    if (cue_bound && left_ns / 2 > wall)
        wall = left_ns / 2;
    return wall;
}

uint64_t explore_wall_sized(uint64_t run_wall_ns, uint64_t stretched_ns, uint64_t t_run_ns)
{
    uint64_t wall = 2 * t_run_ns > run_wall_ns ? 2 * t_run_ns : run_wall_ns;
    return wall > stretched_ns ? stretched_ns : wall;
}
