/* Schedules: which thread performs each cue point, and their file formats.
 *
 * A schedule is a sequence of segments (thread, steps): "thread T performs the
 * next `steps` cue points". Expanded, it is the sequence of thread ids chosen
 * at each cue point. When the segments are used up, a default policy decides:
 *
 *   continue         keep running the thread that ran last while it is enabled;
 *                    when it is not, the next enabled thread in cyclic tid order
 *                    (the lowest enabled tid if nothing has run yet).
 *   roundrobin Q     each enabled thread in cyclic tid order performs Q cue
 *                    points (fewer if it blocks), starting after the thread
 *                    that ran last.
 *
 * What happens when a segment names a thread that is not enabled is the
 * cursor's business (cursor.h).
 *
 * Text format (one item per line; '#' starts a comment; blank lines ignored):
 *
 *     # circle: B's lock between A's unlock and relock
 *     T1 x2
 *     T2 x4
 *     T1          # same as "T1 x1"
 *     default continue        # or: default roundrobin 3
 *
 * A sparse schedule (vmm/sched/sparse.h) says so on a line of its own, then lists its
 * preemption points, before or among the segments:
 *
 *     sparse
 *     preempt T2 0x4012bf x21 # T2 stops before its 21st execution of 0x4012bf
 *     yield 0x401400          # any thread yields before each execution of 0x401400
 *
 * JSON format:
 *
 *     {"version":1,"default":"continue","quantum":1,"note":"...",
 *      "segments":[{"thread":1,"steps":2},{"thread":2,"steps":4}]}
 *
 * "version" and "segments" are required; "default" ("continue" or
 * "roundrobin"), "quantum" (1..EX_MAX_STEPS), "note" (a string, kept up to
 * EX_NOTE_LEN-1 bytes) and "shared_pages" (an array of at most
 * EX_MAX_SHARED_PAGES page-aligned addresses, strictly ascending; printed only
 * when there are some), "sparse" (true or false) and "preempt" (only with
 * "sparse": true; at most EX_MAX_PREEMPTS objects {"thread":T,"rip":R,"count":N},
 * and "after":K for a chained point (struct ex_preempt.chain; text: '... x<count>
 * after <K>'), no two with the same thread and rip) and "yield" (only with "sparse": true; at
 * most EX_MAX_YIELDS rips, strictly ascending) and "timers" (early timer endings, below) are
 * optional; other keys are ignored. Threads are
 * 1..255, steps 1..EX_MAX_STEPS, at most EX_MAX_SEGMENTS segments, lines (text)
 * at most EX_MAX_LINE bytes, input at most EX_MAX_INPUT bytes. Both
 * parsers take untrusted input: anything else is rejected with a message
 * naming line and column. Adjacent segments of the same thread are merged on
 * input and output, so print(parse(x)) is canonical.
 *
 * Early timer endings (docs/timers.md): "thread T's timer ended early at choice S" — at
 * the S-th choice (0-based: the choice of the (S+1)-th pick, counted over the picks that
 * had an enabled thread), before the thread is chosen, T is blocked in a sleep or a timed
 * wait whose deadline has not come; virtual time jumps to that deadline, T (and every
 * other wait due by then) wakes with the result Linux gives at expiry, and the schedule's
 * choice at S is T. Text: 'timer T<thread> at <step>' lines (with an optional comment);
 * JSON: "timers":[{"step":S,"thread":T,"call":"nanosleep","ns":N,"by":B,"rip":R,
 * "sym":"reader+0x49"}], the steps strictly ascending, at most EX_MAX_TIMERS; "call" (a
 * syscall name, [a-z0-9_], at most EX_TIMER_CALL_LEN-1 bytes), "ns" (the time it asked
 * to wait), "by", "rip" and "sym" (the thread that made the cue point, where, and that
 * place's symbol+offset: printable ASCII but '"' and '\', at most EX_TIMER_SYM_LEN-1
 * bytes) only name the ending for reports: a replay needs step and thread. */
#ifndef EXPLORER_SCHEDULE_H
#define EXPLORER_SCHEDULE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EX_SCHED_MAX_TID 255       /* == EX_MAX_TID of trace.h */
#define EX_MAX_STEPS 1000000000u
#define EX_MAX_INPUT (1u << 26)    /* bytes of schedule text/JSON accepted */
#define EX_MAX_SEGMENTS (1u << 20)
#define EX_MAX_LINE 4096
#define EX_NOTE_LEN 128
#define EX_MAX_SHARED_PAGES 65536u
#define EX_SCHED_PAGE 4096u
#define EX_MAX_PREEMPTS 16u
#define EX_MAX_YIELDS 4u
#define EX_MAX_PREEMPT_RIP ((1ULL << 47) - 1) /* user addresses only */
#define EX_MAX_TIMERS 16u          /* early timer endings a schedule carries */
#define EX_TIMER_CALL_LEN 24
#define EX_TIMER_SYM_LEN 64
#define EX_MAX_TIMER_NS (1ULL << 62)

