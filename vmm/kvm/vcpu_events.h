/* The exception, interrupt and NMI that KVM holds queued for a vCPU (struct
 * kvm_vcpu_events), across snapshots and restores.
 *
 * A vCPU kicked out of KVM_RUN just as a trap was raised (a step's #DB, a point's #BP)
 * keeps that trap queued in KVM, outside the registers, and KVM delivers it at the next
 * entry into the guest, at whatever rip the vCPU then has. A restore that left it there
 * delivered a simulation's #BP to a thread the snapshot had blocked in a syscall: a
 * SIGTRAP jinx made (sleepers.sh under --attach, about 1 run in 24 at load 5). So a
 * snapshot records the events and a restore sets them back; a state the vCPU never ran
 * with (a thread's start, a dump's snapshot) starts with none. */
#ifndef JINX_VCPU_EVENTS_H
#define JINX_VCPU_EVENTS_H
#include <linux/kvm.h>

struct vcpu;

/* Reads v's events for a snapshot (an ioctl; v is out of KVM_RUN). A single-step #DB
 * still queued is dropped, from ev and from the live vCPU both: the trace flag is
 * jinx's alone (sched/: a point's or an access's step), its instruction is done, and
 * the step's owner keeps no state in a snapshot, so after a restore no one would claim
 * it. 0, or -1 with errno when KVM refuses. */
int vcpu_events_save(struct vcpu *v, struct kvm_vcpu_events *ev);
/* v's events become ev at its next KVM_RUN (through kvm_run: no ioctl). */
void vcpu_events_restore(struct vcpu *v, const struct kvm_vcpu_events *ev);
/* v's next KVM_RUN drops whatever KVM holds queued for it (through kvm_run). */
void vcpu_events_clear(struct vcpu *v);

#endif
