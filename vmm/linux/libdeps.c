/* Host-side library resolution for the file layer's default grants (libdeps.h). */
#include "linux/libdeps.h"
#include "lib/util.h"
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DYN_ENTRIES 4096
#define MAX_LIB_FILE (1ULL << 30)

static bool fits(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* The file offset of virtual address va (inside a PT_LOAD's file bytes), or -1. */
static int64_t va_to_off(const Elf64_Phdr *ph, unsigned n, uint64_t va)
{
    for (unsigned i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
            va - ph[i].p_vaddr < ph[i].p_filesz)
            return (int64_t)(ph[i].p_offset + (va - ph[i].p_vaddr));
    return -1;
}

int elf_dynamic_strings(const uint8_t *data, size_t size,
                        void (*cb)(void *ctx, enum dyn_kind kind, const char *s), void *ctx,
                        char *err, size_t errlen)
{
    if (size < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) ||
        data[EI_CLASS] != ELFCLASS64 || data[EI_DATA] != ELFDATA2LSB)
        return jx_fail(err, errlen, "not a 64-bit little-endian ELF file");
    Elf64_Ehdr eh;
    memcpy(&eh, data, sizeof eh);
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256 ||
        !fits(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size))
        return jx_fail(err, errlen, "bad program header table");
    Elf64_Phdr ph[256];
    memcpy(ph, data + eh.e_phoff, (size_t)eh.e_phnum * sizeof(Elf64_Phdr));
    const Elf64_Phdr *dyn = NULL;
    for (unsigned i = 0; i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = &ph[i];
    if (!dyn)
        return 0;
    if (!fits(dyn->p_offset, dyn->p_filesz, size))
        return jx_fail(err, errlen, "PT_DYNAMIC lies outside the file");
    uint64_t n = dyn->p_filesz / sizeof(Elf64_Dyn);
    if (n > MAX_DYN_ENTRIES)
        n = MAX_DYN_ENTRIES;
    uint64_t strtab = 0, strsz = 0;
    bool have_strtab = false;
    for (uint64_t i = 0; i < n; i++) {
        Elf64_Dyn d;
        memcpy(&d, data + dyn->p_offset + i * sizeof d, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        if (d.d_tag == DT_STRTAB) {
            strtab = d.d_un.d_ptr;
            have_strtab = true;
        } else if (d.d_tag == DT_STRSZ)
            strsz = d.d_un.d_val;
    }
    if (!have_strtab)
        return 0;
    int64_t so = va_to_off(ph, eh.e_phnum, strtab);
    if (so < 0 || !fits((uint64_t)so, strsz, size) || strsz == 0)
        return jx_fail(err, errlen, "DT_STRTAB lies outside the file");
    const char *str = (const char *)data + so;
    for (uint64_t i = 0; i < n; i++) {
        Elf64_Dyn d;
        memcpy(&d, data + dyn->p_offset + i * sizeof d, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        enum dyn_kind k;
        if (d.d_tag == DT_NEEDED)
            k = DYN_NEEDED;
        else if (d.d_tag == DT_RPATH)
            k = DYN_RPATH;
        else if (d.d_tag == DT_RUNPATH)
            k = DYN_RUNPATH;
        else
            continue;
        if (d.d_un.d_val >= strsz || !memchr(str + d.d_un.d_val, 0, strsz - d.d_un.d_val))
            return jx_fail(err, errlen, "a dynamic string lies outside DT_STRTAB");
        cb(ctx, k, str + d.d_un.d_val);
    }
    return 0;
}

/* What one file's dynamic section says. */
struct dynfile {
    char needed[64][256];
    int nneeded;
    char rpath[PATH_MAX], runpath[PATH_MAX];
};

static void collect(void *ctx, enum dyn_kind kind, const char *s)
{
    struct dynfile *d = ctx;
    if (kind == DYN_NEEDED) {
        if (d->nneeded < 64 && strlen(s) < sizeof d->needed[0])
            strcpy(d->needed[d->nneeded++], s);
    } else if (strlen(s) < PATH_MAX) {
        strcpy(kind == DYN_RPATH ? d->rpath : d->runpath, s);
    }
}

static int read_dynfile(const char *path, struct dynfile *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return jx_fail(err, errlen, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > MAX_LIB_FILE) {
        close(fd);
        return jx_fail(err, errlen, "%s: not a regular file of a sane size", path);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return jx_fail(err, errlen, "%s: %s", path, strerror(errno));
    int rc = elf_dynamic_strings(m, (size_t)st.st_size, collect, d, err, errlen);
    munmap(m, (size_t)st.st_size);
    return rc;
}

/* Looks for name in the colon-separated dirs ($ORIGIN: origin). true with out set. */
static bool search(const char *dirs, const char *origin, const char *name, char *out)
{
    while (dirs && *dirs) {
        const char *e = strchr(dirs, ':');
        size_t len = e ? (size_t)(e - dirs) : strlen(dirs);
        char dir[PATH_MAX];
        if (len < sizeof dir) {
            memcpy(dir, dirs, len);
            dir[len] = 0;
            char exp[PATH_MAX];
            const char *o = strstr(dir, "$ORIGIN");
            if (o)
                snprintf(exp, sizeof exp, "%.*s%s%s", (int)(o - dir), dir, origin, o + 7);
            else
                snprintf(exp, sizeof exp, "%s", dir);
            if (exp[0] && snprintf(out, PATH_MAX, "%s/%s", exp, name) < PATH_MAX &&
                access(out, R_OK) == 0)
                return true;
        }
        if (!e)
            break;
        dirs = e + 1;
    }
    return false;
}

static const char *const system_dirs =
    "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";

int libdeps_grant(struct grants *g, const char *program, const char *ld_library_path,
                  char *err, size_t errlen)
{
    static char queue[LIBDEPS_MAX][PATH_MAX];
    int head = 0, tail = 0, granted = 0;
    snprintf(queue[tail++], PATH_MAX, "%s", program);
    struct dynfile *d = malloc(sizeof *d);
    if (!d)
        return jx_fail(err, errlen, "out of memory");
    while (head < tail) {
        const char *file = queue[head++];
        if (read_dynfile(file, d, err, errlen) < 0) {
            free(d);
            return -1;
        }
        char origin[PATH_MAX];
        snprintf(origin, sizeof origin, "%s", file);
        char *slash = strrchr(origin, '/');
        if (slash)
            *slash = 0;
        else
            strcpy(origin, ".");
        for (int i = 0; i < d->nneeded; i++) {
            const char *name = d->needed[i];
            char found[PATH_MAX];
            bool ok;
            if (strchr(name, '/'))
                ok = snprintf(found, sizeof found, "%s", name) < PATH_MAX &&
                     access(found, R_OK) == 0;
            else
                ok = (!d->runpath[0] && search(d->rpath, origin, name, found)) ||
                     search(ld_library_path, origin, name, found) ||
                     search(d->runpath, origin, name, found) ||
                     search(system_dirs, origin, name, found);
            if (!ok)
                continue;
            int before = g->n;
            if (grants_add(g, found, false, err, errlen) < 0) {
                free(d);
                return -1;
            }
            if (g->n > before && tail < LIBDEPS_MAX) { /* new: walk its needs too */
                snprintf(queue[tail++], PATH_MAX, "%s", found);
                granted++;
            }
        }
    }
    free(d);
    return granted;
}
