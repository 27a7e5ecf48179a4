/* Many threads alive at once (one vCPU each), all joined; and the --vcpus limit turning
 * into EAGAIN from pthread_create rather than a failure of the VMM. */
#include "check.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static atomic_int arrived, sum;
static int total;

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    char stackbuf[256 * 1024]; /* default thread stacks are big enough for this */
    memset(stackbuf, id, sizeof stackbuf);
    atomic_fetch_add(&arrived, 1);
    while (atomic_load(&arrived) < total)
        sched_yield();
    atomic_fetch_add(&sum, id + stackbuf[1000] - id);
    return (void *)(long)(id * 2);
}

int main(int argc, char **argv)
{
    total = argc > 1 ? atoi(argv[1]) : 100;
    int expect_limit = argc > 2;
    pthread_t *t = calloc((size_t)total, sizeof *t);
    int created = 0, eagain = 0;
    for (int i = 0; i < total; i++) {
        int rc = pthread_create(&t[created], NULL, worker, (void *)(long)i);
        if (rc == EAGAIN) { eagain++; continue; }
        CHECK(rc == 0);
        created++;
    }
    if (expect_limit) {
        CHECK(eagain > 0);
        total = created; /* release the ones that did start */
    } else {
        CHECK(created == total);
    }
    for (int i = 0; i < created; i++) {
        void *ret;
        CHECK(pthread_join(t[i], &ret) == 0);
    }
    printf("threads ok: %d created, %d refused\n", created, eagain);
    return 0;
}
