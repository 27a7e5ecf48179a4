/* CPUID sites of an ELF file's executable sections (cpuidscan.h). */
#include "linux/cpuidscan.h"
#include <capstone/capstone.h>
#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SECTIONS 4096

struct anchors {
    uint64_t *a;  /* file offsets, sorted, unique */
    size_t n, cap;
};

static int push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        uint64_t *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = x;
    return 0;
}

static const uint8_t kind_bytes[PATCH_NKINDS][3] = {
    [PATCH_CPUID] = {0x0F, 0xA2}, [PATCH_RDTSC] = {0x0F, 0x31}, [PATCH_RDTSCP] = {0x0F, 0x01, 0xF9}};
static const unsigned kind_len[PATCH_NKINDS] = {2, 2, 3};
static const unsigned kind_id[PATCH_NKINDS] = {X86_INS_CPUID, X86_INS_RDTSC, X86_INS_RDTSCP};

/* Bump when a change to this file could change what a scan of the same bytes gives: the
 * scan cache's entries (linux/scancache.h) are keyed by it. */
#define SCAN_LOGIC_VERSION 1u

uint32_t cpuidscan_engine(void)
{
    int major = 0, minor = 0;
    cs_version(&major, &minor);
    return SCAN_LOGIC_VERSION << 16 | ((uint32_t)major & 0xFF) << 8 | ((uint32_t)minor & 0xFF);
}

unsigned patch_kind_len(unsigned k) { return k < PATCH_NKINDS ? kind_len[k] : 0; }
const uint8_t *patch_kind_bytes(unsigned k) { return k < PATCH_NKINDS ? kind_bytes[k] : NULL; }

/* The kind whose bytes start at p[0..left), or -1. */
static int kind_at(const uint8_t *p, size_t left, unsigned kinds)
{
    for (unsigned k = 0; k < PATCH_NKINDS; k++)
        if ((kinds & PATCH_KIND_BIT(k)) && left >= kind_len[k] &&
            !memcmp(p, kind_bytes[k], kind_len[k]))
            return (int)k;
    return -1;
}

/* Appends (at, k) to the parallel lists at_v and kind_v of n entries (capacity cap). */
static int push_pos(uint64_t **at_v, uint8_t **kind_v, size_t *n, size_t *cap, uint64_t at,
                    unsigned k)
{
    size_t c = *cap;
    if (*n == c) {
        uint8_t *nk = realloc(*kind_v, (c ? c * 2 : 64) * sizeof *nk);
        if (!nk)
            return -1;
        *kind_v = nk;
    }
    if (push_u64(at_v, n, cap, at) < 0)
        return -1;
    (*kind_v)[*n - 1] = (uint8_t)k;
    return 0;
}

static int push_site(struct cpuidscan *r, uint64_t at, unsigned k)
{
    return push_pos(&r->sites, &r->kind, &r->n, &r->cap, at, k);
}

int cpuidscan_add_unsure(struct cpuidscan *r, uint64_t at, unsigned k)
{
    if (k >= PATCH_NKINDS || push_pos(&r->unsure_at, &r->unsure_at_kind, &r->nu, &r->ucap, at, k) < 0)
        return -1;
    r->unsure++;
    r->unsure_kind[k]++;
    return 0;
}

int cpuidscan_add_site(struct cpuidscan *r, uint64_t at, unsigned k)
{
    return k < PATCH_NKINDS ? push_site(r, at, k) : -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool in_file(size_t size, uint64_t off, uint64_t len)
{
    return off <= size && len <= size - off;
}

/* Function symbols of symbol table sh that lie inside section sec (index si) become
 * anchors (as file offsets). A bad table is skipped: it only costs anchors. */
static int add_anchors(const uint8_t *data, size_t size, const Elf64_Shdr *sh,
                       const Elf64_Shdr *sec, uint64_t si, struct anchors *an)
{
    if (sh->sh_entsize != sizeof(Elf64_Sym) || !in_file(size, sh->sh_offset, sh->sh_size))
        return 0;
    size_t n = sh->sh_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < n; i++) {
        Elf64_Sym s;
        memcpy(&s, data + sh->sh_offset + i * sizeof s, sizeof s);
        if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx != si)
            continue;
        if (s.st_value < sec->sh_addr || s.st_value - sec->sh_addr >= sec->sh_size)
            continue;
        if (push_u64(&an->a, &an->n, &an->cap, sec->sh_offset + (s.st_value - sec->sh_addr)) < 0)
            return -1;
    }
    return 0;
}

static bool has_pair(const uint8_t *p, size_t len, unsigned kinds)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (p[i] == 0x0F && kind_at(p + i, len - i, kinds) >= 0)
            return true;
    return false;
}

static int count_pairs(const uint8_t *data, uint64_t lo, uint64_t hi, uint64_t off,
                       uint64_t len, unsigned kinds, struct cpuidscan *r)
{
    for (uint64_t i = lo; i + 1 < hi; i++) {
        int k = data[i] == 0x0F ? kind_at(data + i, (size_t)(hi - i), kinds) : -1;
        if (k >= 0 && i >= off && i + kind_len[k] <= off + len &&
            cpuidscan_add_unsure(r, i, (unsigned)k) < 0)
            return -1;
    }
    return 0;
}

