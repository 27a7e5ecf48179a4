/* The guest's CPUID table (cputable.h). */
#include "kvm/cputable.h"
#include "kvm/cpucache.h"
#include "kvm/cpumodel.h"
#include "kvm/kvmdiag.h"
#include "kvm/libvirtcpu.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct kvm_cpuid2 *cpu_supported(int kvm_fd, char *err, size_t errlen)
{
    for (int n = 128; n <= 4096; n *= 2) {
        struct kvm_cpuid2 *c = calloc(1, sizeof *c + n * sizeof(struct kvm_cpuid_entry2));
        if (!c) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        c->nent = (uint32_t)n;
        if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
            return c;
        free(c);
        if (errno != E2BIG) {
            snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
            return NULL;
        }
    }
    snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: table too large");
    return NULL;
}

/* 0 when have presents every feature of want; else 1 with the message in err. */
static int missing_message(const struct kvm_cpuid2 *want, const struct kvm_cpuid2 *have,
                           const char *model, char *err, size_t errlen)
{
    struct cpufeat_map m;
    if (cpufeat_load(CPUFEAT_XML_PATH, &m, err, errlen) < 0)
        return -1;
    char missing[1024];
    size_t k = cpumodel_missing(want, have, &m, missing, sizeof missing);
    cpufeat_free(&m);
    if (!k)
        return 0;
    snprintf(err, errlen, "this host cannot present CPU model %s as recorded: its KVM lacks "
             "%zu feature%s: %s (replay on a host that has them, or record with a more "
             "conservative --cpu-model; `jinx hosts baseline` finds one)", model, k,
             k == 1 ? "" : "s", missing);
    return 1;
}

int cpu_check_presentable(const struct kvm_cpuid2 *want, const char *model, char *err,
                          size_t errlen)
{
    int fd = open(kvm_device_path(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", kvm_device_path(), strerror(errno));
        return -1;
    }
    struct kvm_cpuid2 *have = cpu_supported(fd, err, errlen);
    close(fd);
    if (!have)
        return -1;
    int r = missing_message(want, have, model, err, errlen);
    free(have);
    return r < 0 ? -1 : !r;
}

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
    if (missing_message(want, vm->cpuid, vm->cpu_model, err, errlen))
        return -1;
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
    if (cpucache_model_features(model, &names, &n, err, errlen) < 0)
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
