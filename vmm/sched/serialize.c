#include "sched/serialize.h"
#include "sched/crew.h"
#include "sched/crew_sample.h"
#include "sched/guard_report.h"
#include "sched/simdiff.h"
#include "sched/stall.h"
#include "sched/timers.h"
#include "linux/futex.h"
#include "kvm/snapshot.h"
#include "lib/util.h"
#include "kvm/vm.h"
#include "linux/threads.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SCHEDULE_MAX_FILE (16u << 20)
#define STALL_MAX_LEARN 4 /* stalls learnt per --simulate (each costs the 5 s guard) */

int serialize_init(struct vm *vm, const char *schedule_path, bool roundrobin,
                uint32_t spin_threshold, char *err, size_t errlen)
{
    if (serialize_mode_install(vm) < 0) {
        snprintf(err, errlen, "serialized execution: out of memory");
        return -1;
    }
    struct serializer *s = vm->ser;
    memset(s, 0, sizeof *s);
    ex_schedule_init(&s->sched);
    ex_trace_init(&s->trace);
    ex_trace_init(&s->samples);
    s->spin_threshold = spin_threshold;
    ex_spin_init(&s->spin, spin_threshold, 0);
    s->sched.policy = roundrobin ? EX_DEFAULT_ROUNDROBIN : EX_DEFAULT_CONTINUE;
    s->sched.quantum = 1;
    if (schedule_path) {
        int fd = open(schedule_path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
            (uint64_t)st.st_size > SCHEDULE_MAX_FILE) {
            snprintf(err, errlen, "--schedule %s: %s", schedule_path,
                     fd < 0 ? strerror(errno) : "not a regular file of at most 16 MiB");
            if (fd >= 0)
                close(fd);
            return -1;
        }
        char *buf = malloc((size_t)st.st_size + 1);
        ssize_t got = buf ? read(fd, buf, (size_t)st.st_size) : -1;
        close(fd);
        if (got != st.st_size) {
            free(buf);
            snprintf(err, errlen, "--schedule %s: read error", schedule_path);
            return -1;
        }
        struct ex_parse_error pe;
        memset(&pe, 0, sizeof pe);
        int rc = ex_schedule_parse(buf, (size_t)got, &s->sched, &pe);
        free(buf);
        if (rc < 0) {
            snprintf(err, errlen, "--schedule %s: %s", schedule_path, pe.msg);
            return -1;
        }
    }
    ex_cursor_init(&s->cursor, &s->sched);
    s->on = true;
    s->current = 1;
    return 0;
}

void serialize_free(struct vm *vm)
{
    if (!vm->ser)
        return;
    ex_schedule_free(&vm->ser->sched);
    ex_trace_free(&vm->ser->trace);
    ex_trace_free(&vm->ser->samples);
}

int serialize_set_schedule(struct vm *vm, const struct ex_schedule *src)
{
    struct ex_schedule copy;
    ex_schedule_init(&copy);
    if (ex_schedule_copy(&copy, src) < 0)
        return -1;
    pthread_mutex_lock(&vm->lock);
    ex_schedule_free(&vm->ser->sched);
    vm->ser->sched = copy;
    ex_cursor_init(&vm->ser->cursor, &vm->ser->sched);
    pthread_mutex_unlock(&vm->lock);
    return 0;
}

uint64_t serialize_vtime(const struct vm *vm)
{
    return vm->ser->base_ns + vm->ser->cues * SERIALIZE_CUE_NS + (uint64_t)vm->skipped_ns;
}

bool serialize_may_run_locked(struct vm *vm, struct vcpu *v)
{
    struct serializer *s = vm->ser;
    if (!s->on)
        return true;
    if (s->current < 0)
        return false; /* the fragment is over: nobody runs until it is ended */
    if (s->current == 0) {
        /* Nobody was runnable at the last cue point; the first thread to become
         * runnable again (a sleeper whose deadline came) takes the turn. */
        s->current = v->tid;
        crew_switch_locked(vm, v->tid);
    }
    return v->tid == s->current;
}

