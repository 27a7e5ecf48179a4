/* The racing access pair of a dump's retired schedule: what `jinx test --json` reports
 * as "race" and `jinx campaign merge` puts in a bug's signature.
 *
 * The first data race (explorer/race.h: two threads, overlapping bytes, a write, not both
 * atomic, unordered by happens-before) between two plain (non-atomic) accesses whose
 * later access comes at or after the cue point where the retired trace first differs
 * from the recording: the first race that the retired schedule made go another way (the
 * recording, which did not fail, had the same prefix). Races with an atomic side, and
 * those inside the thread library's own locks and condition variables (symbols
 * pthread_*, __lock, __wait, sem_*, ...: plain fast-path reads of a lock word, checked
 * again atomically), are left out: they are benign by design and differ from run to
 * run. Each side is named "symbol+0xoff KIND" (the trace's
 * symbol, or "0x<rip>" when it has none) and the two sides come in text order, so the
 * same static pair reads the same whichever thread ran first. Pure code (no KVM); the
 * traces are untrusted and validated first. */
#ifndef JINX_RACE_PAIR_H
#define JINX_RACE_PAIR_H
#include "explorer/explorer.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define RACE_SIDE_LEN 80

/* 1 with the pair in a and b (cap bytes each, NUL-terminated), 0 when there is no such
 * race, -1 when a trace is invalid or memory ran out. */
int race_pair_of_round(const struct ex_trace *retired, const struct ex_trace *recorded,
                       char *a, char *b, size_t cap);
/* The same over one trace: the first plain race whose later access is event `from` or
 * after. */
int race_pair_of_trace(const struct ex_trace *t, size_t from, char *a, char *b, size_t cap);
/* Writes the pair as JSON: ["a","b"] (ASCII-escaped), or null when !has. */
void race_pair_fput_json(FILE *f, bool has, const char *a, const char *b);

#endif
