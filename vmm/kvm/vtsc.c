/* The virtual TSC (vtsc.h). */
#include "kvm/vtsc.h"
#include "kvm/vm.h"

void vtsc_answer(struct vm *vm, struct vcpu *v, bool rdtscp)
{
    uint64_t tsc = vm_vtime(vm) * 3; /* a 3 GHz virtual TSC */
    struct kvm_regs *r = &v->run->s.regs.regs;
    r->rax = tsc & 0xFFFFFFFF;
    r->rdx = tsc >> 32;
    if (rdtscp)
        r->rcx = (uint64_t)v->index;
}
