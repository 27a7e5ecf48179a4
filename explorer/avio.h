/* Atomicity violations: unserializable interleavings (AVIO, Lu et al. ASPLOS'06;
 * the patterns CTrigger targets).
 *
 * For two consecutive accesses p, c of one thread to a location (ex_loc_of)
 * and a remote access r by another thread performed between them, the triple
 * is unserializable when no serial order of (p,c) and r gives the same result:
 *
 *   R-W-R  the two local reads see different values
 *   W-W-R  the local read does not see the local write
 *   W-R-W  the remote read sees an intermediate value
 *   R-W-W  the local write is based on a stale read (lost update)
 *
 * RMW accesses count as writes locally and as both a read and a write
 * remotely. Triples whose local pair are both atomic (lock operations) are
 * skipped: interleaving on a lock word is what locks are for. */
#ifndef EXPLORER_AVIO_H
#define EXPLORER_AVIO_H
#include "trace.h"

enum ex_avio_pattern { EX_AVIO_RWR, EX_AVIO_WWR, EX_AVIO_WRW, EX_AVIO_RWW, EX_AVIO_NPATTERNS };

struct ex_avio {
    uint32_t p, r, c;   /* local, remote (the latest relevant one), local */
    uint8_t pattern;    /* enum ex_avio_pattern */
};

/* Every unserializable triple in the trace, in order of c. Returns 0 or -1. */
int ex_avio_find(const struct ex_trace *t, size_t max, struct ex_avio **out, size_t *nout);
const char *ex_avio_name(enum ex_avio_pattern p);
/* Key naming the static pattern: (pattern, rip of p, rip of r, rip of c). */
uint64_t ex_avio_key(const struct ex_trace *t, const struct ex_avio *a);

#endif