/* A sampled fragment's cue point goes into its samples too (crew_sample.h), without
 * its waker (an index into the other trace: the explorer infers it). */
static void sample_cue_locked(struct serializer *s, const struct ex_event *e)
{
    if (!s->sampling)
        return;
    struct ex_event c = *e;
    c.waker = 0;
    ex_trace_append(&s->samples, &c); /* full or no memory: sampled less */
}

void serialize_cue_locked(struct vm *vm, struct vcpu *v, int tid, enum ex_kind kind, uint64_t addr,
                       uint32_t arg, uint8_t flags)
{
    struct serializer *s = vm->ser;
    if (!s->on)
        return;
    if (s->current < 0)
        return; /* the fragment is over (a bug, a deadlock, its limit): a cue point made
                 * after that, by the thread whose syscall ended it, would count or not
                 * depending on whether the fragment's waiter had already taken its trace */
    s->cues++;
    /* v->xid: also after a thread's exit (tid 0 by now), until the vCPU is reused. */
    uint32_t x = v->xid > 0 ? (uint32_t)v->xid : 0;
    struct ex_event *e = x ? ex_trace_sync(&s->trace, x, kind, addr, arg) : NULL;
    if (e) {
        e->flags = flags;
        e->rip = v->run->s.regs.regs.rcx; /* the user's return address */
        vm_symbolize(vm, e->rip, e->sym, sizeof e->sym);
        sample_cue_locked(s, e);
    }
    if (x)
        ex_spin_observe(&s->spin, x, kind, addr, 0, 0);
    serialize_pick_locked(vm, tid);
}

static void sparse_cue_locked(struct vm *vm, struct vcpu *v, uint64_t rip, uint8_t flags)
{
    struct serializer *s = vm->ser;
    if (!s->on || s->current < 0)
        return;
    s->cues++;
    uint32_t x = v->xid > 0 ? (uint32_t)v->xid : 0;
    struct ex_event *e = x ? ex_trace_sync(&s->trace, x, EX_SYNC_OTHER, rip, 0) : NULL;
    if (e) {
        e->flags = flags;
        e->rip = rip;
        vm_symbolize(vm, rip, e->sym, sizeof e->sym);
        sample_cue_locked(s, e);
    }
    serialize_pick_locked(vm, v->tid);
}

void serialize_preempt_locked(struct vm *vm, struct vcpu *v, uint64_t rip)
{
    sparse_cue_locked(vm, v, rip, EX_F_PREEMPT);
}

void serialize_yield_locked(struct vm *vm, struct vcpu *v, uint64_t rip)
{
    sparse_cue_locked(vm, v, rip, 0);
}

void serialize_enabled_locked(struct vm *vm, struct ex_tidset *enabled)
{
    ex_tidset_clear(enabled);
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *w = vm->vcpus[i];
        if (w->tid && w->state == T_RUNNING && w->xid > 0)
            ex_tidset_add(enabled, (uint32_t)w->xid);
    }
}