enum ex_default_policy { EX_DEFAULT_CONTINUE = 0, EX_DEFAULT_ROUNDROBIN = 1 };

struct ex_segment {
    uint32_t thread;
    uint32_t steps;
};

/* A sparse schedule's decision inside computation: thread `thread` is stopped right
 * before its `count`-th execution (counted from the run's start) of the instruction
 * at `rip`, and that stop is a cue point like a syscall's (vmm/sched/sparse.h). Thread
 * 0: any thread, the `count`-th execution by whichever threads run it (one runs at a
 * time, so the count is as deterministic as one thread's); the thread that makes it
 * stops. */
struct ex_preempt {
    uint32_t thread;
    uint32_t count;
    uint64_t rip;
    /* Nonzero: the point has no count yet; it fires at the first execution whose
     * registers hash to this (a timed run's decision, made where a time slice ended:
     * vmm/rounds/explore_timed.h). Only a live replay of such a run carries one, and it
     * turns it into the count the point fired at: never in the formats nor a dump. It
     * is looked for from the fragment's match_after-th cue point on (the decision came
     * after that many: an execution before, with the same state, is another one). */
    uint64_t match;
    uint64_t match_after;
    /* Nonzero k: a chained point. It counts (and is planted) only from the moment point k
     * (1-based, an earlier one of this schedule) fired: "the N-th execution of rip after
     * point k stopped its thread" (a race's second access, the other thread's: RaceFuzzer's
     * pairing, with deterministic counts). Never on a match point, nor chained to one. */
    uint32_t chain;
};

/* A timer that ended early (above): step and thread replay it; the rest names it. */
struct ex_timer_end {
    uint64_t step;          /* the choice it came before (0-based) */
    uint32_t thread;        /* whose timer */
    uint32_t by;            /* the thread whose cue point it was (0: unknown) */
    uint64_t ns;            /* the wait it asked for (0: unknown) */
    uint64_t rip;           /* where `by` was (0: unknown) */
    char call[EX_TIMER_CALL_LEN]; /* "nanosleep", "futex", ... ("": unknown) */
    char sym[EX_TIMER_SYM_LEN];   /* rip's symbol+offset, libraries too ("": unknown) */
};

struct ex_schedule {
    struct ex_segment *seg;
    size_t nseg, cap;
    uint8_t policy;         /* enum ex_default_policy */
    uint32_t quantum;       /* roundrobin steps per turn, >= 1 */
    char note[EX_NOTE_LEN]; /* who made it and why, e.g. "pct d=3 seed=..." */
    /* Pages whose every access is a cue point from the start (a whole run's
     * learnt shared pages: vmm/sched/crew.h), ascending; the cue points, and so
     * the schedule's meaning, depend on them. Not in the text format. */
    uint64_t *shared;
    size_t nshared;
    /* Sparse (decisions only): no memory cue points; the cue points are the
     * synchronization syscalls and the preemption points below, each thread
     * running with its pages mapped in between. */
    bool sparse;
    uint32_t npreempt;
    struct ex_preempt preempt[EX_MAX_PREEMPTS];
    /* Yield points (sparse only): every execution of the instruction at each, by any
     * thread, is a cue point where the thread yields (a spin loop that makes no
     * syscall hands over there). Ascending, distinct. */
    uint32_t nyield;
    uint64_t yield[EX_MAX_YIELDS];
    /* Timers that end early, steps ascending (any schedule, sparse or not). */
    uint32_t ntimers;
    struct ex_timer_end timer[EX_MAX_TIMERS];
};

struct ex_parse_error {
    int line, col;          /* 1-based */
    char msg[160];          /* "line L, column C: ..." */
};
/* Fills err (if not NULL) for both schedule forms: position and "line L, column C: ...".
 * Returns -1. */
