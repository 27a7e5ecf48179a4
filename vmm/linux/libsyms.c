/* Shared-library symbols for backtraces: the link_map walk and a cache of parsed files
 * (libsyms.h). */
#include "linux/libsyms.h"
#include <elf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DYN 1024            /* PT_DYNAMIC entries read looking for DT_DEBUG */

struct libsyms_file {
    char path[PATH_MAX];        /* canonical */
    const char *name;           /* base name, inside path */
    bool ok;                    /* parsed (a file that failed is remembered, not retried) */
    struct elf_image img;       /* segments, and symbols unless dbg has them */
    struct elf_image dbg;       /* the detached debug file's symbols, if any */
};

/* A name the guest's link_map gave, and the file it resolved to (-1: none). */
struct gname {
    char *name;
    int file;
};

#define MAX_NAMES 256

struct libsyms {
    pthread_mutex_t lock;
    struct libsyms_file libs[LIBSYMS_MAX_FILES];
    int n;
    struct gname names[MAX_NAMES];
    int nnames;
};

struct libsyms *libsyms_new(void)
{
    struct libsyms *ls = calloc(1, sizeof *ls);
    if (ls)
        pthread_mutex_init(&ls->lock, NULL);
    return ls;
}

void libsyms_free(struct libsyms *ls)
{
    if (!ls)
        return;
    for (int i = 0; i < ls->n; i++) {
        elf_free(&ls->libs[i].img);
        elf_free(&ls->libs[i].dbg);
    }
    for (int i = 0; i < ls->nnames; i++)
        free(ls->names[i].name);
    pthread_mutex_destroy(&ls->lock);
    free(ls);
}

static bool fits(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

uint64_t libsyms_dynamic(const struct elf_image *img)
{
    const Elf64_Ehdr *eh = (const void *)img->data;
    if (!img->data || img->size < sizeof *eh || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        !fits(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), img->size))
        return 0;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr p;
        memcpy(&p, img->data + eh->e_phoff + (uint64_t)i * sizeof p, sizeof p);
        if (p.p_type == PT_DYNAMIC)
            return p.p_vaddr;
    }
    return 0;
}

/* A shared library or a debug file: the ELF header, its PT_LOAD segments' addresses and
 * protections (not their file ranges: a debug file has none), and its symbols. Takes
 * data. 0, or -1 (data freed). */
static int parse_lib(uint8_t *data, size_t size, struct elf_image *img)
{
    memset(img, 0, sizeof *img);
    img->data = data;
    img->size = size;
    Elf64_Ehdr eh;
    if (size < sizeof eh)
        goto bad;
    memcpy(&eh, data, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64 ||
        (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phnum == 0 || eh.e_phnum > 64 ||
        !fits(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size))
        goto bad;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr p;
        memcpy(&p, data + eh.e_phoff + (uint64_t)i * sizeof p, sizeof p);
        if (p.p_type != PT_LOAD || p.p_memsz == 0)
            continue;
        if (img->nseg == ELF_MAX_SEGMENTS || p.p_memsz > ELF_MAX_SPAN ||
            p.p_vaddr + p.p_memsz < p.p_vaddr)
            goto bad;
        img->seg[img->nseg++] = (struct elf_segment){
            .vaddr = p.p_vaddr, .memsz = p.p_memsz, .offset = p.p_offset, .filesz = p.p_filesz,
            .prot = ((p.p_flags & PF_R) ? PROT_R : 0) | ((p.p_flags & PF_W) ? PROT_W : 0) |
                    ((p.p_flags & PF_X) ? PROT_X : 0)};
    }
    img->pie = eh.e_type == ET_DYN;
    elf_load_symbols(img);
    return 0;
bad:
    elf_free(img);
    return -1;
}

