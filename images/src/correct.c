/*
 * correct — the false-positive check: the shapes of circle, flag-open and wsq, written
 * correctly. It must never fail, under any interleaving.
 *
 *   writer: SetRadius updates radius and circumference in ONE critical section, then
 *           publishes channel i: fills it completely (x, size) and only then sets open
 *           (release store).
 *   reader: GetArea under the lock asserts the circle is consistent; for each channel
 *           waits for open (acquire load) and dereferences x, which is never NULL.
 *   owner:  Chase–Lev deque owner (push/pop at the bottom, CAS for the last task).
 *   thief:  steals with CAS(top, t, t+1) — the atomic claim that wsq lacks.
 *   Every deque task asserts it ran exactly once; main asserts all ran.
 * All shared accesses are mutex-protected or C11 atomics (seq_cst unless noted).
 *
 * usage: correct [calls [work [tasks]]]   (defaults 12 calls, work 12000, 300 tasks)
 */
#include "common.h"

#define PI_NUM 355

/* ---- circle, done right ---- */
struct circle {
    pthread_mutex_t l;
    long radius, circumference;
};
static struct circle circle = { PTHREAD_MUTEX_INITIALIZER, 1, 2 * PI_NUM };

static void set_radius(struct circle *c, long r)
{
    pthread_mutex_lock(&c->l);
    c->radius = r;
    c->circumference = 2 * PI_NUM * r; /* same critical section */
    pthread_mutex_unlock(&c->l);
}

static long get_area(struct circle *c)
{
    pthread_mutex_lock(&c->l);
    long area = PI_NUM * c->radius * c->radius;
    assert(c->circumference * c->circumference == 4 * PI_NUM * area);
    pthread_mutex_unlock(&c->l);
    return area;
}

/* ---- channels, published correctly ---- */
struct value {
    long value;
};
struct channel {
    long size;
    struct value *x;
    _Atomic int open;
    char pad[40];
};
static struct channel *chans;
static struct value *values;

/* ---- Chase-Lev deque, correct ---- */
#define EMPTY (-1L)
#define ABORT (-2L)
struct deque {
    _Atomic long top;
    char pad1[56];
    _Atomic long bottom;
    char pad2[56];
    _Atomic long *buf;
};
static struct deque dq;
static _Atomic int *ran;
static _Atomic int owner_done;

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
    if (t == b) {
        if (!atomic_compare_exchange_strong(&d->top, &t, t + 1))
            task = EMPTY;
        atomic_store(&d->bottom, b + 1);
    }
    return task;
}

static long steal(struct deque *d)
{
    long t = atomic_load(&d->top);
    long b = atomic_load(&d->bottom);
    if (t >= b)
        return EMPTY;
    long task = atomic_load(&d->buf[t]);
    if (!atomic_compare_exchange_strong(&d->top, &t, t + 1))
        return ABORT;
    return task;
}

static _Atomic long executed;
static struct gate start = GATE_INIT;
static long calls = 12, work_units = 12000, ntasks = 300;

static uint64_t run_task(long task, uint64_t acc, uint64_t *rng)
{
    int before = atomic_fetch_add(&ran[task], 1);
    assert(before == 0);
    atomic_fetch_add(&executed, 1);
    return work(acc ^ (uint64_t)task, jitter(rng, 2000));
}

static void *writer(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 1;
    gate_wait(&start);
    for (long i = 0; i < calls; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        set_radius(&circle, 2 + i % 1000);
        struct channel *ch = &chans[i];
        ch->size = 64 + i;
        ch->x = &values[i];
        atomic_store_explicit(&ch->open, 1, memory_order_release);
    }
    keep(acc);
    return NULL;
}

static long reader_sum;

static void *reader(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 2;
    long sum = 0;
    gate_wait(&start);
    for (long i = 0; i < calls; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        sum += get_area(&circle);
        struct channel *ch = &chans[i];
        while (!atomic_load_explicit(&ch->open, memory_order_acquire))
            acc = work(acc, 1000);
        sum += ch->x->value + ch->size;
    }
    keep(acc);
    reader_sum = sum;
    return NULL;
}

static void *owner(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 3;
    gate_wait(&start);
    for (long i = 0; i < ntasks; i++) {
        push(&dq, i);
        if (i % 3 == 2) {
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
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 4;
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
                break;
            if (++idle % 16 == 0)
                sched_yield();
        }
    }
    keep(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[calls [work [tasks]]]";
    calls = arg_long(argc, argv, 1, calls, usage);
    work_units = arg_long(argc, argv, 2, work_units, usage);
    ntasks = arg_long(argc, argv, 3, ntasks, usage);
    chans = calloc((size_t)calls + 1, sizeof *chans);
    values = calloc((size_t)calls + 1, sizeof *values);
    dq.buf = calloc((size_t)ntasks + 1, sizeof *dq.buf);
    ran = calloc((size_t)ntasks + 1, sizeof *ran);
    assert(chans && values && dq.buf && ran);
    for (long i = 0; i < calls; i++)
        values[i].value = i;
    uint64_t seed = os_seed();
    pthread_t t[4];
    start_thread(&t[0], writer, (void *)(uintptr_t)(seed * 3 | 1));
    start_thread(&t[1], reader, (void *)(uintptr_t)(seed * 5 | 1));
    start_thread(&t[2], owner, (void *)(uintptr_t)(seed * 7 | 1));
    start_thread(&t[3], thief, (void *)(uintptr_t)(seed * 9 | 1));
    gate_open(&start);
    for (int i = 0; i < 4; i++)
        join_thread(t[i]);
    for (long i = 0; i < ntasks; i++)
        assert(atomic_load(&ran[i]) == 1);
    assert(executed == ntasks);
    printf("correct: ok calls=%ld tasks=%ld executed=%ld reader_sum=%ld\n", calls, ntasks,
           (long)executed, reader_sum);
    return 0;
}
