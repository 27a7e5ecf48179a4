/* Named CPU models (cpumodel.h). */
#include "kvm/cpumodel.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t *reg_of(struct kvm_cpuid_entry2 *e, enum cpu_reg r)
{
    switch (r) {
    case CPU_EAX: return &e->eax;
    case CPU_EBX: return &e->ebx;
    case CPU_ECX: return &e->ecx;
    default: return &e->edx;
    }
}

/* The value of attribute name in the tag [tag, end), copied into out. */
static bool attr(const char *tag, const char *end, const char *name, char *out, size_t outlen)
{
    size_t n = strlen(name);
    for (const char *p = tag + 1; p + n + 2 < end; p++) { /* tag: its '<' */
        if ((p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n') || strncmp(p, name, n) ||
            p[n] != '=' || (p[n + 1] != '\'' && p[n + 1] != '"'))
            continue;
        char q = p[n + 1];
        const char *v = p + n + 2, *ve = memchr(v, q, (size_t)(end - v));
        if (!ve || (size_t)(ve - v) >= outlen)
            return false;
        memcpy(out, v, (size_t)(ve - v));
        out[ve - v] = 0;
        return true;
    }
    return false;
}

static bool parse_u32(const char *s, uint32_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s || *end || x > UINT32_MAX || s[0] == '-')
        return false;
    *v = (uint32_t)x;
    return true;
}

static bool name_chars_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n >= max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
            return false;
    return true;
}

bool cpumodel_name_ok(const char *name) { return name && name_chars_ok(name, CPU_MODEL_NAME_MAX); }

/* Adds the <cpuid> tag [tag, end) of feature name to m. */
static int add_cpuid(struct cpufeat_map *m, const char *name, const char *tag, const char *end,
                     char *err, size_t errlen)
{
    static const char *const regs[] = {"eax", "ebx", "ecx", "edx"};
    char v[32];
    struct cpufeat f = {0};
    snprintf(f.name, sizeof f.name, "%s", name);
    if (!attr(tag, end, "eax_in", v, sizeof v) || !parse_u32(v, &f.leaf)) {
        snprintf(err, errlen, "feature '%s': <cpuid> without a valid eax_in", name);
        return -1;
    }
    if (attr(tag, end, "ecx_in", v, sizeof v)) {
        if (!parse_u32(v, &f.sub)) {
            snprintf(err, errlen, "feature '%s': bad ecx_in '%s'", name, v);
            return -1;
        }
        f.has_sub = true;
    }
    for (int r = 0; r < 4; r++) {
        if (!attr(tag, end, regs[r], v, sizeof v))
            continue;
        if (!parse_u32(v, &f.mask) || !f.mask) {
            snprintf(err, errlen, "feature '%s': bad %s mask '%s'", name, regs[r], v);
            return -1;
        }
        if (m->n >= CPUFEAT_MAX) {
            snprintf(err, errlen, "more than %d feature bits: not libvirt's feature file?",
                     CPUFEAT_MAX);
            return -1;
        }
        f.reg = (enum cpu_reg)r;
        m->f[m->n++] = f;
    }
    return 0;
}

int cpufeat_parse(const char *xml, size_t len, struct cpufeat_map *m, char *err, size_t errlen)
{
    m->n = 0;
    m->f = calloc(CPUFEAT_MAX, sizeof *m->f);
    if (!m->f) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *p = xml, *end = xml + len;
    char name[CPUFEAT_NAME_MAX];
    while ((p = memmem(p, (size_t)(end - p), "<feature", 8))) {
        const char *te = memchr(p, '>', (size_t)(end - p));
        if (!te) {
            snprintf(err, errlen, "unterminated <feature> tag");
            goto fail;
        }
        if (!attr(p, te, "name", name, sizeof name) || !name_chars_ok(name, sizeof name)) {
            snprintf(err, errlen, "a <feature> without a valid name (at byte %zu)",
                     (size_t)(p - xml));
            goto fail;
        }
        const char *fe = te[-1] == '/' ? te : memmem(te, (size_t)(end - te), "</feature>", 10);
        if (!fe) {
            snprintf(err, errlen, "feature '%s': no </feature>", name);
            goto fail;
        }
        for (const char *c = te; (c = memmem(c, (size_t)(fe - c), "<cpuid", 6)) && c < fe;) {
            const char *ce = memchr(c, '>', (size_t)(fe - c));
            if (!ce) {
                snprintf(err, errlen, "feature '%s': unterminated <cpuid>", name);
                goto fail;
            }
            if (add_cpuid(m, name, c, ce, err, errlen) < 0)
                goto fail;
            c = ce;
        }
        p = fe;
    }
    if (!m->n) {
        snprintf(err, errlen, "no CPUID features found (not libvirt's x86_features.xml?)");
        goto fail;
    }
    return 0;
fail:
    cpufeat_free(m);
    return -1;
}

int cpufeat_load(const char *path, struct cpufeat_map *m, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s (libvirt's CPU data: install libvirt0)", path,
                 strerror(errno));
        return -1;
    }
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    if (buf)
        len = fread(buf, 1, cap, f);
    bool big = buf && len == cap;
    fclose(f);
    if (!buf || big) {
        free(buf);
        snprintf(err, errlen, "%s: %s", path, buf ? "larger than 1 MiB" : "out of memory");
        return -1;
    }
    char perr[256];
    int r = cpufeat_parse(buf, len, m, perr, sizeof perr);
    free(buf);
    if (r < 0)
        snprintf(err, errlen, "%s: %s", path, perr);
    return r;
}

void cpufeat_free(struct cpufeat_map *m)
{
    free(m->f);
    m->f = NULL;
    m->n = 0;
}

