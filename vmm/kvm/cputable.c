/* The guest's CPUID table (cputable.h). */
#include "kvm/cputable.h"
#include "kvm/cpumodel.h"
#include "kvm/libvirtcpu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* XCR0: x87, SSE, AVX and AVX-512 state where the table has them (no AMX: its state does
 * not fit KVM_GET_XSAVE's 4 KiB). */
static uint64_t table_xcr0(const struct kvm_cpuid2 *c)
{
    const struct kvm_cpuid_entry2 *e = cpumodel_entry(c, 0xD, 0);
    uint64_t x = e ? (((uint64_t)e->edx << 32) | e->eax) & 0xE7 : 0x3;
    return x & 1 ? x : 0x3;
}

static int use_exact(struct vm *vm, char *err, size_t errlen)
{
    const struct kvm_cpuid2 *want = vm->opt.cpuid_exact;
    struct cpufeat_map m;
    if (cpufeat_load(CPUFEAT_XML_PATH, &m, err, errlen) < 0)
        return -1;
    char missing[1024];
    size_t k = cpumodel_missing(want, vm->cpuid, &m, missing, sizeof missing);
    cpufeat_free(&m);
    if (k) {
        snprintf(err, errlen, "this host cannot present CPU model %s: its KVM lacks %zu "
                 "feature%s the table needs: %s (replay on a host that has them, or record "
                 "with a more conservative --cpu-model; `jinx hosts baseline` finds one)",
                 vm->cpu_model, k, k == 1 ? "" : "s", missing);
        return -1;
    }
    size_t bytes = sizeof *want + want->nent * sizeof want->entries[0];
    struct kvm_cpuid2 *c = malloc(bytes);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(c, want, bytes);
    free(vm->cpuid);
    vm->cpuid = c;
    vm->xcr0 = table_xcr0(c);
    return 0;
}

int cpu_choose_table(struct vm *vm, char *err, size_t errlen)
{
    const char *model = vm->opt.cpu_model ? vm->opt.cpu_model : CPU_MODEL_DEFAULT;
    if (!cpumodel_name_ok(model)) {
        snprintf(err, errlen, "--cpu-model '%s': not a CPU model name (letters, digits, '.', "
                 "'_', '-'; or host)", model);
        return -1;
    }
    snprintf(vm->cpu_model, sizeof vm->cpu_model, "%s", model);
    if (vm->opt.cpuid_exact)
        return use_exact(vm, err, errlen);
    if (!strcmp(model, CPU_MODEL_HOST)) {
        vm->xcr0 = table_xcr0(vm->cpuid);
        return 0;
    }
    char **names;
    size_t n;
    if (libvirtcpu_model_features(NULL, model, &names, &n, err, errlen) < 0)
        return -1;
    struct cpufeat_map m;
    if (cpufeat_load(CPUFEAT_XML_PATH, &m, err, errlen) < 0) {
        libvirtcpu_free_names(names, n);
        return -1;
    }
    cpumodel_apply(vm->cpuid, &m, (const char *const *)names, n, &vm->xcr0);
    cpufeat_free(&m);
    libvirtcpu_free_names(names, n);
    return 0;
}
