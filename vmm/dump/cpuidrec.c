/* The dump's CPUID record (cpuidrec.h). */
#include "dump/cpuidrec.h"
#include "kvm/cpumodel.h"
#include "lib/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN_FLAGS (KVM_CPUID_FLAG_SIGNIFCANT_INDEX | KVM_CPUID_FLAG_STATEFUL_FUNC | \
                     KVM_CPUID_FLAG_STATE_READ_NEXT)

int cpuidrec_encode(const char *model, const struct kvm_cpuid2 *c, struct dbuf *b)
{
    if (!cpumodel_name_ok(model) || !c || !c->nent || c->nent > CPUIDREC_MAX_ENTRIES)
        return -1;
    bput_str(b, model, CPU_MODEL_NAME_MAX - 1);
    bput_u32(b, c->nent);
    bput_u32(b, 0);
    for (uint32_t i = 0; i < c->nent; i++) {
        const struct kvm_cpuid_entry2 *e = &c->entries[i];
        bput_u32(b, e->function);
        bput_u32(b, e->index);
        bput_u32(b, e->flags);
        bput_u32(b, e->eax);
        bput_u32(b, e->ebx);
        bput_u32(b, e->ecx);
        bput_u32(b, e->edx);
    }
    return b->oom ? -1 : 0;
}

void cpuidrec_free(struct cpuid_rec *r)
{
    free(r->table);
    r->table = NULL;
    r->present = false;
}

int cpuidrec_parse(const uint8_t *p, size_t len, struct cpuid_rec *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct bcur c = bcur_make(p, len);
    if (!bget_str(&c, r->model, sizeof r->model) || !cpumodel_name_ok(r->model))
        return jx_fail(err, errlen, "CPUID record malformed (model name)");
    uint32_t n = bget_u32(&c);
    bget_u32(&c);
    if (c.bad || !n || n > CPUIDREC_MAX_ENTRIES || n > c.left / CPUIDREC_ENTRY_LEN)
        return jx_fail(err, errlen, "CPUID record malformed (entry count %u)", n);
    r->table = calloc(1, sizeof *r->table + n * sizeof r->table->entries[0]);
    if (!r->table)
        return jx_fail(err, errlen, "out of memory");
    r->table->nent = n;
    for (uint32_t i = 0; i < n; i++) {
        struct kvm_cpuid_entry2 *e = &r->table->entries[i];
        e->function = bget_u32(&c);
        e->index = bget_u32(&c);
        e->flags = bget_u32(&c);
        e->eax = bget_u32(&c);
        e->ebx = bget_u32(&c);
        e->ecx = bget_u32(&c);
        e->edx = bget_u32(&c);
        if (e->flags & ~(uint32_t)KNOWN_FLAGS) {
            uint32_t fl = e->flags;
            cpuidrec_free(r);
            return jx_fail(err, errlen, "CPUID record malformed (entry %u: flags 0x%x)", i, fl);
        }
        for (uint32_t k = 0; k < i; k++)
            if (r->table->entries[k].function == e->function &&
                r->table->entries[k].index == e->index) {
                uint32_t fn = e->function, ix = e->index;
                cpuidrec_free(r);
                return jx_fail(err, errlen, "CPUID record malformed (leaf 0x%x subleaf %u "
                               "twice)", fn, ix);
            }
    }
    if (c.bad) {
        cpuidrec_free(r);
        return jx_fail(err, errlen, "CPUID record malformed (cut short)");
    }
    r->present = true;
    return 0;
}

int cpuidrec_find(const struct dumpfile *d, struct cpuid_rec *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < d->nextra; i++) {
        if (d->extra[i].type != DREC_CPUID)
            continue;
        if (r->present) {
            cpuidrec_free(r);
            return jx_fail(err, errlen, "two CPUID records");
        }
        if (cpuidrec_parse(d->extra[i].data, d->extra[i].len, r, err, errlen) < 0)
            return -1;
    }
    return 0;
}
