/* Which CPUID table the guest gets (cpumodel.h has the model logic, libvirtcpu.h the
 * libvirt side): called by cpu_open_vm with vm->cpuid holding KVM_GET_SUPPORTED_CPUID. */
#ifndef JINX_CPUTABLE_H
#define JINX_CPUTABLE_H
#include "kvm/vm.h"

/* Replaces vm->cpuid by the table the guest sees and sets vm->xcr0 and vm->cpu_model:
 * opt.cpuid_exact when given (refused, naming the features, if this host's KVM cannot
 * present all of them), else KVM's whole table for "host", else the libvirt model's
 * (opt.cpu_model, default CPU_MODEL_DEFAULT). 0, or -1 with a message. */
int cpu_choose_table(struct vm *vm, char *err, size_t errlen);

/* KVM_GET_SUPPORTED_CPUID on kvm_fd (/dev/kvm), owned; NULL with a message. */
struct kvm_cpuid2 *cpu_supported(int kvm_fd, char *err, size_t errlen);

/* Whether this host's KVM can present every feature of want (a dump's table, model its
 * name): 1 yes, 0 no (err names the missing features), -1 KVM or file error. */
int cpu_check_presentable(const struct kvm_cpuid2 *want, const char *model, char *err,
                          size_t errlen);

#endif
