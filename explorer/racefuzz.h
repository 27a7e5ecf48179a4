/* Race-directed postponement (RaceFuzzer, Sen, PLDI 2008).
 *
 * For a race (e1 by T1, e2 by T2, e1 first in the recording) from the
 * happens-before check, T1 is postponed just before e1 until T2 is about to
 * perform e2; then both run back to back, in one of two orders:
 *   flip = false: e1 then immediately e2 (recorded order, now adjacent);
 *   flip = true:  e2 then immediately e1 (the race reversed).
 * Everything else keeps the recorded order (steer.h). Since e1 and e2 are
 * unordered by happens-before, T2 can always reach e2 without T1 passing e1.
 * ex_race_generate() tries each static race (pair of rips) once, at its first
 * dynamic occurrence, in a seeded random order, both orders each. */
#ifndef EXPLORER_RACEFUZZ_H
#define EXPLORER_RACEFUZZ_H
#include "strategy.h"

int ex_race_schedule(const struct ex_analysis *a, const struct ex_race *r, bool flip,
                     struct ex_schedule *s);

#endif
