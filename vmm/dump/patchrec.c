/* The dump's CPUID-patches record (patchrec.h). */
#include "dump/patchrec.h"
#include "kvm/cpuidpatch.h"
#include "kvm/layout.h"
#include "lib/util.h"
#include <stdlib.h>
#include <string.h>

#define KIND_SHIFT 56
#define ADDR_MASK ((1ULL << KIND_SHIFT) - 1)

int patchrec_encode(const uint64_t *va, size_t n, struct dbuf *b)
{
    return patchrec_encode_kinds(va, NULL, n, b);
}

int patchrec_encode_kinds(const uint64_t *va, const uint8_t *kinds, size_t n, struct dbuf *b)
{
    if (n > CPUIDPATCH_MAX_SITES)
        return -1;
    bput_u32(b, (uint32_t)n);
    bput_u32(b, PATCHREC_VERSION);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = kinds ? kinds[i] : PATCH_CPUID;
        if (k >= PATCH_NKINDS || va[i] > ADDR_MASK)
            return -1;
        bput_u64(b, va[i] | k << KIND_SHIFT);
    }
    return b->oom ? -1 : 0;
}

void patchrec_free(struct patch_rec *r)
{
    free(r->va);
    free(r->kind);
    memset(r, 0, sizeof *r);
}

int patchrec_parse(const uint8_t *p, size_t len, struct patch_rec *r, char *err,
                   size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct bcur c = bcur_make(p, len);
    uint32_t n = bget_u32(&c);
    uint32_t version = bget_u32(&c);
    if (c.bad || n > CPUIDPATCH_MAX_SITES || n > c.left / 8)
        return jx_fail(err, errlen, "CPUID_PATCHES record malformed (count %u)", n);
    if (version > PATCHREC_VERSION)
        return jx_fail(err, errlen, "CPUID_PATCHES record of version %u: this jinx reads "
                       "versions 0 to %u (replay it with a newer jinx)", version,
                       PATCHREC_VERSION);
    r->va = malloc((n ? n : 1) * sizeof *r->va);
    r->kind = malloc(n ? n : 1);
    if (!r->va || !r->kind) {
        patchrec_free(r);
        return jx_fail(err, errlen, "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        uint64_t e = bget_u64(&c);
        uint64_t va = version ? e & ADDR_MASK : e, k = version ? e >> KIND_SHIFT : 0;
        if (va < USER_MIN || va >= USER_TOP - 1 || (i && va <= r->va[i - 1])) {
            patchrec_free(r);
            return jx_fail(err, errlen, "CPUID_PATCHES record malformed (site %u: 0x%llx "
                           "not an ascending user address)", i, (unsigned long long)va);
        }
        if (k >= PATCH_NKINDS) {
            patchrec_free(r);
            return jx_fail(err, errlen, "CPUID_PATCHES record malformed (site %u: unknown "
                           "kind %llu)", i, (unsigned long long)k);
        }
        r->va[i] = va;
        r->kind[i] = (uint8_t)k;
    }
    r->n = n;
    r->present = true;
    return 0;
}

int patchrec_find(const struct dumpfile *d, struct patch_rec *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < d->nextra; i++) {
        if (d->extra[i].type != DREC_CPUID_PATCHES)
            continue;
        if (r->present) {
            patchrec_free(r);
            return jx_fail(err, errlen, "two CPUID_PATCHES records");
        }
        if (patchrec_parse(d->extra[i].data, d->extra[i].len, r, err, errlen) < 0)
            return -1;
    }
    return 0;
}
