/* Everything the strategies and the scorer want to know about one trace,
 * computed once: per-thread event lists, blocking dependencies, happens-before,
 * races, atomicity violations, and the shared locations ranked by how shared
 * they are. */
#ifndef EXPLORER_ANALYSIS_H
#define EXPLORER_ANALYSIS_H
#include "avio.h"
#include "hb.h"
#include "race.h"
#include "syncdep.h"
#include "trace.h"

/* A location (start address, see ex_loc_of) accessed by more than one
 * thread, at least once for writing. */
struct ex_loc {
    uint64_t key;           /* ex_loc_of(): the address */
    uint32_t nthreads;      /* distinct threads accessing it */
    uint32_t naccess;
    uint32_t nwrites;
    uint32_t nswitches;     /* consecutive accesses (in trace order) by different threads */
    uint32_t first;         /* first access (event index) */
    struct ex_tidset threads;
};

struct ex_analysis {
    const struct ex_trace *tr;
    int32_t *dep;               /* ex_syncdeps() */
    uint32_t *tev;              /* event indices grouped by thread, in trace order */
    uint32_t toff[EX_MAX_TID + 2]; /* thread tid owns tev[toff[tid] .. toff[tid+1]) */
    uint32_t *tpos;             /* per event: its position within its thread */
    struct ex_tidset threads;   /* threads with at least one event */
    struct ex_hb hb;
    struct ex_race *races;
    size_t nraces;
    struct ex_avio *avio;
    size_t navio;
    struct ex_loc *locs;        /* shared locations, most shared first (see analysis.c) */
    size_t nlocs;
};

enum { EX_OK = 0, EX_ERR_NOMEM = -1, EX_ERR_INVALID = -2 };

/* Validates t (ex_trace_validate) and analyses it. The trace must outlive the
 * analysis. Returns EX_OK, EX_ERR_INVALID (reason in why, if given) or
 * EX_ERR_NOMEM. On error nothing needs freeing. */
int ex_analyze(const struct ex_trace *t, struct ex_analysis *a, char *why, size_t whylen);
void ex_analysis_free(struct ex_analysis *a);

static inline uint32_t ex_thread_nevents(const struct ex_analysis *a, uint32_t tid)
{
    return tid <= EX_MAX_TID ? a->toff[tid + 1] - a->toff[tid] : 0;
}
/* Event index of thread tid's k-th event. */
static inline uint32_t ex_thread_event(const struct ex_analysis *a, uint32_t tid, uint32_t k)
{
    return a->tev[a->toff[tid] + k];
}
/* The shared location with this key, or NULL. */
const struct ex_loc *ex_analysis_loc(const struct ex_analysis *a, uint64_t key);

#endif
