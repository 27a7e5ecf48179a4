/* The guest's clock in free execution (issue 14 item 3): clock_gettime, gettimeofday and
 * time answered by the guest-agent without an exit, from the TSC.
 *
 * Why it is exact: on PVM the program's `rdtsc` (and the agent's, which runs in user
 * mode) reads the host's TSC itself: neither KVM_SET_MSRS IA32_TSC nor
 * KVM_VCPU_TSC_OFFSET moves it and CR4.TSD does not make it fault (scripts/bench/
 * tsc-probe.c, docs/benchmarks.md). So the VMM reads the same counter with its own
 * `rdtsc`, and when the clock is on, free execution's host time is
 *     host_ns = mono0 + vclock_elapsed(rdtsc - tsc0, mult)
 * (mono0, tsc0 taken together at boot, mult from KVM_GET_TSC_KHZ), and virtual time is
 * host_ns - start_ns + skipped_ns as before (kvm/vm.c vm_vtime, pauses and skipped sleeps
 * included). The agent computes ns_base + vclock_elapsed(rdtsc - tsc_base, mult) with
 * ns_base = mono0 - start_ns + skipped_ns: the same integer operations on the same
 * counter, so an answer from the guest and one from the VMM are ordered as their TSC
 * readings are, and never go backwards relative to each other.
 *
 * The block (struct agent_clock, kvm/layout.h) lives in the agent's page, which the
 * program cannot write; vclock_publish rewrites what changed before each KVM_RUN.
 * skipped_ns changes only while no vCPU runs guest code (a pause, a restore, a skipped
 * sleep when every thread waits, the start or end of a serialized fragment), and a vCPU
 * kicked out of KVM_RUN half-way through an answer runs on until it is out
 * (vclock_mid_answer), so no vCPU computes with a half-written or changed block; while a
 * pause waits the block is off (vclock_publish), so a vCPU let run on exits at its next
 * time syscall (on PVM the kick is taken at the agent's entry, i.e. always mid-answer in
 * a loop of in-guest answers, which would otherwise never pause). Off: not PVM, --no-guest-answers, no TSC rate
 * from KVM, or a host TSC that is not constant and nonstop (/proc/cpuinfo). Whenever
 * time is virtual (serialized execution, rounds, explore, replay) `on` is 0 and every
 * time syscall exits, unchanged. */
#ifndef JINX_VCLOCK_H
#define JINX_VCLOCK_H
#include <stdbool.h>
#include <stdint.h>

#include "kvm/layout.h"

struct vm;
struct vcpu;

struct vclock {
    bool on;
    uint64_t tsc0, mono0, mult;
};

/* ns per tick in 32.32 fixed point for a TSC of khz kHz; 0 for a rate out of 1 MHz..100 GHz. */
uint64_t vclock_mult(uint64_t khz);

/* (ticks * mult) >> 32, truncated to 64 bits: the agent's mulq + shrdq. */
uint64_t vclock_elapsed(uint64_t ticks, uint64_t mult);

/* Turns the clock on for vm when it applies (see above), taking mono0 and tsc0 now.
 * khz: KVM_GET_TSC_KHZ (0: unknown). cpuinfo: /proc/cpuinfo's text (NULL: unreadable). */
void vclock_setup(struct vclock *c, bool pvm, bool answers, uint64_t khz, const char *cpuinfo);

/* vclock_setup for vm (after its agent header is loaded and checked): the rate from
 * KVM_GET_TSC_KHZ on the VM, /proc/cpuinfo's flags. -1 when the header's clock offsets
 * are bad (an internal error: the agent image is built with jinx-vmm). */
int vclock_setup_vm(struct vm *vm, uint64_t agent_len);

/* Free execution's host time in ns: the TSC formula when the clock is on, else mono_ns().
 * Every computation of virtual time from the host clock goes through this. */
uint64_t vm_host_ns(struct vm *vm);

/* Writes the block (kvm/layout.h struct agent_clock) into blk as it must be now:
 * on, tsc_base, mult, ns_base = mono0 - start_ns + skipped_ns, epoch, the divisors. */
void vclock_block(const struct vclock *c, bool time_virtual, uint64_t start_ns,
                  int64_t skipped_ns, struct agent_clock *blk);

/* Updates the agent's block in guest memory before a KVM_RUN (fields that changed only). */
void vclock_publish(struct vm *vm);

/* A fault at user rip inside the agent's clock path (header h), vector vec:
 * VCLOCK_FIX_NONE: not there (or not a memory fault); VCLOCK_FIX_EXIT: in clock_probe,
 * registers intact: resume at mmio_user, the exit answers (EFAULT, or the page a mode
 * watches); VCLOCK_FIX_EFAULT: in clock_store: rdx = r11, rax = -EFAULT, return to rcx
 * (vclock_fixup refuses an rcx that is no user address: the fault stands). */
enum vclock_fix { VCLOCK_FIX_NONE, VCLOCK_FIX_EXIT, VCLOCK_FIX_EFAULT };
enum vclock_fix vclock_fix_kind(const struct agent_header *h, int vec, uint64_t rip);

/* Applies vclock_fix_kind to vCPU v (its synced registers) and gives the user rip to
 * resume at; false when the fault is not the clock path's. */
bool vclock_fixup(struct vm *vm, struct vcpu *v, int vec, uint64_t rip, uint64_t *resume);

/* Whether v, out of KVM_RUN by a kick, stopped inside the agent's syscall entry (before
 * its MMIO read: the look-ups and the clock's gate) or clock path (clock_probe ..
 * clock_end) while the block is on: then it may have read part of the block, and runs on
 * until it leaves before anyone changes the block (a pause, a snapshot, the start of a
 * serialized fragment). Never while time is virtual: a serialized thread stops where its
 * turn ends. */
bool vclock_mid_answer(struct vm *vm, struct vcpu *v);

/* The header's clock offsets are sane for an image of len bytes. */
bool vclock_header_ok(const struct agent_header *h, uint64_t len);

#endif