int serialize_pick_locked(struct vm *vm, int tid)
{
    struct serializer *s = vm->ser;
    struct ex_tidset enabled;
    futex_expire_locked(vm); /* virtual time moved with this cue point */
    serialize_enabled_locked(vm, &enabled);
    if (ex_tidset_empty(&enabled) && vm->live > 0) {
        /* Nobody can run and nobody will until virtual time moves, and under it no host
         * thread expires its own deadline: skip to the earliest one now, as when the
         * last thread blocks (or report the deadlock), never hand the turn to nobody
         * while a sleeper waits for a time that does not come. */
        futex_check_all_blocked(vm);
        if (s->current < 0)
            return -1; /* it found a deadlock: the fragment is over, keep it so */
        serialize_enabled_locked(vm, &enabled);
    }
    if (s->notify_at && s->cues == s->notify_at)
        pthread_cond_broadcast(&vm->done_cv); /* serialize_fragment_run_from's budget starts */
    if (s->cut || (s->limit && s->cues >= s->limit)) {
        /* Exactly `limit` cue points: stop here, at the same point every time. */
        if (tid > 0)
            crew_switch_locked(vm, 0);
        s->current = -1;
        pthread_cond_broadcast(&vm->done_cv); /* serialize_fragment_run waits for this */
        return -1;
    }
    /* A schedule's timer that ends early at this choice (timers.h); a picker ends its own. */
    if (!s->pick && !ex_tidset_empty(&enabled) && timers_follow_locked(vm, tid))
        serialize_enabled_locked(vm, &enabled);
    uint32_t nx = s->pick ? s->pick(s->pick_ctx, vm, &enabled, ex_spin_avoid(&s->spin))
                          : ex_cursor_next_avoiding(&s->cursor, &enabled, ex_spin_avoid(&s->spin));
    s->picks += !ex_tidset_empty(&enabled);
    /* The cursor speaks explorer ids; the rest of the VMM guest tids. */
    struct vcpu *nv = NULL;
    for (int i = 0; nx && i < vm->nvcpus; i++) {
        struct vcpu *w = vm->vcpus[i];
        if (w->tid && w->xid == (int)nx)
            nv = w;
    }
    int next = nv ? nv->tid : 0;
    if (next != tid) {
        crew_switch_locked(vm, next);
        sparse_unplant_all_locked(vm); /* only the running thread's points are planted */
    }
    s->current = next;
    if (nv)
        pthread_cond_broadcast(&nv->cv);
    return next;
}

void serialize_after_syscall(struct vm *vm, struct vcpu *v, int tid, uint64_t nr, int64_t ret,
                          bool blocked)
{
    if (!vm->ser->on || atomic_load(&vm->stopping))
        return;
    const struct kvm_regs *r = &v->run->s.regs.regs;
    enum ex_kind kind;
    uint64_t addr = 0;
    uint32_t arg = 0;
    uint8_t flags = 0;
    switch (nr) {
    case SYS_futex: {
        int cmd = (int)(r->rsi & 127);
        addr = r->rdi;
        if (cmd == 0 || cmd == 9) { /* FUTEX_WAIT, FUTEX_WAIT_BITSET */
            kind = EX_FUTEX_WAIT;
            flags = blocked ? 0 : EX_F_NOBLOCK;
        } else {
            kind = EX_FUTEX_WAKE;
            arg = ret > 0 ? (uint32_t)ret : 0;
        }
        break;
    }
    case SYS_clone:
        if (ret <= 0)
            return;
        kind = EX_THREAD_CREATE;
        arg = 0; /* the child's explorer id, below */
        break;
    case SYS_exit:
        kind = EX_THREAD_EXIT;
        break;
    case SYS_sched_yield: case SYS_nanosleep: case SYS_clock_nanosleep:
        kind = EX_SYNC_OTHER;
        break;
    default:
        /* A syscall the Linux layer says is a wait or a wake (a pipe's: linux/pipes.h). */
        if (v->sync_kind == 1) {
            kind = EX_FUTEX_WAIT;
            flags = blocked ? 0 : EX_F_NOBLOCK;
        } else if (v->sync_kind == 2) {
            kind = EX_FUTEX_WAKE;
            arg = v->sync_arg;
        } else {
            return;
        }
        addr = v->sync_addr;
        break;
    }
    pthread_mutex_lock(&vm->lock);
    if (kind == EX_THREAD_CREATE) {
        if (vm->ser->stop_at_clone) {
            vm->ser->stop_at_clone = false;
            vm->ser->limit = vm->ser->cues + 1; /* this very cue point */
        }
        for (int i = 0; i < vm->nvcpus; i++)
            if (vm->vcpus[i]->tid == (int)ret && vm->vcpus[i]->xid > 0) {
                arg = (uint32_t)vm->vcpus[i]->xid;
                uint64_t sp = vm->vcpus[i]->start_regs.rsp; /* its stack top is its own */
                if (vm->crew && vm->vcpus[i]->start_pending &&
                    (sp & PAGE_MASK) != (v->run->s.regs.regs.rsp & PAGE_MASK))
                    crew_hand_stack_locked(vm, (int)ret, sp,
                                           vm->vcpus[i]->start_sregs.fs.base);
            }
    }
    serialize_cue_locked(vm, v, tid, kind, addr, arg, flags);
    pthread_mutex_unlock(&vm->lock);
}

