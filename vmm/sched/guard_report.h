/* What a serialized fragment looked like when the wall guard stopped it
 * (SERIALIZE_WALL_GUARD_NS, serialize.h): the cue point and virtual time it stopped at,
 * whose turn it was, and every thread's state (its turn, runnable and waiting for it, or
 * blocked: on which futex, until which deadline), with the instruction it is at. A guard
 * stop is a fragment that could not end by its cue points, and that is either a thread
 * computing privately (it has the turn and is in the guest) or a scheduler that handed
 * the turn to nobody: the report tells which. */
#ifndef JINX_GUARD_REPORT_H
#define JINX_GUARD_REPORT_H
#include <stdio.h>

struct vm;

/* Writes the report, one line per thread after a heading line, each line starting with
 * prefix. Call on a paused VM whose last fragment the guard stopped (vm->ser->stopped),
 * before anything restores or ends it. Caller holds no locks. */
void guard_report(struct vm *vm, FILE *out, const char *prefix);

#endif
