/* Data races in a trace: two accesses from different threads to overlapping
 * bytes, at least one a write, not both atomic, unordered by happens-before.
 *
 * Like FastTrack, each new access is checked against the LAST read and the LAST
 * write (atomic and plain kept apart) of every other thread to the same 8-byte
 * word: if the last one is ordered before the new access, every earlier one is
 * too (program order), so nothing is lost except repeated reports of the same
 * race. Each reported race is a pair of event indices a < b. */
#ifndef EXPLORER_RACE_H
#define EXPLORER_RACE_H
#include "hb.h"

struct ex_race {
    uint32_t a, b;  /* event indices, a < b, different threads */
};

/* Appends every race found to *out (malloc'd, caller frees), at most `max`
 * (0 = no limit). Returns 0, or -1 on allocation failure. */
int ex_races_find(const struct ex_trace *t, const struct ex_hb *hb, size_t max,
                  struct ex_race **out, size_t *nout);

/* A key naming the static race (the unordered pair of rips), for deduplication. */
uint64_t ex_race_key(const struct ex_trace *t, const struct ex_race *r);

#endif
