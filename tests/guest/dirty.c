/* Benchmark workload for snapshot restore: T threads keep writing to N distinct pages in
 * total (N/T each) for DURATION_MS of virtual time, so a restore after any interval finds
 * about N pages dirty. Usage: dirty N T DURATION_MS (T = 0: the main thread writes them
 * itself between its clock checks, so the program runs on one vCPU) */
#include "check.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static long pages_per_thread, duration_ms;
static volatile int stop;

static void *writer(void *arg)
{
    (void)arg;
    volatile uint8_t *p = mmap(NULL, (size_t)pages_per_thread * 4096, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    for (uint8_t round = 1; !stop; round++)
        for (long i = 0; i < pages_per_thread; i++)
            p[i * 4096] = round;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100, t = argc > 2 ? atol(argv[2]) : 4;
    duration_ms = argc > 3 ? atol(argv[3]) : 200;
    CHECK(n >= 1 && t >= 0 && t <= 64);
    pages_per_thread = t ? (n + t - 1) / t : n;
    volatile uint8_t *own = NULL;
    if (!t) {
        own = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(own != MAP_FAILED);
    }
    uint8_t own_round = 0;
    pthread_t th[64];
    for (long i = 0; i < t; i++)
        CHECK(pthread_create(&th[i], NULL, writer, NULL) == 0);
    struct timespec d = {duration_ms / 1000, (duration_ms % 1000) * 1000000L}, start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do { /* spin in virtual time: a sleep would be skipped while the writers run */
        if (own) {
            own_round++;
            for (long i = 0; i < n; i++)
                own[i * 4096] = own_round;
        }
        if (t) /* alone, a sleep would be skipped (virtual time) and the run over at once */
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 <
             d.tv_sec * 1000 + d.tv_nsec / 1000000);
    stop = 1;
    for (long i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    return 0;
}
