/* One round's simulations as one batch (simulation.h) over the program's VM and the
 * worker VMs, and --check-workers' comparison of the two (round.c drives the round). */
#include "rounds/driver.h"
#include "lib/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks every simulation against a run of the same schedule in another VM (workers'
 * results in the program's VM, the program's VM's on worker 1), for exactly the first
 * run's length: --check-workers. Returns the simulations compared; *mismatches counts
 * the differences, each reported. */
static int check_workers(struct round_driver *d, int nw, uint64_t round_no,
                         const struct ex_schedule *const *sp, struct sim_result *res, int n,
                         uint64_t want, uint64_t vtime, uint64_t *mismatches, bool *ok)
{
    struct vm *vm = d->vm;
    const struct ex_schedule **sa = calloc((size_t)n + 1, sizeof *sa), **sb = calloc((size_t)n + 1, sizeof *sb);
    const struct sim_result **ra = calloc((size_t)n + 1, sizeof *ra), **rb = calloc((size_t)n + 1, sizeof *rb);
    struct sim_result *oa = calloc((size_t)n + 1, sizeof *oa), *ob = calloc((size_t)n + 1, sizeof *ob);
    int ia[ROUND_MAX_SIMS], ib[ROUND_MAX_SIMS], na = 0, nb = 0, checked = 0;
    if (!sa || !sb || !ra || !rb || !oa || !ob)
        goto out;
    for (int i = 0; i < n; i++) {
        sim_result_init(&oa[i]);
        sim_result_init(&ob[i]);
        if (!res[i].done)
            continue;
        /* A sparse simulation is checked by its schedule (its choices), which must
         * replay it in any VM. */
        const struct ex_schedule *si = res[i].sparse ? &res[i].sched : sp[i];
        if (res[i].vm_id != 0) { /* ran on a worker: again in the program's VM */
            sa[na] = si;
            ra[na] = &res[i];
            ia[na++] = i;
        } else if (nw > 0) {     /* ran in the program's VM: again on worker 1 */
            sb[nb] = si;
            rb[nb] = &res[i];
            ib[nb++] = i;
        }
    }
    struct sim_batch ba = {.sched = sa, .out = oa, .n = (size_t)na, .want = want, .vtime = vtime,
                           .ref = ra};
    struct sim_batch bb = {.sched = sb, .out = ob, .n = (size_t)nb, .want = want, .vtime = vtime,
                           .ref = rb};
    atomic_init(&ba.next, 0);
    atomic_init(&bb.next, 0);
    if (nb)
        worker_start(d->workers[0], &bb);
    if (sim_batch_work(&ba, vm, &d->snap, 0) < 0)
        *ok = false;
    if (nb)
        worker_wait(d->workers[0]);
    for (int j = 0; j < na + nb; j++) {
        bool a = j < na;
        const struct sim_result *ref = a ? ra[j] : rb[j - na], *got = a ? &oa[j] : &ob[j - na];
        if (!got->done)
            continue;
        checked++;
        if (!sim_same(ref, got)) {
            (*mismatches)++;
            long diff = ex_trace_first_difference(&ref->trace, &got->trace);
            round_notable(d, "divergence", "round %llu: simulation %d gave another result in %s than "
                    "on %s %d (cue points %llu vs %llu, first difference at %ld; a bug in jinx: "
                    "please report it)", (unsigned long long)round_no, (a ? ia[j] : ib[j - na]) + 1,
                    a ? "the program's VM" : "worker 1", a ? "worker" : "the program's VM",
                    ref->vm_id, (unsigned long long)got->cues, (unsigned long long)ref->cues, diff);
        }
    }
out:
    for (int i = 0; oa && ob && i < n; i++) {
        sim_result_free(&oa[i]);
        sim_result_free(&ob[i]);
    }
    free(sa);
    free(sb);
    free(ra);
    free(rb);
    free(oa);
    free(ob);
    return checked;
}

/* Runs the round's schedules from the snapshot: in the program's VM and on the workers
 * at once when there are any (worker.h), else one after the other here. Returns the
 * simulations run (results in res[1..]); *ok goes false if the program's VM failed. */
