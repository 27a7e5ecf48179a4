/* The trace model: cue points recorded during a serialized execution.
 *
 * A cue point (event) is a point where the VMM's scheduler may switch threads:
 * a faulting access to a page the thread does not own, or a synchronisation
 * syscall (futex wait/wake, clone, exit, join). The trace lists events in the
 * order they were PERFORMED: step i of the serialized execution let thread
 * trace.ev[i].tid perform event i and run on, privately, up to its next cue
 * point. Work between two cue points of a thread touches only pages that thread
 * owns, so it commutes with every other thread's work; that is what makes the
 * order of cue points the whole story of an interleaving.
 *
 * Threads are numbered 1..EX_MAX_TID (the VMM's numbering: main thread 1, then
 * creation order; past EX_MAX_TID threads, a new thread takes the id of one that has
 * exited, so an id may stand for two threads one after the other: vmm/sched/serialize.h).
 * Pure data, no KVM. */
#ifndef EXPLORER_TRACE_H
#define EXPLORER_TRACE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EX_MAX_TID 255
#define EX_SYM_LEN 48
#define EX_INSN_LEN 48
/* Events per trace; keeps event indices in int32_t. */
#define EX_MAX_EVENTS (1u << 26)

/* A set of thread ids (0..255; tid 0 is never a thread). */
struct ex_tidset {
    uint64_t w[4];
};

static inline void ex_tidset_clear(struct ex_tidset *s)
{
    s->w[0] = s->w[1] = s->w[2] = s->w[3] = 0;
}
static inline void ex_tidset_add(struct ex_tidset *s, uint32_t t)
{
    if (t <= EX_MAX_TID)
        s->w[t >> 6] |= 1ULL << (t & 63);
}
static inline void ex_tidset_del(struct ex_tidset *s, uint32_t t)
{
    if (t <= EX_MAX_TID)
        s->w[t >> 6] &= ~(1ULL << (t & 63));
}
static inline bool ex_tidset_has(const struct ex_tidset *s, uint32_t t)
{
    return t <= EX_MAX_TID && (s->w[t >> 6] >> (t & 63)) & 1;
}
static inline bool ex_tidset_empty(const struct ex_tidset *s)
{
    return !(s->w[0] | s->w[1] | s->w[2] | s->w[3]);
}
unsigned ex_tidset_count(const struct ex_tidset *s);
/* Smallest member > after (wrapping around to the smallest member), 0 if empty.
 * after == 0 gives the smallest member. */
uint32_t ex_tidset_next_cyclic(const struct ex_tidset *s, uint32_t after);

enum ex_kind {
    EX_READ = 1,        /* memory read */
    EX_WRITE,           /* memory write */
    EX_RMW,             /* read-modify-write (cmpxchg, xadd, xchg, add [m],r ...) */
    EX_FUTEX_WAIT,      /* addr = futex word; blocks unless EX_F_NOBLOCK */
    EX_FUTEX_WAKE,      /* addr = futex word; arg = number of threads woken */
    EX_THREAD_CREATE,   /* arg = child tid */
    EX_THREAD_EXIT,     /* addr = clear_child_tid word (0 if none); arg = threads woken there */
    EX_THREAD_JOIN,     /* arg = joined tid; blocks until that thread's exit */
    EX_SYNC_OTHER,      /* any other scheduling point (sched_yield, nanosleep, ...) */
    EX_KIND_MAX_ = EX_SYNC_OTHER
};

enum {
    EX_F_ATOMIC = 1u << 0,  /* LOCK prefix, xchg with memory, or otherwise atomic */
    EX_F_NOBLOCK = 1u << 1, /* futex wait / join that returned without blocking */
    EX_F_PREEMPT = 1u << 2, /* EX_SYNC_OTHER: a sparse schedule's preemption point (rip) */
    EX_F_STACK = 1u << 3,   /* an access near the accessing thread's own stack pointer */
    EX_F_ALL_ = EX_F_ATOMIC | EX_F_NOBLOCK | EX_F_PREEMPT | EX_F_STACK
};