/* Starts a serialized fragment on a paused VM: the lowest runnable tid goes first,
 * time goes on as base + cues * step + skipped, pages are watched. */
void serialize_fragment_begin(struct vm *vm, uint64_t start_vtime)
{
    pthread_mutex_lock(&vm->lock);
    struct serializer *s = vm->ser;
    uint64_t now = start_vtime ? start_vtime : vm_vtime(vm);
    s->base_ns = now - (uint64_t)vm->skipped_ns;
    s->cues = 0;
    s->cut = false;
    s->stopped = false;
    s->current = 0;
    s->on = true;
    s->picks = 0;
    s->timer_next = 0;
    s->timer_diverged = 0;
    s->nended = 0;
    /* A sleeper whose deadline came while the VM was paused (its host thread had not
     * yet looked) runs from the first cue point, in every simulation alike. */
    futex_expire_locked(vm);
    futex_check_all_blocked(vm); /* every thread waiting: skip to the earliest deadline */
    thread_xids_reset_locked(vm);
    for (int i = 0; i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid && vm->vcpus[i]->state == T_RUNNING &&
            (!s->current || vm->vcpus[i]->tid < s->current))
            s->current = vm->vcpus[i]->tid;
    ex_cursor_init(&s->cursor, &s->sched);
    ex_spin_init(&s->spin, s->spin_threshold, 0);
    ex_trace_free(&s->trace);
    ex_trace_init(&s->trace);
    sparse_begin_locked(vm, &s->sched);
    bool sparse = s->sched.sparse;
    s->sampling = sparse && s->sample_next;
    s->sample_next = false;
    ex_trace_free(&s->samples);
    ex_trace_init(&s->samples);
    pthread_mutex_unlock(&vm->lock);
    if (!sparse || s->sampling)
        crew_start(vm); /* a sparse schedule runs with every page mapped (sparse.h), but
                         * for a sampled one's faults (crew_sample.h) */
}

/* Lets the fragment run until `want` cue points (or the program ends, or 5 s pass),
 * and pauses the VM again. */
bool serialize_fragment_run(struct vm *vm, uint64_t want, uint64_t wall_ns)
{
    return serialize_fragment_run_from(vm, want, 0, wall_ns);
}

/* What a fragment's budget has used since `from` (serializer.budget_cpu: CPU time), and
 * the wall backstop and deadline of a CPU budget (UINT64_MAX for a wall budget). */
struct budget_clock {
    bool cpu;
    uint64_t wall_from, cpu_from, backstop, deadline;
};

static void budget_start(struct budget_clock *b, uint64_t now, uint64_t budget_ns,
                         uint64_t deadline)
{
    b->wall_from = now;
    b->cpu_from = b->cpu ? process_cpu_ns() : 0;
    b->backstop = b->cpu ? now + SERIALIZE_CPU_BACKSTOP * budget_ns : UINT64_MAX;
    b->deadline = b->cpu && deadline ? deadline : UINT64_MAX;
    if (b->deadline != UINT64_MAX && b->deadline + SERIALIZE_DEADLINE_GRACE < b->backstop)
        b->backstop = b->deadline + SERIALIZE_DEADLINE_GRACE;
}

static uint64_t budget_used(const struct budget_clock *b, uint64_t now)
{
    if (!b->cpu)
        return now - b->wall_from;
    uint64_t c = process_cpu_ns();
    return c > b->cpu_from ? c - b->cpu_from : 0;
}

