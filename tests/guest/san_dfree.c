/* A double free that needs a bad interleaving, for ASan builds (tests/integration/
 * sanitizers.sh): two closers each take the shared session, log that they close it, then
 * clear it and free it; the take and the clear are two steps with the log between them.
 * Natively one closer is usually done before the other looks; a schedule that runs both
 * takes before either clear frees the session twice, and ASan reports double-free.
 * -DFIXED takes it with one atomic exchange: the bug-free twin. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct session {
    int fd;
    char name[24];
};

static struct session *_Atomic shared;
static atomic_int closed;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int logged;

static void *closer(void *arg)
{
    (void)arg;
#ifdef FIXED
    struct session *s = atomic_exchange(&shared, NULL);
#else
    struct session *s = atomic_load(&shared);
#endif
    if (s) {
        pthread_mutex_lock(&log_lock);
        logged++;
        pthread_mutex_unlock(&log_lock);
    }
#ifndef FIXED
    if (s)
        atomic_store(&shared, NULL); /* too late: the other closer may have taken it too */
#endif
    if (s) {
        atomic_fetch_add(&closed, 1);
        free(s);
    }
    return NULL;
}

int main(void)
{
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        return 2;
    s->fd = 3;
    atomic_store(&shared, s);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&t[i], NULL, closer, NULL))
            return 2;
        /* Some work between the two (in registers: no shared memory): natively the first
         * closer is long done when the second starts. */
        for (unsigned k = 0; i == 0 && k < 40000000; k++)
            __asm__ volatile("");
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("closed %d\n", atomic_load(&closed));
    return atomic_load(&closed) == 1 ? 0 : 1;
}
