/* Serialized execution's host threads on one CPU (docs/benchmarks.md, "Pinning").
 *
 * Serialized execution runs one guest thread at a time, but each on its own vCPU and
 * host thread: a switch of guest thread wakes another host thread. On this nested host,
 * waking a thread on another, idle CPU goes through the hypervisor (an IPI) and costs
 * several raw exits; a wake-up on the same CPU does not. So while a VM runs serialized,
 * its vCPU host threads are kept on one CPU, and given back the process's affinity mask
 * when free execution resumes (free execution runs its threads truly in parallel).
 *
 * Lazily, by each vCPU's own host thread just before KVM_RUN (pin_sync): a thread that
 * never runs again keeps the mask it had, which costs nothing while it sleeps.
 *
 * Which CPU: --pin-cpu N if given, else the CPU the first vCPU thread to run serialized
 * is on. Each VM of the process claims its CPU for its lifetime; a CPU already claimed
 * by another VM of the process (a round's worker VM beside the live one), or held by
 * another jinx-vmm process of the same user (an abstract UNIX socket per CPU), is not
 * taken while a free one is allowed; failing that, the least claimed allowed CPU.
 * "Allowed" is the affinity mask of the thread that created the process's first VM (a
 * user's `taskset` is respected). A failing sched_setaffinity is not fatal: warned
 * once, the VM goes on unpinned. --no-pin: the affinity is never touched. */
#ifndef JINX_KVM_PIN_H
#define JINX_KVM_PIN_H
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

struct vm;
struct vcpu;

#define PIN_UNKNOWN (-2) /* vcpu->pin_cpu: never set by jinx (inherited mask) */
#define PIN_FREE (-1)    /* the process's mask; >= 0: pinned to that CPU */
#define PIN_MAX_CPU 1023 /* --pin-cpu's largest value (CPU_SETSIZE - 1) */

/* In vm_create (vm->opt set): notes the allowed CPUs (once per process) and checks
 * --pin-cpu against them. 0, or -1 with a message in err. */
int pin_init(struct vm *vm, char *err, size_t errlen);
/* By v's host thread, without vm->lock, before KVM_RUN: serial says whether the VM
 * runs serialized now. Pins the thread, or gives it the free mask back, when that
 * changed since its last call. */
void pin_sync(struct vm *vm, struct vcpu *v, bool serial);
/* In vm_destroy: the VM's claim on its CPU ends. */
void pin_release(struct vm *vm);
/* The CPU the VM's serialized execution runs on, or -1 (not chosen yet, --no-pin, or
 * given up after a failure). */
int pin_cpu_of(const struct vm *vm);

/* For `jinx test --jobs N`: the i-th (mod their number) CPU of this process's affinity
 * mask, or -1 when it cannot be read. */
int pin_nth_allowed_cpu(int i);
/* Writes the allowed CPUs as a list ("0-3,6") into buf. */
void pin_format_set(const cpu_set_t *set, char *buf, size_t len);

/* The choice itself (pure, unit-tested): pref if it is allowed and unclaimed, else the
 * allowed CPU with the fewest claims (the lowest numbered among equals); -1 when no CPU
 * is allowed. claims has CPU_SETSIZE entries. */
int pin_choose(const cpu_set_t *allowed, const int *claims, int pref);

#endif
