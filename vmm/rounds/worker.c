/* Worker VMs (worker.h). */
#include "rounds/worker.h"
#include "dump/snapfile.h"
#include "kvm/snapshot.h"
#include "explorer/explorer.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "sched/serialize.h"
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct worker {
    struct vm *main;
    int id;
    struct vm *vm;              /* NULL until built, and after a failure */
    struct snapshot snap;       /* the worker's own snapshot, restored after each simulation */
    bool snap_ready;
    pthread_t thread;
    pthread_mutex_t mu;         /* guards job, busy, failed, quit */
    pthread_cond_t cv;
    struct sim_batch *job;
    bool busy, failed, quit;
    struct worker_stats st;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    sigset_t set;
    sigfillset(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->job && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit)
            break;
        struct sim_batch *b = w->job;
        pthread_mutex_unlock(&w->mu);
        int r = sim_batch_work(b, w->vm, &w->snap, w->id);
        pthread_mutex_lock(&w->mu);
        w->job = NULL;
        w->busy = false;
        w->failed = r < 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct worker *worker_new(struct vm *main_vm, int id)
{
    struct worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->main = main_vm;
    w->id = id;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    return w;
}

/* Stops a created worker VM's vCPU threads and frees it, with its snapshot. */
static void end_vm(struct worker *w, struct vm *vm)
{
    pthread_mutex_lock(&vm->lock);
    vm->sandbox = false;
    struct outcome o = {.kind = OUT_ERROR};
    snprintf(o.detail, sizeof o.detail, "worker VM shut down");
    vm_stop_locked(vm, &o);
    pthread_mutex_unlock(&vm->lock);
    for (int i = 0; i < vm->nvcpus; i++)
        pthread_join(vm->vcpus[i]->host, NULL);
    if (w->snap_ready)
        snapshot_free(&w->snap);
    w->snap_ready = false;
    serialize_free(vm);
    vm_destroy(vm);
    free(vm);
}

/* Ends the worker's VM: its thread, its vCPU threads, its memory. */
static void drop_vm(struct worker *w)
{
    if (!w->vm)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    end_vm(w, w->vm);
    w->vm = NULL;
    w->quit = w->failed = w->busy = false;
    w->job = NULL;
}

/* A new VM at snap: the program's image and options, then the snapshot's state. */
static int build(struct worker *w, struct snapshot *snap)
{
    struct vm *m = w->main;
    char err[512] = "";
    struct vm_options opt = m->opt;
    opt.timeout_ns = 0;
    opt.stats = false;
    opt.quiet = true;
    opt.serial = false;
    opt.after_ns = opt.record_ns = 0;
    opt.simulate = 0;
    opt.schedule_path = opt.trace_path = opt.report_path = opt.dump_dir = NULL;
    opt.selftest_rounds = 0;
    opt.cpu_model = m->cpu_model; /* the very table the snapshots were taken under */
    opt.cpuid_exact = m->cpuid;
    opt.cpuid_patches = m->patches; /* the same patched memory comes with the snapshots */
    struct vm *vm = calloc(1, sizeof *vm);
    if (!vm) {
        jx_err("worker %d: out of memory", w->id);
        return -1;
    }
    uint64_t t0 = mono_ns();
    struct snap_image img;
    memset(&img, 0, sizeof img);
    bool created = false;
    int rc = -1;
    if (vm_create(vm, &opt, err, sizeof err) < 0)
        goto out;
    created = true;
    if (vm_load(vm, m->image_path, m->argc, m->argv, m->envc, m->envp, err, sizeof err) < 0 ||
        snapshot_export(snap, &img, err, sizeof err) < 0 ||
        snapshot_load_into(vm, &img, err, sizeof err) < 0 ||
        serialize_init(vm, NULL, true, EX_SPIN_THRESHOLD, err, sizeof err) < 0)
        goto out;
    vm->ser->on = false;
    vm->ser->turn_claims = true; /* as the program's VM (round.c) */
    w->vm = vm;
    if (snapshot_init(&w->snap, vm, err, sizeof err) < 0)
        goto out;
    w->snap_ready = true;
    if (snapshot_take(&w->snap, err, sizeof err) < 0 || snapshot_track_changes(snap) < 0)
        goto out;
    w->quit = w->failed = w->busy = false;
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        snprintf(err, sizeof err, "cannot start its thread");
        goto out;
    }
    rc = 0;
out:
    snapimg_free(&img);
    if (rc < 0) {
        jx_err("worker %d: cannot build its VM: %s", w->id, err[0] ? err : "out of memory");
        w->vm = NULL; /* no worker thread yet: only the VM to end */
        if (created)
            end_vm(w, vm);
        else
            free(vm);
        w->st.failures++;
        return -1;
    }
    w->st.builds++;
    w->st.ns_build += mono_ns() - t0;
    return 0;
}

int worker_sync(struct worker *w, struct snapshot *snap)
{
    if (w->vm && (w->failed || atomic_load(&w->vm->stopping))) {
        w->st.failures++;
        drop_vm(w);
    }
    if (!w->vm)
        return build(w, snap);
    uint64_t t0 = mono_ns(), pages = 0;
    char err[256] = "";
    int r = snapshot_sync(w->vm, snap, &pages, err, sizeof err);
    if (r == 1) {
        drop_vm(w); /* the page-table structures drifted apart */
        return build(w, snap);
    }
    if (r < 0 || snapshot_take(&w->snap, err, sizeof err) < 0) {
        jx_err("worker %d: %s", w->id, err);
        w->st.failures++;
        drop_vm(w);
        return -1;
    }
    w->st.syncs++;
    w->st.pages += pages;
    w->st.ns_sync += mono_ns() - t0;
    return 0;
}

void worker_start(struct worker *w, struct sim_batch *b)
{
    pthread_mutex_lock(&w->mu);
    w->job = b;
    w->busy = true;
    w->failed = false;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

bool worker_wait(struct worker *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->busy)
        pthread_cond_wait(&w->cv, &w->mu);
    bool ok = !w->failed;
    pthread_mutex_unlock(&w->mu);
    return ok;
}

const struct worker_stats *worker_stats(const struct worker *w) { return &w->st; }

void worker_free(struct worker *w)
{
    if (!w)
        return;
    drop_vm(w);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

int worker_count(int requested)
{
    /* The CPUs this process may run on: online ones, fewer under taskset or a cgroup's
     * cpuset. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < online)
        online = CPU_COUNT(&set);
    if (online < 2)
        return 0; /* no spare core: in-VM sequential simulations */
    int n = requested < 0 ? WORKER_DEFAULT : requested;
    if (n > online - 1)
        n = (int)(online - 1);
    return n;
}