/* The GNU build-id of a parsed file as lowercase hex, or "" when it has none. */
static void build_id(const struct elf_image *img, char *hex, size_t len)
{
    hex[0] = '\0';
    Elf64_Ehdr eh;
    memcpy(&eh, img->data, sizeof eh); /* parse_lib checked the header and phdrs fit */
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr p;
        memcpy(&p, img->data + eh.e_phoff + (uint64_t)i * sizeof p, sizeof p);
        if (p.p_type != PT_NOTE || !fits(p.p_offset, p.p_filesz, img->size))
            continue;
        const uint8_t *n = img->data + p.p_offset;
        for (uint64_t off = 0; off + sizeof(Elf64_Nhdr) <= p.p_filesz;) {
            Elf64_Nhdr h;
            memcpy(&h, n + off, sizeof h);
            off += sizeof h;
            uint64_t nsz = ((uint64_t)h.n_namesz + 3) & ~3ULL;
            uint64_t dsz = ((uint64_t)h.n_descsz + 3) & ~3ULL;
            if (nsz > p.p_filesz - off || dsz > p.p_filesz - off - nsz)
                break;
            if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && !memcmp(n + off, "GNU", 4) &&
                h.n_descsz >= 2 && h.n_descsz * 2 + 1 <= len) {
                for (uint32_t k = 0; k < h.n_descsz; k++)
                    snprintf(hex + 2 * k, 3, "%02x", n[off + nsz + k]);
                return;
            }
            off += nsz + dsz;
        }
    }
}

/* Parses the library at canonical path into l, and its debug file when installed. */
static void load_lib(struct libsyms_file *l)
{
    uint8_t *data;
    size_t size;
    char err[256];
    if (elf_read_file(l->path, &data, &size, err, sizeof err) < 0 ||
        parse_lib(data, size, &l->img) < 0)
        return;
    l->ok = true;
    char id[129], dpath[PATH_MAX];
    build_id(&l->img, id, sizeof id);
    if (!id[0] || (size_t)snprintf(dpath, sizeof dpath, "/usr/lib/debug/.build-id/%.2s/%s.debug",
                                   id, id + 2) >= sizeof dpath)
        return;
    if (elf_read_file(dpath, &data, &size, err, sizeof err) < 0 ||
        parse_lib(data, size, &l->dbg) < 0)
        return;
    if (l->dbg.nsyms <= l->img.nsyms)
        elf_free(&l->dbg); /* not better than what the library has */
}

/* The index of the cache's entry for canonical path, parsed on first use; -1 when the
 * cache is full or the file is not a usable ELF library. Caller holds ls->lock. */
static int get_file(struct libsyms *ls, const char *path)
{
    for (int i = 0; i < ls->n; i++)
        if (!strcmp(ls->libs[i].path, path))
            return ls->libs[i].ok ? i : -1;
    if (ls->n == LIBSYMS_MAX_FILES)
        return -1;
    struct libsyms_file *l = &ls->libs[ls->n];
    snprintf(l->path, sizeof l->path, "%s", path);
    const char *slash = strrchr(l->path, '/');
    l->name = slash ? slash + 1 : l->path;
    int i = ls->n++; /* a file that fails stays, so that it is not tried again */
    load_lib(l);
    return l->ok ? i : -1;
}

/* The file the guest's name stands for, -1 if none; resolved once per name. Caller
 * holds ls->lock. */
static int lookup_name(struct libsyms *ls, const struct libsyms_mem *m, const char *name)
{
    for (int i = 0; i < ls->nnames; i++)
        if (!strcmp(ls->names[i].name, name))
            return ls->names[i].file;
    char canon[PATH_MAX];
    int f = name[0] == '/' && m->resolve(m->ctx, name, canon) ? get_file(ls, canon) : -1;
    if (ls->nnames < MAX_NAMES && (ls->names[ls->nnames].name = strdup(name)))
        ls->names[ls->nnames++].file = f;
    return f;
}

/* A NUL-terminated guest string of at most len-1 bytes; false when unreadable or longer. */
static bool read_str(const struct libsyms_mem *m, uint64_t va, char *buf, size_t len)
{
    for (size_t got = 0; got + 1 < len;) {
        size_t chunk = 64 - (size_t)(va & 63); /* never across a page */
        if (chunk > len - 1 - got)
            chunk = len - 1 - got;
        if (va + chunk < va || !m->read(m->ctx, va, buf + got, chunk))
            return false;
        void *nul = memchr(buf + got, 0, chunk);
        if (nul)
            return true;
        got += chunk;
        va += chunk;
    }
    return false;
}