struct kvm_cpuid_entry2 *cpumodel_entry(const struct kvm_cpuid2 *c, uint32_t leaf, uint32_t sub)
{
    for (uint32_t i = 0; c && i < c->nent; i++) {
        struct kvm_cpuid_entry2 *e = (struct kvm_cpuid_entry2 *)&c->entries[i];
        bool indexed = e->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX;
        if (e->function == leaf && (!indexed || e->index == sub))
            return e;
    }
    return NULL;
}

static bool same_place(const struct cpufeat *f, const struct kvm_cpuid_entry2 *e)
{
    return f->leaf == e->function && (f->has_sub ? e->index == f->sub : e->index == 0);
}

static bool named(const char *name, const char *const *names, size_t n)
{
    if (!strcmp(name, CPUFEAT_ALWAYS))
        return true;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

/* Leaf 0xD after the features: XCR0's mask is the model's components, and the sizes
 * are the standard-format area for them (the end of the last component). */
static void fix_xsave(struct kvm_cpuid2 *c, const struct cpufeat_map *m,
                      const char *const *names, size_t n, uint64_t *xcr0)
{
    struct kvm_cpuid_entry2 *d0 = cpumodel_entry(c, 0xD, 0);
    uint64_t want = 0x3;
    for (size_t i = 0; i < m->n; i++)
        if (named(m->f[i].name, names, n)) {
            if (!strcmp(m->f[i].name, "avx"))
                want |= 0x4;
            if (!strcmp(m->f[i].name, "avx512f"))
                want |= 0xE0;
        }
    uint64_t have = d0 ? ((uint64_t)d0->edx << 32 | d0->eax) : 0x3;
    *xcr0 = (have & want) | 0x3;
    if (*xcr0 & 0xE0 && !(*xcr0 & 0x4))
        *xcr0 &= ~0xE0ULL; /* AVX-512 state needs AVX's */
    if (!d0)
        return;
    uint32_t size = 576; /* legacy area + XSAVE header */
    for (uint32_t i = 0; i < c->nent; i++) {
        struct kvm_cpuid_entry2 *e = &c->entries[i];
        if (e->function != 0xD || e->index < 2 || e->index > 63)
            continue;
        if (!(*xcr0 & (1ULL << e->index))) {
            if (!(have & (1ULL << e->index)))
                continue; /* IA32_XSS components stay as KVM says */
            e->eax = e->ebx = e->ecx = e->edx = 0;
        } else if (e->eax + e->ebx > size) {
            size = e->eax + e->ebx;
        }
    }
    d0->eax = (uint32_t)*xcr0;
    d0->edx = (uint32_t)(*xcr0 >> 32);
    d0->ebx = d0->ecx = size;
    struct kvm_cpuid_entry2 *d1 = cpumodel_entry(c, 0xD, 1);
    if (d1)
        d1->ebx = size; /* XCR0 | IA32_XSS with XSS 0 */
}

void cpumodel_apply(struct kvm_cpuid2 *c, const struct cpufeat_map *m,
                    const char *const *names, size_t n, uint64_t *xcr0)
{
    for (uint32_t i = 0; i < c->nent; i++) {
        struct kvm_cpuid_entry2 *e = &c->entries[i];
        for (int r = 0; r < 4; r++) {
            uint32_t covered = 0, allowed = 0;
            for (size_t k = 0; k < m->n; k++) {
                const struct cpufeat *f = &m->f[k];
                if ((int)f->reg != r || !same_place(f, e))
                    continue;
                covered |= f->mask;
                if (named(f->name, names, n))
                    allowed |= f->mask;
            }
            *reg_of(e, (enum cpu_reg)r) &= ~covered | allowed;
        }
    }
    fix_xsave(c, m, names, n, xcr0);
}

bool cpumodel_has(const struct kvm_cpuid2 *c, const struct cpufeat *f)
{
    struct kvm_cpuid_entry2 *e = cpumodel_entry(c, f->leaf, f->has_sub ? f->sub : 0);
    return e && (*reg_of(e, f->reg) & f->mask) == f->mask;
}

static void append(char *out, size_t outlen, size_t *used, const char *s)
{
    int w = snprintf(out + *used, outlen - *used, "%s%s", *used ? ", " : "", s);
    if (w > 0 && (size_t)w < outlen - *used)
        *used += (size_t)w;
}

size_t cpumodel_missing(const struct kvm_cpuid2 *want, const struct kvm_cpuid2 *have,
                        const struct cpufeat_map *m, char *out, size_t outlen)
{
    size_t count = 0, used = 0;
    if (outlen)
        out[0] = 0;
    for (size_t k = 0; k < m->n; k++) {
        const struct cpufeat *f = &m->f[k];
        /* OSXSAVE mirrors CR4 at run time: no host "supports" it in its table. */
        if (!strcmp(f->name, "osxsave") || !cpumodel_has(want, f) || cpumodel_has(have, f))
            continue;
        count++;
        append(out, outlen, &used, f->name);
    }
    const struct kvm_cpuid_entry2 *w0 = cpumodel_entry(want, 0xD, 0);
    const struct kvm_cpuid_entry2 *h0 = cpumodel_entry(have, 0xD, 0);
    uint64_t wx = w0 ? ((uint64_t)w0->edx << 32 | w0->eax) : 0;
    uint64_t hx = h0 ? ((uint64_t)h0->edx << 32 | h0->eax) : 0x3;
    for (int b = 2; b < 64; b++)
        if ((wx & ~hx) & (1ULL << b)) {
            char s[32];
            snprintf(s, sizeof s, "xsave-component-%d", b);
            count++;
            append(out, outlen, &used, s);
        }
    return count;
}
