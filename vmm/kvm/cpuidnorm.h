/* CPUID fields that name the host CPU the asking thread runs on. kvm_pvm's
 * KVM_GET_SUPPORTED_CPUID answers them from whichever host CPU jinx-vmm is on at that
 * moment (leaf 1's initial APIC id, leaf 0xB/0x1F's x2APIC id, AMD's leaf 0x8000001E
 * extended APIC, core and node ids), so a table built from it made the program's answer
 * depend on where the host scheduled jinx-vmm (measured: `taskset -c 1` gave APIC id 1,
 * `-c 0` gave 0). They are cleared: the guest sees CPU 0's ids; each vCPU's own APIC id
 * is set where KVM needs it (cpu_create_vcpu). tests/integration/cpuid-sim.sh. */
#ifndef JINX_CPUIDNORM_H
#define JINX_CPUIDNORM_H
#include <linux/kvm.h>

/* Clears the host-CPU ids in every entry of c (NULL: nothing). Returns how many entries
 * it changed. */
int cpuid_clear_host_ids(struct kvm_cpuid2 *c);

#endif