bool serialize_fragment_run_from(struct vm *vm, uint64_t want, uint64_t exact, uint64_t wall_ns)
{
    uint64_t start = mono_ns();
    uint64_t guard = start + SERIALIZE_WALL_GUARD_NS;
    bool budget_on = exact == 0;
    /* With a budget: the soft limit (cut at the next cue point) and the hard one (stop
     * wherever it is) as amounts of the budget's clock; the wall backstop of a CPU
     * budget. Without one, or in the exact part: the wall guard alone. */
    struct budget_clock clk = {.cpu = vm->ser->budget_cpu && wall_ns};
    budget_start(&clk, start, wall_ns, vm->ser->wall_deadline);
    uint64_t soft = wall_ns,
             hard = (vm->ser->hard_mult ? vm->ser->hard_mult : SERIALIZE_HARD_MULT) * wall_ns;
    bool cut = false;
    vm->ser->limit = want;
    vm->ser->notify_at = exact;
    vm_resume(vm);
    /* Wait on the VM's done_cv (the fragment's end and every outcome broadcast it): a
     * polling loop here would preempt the running vCPU's host thread, and on PVM each
     * vCPU reload costs tens of microseconds. */
    pthread_mutex_lock(&vm->lock);
    while (!atomic_load(&vm->stopping) && vm->ser->current >= 0) {
        uint64_t now = mono_ns();
        if (!budget_on && vm->ser->cues >= exact) {
            /* The exact part is done (serialize_cue_locked woke us): the budget starts. */
            budget_on = true;
            budget_start(&clk, now, wall_ns, vm->ser->wall_deadline);
        }
        bool budgeted = budget_on && wall_ns;
        uint64_t used = budgeted ? budget_used(&clk, now) : 0;
        if (budgeted ? used >= hard || now >= clk.backstop : now >= guard) {
            /* A thread computing privately for long has no cue point to stop at: stop
             * it wherever it is (the pause kicks it). */
            vm->ser->guard_turn = vm->ser->current;
            vm->ser->current = -1;
            vm->ser->stopped = true;
            break;
        }
        if (budgeted && (used >= soft || now >= clk.deadline) && !vm->ser->cut) {
            /* Over budget: the fragment ends at the next cue point, as if that were
             * the limit (a replay of the same length stops at the same place). */
            cut = true;
            vm->ser->cut = true;
        }
        /* The next time a limit may be reached: a CPU budget is used no faster than the
         * wall clock runs while one vCPU runs at a time (serialized), so waking when the
         * wall clock has gone the rest of the way is never late by more than a busy
         * VMM thread's share, and the loop looks again. */
        uint64_t until = guard;
        if (budgeted) {
            uint64_t limit = vm->ser->cut ? hard : soft;
            uint64_t rest = limit > used ? limit - used : 0;
            until = now + (rest > 1000000 ? rest : 1000000);
            if (until > clk.backstop)
                until = clk.backstop;
            if (!vm->ser->cut && until > clk.deadline)
                until = clk.deadline;
        }
        uint64_t timed = sparse_timed_tick_locked(vm, start, now); /* a timed decision */
        if (timed < until)
            until = timed;
        uint64_t resample = crew_sample_tick_locked(vm, now); /* crew_sample.h */
        if (resample < until)
            until = resample;
        struct timespec ts = {.tv_sec = (time_t)(until / 1000000000ULL),
                              .tv_nsec = (long)(until % 1000000000ULL)};
        pthread_cond_timedwait(&vm->done_cv, &vm->lock, &ts);
    }
    vm->ser->notify_at = 0;
    pthread_mutex_unlock(&vm->lock);
    vm_pause(vm);
    return cut;
}

/* Back to free execution, on a paused VM, at the same virtual time. */
void serialize_fragment_end(struct vm *vm)
{
    crew_stop(vm);
    pthread_mutex_lock(&vm->lock);
    sparse_unplant_all_locked(vm);
    sparse_end_steps_locked(vm);
    vm->ser->sparse.on = false;
    uint64_t vt = serialize_vtime(vm);
    vm->ser->on = false;
    vm->ser->limit = 0;
    vm->skipped_ns = (int64_t)vt - (int64_t)(vm_host_ns(vm) - vm->start_ns);
    vm->paused_at = vm_host_ns(vm); /* vm_resume discounts only the pause from here on */
    for (int i = 0; i < vm->nvcpus; i++)
        pthread_cond_broadcast(&vm->vcpus[i]->cv);
    pthread_mutex_unlock(&vm->lock);
}