int round_simulate(struct round_driver *d, const struct round_config *cfg,
                   const struct ex_schedule_set *ss, int k, const struct round_sparse *sparse,
                   uint64_t want, uint64_t vtime, struct sim_result *res, uint64_t *ns_sync,
                   bool *ok)
{
    struct vm *vm = d->vm;
    int nsparse = sparse ? sparse->n : 0;
    if (nsparse > k)
        nsparse = k;
    int ntraced = (int)ss->n < k - nsparse ? (int)ss->n : k - nsparse;
    int n = ntraced + nsparse;
    if (n <= 0)
        return 0;
    const struct ex_schedule **sp = calloc((size_t)n, sizeof *sp);
    if (!sp) {
        *ok = false;
        return 0;
    }
    for (int i = 0; i < ntraced; i++)
        sp[i] = &ss->v[i]; /* the rest stay NULL: sparse simulations (simulation.h) */
    /* Workers, brought to the snapshot while the program's VM is stopped at it. */
    int nw = n > 1 ? worker_count(cfg->workers) : 0, usable = 0;
    struct worker *ready[WORKER_MAX];
    uint64_t t0 = mono_ns();
    for (int i = 0; i < nw; i++) {
        if (!d->workers[i] && !(d->workers[i] = worker_new(vm, i + 1)))
            break;
        if (worker_sync(d->workers[i], &d->snap) == 0)
            ready[usable++] = d->workers[i];
        else
            break; /* keep the usable ones a prefix: check mode uses worker 1 */
    }
    *ns_sync = mono_ns() - t0;
    struct sim_batch b = {.sched = sp, .out = res + 1, .n = (size_t)n, .want = want,
                          .wall = cfg->fragment_wall_ns, .vtime = vtime,
                          .model = sparse ? sparse->model : NULL,
                          .seed = sparse ? sparse->seed : 0,
                          .sparse_wall = sparse ? sparse->wall : 0};
    atomic_init(&b.next, 0);
    for (int i = 0; i < usable; i++)
        worker_start(ready[i], &b);
    if (sim_batch_work(&b, vm, &d->snap, 0) < 0)
        *ok = false;
    for (int i = 0; i < usable; i++)
        worker_wait(ready[i]);
    /* What a failed worker left undone runs here. */
    for (int i = 0; i < n && *ok; i++)
        if (!res[i + 1].done) {
            sim_batch_run(&b, (size_t)i, vm);
            if (vm_over(vm) || sim_rewind(vm, &d->snap) < 0)
                *ok = false;
            res[i + 1].done = true;
            res[i + 1].vm_id = 0;
        }
    uint64_t on_workers = 0, checked = 0, mismatches = 0;
    for (int i = 1; i <= n; i++)
        on_workers += res[i].done && res[i].vm_id != 0;
    if (*ok && cfg->check_workers && usable) {
        pthread_mutex_lock(&d->mu);
        uint64_t round_no = d->st.rounds + 1;
        pthread_mutex_unlock(&d->mu);
        checked = (uint64_t)check_workers(d, usable, round_no, sp, res + 1, n, want, vtime,
                                          &mismatches, ok);
    }
    free(sp);
    pthread_mutex_lock(&d->mu);
    struct round_stats *st = &d->st;
    st->workers = usable;
    st->worker_sims += on_workers;
    st->worker_checked += checked;
    st->worker_mismatches += mismatches;
    st->ns_worker_sync = *ns_sync;
    st->sum_worker_sync += *ns_sync;
    st->worker_builds = st->worker_syncs = st->worker_pages = 0;
    for (int i = 0; i < WORKER_MAX && d->workers[i]; i++) {
        const struct worker_stats *ws = worker_stats(d->workers[i]);
        st->worker_builds += ws->builds;
        st->worker_syncs += ws->syncs;
        st->worker_pages += ws->pages;
    }
    pthread_mutex_unlock(&d->mu);
    return *ok ? n : 0;
}

/* One round. Returns false when the VM is over (stopped by an outcome). */
