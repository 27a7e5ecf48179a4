/*
 * flag-open — the Cuzz/PCT article's ordering bug: a flag published before the object
 * it announces is fully initialised.
 *
 * A sequence of `rounds` channel objects. For each channel i:
 *
 *   Thread 1 (opener):                        Thread 2 (user):
 *     private work                              private work
 *     ch->id = i; ch->size = ...                while (!ch->open)        (b1: read open)
 *     ch->open = 1                  (a1)            private work (poll)
 *     x = &values[i]; x->value = f(i)           v = ch->x->value         (b2: read x,
 *     ch->x = x                     (a2)                                   deref it)
 *
 * The bug: thread 1 sets `open` (a1) before it sets the pointer x (a2). Thread 2 trusts
 * `open` and dereferences x. It manifests iff thread 2's read of open (b1) that first sees
 * 1 and its read of x (b2) both come after a1 and before a2; x is then NULL and the
 * dereference faults: SIGSEGV in thread 2. Natively the window between a1 and a2 is a
 * few dozen instructions (initialising the value) while thread 2 polls only every ~poll
 * work units, so it is rare.
 *
 * usage: flag-open [rounds [work [poll]]]   (defaults 16 rounds, work 10000, poll 20000)
 * -DWIDEN_WINDOW: thread 1 sleeps 2 ms between a1 and a2.
 */
#include "common.h"

struct value {
    long value;
    char pad[56];
};

struct channel {
    long id, size;
    _Atomic int open;
    struct value *x; /* set after open: BUG */
    char pad[64];
};

static struct channel *chans;
static struct value *values;
static struct gate start = GATE_INIT;
static long rounds = 16, work_units = 10000, poll_units = 20000;

static void open_channel(struct channel *ch, long i)
{
    ch->id = i;
    ch->size = 64 + i;
    atomic_store(&ch->open, 1);   /* a1 */
    WIDEN(2000000);
    struct value *x = &values[i];
    x->value = (long)(work((uint64_t)i, 16) & 0xffff);
    *(struct value *volatile *)&ch->x = x; /* a2: too late */
}

static void *opener(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 1;
    gate_wait(&start);
    for (long i = 0; i < rounds; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        open_channel(&chans[i], i);
    }
    keep(acc);
    return NULL;
}

static long total;

static void *user(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 2;
    long sum = 0;
    gate_wait(&start);
    for (long i = 0; i < rounds; i++) {
        struct channel *ch = &chans[i];
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        while (!atomic_load(&ch->open))                     /* b1 */
            acc = work(acc, jitter(&rng, (unsigned long)poll_units));
        struct value *x = *(struct value *volatile *)&ch->x; /* b2 */
        sum += x->value + ch->size;                          /* NULL -> SIGSEGV */
    }
    keep(acc);
    total = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[rounds [work [poll]]]";
    rounds = arg_long(argc, argv, 1, rounds, usage);
    work_units = arg_long(argc, argv, 2, work_units, usage);
    poll_units = arg_long(argc, argv, 3, poll_units, usage);
    chans = calloc((size_t)rounds + 1, sizeof *chans);
    values = calloc((size_t)rounds + 1, sizeof *values);
    assert(chans && values);
    uint64_t seed = os_seed();
    pthread_t a, b;
    start_thread(&a, opener, (void *)(uintptr_t)(seed * 3 | 1));
    start_thread(&b, user, (void *)(uintptr_t)(seed * 5 | 1));
    gate_open(&start);
    join_thread(a);
    join_thread(b);
    printf("flag-open: ok rounds=%ld work=%ld poll=%ld sum=%ld%s\n", rounds, work_units,
           poll_units, total, WIDENED ? " (widened)" : "");
    return 0;
}