int ex_parse_error_set(struct ex_parse_error *err, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

void ex_schedule_init(struct ex_schedule *s);
void ex_schedule_free(struct ex_schedule *s);
void ex_schedule_reset(struct ex_schedule *s);   /* empty, keeps memory */
/* A deep copy: dst is taken as uninitialised (whatever it held is not freed: free it
 * first). 0, or -1 out of memory (dst then empty). */
int ex_schedule_copy(struct ex_schedule *dst, const struct ex_schedule *src);
/* Appends `steps` cue points for thread (merging with the last segment).
 * Returns 0, or -1 on bad arguments / too many segments / no memory. */
int ex_schedule_push(struct ex_schedule *s, uint32_t thread, uint32_t steps);
/* Sets s->shared to a sorted, de-duplicated copy of pages (each rounded down
 * to its page). Returns 0, or -1 (s unchanged) for more than
 * EX_MAX_SHARED_PAGES distinct pages or no memory. */
int ex_schedule_set_shared(struct ex_schedule *s, const uint64_t *pages, size_t n);
/* Adds a preemption point (sparse schedules; thread 0: any thread): 0, or -1 for a bad
 * point (thread past EX_SCHED_MAX_TID, count 0 or past EX_MAX_STEPS, rip 0 or past
 * EX_MAX_PREEMPT_RIP), a repeat of a (thread, rip) already there, or a full list. */
int ex_schedule_add_preempt(struct ex_schedule *s, uint32_t thread, uint64_t rip, uint32_t count);
/* Adds a point of thread (>= 1) that fires where its state hashes to match (nonzero),
 * looked for from cue point `after` on (struct ex_preempt): 0, or -1 as
 * ex_schedule_add_preempt refuses. */
int ex_schedule_add_match(struct ex_schedule *s, uint32_t thread, uint64_t rip, uint64_t match,
                          uint64_t after);
/* Chains point i (0-based) to point k (1-based, k <= i: an earlier one; struct
 * ex_preempt.chain): 0, or -1 for a point out of range, k 0 or not earlier, or either of
 * them a match point. */
int ex_schedule_chain_preempt(struct ex_schedule *s, uint32_t i, uint32_t k);
/* Adds a yield point (sparse schedules), kept ascending: 0, or -1 for rip 0 or past
 * EX_MAX_PREEMPT_RIP, a repeat, or a full list. */
int ex_schedule_add_yield(struct ex_schedule *s, uint64_t rip);
/* Appends an early timer ending: 0, or -1 for thread 0 or past EX_SCHED_MAX_TID, a step
 * not after the last one's, ns past EX_MAX_TIMER_NS, by past EX_SCHED_MAX_TID, rip past
 * EX_MAX_PREEMPT_RIP, a call not [a-z0-9_]{0,EX_TIMER_CALL_LEN-1}, a sym not printable
 * ASCII without '"' and '\' of at most EX_TIMER_SYM_LEN-1 bytes, or a full list. */
int ex_schedule_add_timer(struct ex_schedule *s, const struct ex_timer_end *t);
/* The index of the first ending at a step >= step (ntimers: none). */
uint32_t ex_schedule_timer_from(const struct ex_schedule *s, uint64_t step);
/* Builds a schedule from one thread id per cue point. */
int ex_schedule_from_choices(struct ex_schedule *s, const uint32_t *tids, size_t n);
/* Total steps covered by the segments. */
uint64_t ex_schedule_length(const struct ex_schedule *s);
/* Thread chosen at cue point i (0 if i is beyond the segments). */
uint32_t ex_schedule_thread_at(const struct ex_schedule *s, uint64_t i);
/* Same segments, default policy, sparse points and timer endings' steps and threads
 * (the note and the endings' names are not compared). */
bool ex_schedule_equal(const struct ex_schedule *a, const struct ex_schedule *b);
uint64_t ex_schedule_hash(const struct ex_schedule *s);
void ex_schedule_set_note(struct ex_schedule *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Printing: a malloc'd NUL-terminated string (NULL on no memory). */
char *ex_schedule_to_text(const struct ex_schedule *s);
char *ex_schedule_to_json(const struct ex_schedule *s);
int ex_schedule_write_text(FILE *f, const struct ex_schedule *s);
int ex_schedule_write_json(FILE *f, const struct ex_schedule *s);

/* Parsing: buf need not be NUL-terminated; NUL bytes are an error. On success
 * returns 0 and *s holds the schedule (s is re-initialised, so free it first
 * if it owned memory); on error returns -1, fills *err (if non-NULL) and
 * leaves *s empty. */
int ex_schedule_parse_text(const char *buf, size_t len, struct ex_schedule *s,
                           struct ex_parse_error *err);
int ex_schedule_parse_json(const char *buf, size_t len, struct ex_schedule *s,
                           struct ex_parse_error *err);
/* JSON if the first non-blank byte is '{', text otherwise. */
int ex_schedule_parse(const char *buf, size_t len, struct ex_schedule *s,
                      struct ex_parse_error *err);

/* A growable list of schedules, what strategies produce. */
struct ex_schedule_set {
    struct ex_schedule *v;
    size_t n, cap;
};
void ex_schedule_set_init(struct ex_schedule_set *ss);
void ex_schedule_set_free(struct ex_schedule_set *ss);
/* Moves *s into the set (s is left empty). Returns 0 or -1. */
int ex_schedule_set_take(struct ex_schedule_set *ss, struct ex_schedule *s);
/* Index of a schedule equal to s, or -1. */
long ex_schedule_set_find(const struct ex_schedule_set *ss, const struct ex_schedule *s);

/* libFuzzer-compatible entry point (schedule_fuzz.c). */
int explorer_fuzz_schedule(const uint8_t *data, size_t size);

#endif