struct ex_event {
    uint64_t seq;       /* == index in the trace (ex_trace_append assigns it) */
    uint64_t addr;      /* guest virtual address accessed / futex word */
    uint64_t page;      /* addr's page (ex_trace_append fills it from addr if 0) */
    uint64_t rip;
    /* 1 + seq of the event that made this thread runnable again, set on the first
     * event a thread performs after it blocked (futex wait, join) or on a new
     * thread's first event (its create). 0 = none or unknown: the explorer then
     * infers it (FIFO futex queues per address, create -> child, exit -> join). */
    uint64_t waker;
    uint32_t tid;       /* 1..EX_MAX_TID */
    uint32_t arg;       /* see enum ex_kind */
    uint16_t size;      /* bytes accessed (memory events) */
    uint8_t kind;       /* enum ex_kind */
    uint8_t flags;      /* EX_F_* */
    char sym[EX_SYM_LEN];   /* optional: symbol+offset of rip */
    char insn[EX_INSN_LEN]; /* optional: decoded instruction */
};

struct ex_trace {
    struct ex_event *ev;
    size_t n, cap;
    /* Largest tid seen (ex_trace_append raises it; the VMM may set it higher).
     * The threads that matter to the explorer are those with events: a thread
     * that stays blocked through the whole fragment has nothing to reorder. */
    uint32_t nthreads;
};

static inline bool ex_is_access(const struct ex_event *e)
{
    return e->kind == EX_READ || e->kind == EX_WRITE || e->kind == EX_RMW;
}
static inline bool ex_is_write(const struct ex_event *e)
{
    return e->kind == EX_WRITE || e->kind == EX_RMW;
}
static inline bool ex_is_read(const struct ex_event *e)
{
    return e->kind == EX_READ || e->kind == EX_RMW;
}
static inline bool ex_is_atomic(const struct ex_event *e)
{
    return (e->flags & EX_F_ATOMIC) != 0;
}
/* Byte ranges [addr, addr+size) intersect (a size of 0 counts as 1). */
bool ex_overlap(const struct ex_event *a, const struct ex_event *b);
/* A "location" (a variable, for jinx, pctvb, AVIO, coverage and the shared
 * location ranking) is an access's start address: a struct's fields, e.g. a
 * mutex's type and lock words, stay apart. Accesses of different widths to
 * one variable are assumed to start at the same address. */
static inline uint64_t ex_loc_of(const struct ex_event *e)
{
    return e->addr;
}
/* The aligned 8-byte word containing addr: the grouping used where byte
 * overlap is checked precisely (races, reads-from). */
static inline uint64_t ex_word_of(const struct ex_event *e)
{
    return e->addr >> 3;
}

void ex_trace_init(struct ex_trace *t);
void ex_trace_free(struct ex_trace *t);
/* Appends a copy of *e, setting seq to its index and page if 0; raises nthreads.
 * Returns the stored event, or NULL on allocation failure or beyond EX_MAX_EVENTS. */
struct ex_event *ex_trace_append(struct ex_trace *t, const struct ex_event *e);
/* Convenience for the VMM and tests: a memory access or sync event. */
struct ex_event *ex_trace_access(struct ex_trace *t, uint32_t tid, enum ex_kind kind,
                                 uint64_t addr, uint16_t size, uint8_t flags,
                                 uint64_t rip);
struct ex_event *ex_trace_sync(struct ex_trace *t, uint32_t tid, enum ex_kind kind,
                               uint64_t addr, uint32_t arg);
/* A deep copy: dst is taken as uninitialised (whatever it held is not freed: free it
 * first). 0, or -1 out of memory (dst then empty). */
int ex_trace_copy(struct ex_trace *dst, const struct ex_trace *src);
/* Checks every invariant the explorer relies on (seq == index, tids in range,
 * known kinds and flags, wakers in the past and of the right kind ...). Use it on
 * any trace read back from a file. Returns true if valid; else writes a reason. */
bool ex_trace_validate(const struct ex_trace *t, char *why, size_t whylen);

/* Index of the first event where a and b differ in what was done (thread,
 * kind, address, size, flags, rip, arg), or the shorter length if one is a
 * prefix of the other; -1 if they agree entirely. A replay whose trace differs
 * from the simulation it retires has diverged. */
long ex_trace_first_difference(const struct ex_trace *a, const struct ex_trace *b);

const char *ex_kind_name(enum ex_kind k);
/* One line per event. */
void ex_trace_print(FILE *f, const struct ex_trace *t);
/* A per-thread timeline of memory accesses to locations touched by more than one
 * thread (plus sync events): one column per thread, one row per event. */
void ex_trace_print_timeline(FILE *f, const struct ex_trace *t);
/* The same with event `mark` (if >= 0) always shown and flagged ">>": the cue point where
 * a retired interleaving first differs from the recording. */
void ex_trace_print_timeline_marked(FILE *f, const struct ex_trace *t, long mark);

#endif
