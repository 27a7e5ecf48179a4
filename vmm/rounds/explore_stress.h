/* Stress runs in whole-run exploration (explore.h): the program free from the snapshot,
 * every thread on its own vCPU in parallel, no cue points, exactly as native stress
 * testing runs it (issue 26: "never worse than stress"). A bug that plain reruns meet in
 * a few runs (a natively common one) must not wait for a controlled schedule to reach
 * it, and a controlled schedule cannot reach what jinx's own model misses.
 *
 * A stress run is the program's own free execution (vm->stress: its limits count, its
 * stdout is dropped, its stderr kept for the report's tail), except that a clean exit
 * (status 0) is restored and exploration goes on (the tail as it was). A crash, a
 * deadlock or a failure exit ends the VM for real, as a crash in free execution does:
 * the dump is written, it
 * holds no schedule (free execution is not deterministic), and `jinx test` then looks
 * for the same crash from snapshots with the next seeds (its replay search) and says
 * whether its dump replays; a jinx limit the run met (the thread cap, a missing syscall)
 * is the program's, so that such an end is "could not test", never a bug. A run that
 * outlasts its budget is stopped and restored; when the first EXPLORE_STRESS_FIRST_CUTS
 * are all stopped so, the program is a long one and stress runs end (free execution and
 * rounds take over when exploration gives up, as before).
 *
 * Stress runs begin after EXPLORE_STRESS_AFTER_NS of exploration (a short test's bug is
 * found by then by a controlled schedule, whose dump replays), or as soon as a traced run
 * shows that controlled runs are slow (explore_stress_start: a run of
 * EXPLORE_SPARSE_CUES cue points, ~1 s of CPU here, gets fewer than one schedule a
 * second; a natively common bug must not wait seconds for them), and then take
 * 1/EXPLORE_STRESS_SHARE_DIV of the wall time after that start: one is due whenever they
 * have taken less (explore_stress_due). Their timing is the host's, so they never change which
 * controlled schedules a seed runs (traced and sparse runs keep their indexes); they are
 * not counted as schedules. */
#ifndef JINX_EXPLORE_STRESS_H
#define JINX_EXPLORE_STRESS_H
#include <stdbool.h>
#include <stdint.h>

struct vm;
struct snapshot;

#define EXPLORE_STRESS_AFTER_NS 5000000000ULL /* no stress run in exploration's first 5 s */
#define EXPLORE_STRESS_SHARE_DIV 4u   /* stress runs' share of the wall time: 1/4 */
#define EXPLORE_STRESS_MIN_NS 100000000ULL /* a run's budget: at least this, */
#define EXPLORE_STRESS_FACTOR 4u      /* ... and this many times the longest run that ended */
#define EXPLORE_STRESS_FIRST_CUTS 2u  /* the first ones all stopped at their budget: no more */

struct explore_stress {
    bool off;                 /* --no-stress (or stress runs cannot run here) */
    uint64_t runs, ended, cut;
    uint64_t ns;              /* wall time they took */
    uint64_t wall_ns;         /* a run's budget */
    uint64_t longest;         /* the longest that ended */
    bool sized;
    uint64_t after_ns;        /* they begin after this much exploration */
};

void explore_stress_init(struct explore_stress *s, uint64_t first_wall_ns);
/* Controlled runs are slow: stress runs begin now (elapsed_ns into the exploration),
 * unless they began already. */
void explore_stress_start(struct explore_stress *s, uint64_t elapsed_ns);
/* Whether a stress run is due after elapsed_ns of exploration, with ahead_ns of a
 * controlled run about to come counted as elapsed already. The driver runs one between
 * two controlled runs when it is (ahead 0: a long controlled run is not caught up on,
 * explore.c says why), and before a traced run expected to take its whole budget (the one
 * stretched after a cut run) as many as are due with that budget ahead: a natively common
 * bug must not wait 16 s for a traced run that will be cut (many-160-claim: 2 stress runs
 * in 30 s, and 8.5% of its native runs fail). */
bool explore_stress_due(const struct explore_stress *s, uint64_t elapsed_ns, uint64_t ahead_ns);

/* One stress run from the paused VM at snap (and back to it), stopped at its budget or
 * at the wall clock's `until` (mono_ns; 0: none), the exploration's end, whichever comes
 * first (a run stopped by `until` is not counted as cut). 0: it ended well or was
 * stopped, the VM is paused at the snapshot again; 1: the program met a bug for real
 * (the VM is over: its outcome is the program's); -1: the restore failed (reported). */
int explore_stress_run(struct explore_stress *s, struct vm *vm, struct snapshot *snap,
                       uint64_t until);

#endif
