#include "kvm/pin.h"
#include "kvm/vm.h"
#include "lib/util.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The process's view: the allowed CPUs and which VM claimed which CPU. */
static pthread_mutex_t pin_mu = PTHREAD_MUTEX_INITIALIZER;
static bool have_free;
static cpu_set_t free_mask;
static int claims[CPU_SETSIZE];
static int held[CPU_SETSIZE]; /* fd + 1 of the socket that holds a CPU across processes */

/* Other jinx-vmm processes of this user: a CPU is held by binding an abstract UNIX socket
 * named after it (no file, gone when the process is: no stale state), so that two
 * serialized runs started side by side do not pin to the same CPU while another idles.
 * true: this process holds it now. Caller holds pin_mu. */
static bool hold(int cpu)
{
    if (held[cpu])
        return true;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "jinx-pin-%u-cpu%d",
                     (unsigned)geteuid(), cpu);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                                                    (size_t)n)) < 0) {
        close(fd);
        return false;
    }
    held[cpu] = fd + 1;
    return true;
}

/* Caller holds pin_mu: pref when allowed and free here and in other processes, else any
 * CPU free in both, else pin_choose (shared with another process, or a given CPU). */
static int choose_held(int pref, bool given)
{
    if (given || (pref >= 0 && pref < CPU_SETSIZE && CPU_ISSET(pref, &free_mask) &&
                  !claims[pref] && hold(pref)))
        return pin_choose(&free_mask, claims, pref);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &free_mask) && !claims[c] && hold(c))
            return c;
    return pin_choose(&free_mask, claims, pref);
}

int pin_choose(const cpu_set_t *allowed, const int *claims_of, int pref)
{
    if (pref >= 0 && pref < CPU_SETSIZE && CPU_ISSET(pref, allowed) && claims_of[pref] == 0)
        return pref;
    int best = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, allowed) && (best < 0 || claims_of[c] < claims_of[best]))
            best = c;
    return best;
}

void pin_format_set(const cpu_set_t *set, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE && n + 24 < len; c++) {
        if (!CPU_ISSET(c, set) || (c > 0 && CPU_ISSET(c - 1, set)))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        n += (size_t)snprintf(buf + n, len - n, e > c ? "%s%d-%d" : "%s%d", n ? "," : "", c, e);
    }
}

/* Caller holds pin_mu. */
static int note_free_mask(char *err, size_t errlen)
{
    if (have_free)
        return 0;
    if (sched_getaffinity(0, sizeof free_mask, &free_mask) < 0) {
        snprintf(err, errlen, "cannot read this process's CPU affinity (sched_getaffinity: %s); "
                 "run with --no-pin", strerror(errno));
        return -1;
    }
    have_free = true;
    return 0;
}

int pin_init(struct vm *vm, char *err, size_t errlen)
{
    vm->pin_cpu = -1;
    if (vm->opt.no_pin)
        return 0;
    pthread_mutex_lock(&pin_mu);
    int rc = note_free_mask(err, errlen);
    if (rc == 0 && vm->opt.pin_cpu_given &&
        (vm->opt.pin_cpu < 0 || vm->opt.pin_cpu >= CPU_SETSIZE ||
         !CPU_ISSET(vm->opt.pin_cpu, &free_mask))) {
        char list[256];
        pin_format_set(&free_mask, list, sizeof list);
        snprintf(err, errlen, "--pin-cpu %d: this process may not run on CPU %d (its affinity "
                 "mask allows %s); give one of those, or --no-pin", vm->opt.pin_cpu,
                 vm->opt.pin_cpu, list);
        rc = -1;
    }
    pthread_mutex_unlock(&pin_mu);
    return rc;
}

/* The VM's CPU, chosen by the first thread that needs it. */
static int claim(struct vm *vm)
{
    int cpu = __atomic_load_n(&vm->pin_cpu, __ATOMIC_ACQUIRE);
    if (cpu >= 0)
        return cpu;
    pthread_mutex_lock(&pin_mu);
    cpu = vm->pin_cpu;
    if (cpu < 0) {
        cpu = choose_held(vm->opt.pin_cpu_given ? vm->opt.pin_cpu : sched_getcpu(),
                          vm->opt.pin_cpu_given);
        if (cpu >= 0) {
            claims[cpu]++;
            __atomic_store_n(&vm->pin_cpu, cpu, __ATOMIC_RELEASE);
            if (vm->opt.stats && !vm->opt.quiet) {
                char list[256];
                pin_format_set(&free_mask, list, sizeof list);
                fprintf(stderr, "jinx-vmm: pin: serialized execution's host threads on CPU %d "
                        "(free execution: CPUs %s)\n", cpu, list);
            }
        }
    }
    pthread_mutex_unlock(&pin_mu);
    return cpu;
}

void pin_sync(struct vm *vm, struct vcpu *v, bool serial)
{
    if (vm->opt.no_pin)
        return;
    bool failed = atomic_load(&vm->pin_failed);
    int want = serial && !failed ? claim(vm) : PIN_FREE;
    if (want < 0)
        want = PIN_FREE;
    if (want == v->pin_cpu || (failed && v->pin_cpu == PIN_UNKNOWN))
        return;
    cpu_set_t one, *mask = &free_mask;
    if (want >= 0) {
        CPU_ZERO(&one);
        CPU_SET(want, &one);
        mask = &one;
    }
    v->pin_cpu = want; /* tried once either way: a failure is not retried at every run */
    if (sched_setaffinity(0, sizeof *mask, mask) == 0)
        return;
    int e = errno;
    if (!atomic_exchange(&vm->pin_failed, true))
        jx_err("cannot %s vCPU %d's host thread (sched_setaffinity: %s); serialized "
               "execution goes on unpinned (--no-pin silences this)",
               want >= 0 ? "pin to one CPU" : "give back the CPU affinity of", v->index,
               strerror(e));
}

void pin_release(struct vm *vm)
{
    pthread_mutex_lock(&pin_mu);
    int c = vm->pin_cpu;
    if (c >= 0 && claims[c] > 0 && --claims[c] == 0 && held[c]) {
        close(held[c] - 1); /* free for other processes again */
        held[c] = 0;
    }
    vm->pin_cpu = -1;
    pthread_mutex_unlock(&pin_mu);
}

int pin_cpu_of(const struct vm *vm)
{
    if (vm->opt.no_pin || atomic_load(&((struct vm *)vm)->pin_failed))
        return -1;
    return __atomic_load_n(&vm->pin_cpu, __ATOMIC_ACQUIRE);
}

int pin_nth_allowed_cpu(int i)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0 || CPU_COUNT(&set) == 0)
        return -1;
    int k = i % CPU_COUNT(&set);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set) && k-- == 0)
            return c;
    return -1;
}
