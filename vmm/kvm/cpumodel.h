/* Named CPU models: the guest's CPUID table is what KVM supports intersected with the
 * features a libvirt CPU model lists (libvirtcpu.h gets the list), feature names being
 * mapped to CPUID bits by libvirt's own data file (x86_features.xml), never by a table
 * written here. Pure code, no KVM and no libvirt: unit-tested.
 *
 * Which registers a model governs: every (leaf, subleaf, register) that some feature of
 * x86_features.xml lives in. There a bit survives only when a feature of the model names
 * it; bits no feature describes (family/model, sizes, counts) stay as KVM reports them.
 * Leaf 0xD then follows the XSAVE components the model enables (x87 and SSE always, AVX
 * with avx, the three AVX-512 components with avx512f): XCR0's mask and every size. */
#ifndef JINX_CPUMODEL_H
#define JINX_CPUMODEL_H
#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The model the guest sees unless --cpu-model says otherwise (docs/cpu-models.md). */
#define CPU_MODEL_DEFAULT "kvm64"
/* --cpu-model host: KVM's whole table, as before models existed. */
#define CPU_MODEL_HOST "host"
#define CPU_MODEL_NAME_MAX 64
#define CPUFEAT_XML_PATH "/usr/share/libvirt/cpu_map/x86_features.xml"
#define CPUFEAT_NAME_MAX 48
#define CPUFEAT_MAX 4096
/* Features jinx presents whatever the model: its snapshots save the FPU with XSAVE and
 * the guest runs with CR4.OSXSAVE (XCR0 holds only the model's components). */
#define CPUFEAT_ALWAYS "xsave"

enum cpu_reg { CPU_EAX, CPU_EBX, CPU_ECX, CPU_EDX };

/* One feature's bits in one register (a feature in two registers is two entries). */
struct cpufeat {
    char name[CPUFEAT_NAME_MAX];
    uint32_t leaf, sub;
    bool has_sub;              /* ecx_in given: the subleaf matters */
    enum cpu_reg reg;
    uint32_t mask;
};

struct cpufeat_map {
    struct cpufeat *f;         /* owned */
    size_t n;
};

/* Parses x86_features.xml's text (untrusted: every number and name checked). Features
 * without a <cpuid> element (MSR-only) are skipped. 0, or -1 with a message. */
int cpufeat_parse(const char *xml, size_t len, struct cpufeat_map *m, char *err,
                  size_t errlen);
/* Reads and parses path (CPUFEAT_XML_PATH normally). */
int cpufeat_load(const char *path, struct cpufeat_map *m, char *err, size_t errlen);
void cpufeat_free(struct cpufeat_map *m);

/* Whether name is a model name jinx accepts: 1..63 of [A-Za-z0-9._-] (it goes into
 * libvirt's XML and into dumps). */
bool cpumodel_name_ok(const char *name);

/* Restricts c (KVM_GET_SUPPORTED_CPUID's table) to the features in names (plus
 * CPUFEAT_ALWAYS), then fixes leaf 0xD. *xcr0 gets the XCR0 the guest runs with. */
void cpumodel_apply(struct kvm_cpuid2 *c, const struct cpufeat_map *m,
                    const char *const *names, size_t n, uint64_t *xcr0);

/* Whether the table's (leaf, sub) entry has every bit of f set. */
bool cpumodel_has(const struct kvm_cpuid2 *c, const struct cpufeat *f);

/* The features set in want that have is missing (have: this host's supported table),
 * and XSAVE components want's leaf 0xD enables that have's lacks, as a comma-separated
 * list in out ("avx512f, xsave-component-7"). Returns how many. */
size_t cpumodel_missing(const struct kvm_cpuid2 *want, const struct kvm_cpuid2 *have,
                        const struct cpufeat_map *m, char *out, size_t outlen);

/* The entry for leaf/sub as KVM_SET_CPUID2 matches it, or NULL. */
struct kvm_cpuid_entry2 *cpumodel_entry(const struct kvm_cpuid2 *c, uint32_t leaf,
                                        uint32_t sub);

#endif
