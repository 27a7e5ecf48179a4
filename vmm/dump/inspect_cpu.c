/* inspect's CPU section (inspect_cpu.h). */
#include "dump/inspect_cpu.h"
#include "kvm/cpumodel.h"
#include "lib/json.h"
#include <string.h>

static uint64_t xcr0_of(const struct kvm_cpuid2 *c)
{
    const struct kvm_cpuid_entry2 *e = cpumodel_entry(c, 0xD, 0);
    return e ? ((uint64_t)e->edx << 32 | e->eax) : 0;
}

/* Calls fn for each feature name set in c (each name once). false: no feature file. */
static bool each_feature(const struct kvm_cpuid2 *c, FILE *f,
                         void (*fn)(FILE *f, const char *name, bool first))
{
    struct cpufeat_map m;
    char err[256];
    if (cpufeat_load(CPUFEAT_XML_PATH, &m, err, sizeof err) < 0)
        return false;
    bool first = true;
    for (size_t i = 0; i < m.n; i++) {
        if (!cpumodel_has(c, &m.f[i]) || (i && !strcmp(m.f[i].name, m.f[i - 1].name)))
            continue;
        fn(f, m.f[i].name, first);
        first = false;
    }
    cpufeat_free(&m);
    return true;
}

static void name_text(FILE *f, const char *name, bool first)
{
    fprintf(f, "%s%s", first ? "" : " ", name);
}

static void name_json(FILE *f, const char *name, bool first)
{
    fprintf(f, "%s", first ? "" : ",");
    json_fput_str(f, name, true);
}

void inspect_cpu_text(const struct cpuid_rec *r, FILE *f)
{
    if (!r->present) {
        fprintf(f, "cpu:     not recorded (a dump from before CPU models: replay uses this "
                "host's CPUID)\n");
        return;
    }
    fprintf(f, "cpu:     model %s (%u CPUID entries, XCR0 0x%llx; jinxctl inspect --json "
            "lists them)\n         ", r->model, r->table->nent,
            (unsigned long long)xcr0_of(r->table));
    if (!each_feature(r->table, f, name_text))
        fprintf(f, "(feature names need libvirt's %s)", CPUFEAT_XML_PATH);
    fprintf(f, "\n");
}

void inspect_cpu_json(const struct cpuid_rec *r, FILE *f)
{
    fprintf(f, ",\"cpu\":");
    if (!r->present) {
        fprintf(f, "null");
        return;
    }
    fprintf(f, "{\"model\":");
    json_fput_str(f, r->model, true);
    fprintf(f, ",\"xcr0\":\"0x%llx\",\"features\":", (unsigned long long)xcr0_of(r->table));
    fprintf(f, "[");
    each_feature(r->table, f, name_json); /* none without the feature file */
    fprintf(f, "]");
    fprintf(f, ",\"cpuid\":[");
    for (uint32_t i = 0; i < r->table->nent; i++) {
        const struct kvm_cpuid_entry2 *e = &r->table->entries[i];
        fprintf(f, "%s{\"leaf\":\"0x%x\",\"subleaf\":%u,\"flags\":%u,\"eax\":\"0x%08x\","
                "\"ebx\":\"0x%08x\",\"ecx\":\"0x%08x\",\"edx\":\"0x%08x\"}", i ? "," : "",
                e->function, e->index, e->flags, e->eax, e->ebx, e->ecx, e->edx);
    }
    fprintf(f, "]}");
}