static bool pause_after(struct vm *vm, uint64_t after_ns)
{
    struct timespec ts = {(time_t)(after_ns / 1000000000ULL), (long)(after_ns % 1000000000ULL)};
    nanosleep(&ts, NULL);
    if (atomic_load(&vm->stopping))
        return false;
    vm_pause(vm);
    if (atomic_load(&vm->stopping)) {
        vm_resume(vm);
        return false;
    }
    return true;
}

int serialize_record_fragment(struct vm *vm, uint64_t after_ns, uint64_t record_ns)
{
    if (!pause_after(vm, after_ns))
        return -1;
    uint64_t t0 = mono_ns();
    serialize_fragment_begin(vm, 0);
    serialize_fragment_run(vm, record_ns / SERIALIZE_CUE_NS, 0);
    if (vm->ser->stopped && !atomic_load(&vm->stopping)) {
        fprintf(stderr, "jinx-vmm: the fragment was stopped by the %.0f s wall guard with no cue "
                "point to stop at; at the stop:\n", SERIALIZE_WALL_GUARD_NS / 1e9);
        guard_report(vm, stderr, "jinx-vmm:   ");
    }
    serialize_fragment_end(vm);
    uint64_t wall = mono_ns() - t0;
    vm_resume(vm);
    struct serializer *s = vm->ser;
    fprintf(stderr, "jinx-vmm: recorded a fragment of %llu cue points (%.3f ms of virtual time) in "
            "%.2f ms wall; %llu memory accesses, %llu shared pages\n",
            (unsigned long long)s->cues, (double)(s->cues * SERIALIZE_CUE_NS) / 1e6, wall / 1e6,
            (unsigned long long)vm->crew->accesses, (unsigned long long)vm->crew->shared_pages);
    return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t trace_hash(const struct ex_trace *t)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        uint64_t k[4] = {e->tid, e->kind, e->addr, ((uint64_t)e->size << 32) | e->arg};
        h = fnv(h, k, sizeof k);
    }
    return h;
}

static uint64_t memory_hash(struct vm *vm)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (uint64_t f = GPA_POOL / PAGE_SIZE; f < vm->gm.nframes; f++)
        if (vm->gm.bitmap[f / 64] & (1ULL << (f % 64)))
            h = fnv(h, vm->gm.host + f * PAGE_SIZE, PAGE_SIZE);
    return h;
}

void serialize_free_run(struct vm *vm)
{
    pthread_mutex_lock(&vm->lock);
    vm->ser->on = false;
    vm->ser->limit = 0;
    for (int i = 0; i < vm->nvcpus; i++)
        pthread_cond_broadcast(&vm->vcpus[i]->cv);
    pthread_mutex_unlock(&vm->lock);
    vm_resume(vm);
}

