/* Jinx's own limits met by a run: the thread cap, guest memory, a syscall jinx does not
 * implement, a signal handler jinx does not run, the explorer's thread ids, a file
 * operation the read-only file layer refused. A program
 * that fails after meeting one may have failed because of jinx, not because of a bug of
 * its own, so the run's report lists them (outcome.c: a line per limit, "limits" in the
 * --report JSON) and `jinx test` says "could not test: <what>, <option>" instead of
 * reporting the failure as a bug (exit status 2). A run that meets a limit and still
 * ends well is not affected: the limit is only listed.
 *
 * Only real execution counts: the syscall layer does not note limits met inside a
 * sandboxed simulation (a simulation's failure becomes real, and is noted then, only
 * when a round retires it). Thread-safe; pure host code (no KVM), unit-tested. */
#ifndef JINX_LIMITLOG_H
#define JINX_LIMITLOG_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum limit_kind {
    LIMIT_THREADS,      /* clone() refused: --vcpus, jinx's maximum, or the host's vCPUs */
    LIMIT_MEMORY,       /* guest RAM exhausted: mmap/brk/mprotect got ENOMEM (--mem) */
    LIMIT_SYSCALL,      /* a syscall jinx does not implement returned -ENOSYS */
    LIMIT_SIGNAL,       /* a signal the program has a handler for killed it instead */
    LIMIT_THREAD_IDS,   /* serialized execution ran out of explorer thread ids */
    LIMIT_FILES,        /* a file operation refused: a write (read-only file layer) or an
                         * open outside the grants (files_refuse.c) */
    LIMIT_KIND_COUNT_
};

#define LIMITS_MAX 16       /* distinct (kind, number) pairs kept; later ones are counted */
#define LIMIT_WHAT_LEN 200
#define LIMIT_OPTION_LEN 120

struct limit {
    enum limit_kind kind;
    long nr;                            /* syscall or signal number; 0 for the others */
    uint64_t count;                     /* times met */
    char what[LIMIT_WHAT_LEN];          /* "clone() refused a thread past 16 threads at once" */
    char option[LIMIT_OPTION_LEN];      /* "raise it with --vcpus N (at most 254)" */
};

struct limits {
    pthread_mutex_t lock;
    int n;
    uint64_t dropped;                   /* notes of pairs beyond LIMITS_MAX */
    struct limit l[LIMITS_MAX];
};

void limits_init(struct limits *ls);
void limits_destroy(struct limits *ls);
/* Notes one occurrence of (kind, nr). The first note of a pair keeps its texts (option
 * may be NULL: nothing raises it). Returns true for that first note. */
bool limits_note(struct limits *ls, enum limit_kind kind, long nr, const char *option,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int limits_count(struct limits *ls);
/* Notes every limit of src in dst once more, with src's texts (dst's own texts win for a
 * pair it had). src and dst must differ. Returns the number of pairs dst had not had. */
int limits_merge(struct limits *dst, struct limits *src);
const char *limit_kind_name(enum limit_kind k);
/* One line per limit: "<prefix>jinx limit: <what> (N times); <option>". */
void limits_print(struct limits *ls, FILE *f, const char *prefix);
/* A JSON array: [{"kind":"threads","what":"...","option":"...","count":N}, ...]. */
void limits_json(struct limits *ls, FILE *f);

#endif
