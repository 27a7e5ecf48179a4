/* The patched-CPUID table and the #UD that answers it (cpuidpatch.h). */
#include "kvm/cpuidpatch.h"
#include "kvm/cpu.h"
#include "kvm/vm.h"
#include "kvm/vtsc.h"
#include "lib/json.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct cpuid_patches {
    atomic_int refs;
    pthread_mutex_t lock;
    uint64_t *va;       /* sorted */
    uint8_t *kind;      /* kind[i]: va[i]'s enum patch_kind */
    size_t n, cap;
    struct cpuidpatch_file files[CPUIDPATCH_MAX_FILES];
    size_t nfiles;
};

struct cpuid_patches *cpuidpatch_new(void)
{
    struct cpuid_patches *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    atomic_init(&p->refs, 1);
    pthread_mutex_init(&p->lock, NULL);
    return p;
}

struct cpuid_patches *cpuidpatch_ref(struct cpuid_patches *p)
{
    if (p)
        atomic_fetch_add(&p->refs, 1);
    return p;
}

void cpuidpatch_unref(struct cpuid_patches *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p->va);
    free(p->kind);
    free(p);
}

/* First index whose address is >= va. Caller holds the lock. */
static size_t lower_bound(const struct cpuid_patches *p, uint64_t va)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->va[mid] < va)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool cpuidpatch_add(struct cpuid_patches *p, uint64_t va)
{
    return cpuidpatch_add_kind(p, va, PATCH_CPUID);
}

bool cpuidpatch_add_kind(struct cpuid_patches *p, uint64_t va, unsigned kind)
{
    if (kind >= PATCH_NKINDS)
        return false;
    bool ok = true;
    pthread_mutex_lock(&p->lock);
    size_t i = lower_bound(p, va);
    if (i < p->n && p->va[i] == va) {
        ok = p->kind[i] == kind;
        goto out;
    }
    if (p->n == CPUIDPATCH_MAX_SITES) {
        ok = false;
        goto out;
    }
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 64;
        uint8_t *nk = realloc(p->kind, nc * sizeof *nk);
        if (nk)
            p->kind = nk;
        uint64_t *nv = nk ? realloc(p->va, nc * sizeof *nv) : NULL;
        if (!nv) {
            ok = false;
            goto out;
        }
        p->va = nv;
        p->cap = nc;
    }
    memmove(p->va + i + 1, p->va + i, (p->n - i) * sizeof *p->va);
    memmove(p->kind + i + 1, p->kind + i, p->n - i);
    p->va[i] = va;
    p->kind[i] = (uint8_t)kind;
    p->n++;
out:
    pthread_mutex_unlock(&p->lock);
    return ok;
}

bool cpuidpatch_has(struct cpuid_patches *p, uint64_t va)
{
    unsigned k;
    return cpuidpatch_kind(p, va, &k);
}

bool cpuidpatch_kind(struct cpuid_patches *p, uint64_t va, unsigned *kind)
{
    pthread_mutex_lock(&p->lock);
    size_t i = lower_bound(p, va);
    bool has = i < p->n && p->va[i] == va;
    if (has)
        *kind = p->kind[i];
    pthread_mutex_unlock(&p->lock);
    return has;
}

void cpuidpatch_note_file(struct cpuid_patches *p, const char *name, uint64_t base,
                          unsigned sites, unsigned unsure)
{
    cpuidpatch_note_file_tsc(p, name, base, sites, 0, unsure, 0);
}

void cpuidpatch_note_file_tsc(struct cpuid_patches *p, const char *name, uint64_t base,
                              unsigned sites, unsigned tsc, unsigned unsure,
                              unsigned tsc_unsure)
{
    size_t len = strlen(name);
    if (len >= sizeof p->files[0].name)
        name += len - (sizeof p->files[0].name - 1);
    pthread_mutex_lock(&p->lock);
    bool seen = false;
    for (size_t i = 0; i < p->nfiles && !seen; i++)
        seen = p->files[i].base == base && !strcmp(p->files[i].name, name);
    if (!seen && p->nfiles < CPUIDPATCH_MAX_FILES) {
        struct cpuidpatch_file *f = &p->files[p->nfiles++];
        strcpy(f->name, name);
        f->base = base;
        f->sites = sites;
        f->tsc = tsc;
        f->tsc_unsure = tsc_unsure;
        f->unsure = unsure;
    }
    pthread_mutex_unlock(&p->lock);
}

size_t cpuidpatch_sites(struct cpuid_patches *p, uint64_t *out, size_t max)
{
    return cpuidpatch_sites_kinds(p, out, NULL, max);
}

size_t cpuidpatch_sites_kinds(struct cpuid_patches *p, uint64_t *out, uint8_t *kinds,
                              size_t max)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->n;
    if (out && max)
        memcpy(out, p->va, (n < max ? n : max) * sizeof *out);
    if (kinds && max)
        memcpy(kinds, p->kind, n < max ? n : max);
    pthread_mutex_unlock(&p->lock);
    return n;
}

size_t cpuidpatch_files(struct cpuid_patches *p, struct cpuidpatch_file *out, size_t max)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->nfiles;
    if (out && max)
        memcpy(out, p->files, (n < max ? n : max) * sizeof *out);
    pthread_mutex_unlock(&p->lock);
    return n;
}

void cpuidpatch_write_json(struct cpuid_patches *p, FILE *f)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    size_t by[PATCH_NKINDS] = {0};
    for (size_t i = 0; i < p->n; i++)
        by[p->kind[i]]++;
    fprintf(f, ",\"cpuid_patches\":{\"sites\":%zu,\"cpuid\":%zu,\"rdtsc\":%zu,"
            "\"rdtscp\":%zu,\"files\":[", p->n, by[PATCH_CPUID], by[PATCH_RDTSC],
            by[PATCH_RDTSCP]);
    for (size_t i = 0; i < p->nfiles; i++) {
        const struct cpuidpatch_file *e = &p->files[i];
        fprintf(f, "%s{\"file\":", i ? "," : "");
        json_fput_str(f, e->name, false);
        fprintf(f, ",\"sites\":%u,\"cpuid\":%u,\"tsc\":%u,\"unsure\":%u,\"tsc_unsure\":%u}",
                e->sites + e->tsc, e->sites, e->tsc, e->unsure, e->tsc_unsure);
    }
    fprintf(f, "]}");
    pthread_mutex_unlock(&p->lock);
}

bool cpuidpatch_emulate(struct vm *vm, struct vcpu *v, uint64_t *rip)
{
    uint8_t insn[3];
    unsigned kind;
    if (!vm->patches || !copy_from_user(&vm->gm, insn, *rip, 2) || insn[0] != 0x0F ||
        insn[1] != 0x0B || !cpuidpatch_kind(vm->patches, *rip, &kind))
        return false;
    if (kind == PATCH_RDTSC || kind == PATCH_RDTSCP) {
        /* rdtscp: the guest may have rewritten the byte after the ud2 since. */
        if (kind == PATCH_RDTSCP && (!copy_from_user(&vm->gm, insn, *rip, 3) || insn[2] != 0xF9))
            return false;
        vtsc_answer(vm, v, kind == PATCH_RDTSCP);
        *rip += patch_kind_len(kind);
        return true;
    }
    struct kvm_regs *r = &v->run->s.regs.regs;
    uint32_t leaf = (uint32_t)r->rax, sub = (uint32_t)r->rcx, out[4];
    cpu_cpuid_user(vm, leaf, sub, out);
    r->rax = out[0];
    r->rbx = out[1];
    r->rcx = out[2];
    r->rdx = out[3];
    *rip += 2;
    return true;
}