int serialize_repeat_fragment(struct vm *vm, uint64_t after_ns, uint64_t record_ns, int n)
{
    if (!pause_after(vm, after_ns))
        return -1;
    struct snapshot snap;
    char err[256];
    if (snapshot_init(&snap, vm, err, sizeof err) < 0 || snapshot_take(&snap, err, sizeof err) < 0) {
        jx_err("simulate: %s", err);
        vm_resume(vm);
        return -1;
    }
    uint64_t first_trace = 0, first_mem = 0;
    int same = 0, told = 0, ran = 0, guarded = 0, stalls = 0;
    struct simdiff ref; /* where a simulation differs from the first (a few are told) */
    simdiff_init(&ref);
    struct stall_set stall; /* pages of stalled threads, shared from their first touch */
    stall_set_init(&stall);
    for (int i = 1; i <= n && !atomic_load(&vm->stopping); i++) {
        uint64_t t0 = mono_ns();
        serialize_fragment_begin(vm, snap.vtime); /* the same clock every time */
        serialize_fragment_run(vm, record_ns / SERIALIZE_CUE_NS, 0);
        if (atomic_load(&vm->stopping))
            break; /* the simulation ended the program: that is the outcome */
        int learnt = vm->ser->stopped && stalls < STALL_MAX_LEARN ? stall_learn(vm, &stall) : 0;
        if (learnt > 0) {
            /* A spin on its own pages (stall.h): every simulation of this snapshot would
             * stall alike, 5 s each. Start again with those pages shared, so that all
             * the simulations compared run under the same pre-shared pages. */
            fprintf(stderr, "jinx-vmm: simulation %d: thread %d made no cue point for %.0f s, "
                    "spinning on pages only it had touched: %d of its pages shared from their "
                    "first touch, simulations start again; at the stop:\n", i,
                    vm->ser->guard_turn, SERIALIZE_WALL_GUARD_NS / 1e9, learnt);
            guard_report(vm, stderr, "jinx-vmm:   ");
            stalls++;
            crew_stop(vm);
            pthread_mutex_lock(&vm->lock);
            vm->ser->on = false;
            pthread_mutex_unlock(&vm->lock);
            if (snapshot_restore(&snap, NULL, err, sizeof err) < 0) {
                jx_err("simulate: %s", err);
                break;
            }
            same = told = ran = guarded = 0;
            simdiff_free(&ref);
            simdiff_init(&ref);
            i = 0;
            continue;
        }
        ran++;
        if (vm->ser->stopped && guarded++ < 3) { /* where it stopped depends on wall time */
            fprintf(stderr, "jinx-vmm: simulation %d: stopped by the %.0f s wall guard with no cue "
                    "point to stop at: its end is not reproducible; at the stop:\n", i,
                    SERIALIZE_WALL_GUARD_NS / 1e9);
            guard_report(vm, stderr, "jinx-vmm:   "); /* before crew_stop drops waiting accesses */
        }
        crew_stop(vm);
        uint64_t th = trace_hash(&vm->ser->trace), mh = memory_hash(vm);
        uint64_t cues = vm->ser->cues;
        if (i == 1) {
            first_trace = th;
            first_mem = mh;
            if (simdiff_take(&ref, vm) < 0)
                jx_err("simulate: out of memory keeping the first simulation to compare");
        }
        bool alike = th == first_trace && mh == first_mem;
        same += alike;
        if (!alike && told < 3 && !simdiff_compare(&ref, vm, i, stderr))
            told++;
        struct restore_stats st;
        pthread_mutex_lock(&vm->lock);
        vm->ser->on = false;
        pthread_mutex_unlock(&vm->lock);
        if (snapshot_restore(&snap, &st, err, sizeof err) < 0) {
            jx_err("simulate: %s", err);
            break;
        }
        fprintf(stderr, "jinx-vmm: simulation %d: %llu cue points, trace %016llx, memory %016llx, "
                "%.2f ms (restore %.1f us: %llu pages, %llu frames invalidated)\n", i,
                (unsigned long long)cues, (unsigned long long)th, (unsigned long long)mh,
                (mono_ns() - t0) / 1e6, st.ns_total / 1e3, (unsigned long long)st.pages_copied,
                (unsigned long long)st.frames_invalidated);
    }
    fprintf(stderr, "jinx-vmm: simulations: %d of %d identical to the first", same, n);
    if (ran < n) /* stopped (a signal, a timeout, the program's end): not a difference */
        fprintf(stderr, " (only %d ran: the program was stopped)", ran);
    if (stalls)
        fprintf(stderr, " (after %d stall%s: %zu pages shared from their first touch)", stalls,
                stalls > 1 ? "s" : "", stall.n);
    fprintf(stderr, "\n");
    if (stall.n)
        crew_preshare(vm, NULL, 0); /* free execution and later fragments as ever */
    stall_set_free(&stall);
    simdiff_free(&ref);
    snapshot_free(&snap);
    if (!atomic_load(&vm->stopping))
        serialize_free_run(vm); /* from the snapshot (the restore set its time) */
    return same;
}
