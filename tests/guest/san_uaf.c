/* A use-after-free that needs a bad interleaving, for sanitizer builds (tests/integration/
 * sanitizers.sh): a worker hands its result back under the lock, signals, and reads the
 * request once more after unlocking; main frees the request as soon as it sees the
 * result. Natively the worker's read follows its unlock at once while main is still
 * waking, so it hardly ever shows; a schedule that runs main between the worker's unlock
 * and its read makes ASan report heap-use-after-free. -DFIXED reads before unlocking:
 * the bug-free twin. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct request {
    int id;
    int result;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct request *pending;
static int answered;
static int checksum;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!pending)
        pthread_cond_wait(&cv, &lock);
    struct request *r = pending;
    r->result = r->id * 2;
    answered = 1;
    pthread_cond_broadcast(&cv);
#ifdef FIXED
    checksum = r->result + r->id;
    pthread_mutex_unlock(&lock);
#else
    pthread_mutex_unlock(&lock);
    checksum = r->result + r->id; /* main may have freed r by now */
#endif
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL))
        return 2;
    struct request *r = malloc(sizeof *r);
    if (!r)
        return 2;
    r->id = 21;
    r->result = 0;
    pthread_mutex_lock(&lock);
    pending = r;
    pthread_cond_broadcast(&cv);
    while (!answered)
        pthread_cond_wait(&cv, &lock);
    int result = r->result;
    pthread_mutex_unlock(&lock);
    /* Some work first, in registers (the top of main's stack is shared with the worker:
     * ASan's pthread_create hands it its start parameters there, and a loop on it would
     * be a cue point per access): natively the worker's read is long done by now. */
    for (unsigned i = 0; i < 40000000; i++)
        __asm__ volatile("");
    free(r);
    pthread_join(t, NULL);
    printf("result %d checksum %d\n", result, checksum);
    return result == 42 ? 0 : 1;
}
