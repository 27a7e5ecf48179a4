/* A worker VM: a second KVM VM of the same program, kept warm across rounds, that runs
 * some of a round's simulations on its own host threads while the program's VM runs the
 * others (vmm/rounds/simulation.h's batches), so a round uses a core that would idle while the
 * program's vCPUs are stopped.
 *
 * Life: worker_sync at each round, on the round's thread while the program's VM is
 * paused at its new snapshot. The first sync builds the worker from the snapshot
 * (snapshot_export + snapshot_load_into into a VM created with the program's options,
 * image, arguments and environment, ~ms); later ones bring it to the new snapshot by
 * copying only the frames the program's VM changed since the previous one
 * (snapshot_sync; the worker's own simulations were undone by its own restores). When
 * the two page-table structures have drifted apart (a simulation on one side mapped new
 * tables), the worker is rebuilt instead. Then worker_start hands it a batch and
 * worker_wait waits until it has claimed nothing more. Results must not depend on which
 * VM ran a schedule: the round's retirement replays the winner in the program's VM and
 * reports any difference as a divergence, and `--check-workers` re-runs every
 * simulation in the other VM and compares.
 *
 * A worker that fails (a restore error, a VMM error in its VM) is destroyed: the
 * schedules it did not finish are left !done for the caller, and the next sync builds a
 * new one. */
#ifndef JINX_WORKER_H
#define JINX_WORKER_H
#include "rounds/simulation.h"
#include <stdbool.h>
#include <stdint.h>

struct vm;
struct snapshot;
struct worker;

struct worker_stats {
    uint64_t builds;            /* VMs built (first sync and rebuilds) */
    uint64_t syncs;             /* syncs by copying changed frames */
    uint64_t pages;             /* frames copied by those syncs */
    uint64_t failures;          /* workers lost to an error */
    uint64_t ns_build, ns_sync; /* wall time of builds and syncs */
};

/* A worker for the program's VM (nothing is created until the first sync). id >= 1. */
struct worker *worker_new(struct vm *main_vm, int id);
/* Brings the worker to snap (the program's VM paused at it). 0, or -1 (the worker is
 * then not usable this round; the reason was reported). */
int worker_sync(struct worker *w, struct snapshot *snap);
/* Starts working off b on the worker's thread (b must outlive worker_wait). */
void worker_start(struct worker *w, struct sim_batch *b);
/* Waits for the batch to be done on the worker's side. false if the worker failed. */
bool worker_wait(struct worker *w);
const struct worker_stats *worker_stats(const struct worker *w);
/* Stops the worker's threads and frees its VM. NULL is fine. */
void worker_free(struct worker *w);

/* Workers when neither --workers nor attach's workers says: chosen by measurement
 * (docs/rounds.md, "Simulations on a worker VM"). */
#define WORKER_DEFAULT 1
#define WORKER_MAX 8

/* How many workers to run for `requested` (-1: the default) on this machine: at most
 * one fewer than the CPUs this process may use (online, and in its affinity mask), so
 * none on a single CPU (no spare core: simulations one after the other in the VM). */
int worker_count(int requested);

#endif
