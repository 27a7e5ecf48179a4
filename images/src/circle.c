/*
 * circle — the Circle class of the Jinx article: an atomicity violation.
 *
 * struct circle { lock l; radius; circumference; } with pi = 355/113 and everything kept
 * as integers scaled by 113 (circ = 2*pi*r*113 = 710*r, area = pi*r*r*113 = 355*r*r).
 *
 *   Thread A (writer), calls times:          Thread B (reader), calls times:
 *     private work                             private work
 *     SetRadius(r):                            GetArea():
 *       lock(l); radius = r; unlock(l)   (a1)    lock(l)
 *       UpdateCircumference():                   area = 355*radius*radius        (b1)
 *         lock(l); circumference =               assert(circumference^2 ==
 *                  710*radius; unlock(l) (a2)           4*355*area)             (b2)
 *                                                unlock(l)
 *
 * The bug: SetRadius updates the circle in two critical sections, so between a1 and a2
 * the object is inconsistent (new radius, old circumference) while the lock is free.
 * It manifests iff B's critical section (its reads b1/b2 of radius and circumference)
 * runs after A's write of radius in a1 and before A's write of circumference in a2,
 * i.e. B acquires l in the few nanoseconds between A's unlock in a1 and its lock in a2.
 * The assert then fails: SIGABRT in thread B. Each call is separated by ~work units of
 * private, register-only computation, so natively the window is hit very rarely.
 *
 * usage: circle [calls [work]]   (defaults 12 calls per thread, work 12000 units ~15 us)
 * -DWIDEN_WINDOW: A sleeps 2 ms between the two critical sections.
 */
#include "common.h"

#define PI_NUM 355 /* pi ~ 355/113; all quantities are scaled by 113 */

struct circle {
    pthread_mutex_t l;
    long radius;
    long circumference; /* 2*pi*radius*113 */
};

static struct circle the_circle = { PTHREAD_MUTEX_INITIALIZER, 1, 2 * PI_NUM };
static struct gate start = GATE_INIT;
static long calls = 12, work_units = 12000;

static void update_circumference(struct circle *c)
{
    pthread_mutex_lock(&c->l);
    c->circumference = 2 * PI_NUM * c->radius;
    pthread_mutex_unlock(&c->l);
}

static void set_radius(struct circle *c, long r)
{
    pthread_mutex_lock(&c->l);
    c->radius = r;
    pthread_mutex_unlock(&c->l);
    WIDEN(2000000);
    update_circumference(c); /* BUG: not in the same critical section */
}

static long get_area(struct circle *c)
{
    pthread_mutex_lock(&c->l);
    long r = c->radius;
    long area = PI_NUM * r * r;
    long circ = c->circumference;
    /* circumference^2 == 4*pi*area, in the scaled integers */
    assert(circ * circ == 4 * PI_NUM * area);
    pthread_mutex_unlock(&c->l);
    return area;
}

static void *writer(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 1;
    gate_wait(&start);
    for (long i = 0; i < calls; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        set_radius(&the_circle, 2 + (long)(i % 1000));
    }
    keep(acc);
    return NULL;
}

static long area_sum;

static void *reader(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 2;
    long sum = 0;
    gate_wait(&start);
    for (long i = 0; i < calls; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        sum += get_area(&the_circle);
    }
    keep(acc);
    area_sum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "[calls [work]]";
    calls = arg_long(argc, argv, 1, calls, usage);
    work_units = arg_long(argc, argv, 2, work_units, usage);
    uint64_t seed = os_seed();
    pthread_t a, b;
    start_thread(&a, writer, (void *)(uintptr_t)(seed * 3 | 1));
    start_thread(&b, reader, (void *)(uintptr_t)(seed * 5 | 1));
    gate_open(&start);
    join_thread(a);
    join_thread(b);
    printf("circle: ok calls=%ld work=%ld radius=%ld area_sum=%ld%s\n", calls, work_units,
           the_circle.radius, area_sum, WIDENED ? " (widened)" : "");
    return 0;
}
