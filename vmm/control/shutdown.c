/* SIGINT/SIGTERM/SIGHUP: stop the VM, let the normal exit path clean up (shutdown.h). */
#include "control/shutdown.h"
#include "linux/outcome.h"
#include "kvm/vm.h"
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
    pthread_t thread;
    bool started;
    struct vm *vm;
    sigset_t set;
    atomic_bool done;
    bool seen;                          /* a signal came (waiter thread only) */
    atomic_int first;                   /* the signal that stopped the VM */
    pthread_mutex_t lock;               /* cleanup path */
    char cleanup[PATH_MAX];
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

void shutdown_cleanup_path(const char *path)
{
    pthread_mutex_lock(&S.lock);
    snprintf(S.cleanup, sizeof S.cleanup, "%s", path ? path : "");
    pthread_mutex_unlock(&S.lock);
}

static void *waiter(void *arg)
{
    (void)arg;
    for (;;) {
        int sig;
        if (sigwait(&S.set, &sig) != 0)
            continue;
        if (atomic_load(&S.done))
            return NULL;
        if (!S.seen) {
            S.seen = true;
            struct outcome o = {.kind = OUT_ERROR, .vector = -1};
            snprintf(o.detail, sizeof o.detail, "interrupted by %s", signal_name(sig));
            pthread_mutex_lock(&S.vm->lock);
            /* If the VM already has its outcome, the signal changes nothing: the run
             * ends as it would have, with its own report and status. */
            bool first = !atomic_load(&S.vm->stopping);
            if (first) {
                atomic_store(&S.first, sig);
                vm_stop_locked(S.vm, &o);
            }
            pthread_mutex_unlock(&S.vm->lock);
            fprintf(stderr, "jinx-vmm: %s received: %s (send it again to exit at once)\n",
                    signal_name(sig), first ? "stopping the VM" : "the VM is already stopping");
        } else {
            pthread_mutex_lock(&S.lock);
            if (S.cleanup[0])
                unlink(S.cleanup);
            pthread_mutex_unlock(&S.lock);
            fprintf(stderr, "jinx-vmm: second %s: exiting now without cleanup\n",
                    signal_name(sig));
            _exit(128 + sig);
        }
    }
}

int shutdown_start(struct vm *vm, char *err, size_t errlen)
{
    S.vm = vm;
    sigemptyset(&S.set);
    sigaddset(&S.set, SIGINT);
    sigaddset(&S.set, SIGTERM);
    sigaddset(&S.set, SIGHUP);
    int r = pthread_sigmask(SIG_BLOCK, &S.set, NULL);
    if (r == 0)
        r = pthread_create(&S.thread, NULL, waiter, NULL);
    if (r != 0) {
        snprintf(err, errlen, "cannot set up SIGINT/SIGTERM handling: %s", strerror(r));
        return -1;
    }
    S.started = true;
    return 0;
}

int shutdown_end(void)
{
    if (!S.started)
        return 0;
    atomic_store(&S.done, true);
    pthread_kill(S.thread, SIGTERM); /* blocked everywhere: sigwait in the waiter takes it */
    pthread_join(S.thread, NULL);
    S.started = false;
    return atomic_load(&S.first);
}
