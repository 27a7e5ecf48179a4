/* The round records of a .jinxdump: what a simulation round that retired a bug knew,
 * so that `jinxctl inspect` can show the interleaving and `jinx-vmm replay` can rebuild
 * it. Types (dumpfile.h) and payloads (little-endian; docs/dumps.md is the reference):
 *
 *   16 SNAPSHOT       snapfile.h
 *   17 SCHEDULE       u32 length + the schedule as JSON (explorer/schedule.h's format)
 *   18 TRACE_RECORDED a trace (below): the recording the explorer started from
 *   19 TRACE_RETIRED  a trace: the live replay of the winner, up to the bug
 *   20 SCORE          u64 round, u32 simulation (0: the recording), u32 simulations,
 *                     u32 outcome (ex_outcome), u32 bug, u32 races_adjacent, u32 avio_new,
 *                     u32 new_writers, u32 novel_pairs, u64 suspicion, u64 rank,
 *                     u64 cue limit (the replay's), u64 simulation's cue points,
 *                     u64 retired cue points, str strategy, str why it won
 *   21 SHARED_VARS    u32 n, n x (u64 addr, u32 threads, u32 accesses, u32 writes, u32 0,
 *                     str symbol+offset)
 *   22 VMOPTS         u64 memory, u32 vCPUs, u32 0, u64 seed, u64 thread stack,
 *                     u32 argc, argc x str, u32 envc, envc x str
 *
 * A trace: u32 threads, u32 0, u64 events, then per event u64 addr, u64 page, u64 rip,
 * u64 waker, u32 tid, u32 arg, u16 size, u8 kind, u8 flags, u8 symbol length + bytes,
 * u8 instruction length + bytes.
 *
 * Every parser takes untrusted bytes: counts are checked against the bytes left before
 * anything is allocated, strings must be NUL-free and fit, and a parsed trace must pass
 * ex_trace_validate, a schedule ex_schedule_parse_json. Pure code, no KVM. */
#ifndef JINX_ROUNDREC_H
#define JINX_ROUNDREC_H
#include "dump/dumpfile.h"
#include "explorer/explorer.h"
#include "dump/snapfile.h"
#include <stdbool.h>
#include <stdint.h>

#define DREC_VMOPTS 22
#define RR_MAX_EVENTS (1u << 22)
#define RR_MAX_ARGS 4096
#define RR_MAX_ENV 256
#define RR_MAX_VARS 4096

struct rr_score {
    uint64_t round;
    uint32_t sim, nsim;
    uint32_t outcome;          /* enum ex_outcome */
    uint32_t bug;
    uint32_t races_adjacent, avio_new, new_writers, novel_pairs;
    uint64_t suspicion, rank;
    uint64_t cue_limit, cues_sim, cues_live;
    char strategy[64];
    char why[256];
};

struct rr_var {
    uint64_t addr;
    uint32_t threads, accesses, writes;
    char sym[128];
};

struct rr_vmopts {
    uint64_t mem, seed, thread_stack;
    uint32_t max_vcpus;
    int argc, envc;
    char **argv, **envp;       /* owned, NULL-terminated */
};

/* Everything a dump holds about the round that retired its bug. */
struct dump_round {
    bool present;              /* false: no round records (a crash met in free execution) */
    struct snap_image snap;    /* borrows from the dumpfile's record bytes */
    struct ex_schedule sched;
    struct ex_trace recorded, retired;
    struct rr_score score;
    struct rr_var *vars;
    size_t nvars;
    struct rr_vmopts opts;
};

int rr_trace_encode(const struct ex_trace *t, struct dbuf *b);
int rr_trace_parse(const uint8_t *p, size_t len, struct ex_trace *t, char *err, size_t errlen);
int rr_schedule_encode(const struct ex_schedule *s, struct dbuf *b);
int rr_schedule_parse(const uint8_t *p, size_t len, struct ex_schedule *s, char *err,
                      size_t errlen);
int rr_score_encode(const struct rr_score *s, struct dbuf *b);
int rr_score_parse(const uint8_t *p, size_t len, struct rr_score *s, char *err, size_t errlen);
int rr_vars_encode(const struct rr_var *v, size_t n, struct dbuf *b);
int rr_vars_parse(const uint8_t *p, size_t len, struct rr_var **v, size_t *n, char *err,
                  size_t errlen);
int rr_vmopts_encode(const struct rr_vmopts *o, struct dbuf *b);
int rr_vmopts_parse(const uint8_t *p, size_t len, struct rr_vmopts *o, char *err, size_t errlen);
void rr_vmopts_free(struct rr_vmopts *o);

/* The shared variables of a trace: locations (access start addresses) that more than one
 * thread accessed, in address order; symbols left empty. *v is owned (free). */
int rr_shared_vars(const struct ex_trace *t, struct rr_var **v, size_t *n);

/* Finds and parses the round records (16..22) of a parsed dump. With none at all,
 * r->present is false and the result is 0; with some but not all, or any malformed,
 * -1 and a message. r borrows from d: keep d until dump_round_free(r). */
int dump_round_parse(const struct dumpfile *d, struct dump_round *r, char *err, size_t errlen);
void dump_round_free(struct dump_round *r);

#endif