/* One section [lo, hi) of file offsets, anchors sorted inside it. */
static int sweep(csh h, cs_insn *insn, const uint8_t *data, uint64_t lo, uint64_t hi,
                 const struct anchors *an, uint64_t off, uint64_t len, unsigned kinds,
                 struct cpuidscan *r)
{
    size_t ai = 0;
    uint64_t start = lo;
    while (start < hi) {
        while (ai < an->n && an->a[ai] <= start)
            ai++;
        uint64_t end = ai < an->n ? an->a[ai] : hi;
        if (!has_pair(data + start, (size_t)(end - start), kinds)) {
            /* No 0F A2 (or 0F 31, 0F 01 F9) in it: decoding could find no site and count nothing unsure.
             * (Decoding every function of libstdc++ cost 0.16 s at each boot.) */
            start = end;
            continue;
        }
        size_t first = r->n;
        const uint8_t *code = data + start;
        size_t left = (size_t)(end - start);
        uint64_t pc = start;
        bool ok = true;
        while (left) {
            if (!cs_disasm_iter(h, &code, &left, &pc, insn)) {
                ok = false; /* undecodable: data, or a sweep out of step */
                break;
            }
            /* The whole instruction is exactly the kind's bytes: no prefix, and capstone
             * names it so. */
            uint64_t at = pc - insn->size;
            int k = kind_at(data + at, insn->size, kinds);
            if (k >= 0 && insn->size == kind_len[k] && insn->id == kind_id[k] && at >= off &&
                at + kind_len[k] <= off + len && push_site(r, at, (unsigned)k) < 0)
                return -1;
        }
        /* capstone stops short of an instruction that would cross `end`: landing exactly
         * on the anchor means left == 0 with every byte decoded. */
        if (!ok || pc != end) {
            r->n = first;
            if (count_pairs(data, start, end, off, len, kinds, r) < 0)
                return -1;
        }
        start = end;
    }
    return 0;
}

int cpuidscan_file(const uint8_t *data, size_t size, uint64_t off, uint64_t len,
                   struct cpuidscan *r)
{
    return cpuidscan_file_kinds(data, size, off, len, PATCH_KIND_BIT(PATCH_CPUID), r);
}

int cpuidscan_file_kinds(const uint8_t *data, size_t size, uint64_t off, uint64_t len,
                         unsigned kinds, struct cpuidscan *r)
{
    if (size < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) ||
        data[EI_CLASS] != ELFCLASS64 || data[EI_DATA] != ELFDATA2LSB)
        return 0;
    Elf64_Ehdr eh;
    memcpy(&eh, data, sizeof eh);
    if (eh.e_machine != EM_X86_64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shnum == 0 || eh.e_shnum > MAX_SECTIONS ||
        !in_file(size, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)))
        return 0;
    Elf64_Shdr *sh = malloc(eh.e_shnum * sizeof *sh);
    if (!sh)
        return -1;
    memcpy(sh, data + eh.e_shoff, eh.e_shnum * sizeof *sh);
    csh h;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
        free(sh);
        return -1;
    }
    cs_insn *insn = cs_malloc(h);
    int rc = insn ? 0 : -1;
    struct anchors an = {0};
    for (uint64_t si = 0; si < eh.e_shnum && rc == 0; si++) {
        const Elf64_Shdr *s = &sh[si];
        if (s->sh_type != SHT_PROGBITS || !(s->sh_flags & SHF_EXECINSTR) || !s->sh_size ||
            !in_file(size, s->sh_offset, s->sh_size))
            continue;
        uint64_t lo = s->sh_offset, hi = s->sh_offset + s->sh_size;
        if (hi <= off || lo >= off + len || !has_pair(data + lo, (size_t)s->sh_size, kinds))
            continue;
        an.n = 0;
        for (uint64_t ti = 0; ti < eh.e_shnum && rc == 0; ti++)
            if (sh[ti].sh_type == SHT_SYMTAB || sh[ti].sh_type == SHT_DYNSYM)
                rc = add_anchors(data, size, &sh[ti], s, si, &an);
        if (rc < 0)
            break;
        if (an.n)
            qsort(an.a, an.n, sizeof *an.a, cmp_u64);
        size_t u = 0;
        for (size_t i = 0; i < an.n; i++)
            if (!u || an.a[u - 1] != an.a[i])
                an.a[u++] = an.a[i];
        an.n = u;
        rc = sweep(h, insn, data, lo, hi, &an, off, len, kinds, r);
    }
    free(an.a);
    if (insn)
        cs_free(insn, 1);
    cs_close(&h);
    free(sh);
    return rc;
}

int cpuidscan_select(const struct cpuidscan *whole, uint64_t off, uint64_t len,
                     struct cpuidscan *r)
{
    for (size_t i = 0; i < whole->n; i++) {
        unsigned k = whole->kind[i];
        uint64_t at = whole->sites[i];
        if (k < PATCH_NKINDS && at >= off && at - off <= len && kind_len[k] <= len - (at - off) &&
            push_site(r, at, k) < 0)
            return -1;
    }
    for (size_t i = 0; i < whole->nu; i++) {
        unsigned k = whole->unsure_at_kind[i];
        uint64_t at = whole->unsure_at[i];
        if (k < PATCH_NKINDS && at >= off && at - off <= len && kind_len[k] <= len - (at - off) &&
            cpuidscan_add_unsure(r, at, k) < 0)
            return -1;
    }
    return 0;
}

void cpuidscan_free(struct cpuidscan *r)
{
    free(r->sites);
    free(r->kind);
    free(r->unsure_at);
    free(r->unsure_at_kind);
    memset(r, 0, sizeof *r);
}