/* r_debug's address from the program's DT_DEBUG, 0 when ld.so has not set it (yet). */
static uint64_t find_r_debug(const struct libsyms_mem *m)
{
    if (!m->dynamic)
        return 0;
    for (uint64_t i = 0; i < MAX_DYN; i++) {
        uint64_t d[2];
        if (!m->read(m->ctx, m->dynamic + 16 * i, d, sizeof d) || d[0] == DT_NULL)
            return 0;
        if (d[0] == DT_DEBUG)
            return d[1];
    }
    return 0;
}

static bool holds(const struct elf_image *img, uint64_t bias, uint64_t va, bool *text)
{
    for (int i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        uint64_t start = bias + s->vaddr;
        if (va >= start && va - start < s->memsz) {
            *text = (s->prot & PROT_X) != 0;
            return true;
        }
    }
    return false;
}

void libsyms_map(struct libsyms *ls, const struct libsyms_mem *m, struct libmap *map)
{
    map->n = 0;
    uint64_t r_debug = ls ? find_r_debug(m) : 0, lm;
    /* struct r_debug: int r_version; struct link_map *r_map; ... */
    if (!r_debug || r_debug + 16 < r_debug || !m->read(m->ctx, r_debug + 8, &lm, 8))
        return;
    pthread_mutex_lock(&ls->lock);
    for (int k = 0; k < LIBSYMS_MAX_LIBS && lm && map->n < LIBSYMS_MAX_FILES; k++) {
        /* struct link_map: l_addr, l_name, l_ld, l_next, l_prev */
        uint64_t e[4];
        char name[PATH_MAX];
        if (!m->read(m->ctx, lm, e, sizeof e))
            break;
        lm = e[3];
        if ((e[0] & 0xfff) || !e[1] || !read_str(m, e[1], name, sizeof name) || !name[0])
            continue; /* the program itself (""), or nothing jinx can follow */
        int f = lookup_name(ls, m, name);
        if (f >= 0)
            map->e[map->n++] = (struct libmap_entry){e[0], &ls->libs[f]};
    }
    pthread_mutex_unlock(&ls->lock);
}

bool libmap_find(const struct libmap *map, uint64_t va, struct lib_hit *hit)
{
    for (size_t i = 0; i < map->n; i++) {
        const struct libsyms_file *l = map->e[i].file;
        if (holds(&l->img, map->e[i].bias, va, &hit->text)) {
            hit->img = l->dbg.nsyms ? &l->dbg : &l->img;
            hit->name = l->name;
            hit->bias = map->e[i].bias;
            return true;
        }
    }
    return false;
}

size_t libmap_text_of(const struct libmap *map, bool (*want)(const char *name),
                      uint64_t (*ranges)[2], size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < map->n; i++) {
        const struct libsyms_file *l = map->e[i].file;
        if (!l->name || !want(l->name))
            continue;
        for (int j = 0; j < l->img.nseg && k < max; j++) {
            const struct elf_segment *s = &l->img.seg[j];
            if (!(s->prot & PROT_X))
                continue;
            ranges[k][0] = map->e[i].bias + s->vaddr;
            ranges[k][1] = ranges[k][0] + s->memsz;
            k++;
        }
    }
    return k;
}

bool libmap_format(const struct libmap *map, uint64_t va, bool is_return, char *buf,
                   size_t len)
{
    uint64_t look = is_return && va ? va - 1 : va, off = 0;
    struct lib_hit h;
    if (!libmap_find(map, look, &h))
        return false;
    const struct elf_symbol *s = elf_symbolize(h.img, look - h.bias, &off);
    if (!s)
        snprintf(buf, len, "%s+0x%llx", h.name, (unsigned long long)(va - h.bias));
    else if ((off += va - look))
        snprintf(buf, len, "%s!%s+0x%llx", h.name, s->name, (unsigned long long)off);
    else
        snprintf(buf, len, "%s!%s", h.name, s->name);
    return true;
}
