/*
 * dyn-heldfile — the Circle bug (images/src/circle.c) in a program that holds a file open
 * across the crash: main opens FILE before starting the threads, and the writer takes
 * every new radius from the next byte of it (read(2), so the descriptor's offset moves;
 * at the end it rewinds with lseek). Replaying a dump of it is exact only if the
 * descriptor and its offset come back with the snapshot, and only if FILE still holds the
 * same bytes: a read that fails exits 3 with the errno, a different radius sequence
 * changes the run. tests/integration/dynbin.sh builds the dumps and replays them.
 *
 * usage: dyn-heldfile FILE [calls [work]]
 */
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define PI_NUM 355

static pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;
static long radius = 1, circumference = 2 * PI_NUM;
static struct gate start = GATE_INIT;
static long calls = 12, work_units = 12000;
static int fd = -1;

static long next_radius(void)
{
    unsigned char c;
    ssize_t n = read(fd, &c, 1);
    if (n == 0 && lseek(fd, 0, SEEK_SET) == 0)
        n = read(fd, &c, 1);
    if (n != 1) {
        fprintf(stderr, "dyn-heldfile: read: %s\n", n < 0 ? strerror(errno) : "empty file");
        exit(3);
    }
    return 2 + c % 64;
}

static void *writer(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 1;
    gate_wait(&start);
    for (long i = 0; i < calls; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        long r = next_radius();
        pthread_mutex_lock(&l);
        radius = r;
        pthread_mutex_unlock(&l);
        pthread_mutex_lock(&l); /* BUG: the circumference in a second critical section */
        circumference = 2 * PI_NUM * radius;
        pthread_mutex_unlock(&l);
    }
    keep(acc);
    return NULL;
}

static void *reader(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg, acc = 2;
    gate_wait(&start);
    for (long i = 0; i < calls; i++) {
        acc = work(acc, jitter(&rng, (unsigned long)work_units));
        pthread_mutex_lock(&l);
        long area = PI_NUM * radius * radius;
        assert(circumference * circumference == 4 * PI_NUM * area);
        pthread_mutex_unlock(&l);
    }
    keep(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *usage = "FILE [calls [work]]";
    if (argc < 2) {
        fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        return 2;
    }
    calls = arg_long(argc, argv, 2, calls, usage);
    work_units = arg_long(argc, argv, 3, work_units, usage);
    if ((fd = open(argv[1], O_RDONLY)) < 0) {
        fprintf(stderr, "dyn-heldfile: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    uint64_t seed = os_seed();
    pthread_t a, b;
    start_thread(&a, writer, (void *)(uintptr_t)(seed * 3 | 1));
    start_thread(&b, reader, (void *)(uintptr_t)(seed * 5 | 1));
    gate_open(&start);
    join_thread(a);
    join_thread(b);
    printf("dyn-heldfile: ok calls=%ld radius=%ld\n", calls, radius);
    return 0;
}
