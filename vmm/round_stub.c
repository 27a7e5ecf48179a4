/* PLACEHOLDER for the round driver (vmm/round.c, written separately): it records the
 * configuration and the attached flag so the control socket, jinxctl and --attach can
 * be built and tested before the real driver lands. It runs no rounds: the counters
 * stay 0. Delete this file (and its line in vmm/vmm.mk) when round.c is merged. */
#include "round.h"
#include "vm.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* One VM per process today; the struct remembers which one it describes. */
static struct {
    pthread_mutex_t lock;
    const struct vm *vm;
    struct round_stats st;
} stub = {.lock = PTHREAD_MUTEX_INITIALIZER};

int round_attach(struct vm *vm, const struct round_config *cfg, char *err, size_t errlen)
{
    if (atomic_load(&vm->stopping)) {
        snprintf(err, errlen, "the VM has stopped: there is nothing to attach to");
        return -1;
    }
    pthread_mutex_lock(&stub.lock);
    if (stub.vm != vm) {
        memset(&stub.st, 0, sizeof stub.st);
        stub.vm = vm;
    }
    stub.st.attached = true;
    stub.st.cfg = *cfg;
    pthread_mutex_unlock(&stub.lock);
    return 0;
}

void round_detach(struct vm *vm)
{
    pthread_mutex_lock(&stub.lock);
    if (stub.vm == vm)
        stub.st.attached = false;
    pthread_mutex_unlock(&stub.lock);
}

void round_status(struct vm *vm, struct round_stats *out)
{
    pthread_mutex_lock(&stub.lock);
    if (stub.vm == vm) {
        *out = stub.st;
    } else {
        memset(out, 0, sizeof *out);
        round_config_default(&out->cfg);
    }
    pthread_mutex_unlock(&stub.lock);
}
