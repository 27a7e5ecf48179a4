/* The patched-CPUID table and the #UD that answers it (cpuidpatch.h). */
#include "kvm/cpuidpatch.h"
#include "kvm/cpu.h"
#include "kvm/vm.h"
#include "lib/json.h"
#include <cpuid.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct cpuid_patches {
    atomic_int refs;
    pthread_mutex_t lock;
    uint64_t *va;       /* sorted */
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
    bool ok = true;
    pthread_mutex_lock(&p->lock);
    size_t i = lower_bound(p, va);
    if (i < p->n && p->va[i] == va)
        goto out;
    if (p->n == CPUIDPATCH_MAX_SITES) {
        ok = false;
        goto out;
    }
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 64;
        uint64_t *nv = realloc(p->va, nc * sizeof *nv);
        if (!nv) {
            ok = false;
            goto out;
        }
        p->va = nv;
        p->cap = nc;
    }
    memmove(p->va + i + 1, p->va + i, (p->n - i) * sizeof *p->va);
    p->va[i] = va;
    p->n++;
out:
    pthread_mutex_unlock(&p->lock);
    return ok;
}

bool cpuidpatch_has(struct cpuid_patches *p, uint64_t va)
{
    pthread_mutex_lock(&p->lock);
    size_t i = lower_bound(p, va);
    bool has = i < p->n && p->va[i] == va;
    pthread_mutex_unlock(&p->lock);
    return has;
}

void cpuidpatch_note_file(struct cpuid_patches *p, const char *name, uint64_t base,
                          unsigned sites, unsigned unsure)
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
        f->unsure = unsure;
    }
    pthread_mutex_unlock(&p->lock);
}

size_t cpuidpatch_sites(struct cpuid_patches *p, uint64_t *out, size_t max)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->n;
    if (out && max)
        memcpy(out, p->va, (n < max ? n : max) * sizeof *out);
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
    fprintf(f, ",\"cpuid_patches\":{\"sites\":%zu,\"files\":[", p->n);
    for (size_t i = 0; i < p->nfiles; i++) {
        fprintf(f, "%s{\"file\":", i ? "," : "");
        json_fput_str(f, p->files[i].name, false);
        fprintf(f, ",\"sites\":%u,\"unsure\":%u}", p->files[i].sites, p->files[i].unsure);
    }
    fprintf(f, "]}");
    pthread_mutex_unlock(&p->lock);
}

bool cpuidpatch_emulate(struct vm *vm, struct vcpu *v, uint64_t *rip)
{
    uint8_t insn[2];
    if (!vm->patches || !copy_from_user(&vm->gm, insn, *rip, 2) || insn[0] != 0x0F ||
        insn[1] != 0x0B || !cpuidpatch_has(vm->patches, *rip))
        return false;
    struct kvm_regs *r = &v->run->s.regs.regs;
    uint32_t leaf = (uint32_t)r->rax, sub = (uint32_t)r->rcx, out[4];
    cpu_cpuid(vm, leaf, sub, out);
    if (leaf == 0xD && sub == 0) {
        /* XSAVE sizes: the program's XSAVE runs with the XCR0 the hardware really holds,
         * which on this kind of host is the host's own (XGETBV is not intercepted either:
         * docs/cpu-models.md). An area sized for the model's smaller XCR0 would overflow
         * (glibc's lazy-binding trampoline sizes its XSAVE area from EBX). */
        unsigned a, b, c, d;
        __cpuid_count(0xD, 0, a, b, c, d);
        if (b > out[1])
            out[1] = b;
        if (c > out[2])
            out[2] = c;
    }
    r->rax = out[0];
    r->rbx = out[1];
    r->rcx = out[2];
    r->rdx = out[3];
    *rip += 2;
    return true;
}
