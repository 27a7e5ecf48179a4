/* Conflict variables: where a thread switch can change what a run does.
 *
 * A variable is an access's start address (ex_loc_of), so fields sharing an
 * 8-byte word stay apart. From one run's trace, ex_conflicts_learn() finds
 *   DATA  the variables of its data races (race.h: plain accesses of two
 *         threads unordered by happens-before) never touched atomically, in
 *         this run or an earlier one (the VMM records no access on a page only
 *         one thread has used, so a run may lack the atomic accesses);
 *   SYNC  variables two threads wrote atomically (locks, atomic counters,
 *         CAS'd pointers: happens-before orders their accesses by the order
 *         they happened in, which is exactly what another schedule changes).
 * Two releases count for the data races that hb.h does not know: a plain
 * store to a variable touched atomically (musl unlocks its internal locks with
 * a_store, a plain mov) and a thread's exit, which releases every variable the
 * thread wrote atomically (musl's thread-list lock is released by the kernel's
 * store on clear_child_tid, an address the VMM may not report; a lock a dead
 * thread holds blocks everyone anyway). So lock-protected data, the thread
 * structures create and join hand over, and a lock's spinning plain reads are
 * not conflicts: reordering them changes nothing.
 *
 * Pure data; the trace is only read (any content is safe). */
#ifndef EXPLORER_CONFLICT_H
#define EXPLORER_CONFLICT_H
#include "trace.h"
#include "u64map.h"

/* Bits of a variable's class. ATOMIC: some run touched it atomically (then
 * it is never DATA; a map may hold ATOMIC-only variables). */
enum { EX_CONFLICT_DATA = 1, EX_CONFLICT_SYNC = 2, EX_CONFLICT_ATOMIC = 4 };

/* An access of this kind to a variable of class cls is racy: any access to a
 * DATA variable, a write or RMW of a SYNC one. */
bool ex_conflict_racy(uint64_t cls, enum ex_kind kind);

/* Adds the run's conflict variables to *conflict (address -> class bits, kept
 * across runs) and counts its racy accesses: accesses that are racy by the
 * classes in *conflict after the run joined it, made while another thread was
 * alive (from its create, or the snapshot, to its last event: someone else
 * could have gone), a thread's re-read of the variable it read last excepted
 * (a spin sees nothing new), plus the access that follows a racy DATA access
 * in its thread (the window the race opens: publish, then fill; check, then
 * use); *racy_data counts those to DATA variables and the windows, *windows
 * (if not NULL) the windows alone. t NULL: nothing learnt, counts 0. Returns 0, or -1 on no memory (the map stays
 * usable, possibly partial). */
int ex_conflicts_learn(struct ex_u64map *conflict, const struct ex_trace *t, uint64_t *racy,
                       uint64_t *racy_data, uint64_t *windows);

#endif
