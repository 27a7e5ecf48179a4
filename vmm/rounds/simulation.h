/* One simulation of a round: a serialized fragment from a snapshot under a schedule, in
 * a given VM (the program's own, or a worker VM at the same snapshot, worker.h), and
 * what it produced. round.c and worker.c both run simulations through here, so a
 * simulation is the same code whichever VM it runs in.
 *
 * A batch (struct sim_batch) is a list of schedules that several VMs work off together:
 * each takes the next unclaimed one, so the split adapts to how fast each VM goes. The
 * result of a schedule does not depend on which VM ran it (determinism; the worker test
 * checks it), only the wall budget can cut a fragment earlier in a slower VM, and a cut
 * fragment is exactly its cue points' prefix of the uncut one. */
#ifndef JINX_SIM_H
#define JINX_SIM_H
#include "linux/outcome.h"
#include "explorer/explorer.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;
struct snapshot;

struct sim_result {
    struct ex_trace trace;
    enum ex_outcome outcome;
    struct outcome out;         /* the guest outcome when the simulation ended in one */
    bool ended;
    uint64_t cues;
    bool cut;                   /* ended by the wall budget */
    bool stopped;               /* no cue point within five budgets: stopped where it was */
    struct ex_score score;
    bool done;                  /* a batch ran it */
    int vm_id;                  /* which VM ran it: 0 the program's own, 1.. workers */
    /* A sparse simulation (sim_run_sparse): the schedule that replays it (its points and
     * the choices its PCT made; empty if they were lost), the points that fired and the
     * counted hits. Owned: sim_result_free. */
    bool sparse;
    struct ex_schedule sched;
    uint64_t fired, hits;
};

void sim_result_init(struct sim_result *r);
void sim_result_free(struct sim_result *r);

/* The outcome class the explorer scores. */
enum ex_outcome sim_outcome_class(const struct outcome *o, bool ended);

/* Runs one fragment from the paused VM's current state (the snapshot) under schedule s:
 * until `want` cue points, or wall ns of wall time (0: the guard); sandboxed unless
 * `live`. The trace is copied into r. */
void sim_run_fragment(struct vm *vm, const struct ex_schedule *s, uint64_t want, uint64_t wall,
                      uint64_t vtime, bool live, struct sim_result *r);
/* The same, with the first `exact` cue points run without a wall budget and `wall`
 * counted from there (serialize_fragment_run_from): a retirement replays the simulation's
 * cue points exactly, then goes on serialized for its tail. */
void sim_run_fragment_from(struct vm *vm, const struct ex_schedule *s, uint64_t want,
                           uint64_t exact, uint64_t wall, uint64_t vtime, bool live,
                           struct sim_result *r);

/* A sparse simulation (sched/sparse.h, explorer/sparse.h): run `index` of PCT over
 * decisions seeded `seed`, its change points planned from m (the round's recording),
 * from the paused VM's current state, sandboxed, until `want` cue points or `wall` ns
 * (stopped wherever it is after two budgets without a cue point: its threads run at
 * native speed between syscalls). r->sched gets the schedule that replays it. */
void sim_run_sparse(struct vm *vm, const struct ex_sparse_model *m, uint64_t seed,
                    uint64_t index, uint64_t want, uint64_t wall, uint64_t vtime,
                    struct sim_result *r);

/* Back to snap after a sandboxed fragment (crew off, serialized execution off, restore).
 * 0, or -1 after reporting why. */
int sim_rewind(struct vm *vm, struct snapshot *snap);

/* Whether b did exactly what a did: the same trace, cue-point count and outcome (kind,
 * signal, thread, RIP, exit status). b may have run with a's cue count as its limit. */
bool sim_same(const struct sim_result *a, const struct sim_result *b);

struct sim_batch {
    /* n schedules (borrowed); a NULL entry is sparse simulation number i (sim_run_sparse
     * with model, seed and index i, its budget sparse_wall) */
    const struct ex_schedule *const *sched;
    const struct ex_sparse_model *model;
    uint64_t seed, sparse_wall;
    struct sim_result *out;     /* n results, written by whichever VM runs each */
    size_t n;
    atomic_size_t next;         /* the next unclaimed index */
    uint64_t want, wall, vtime;
    /* Check mode: run each schedule for exactly ref[i]'s length with no wall budget,
     * to compare with ref[i] (sim_same). NULL: normal simulations. */
    const struct sim_result *const *ref;
};

/* Runs entry i of b in vm (a schedule, or a sparse simulation) into b->out[i]. */
void sim_batch_run(struct sim_batch *b, size_t i, struct vm *vm);

/* Claims and runs schedules of b in vm (restoring snap after each) until none is left
 * or the VM fails. Returns how many it ran, or -1 if the VM failed (a restore error, or
 * it stopped): the schedule it was running stays !done. */
int sim_batch_work(struct sim_batch *b, struct vm *vm, struct snapshot *snap, int vm_id);

#endif
