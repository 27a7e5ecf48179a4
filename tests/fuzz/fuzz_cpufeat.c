/* libFuzzer harness for the CPU feature file parser (vmm/kvm/cpumodel.c: libvirt's
 * x86_features.xml, read from disk, so untrusted). Beyond "no crash, no leak": a refused
 * file leaves a terminated message and no map; an accepted one has only valid names and
 * non-zero masks, and applying it to a table (with some of its names as the model) and
 * listing what a bare table misses stay within their buffers. */
#include "kvm/cpumodel.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cpufeat_map m;
    char err[256];
    if (cpufeat_parse((const char *)data, size, &m, err, sizeof err) < 0) {
        if (!memchr(err, 0, sizeof err) || !err[0] || m.f)
            abort();
        return 0;
    }
    const char *names[8];
    size_t n = 0;
    for (size_t i = 0; i < m.n; i++) {
        if (!m.f[i].mask || !cpumodel_name_ok(m.f[i].name) || m.f[i].reg > CPU_EDX)
            abort();
        if (n < 8 && i % 2 == 0)
            names[n++] = m.f[i].name;
    }
    struct kvm_cpuid2 *c = calloc(1, sizeof *c + 4 * sizeof c->entries[0]);
    struct kvm_cpuid2 *bare = calloc(1, sizeof *bare + sizeof bare->entries[0]);
    if (!c || !bare)
        abort();
    c->nent = 4;
    uint32_t leaves[4] = {1, 7, 0xD, 0x80000001};
    for (int i = 0; i < 4; i++) {
        c->entries[i].function = leaves[i];
        c->entries[i].flags = leaves[i] == 7 || leaves[i] == 0xD;
        c->entries[i].eax = c->entries[i].ebx = c->entries[i].ecx = c->entries[i].edx = ~0u;
    }
    bare->nent = 1;
    uint64_t xcr0;
    cpumodel_apply(c, &m, names, n, &xcr0);
    if (!(xcr0 & 3))
        abort();
    char out[64];
    cpumodel_missing(c, bare, &m, out, sizeof out);
    if (!memchr(out, 0, sizeof out))
        abort();
    free(c);
    free(bare);
    cpufeat_free(&m);
    return 0;
}
