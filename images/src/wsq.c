/*
 * wsq — a Chase–Lev work-stealing deque whose steal() is not atomic.
 *
 * The owner pushes and pops tasks at the bottom; thieves steal at the top. All deque
 * accesses are sequentially consistent C11 atomics (so x86 store buffering plays no
 * part). The owner's pop is correct; steal() is supposed to claim task t with
 * CAS(top, t, t+1), but does a separate check and store instead:
 *
 *   steal():  t = top; b = bottom;                          (s1)
 *             if (t >= b) return EMPTY;
 *             task = buf[t];
 *             if (top != t) return ABORT;                   (s2: check)
 *             top = t + 1;                                  (s3: store, not a CAS)
 *             return task;
 *
 * The bug: between one thief's check s2 and its store s3, another thread can claim the
 * same index t — a second thief (its own s1..s3), or the owner taking the last task with
 * its CAS in pop(). Both then run task t. (A stale store s3 can also move top back, so
 * later tasks get taken twice.) It manifests iff some thread's claim of index t comes
 * between a thief's s2 and s3 for the same t. Every task counts how often it ran;
 * run_task() asserts it ran exactly once: SIGABRT in the thread that runs it the second
 * time. Natively s2 and s3 are adjacent instructions and the tasks are separated by
 * private work, so it is rare.
 *
 * usage: wsq [tasks [work [thieves]]]   (defaults 120 tasks, work 4000 units, 2 thieves)
 * -DWIDEN_WINDOW: steal() sleeps 2 ms between s2 and s3.
 */
#include "common.h"

#define EMPTY (-1L)
#define ABORT (-2L)
#define MAXTHIEVES 6

struct deque {
    _Atomic long top;
    char pad1[56];
    _Atomic long bottom;
    char pad2[56];
    _Atomic long *buf; /* capacity >= total pushes: no wrap-around, no resizing */
};

static struct deque dq;
static _Atomic int *ran;       /* per task: how many times it ran */
static _Atomic long executed;  /* tasks run in total */
static _Atomic int owner_done;
static struct gate start = GATE_INIT;
static long ntasks = 120, work_units = 4000, nthieves = 2;

static void push(struct deque *d, long task)
{
    long b = atomic_load(&d->bottom);
    atomic_store(&d->buf[b], task);
    atomic_store(&d->bottom, b + 1);
}

static long pop(struct deque *d)
{
    long b = atomic_load(&d->bottom) - 1;
    atomic_store(&d->bottom, b);
    long t = atomic_load(&d->top);
    if (t > b) {
        atomic_store(&d->bottom, b + 1);
        return EMPTY;
    }
    long task = atomic_load(&d->buf[b]);
    if (t == b) { /* last task: race the thieves for it */
        if (!atomic_compare_exchange_strong(&d->top, &t, t + 1))
            task = EMPTY;
        atomic_store(&d->bottom, b + 1);
    }
    return task;
}

static long steal(struct deque *d)
{
    long t = atomic_load(&d->top);            /* s1 */
    long b = atomic_load(&d->bottom);
    if (t >= b)
        return EMPTY;
    long task = atomic_load(&d->buf[t]);
    if (atomic_load(&d->top) != t)            /* s2 */
        return ABORT;
    WIDEN(2000000);
    atomic_store(&d->top, t + 1);             /* s3 — BUG: should be CAS(top, t, t+1) */
    return task;
}

static uint64_t run_task(long task, uint64_t acc, uint64_t *rng)
{
    int before = atomic_fetch_add(&ran[task], 1);
    assert(before == 0 && "task ran twice");
    atomic_fetch_add(&executed, 1);
    return work(acc ^ (uint64_t)task, jitter(rng, (unsigned long)work_units));
}

static void *owner(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 1;
    gate_wait(&start);
    for (long i = 0; i < ntasks; i++) {
        push(&dq, i);
        if (i % 3 == 2) { /* run one of every three tasks itself */
            long task = pop(&dq);
            if (task >= 0)
                acc = run_task(task, acc, &rng);
        }
    }
    for (;;) {
        long task = pop(&dq);
        if (task == EMPTY)
            break;
        acc = run_task(task, acc, &rng);
    }
    atomic_store(&owner_done, 1);
    keep(acc);
    return NULL;
}

static void *thief(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 2;
    unsigned idle = 0;
    gate_wait(&start);
    for (;;) {
        int finished = atomic_load(&owner_done);
        long task = steal(&dq);
        if (task >= 0) {
            acc = run_task(task, acc, &rng);
            idle = 0;
        } else if (task == EMPTY) {
            if (finished)
                break; /* the owner has emptied the deque and pushes no more */
            acc = work(acc, 500); /* back off before trying again */
            if (++idle % 16 == 0)
                sched_yield();
        }
    }
    keep(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[tasks [work [thieves]]]";
    ntasks = arg_long(argc, argv, 1, ntasks, usage);
    work_units = arg_long(argc, argv, 2, work_units, usage);
    nthieves = arg_long(argc, argv, 3, nthieves, usage);
    if (ntasks < 1 || nthieves > MAXTHIEVES) {
        fprintf(stderr, "usage: %s %s (tasks >= 1, thieves <= %d)\n", argv[0], usage,
                MAXTHIEVES);
        return 2;
    }
    dq.buf = calloc((size_t)ntasks + 1, sizeof *dq.buf);
    ran = calloc((size_t)ntasks, sizeof *ran);
    assert(dq.buf && ran);
    uint64_t seed = os_seed();
    pthread_t o, th[MAXTHIEVES];
    start_thread(&o, owner, (void *)(uintptr_t)(seed * 3 | 1));
    for (long i = 0; i < nthieves; i++)
        start_thread(&th[i], thief, (void *)(uintptr_t)(seed * (uint64_t)(2 * i + 5) | 1));
    gate_open(&start);
    join_thread(o);
    for (long i = 0; i < nthieves; i++)
        join_thread(th[i]);
    for (long i = 0; i < ntasks; i++)
        assert(atomic_load(&ran[i]) == 1 && "task lost or ran twice");
    printf("wsq: ok tasks=%ld executed=%ld thieves=%ld%s\n", ntasks, (long)executed, nthieves,
           WIDENED ? " (widened)" : "");
    return 0;
}
