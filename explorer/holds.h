/* The words a thread holds, from its own accesses alone: the lock rule of the
 * trace readers that ask "was this access made under a lock?" (dcheck.h,
 * splitrmw.h).
 *
 * A thread HOLDS a word from its atomic RMW of it (a lock taken: cmpxchg,
 * xchg) until its next store or RMW of it (released: musl unlocks with a plain
 * store or a swap, glibc with an xchg or a decrement). At most EX_HOLDS_MAX
 * words at once; past that a new one is not seen. Only the thread's own
 * accesses count, so the rule needs no happens-before; a word is an access's
 * start address (trace.h, ex_loc_of). A condition wait gives the mutex back
 * and takes it again inside libc by the same RMWs, which the rule follows.
 * Pure data, no allocation. */
#ifndef EXPLORER_HOLDS_H
#define EXPLORER_HOLDS_H
#include "trace.h"

#define EX_HOLDS_MAX 4

struct ex_holds {
    uint64_t w[EX_HOLDS_MAX];
    unsigned n;
};

/* Follows e, an access by the thread whose holds *h are: returns true when e
 * took or released a word (a lock step, not a data access), false otherwise. */
bool ex_holds_note(struct ex_holds *h, const struct ex_event *e);

#endif
