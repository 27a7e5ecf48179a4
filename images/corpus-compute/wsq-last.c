/*
 * wsq-last - a work-stealing deque (Chase-Lev, fixed-size array, sequentially consistent
 * atomics) whose owner takes the last task without a compare-and-swap. The owner pushes
 * TASKS tasks in rounds of 4 and after each round pops until its deque is empty; two
 * thieves steal from the top (CAS on top) and sched_yield when there is nothing to
 * steal. Every task computes a row of results on a shared page and marks itself run.
 * When the owner pops the last task (top == bottom), it claims it with a plain store of
 * top + 1 instead of a CAS, so a thief that read the old bottom and CASes top between
 * the owner's load of top and its store takes the same task: the second run of the task
 * aborts (SIGABRT). 4 threads (main + owner + 2 thieves), the bug involves 2, two
 * preemptions (the thief between its read of bottom and its CAS, the owner between its
 * load of top and its store).
 *
 *   owner:                       bottom = b; t = top (== b) [preempted]          top = t + 1; run b
 *   thief: t = top; b' = bottom (t < b') [preempted]       x = buf[t]; CAS(top, t, t + 1) ok; run t
 *
 * Operations: 3000 pushes, 3000 pops or steals, plus the thieves' empty polls. Shared
 * accesses: ~8 per task in the deque (push 3, pop 5 or steal 4), 18 per task run
 * (its run count, 16 result words, the done count): ~8e4 a run, plus ~2 per empty poll.
 *
 * Twin (wsq-last-ok): the owner CASes top from t to t + 1 and gives the task up when
 * the CAS fails.
 */
#include "corpus.h"

#define TASKS 3000
#define ROUND 4
#define THIEVES 2
#define WIDTH 16

static atomic_long top, bottom;
static int buf[TASKS];
static atomic_int runs[TASKS];
static atomic_int done;
static uint32_t result[TASKS][WIDTH];
static UNUSED atomic_int widened, thief_asleep;   /* the -DWIDEN_WINDOW build only */

static void push(int task)
{
    long b = atomic_load(&bottom);
    STORE(buf[b], task);
    atomic_store(&bottom, b + 1);
}

static int pop(void)
{
    long b = atomic_load(&bottom) - 1;
    atomic_store(&bottom, b);
    long t = atomic_load(&top);
    if (t > b) {                               /* empty */
        atomic_store(&bottom, b + 1);
        return -1;
    }
    int x = LOAD(buf[b]);
    if (t == b) {                              /* the last task: a thief may race for it */
        if (WIDENED && atomic_load(&thief_asleep))
            WIDEN(2000000);
#if FIXED
        if (!atomic_compare_exchange_strong(&top, &t, t + 1))
            x = -1;
#else
        atomic_store(&top, t + 1);
#endif
        atomic_store(&bottom, b + 1);
    }
    return x;
}

static int steal(void)
{
    long t = atomic_load(&top);
    long b = atomic_load(&bottom);
    if (t >= b)
        return -1;
    if (WIDENED && t >= TASKS / 2 && !atomic_exchange(&widened, 1)) {
        atomic_store(&thief_asleep, 1);        /* the owner pops down to t meanwhile */
        WIDEN(1000000);
        atomic_store(&thief_asleep, 0);
    }
    int x = LOAD(buf[t]);
    if (!atomic_compare_exchange_strong(&top, &t, t + 1))
        return -1;
    return x;
}

static void run(int task, int who)
{
    int prev = atomic_fetch_add(&runs[task], 1);
    CHECK(prev == 0, "task %d run twice (now by %s)", task, who ? "a thief" : "the owner");
    uint32_t x = (uint32_t)task * 2654435761u;
    for (int i = 0; i < WIDTH; i++) {
        x = (x ^ (x >> 13)) * 0x5bd1e995u + (uint32_t)i;
        STORE(result[task][i], x);
    }
    atomic_fetch_add(&done, 1);
}

static void *owner(void *arg)
{
    (void)arg;
    for (int next = 0; next < TASKS;) {
        for (int k = 0; k < ROUND && next < TASKS; k++)
            push(next++);
        int x;
        while ((x = pop()) >= 0)
            run(x, 0);
    }
    return NULL;
}

static void *thief(void *arg)
{
    (void)arg;
    while (atomic_load(&done) < TASKS) {
        int x = steal();
        if (x >= 0)
            run(x, 1);
        else
            sched_yield();
    }
    return NULL;
}

int main(void)
{
    pthread_t o, th[THIEVES];
    start_thread(&o, owner, NULL);
    for (int i = 0; i < THIEVES; i++)
        start_thread(&th[i], thief, NULL);
    join_thread(o);
    for (int i = 0; i < THIEVES; i++)
        join_thread(th[i]);
    for (int t = 0; t < TASKS; t++) {
        CHECK(atomic_load(&runs[t]) == 1, "task %d ran %d times", t, atomic_load(&runs[t]));
        uint32_t x = (uint32_t)t * 2654435761u;
        for (int i = 0; i < WIDTH; i++) {
            x = (x ^ (x >> 13)) * 0x5bd1e995u + (uint32_t)i;
            CHECK(result[t][i] == x, "task %d result %d wrong", t, i);
        }
    }
    PASS("wsq-last");
    return 0;
}
