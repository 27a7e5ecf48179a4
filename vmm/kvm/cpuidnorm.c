#include "kvm/cpuidnorm.h"

int cpuid_clear_host_ids(struct kvm_cpuid2 *c)
{
    int changed = 0;
    for (unsigned i = 0; c && i < c->nent; i++) {
        struct kvm_cpuid_entry2 *e = &c->entries[i], old = *e;
        switch (e->function) {
        case 1:
            e->ebx &= 0x00FFFFFFu; /* initial APIC id */
            break;
        case 0xB:
        case 0x1F:
            e->edx = 0; /* x2APIC id */
            break;
        case 0x8000001E:
            e->eax = 0;            /* extended APIC id */
            e->ebx &= ~0xFFu;      /* compute unit (core) id */
            e->ecx &= ~0xFFu;      /* node id */
            break;
        default:
            break;
        }
        changed += e->eax != old.eax || e->ebx != old.ebx || e->ecx != old.ecx ||
                   e->edx != old.edx;
    }
    return changed;
}
