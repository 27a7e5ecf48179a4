/* KVM plumbing: opening /dev/kvm, the VM and its memory, the guest CPUID (RDRAND/RDSEED
 * hidden), descriptor tables, and each vCPU's architectural start state. */
#ifndef JINX_CPU_H
#define JINX_CPU_H
#include "kvm/vm.h"

int cpu_open_vm(struct vm *vm, char *err, size_t errlen);
/* Writes GDT, IDT, per-vCPU TSSs and the agent into guest memory. */
int cpu_setup_tables(struct vm *vm, const uint8_t *agent, size_t agent_len, char *err,
                     size_t errlen);
/* KVM_CREATE_VCPU + run area + CPUID, MSRs, XCR0. */
int cpu_create_vcpu(struct vm *vm, struct vcpu *v, char *err, size_t errlen);
int cpu_set_msrs(int vcpu_fd, const struct kvm_msr_entry *e, int n);
/* The guest's CPUID answer (RDRAND/RDSEED hidden) for leaf/subleaf. */
bool cpu_cpuid(const struct vm *vm, uint32_t leaf, uint32_t sub, uint32_t out[4]);
/* The answer to the program's own (trapped or patched) CPUID: cpu_cpuid's, except that on
 * PVM leaf 0xD subleaf 0 reports XSAVE sizes at least the host's. PVM does not load the
 * guest's XCR0, so the program's XSAVE saves every component the host's XCR0 enables, and
 * an area sized for the model's XCR0 would overflow (glibc's lazy-binding trampoline sizes
 * its area from EBX). Every path that answers a user CPUID must use this one. */
void cpu_cpuid_user(const struct vm *vm, uint32_t leaf, uint32_t sub, uint32_t out[4]);
int cpu_get_msr(int vcpu_fd, uint32_t index, uint64_t *val);
/* Segment state for ring 3 (user) or ring 0 (inside the agent). */
void cpu_sregs(struct vm *vm, struct vcpu *v, struct kvm_sregs *s, bool user);

#endif
