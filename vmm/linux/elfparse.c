#include "linux/elfparse.h"
#include "lib/util.h"
#include "kvm/layout.h"
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* a + b <= limit without overflow */
static int fits(uint64_t a, uint64_t b, uint64_t limit)
{
    return b <= limit && a <= limit - b;
}

static int cmp_seg(const void *a, const void *b)
{
    const struct elf_segment *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int cmp_sym(const void *a, const void *b)
{
    const struct elf_symbol *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* Among symbols at one address the lookup meets the last first: put sized ones
     * (real functions and objects) last, so they win over unsized aliases. */
    return (x->size > y->size) - (x->size < y->size);
}

static void digest(const uint8_t *d, size_t n, uint8_t out[32])
{
    /* Four independent FNV-1a lanes: not cryptographic, enough to tell builds apart. */
    uint64_t h[4] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL, 0x1234567887654321ULL,
                     0x0fedcba987654321ULL};
    for (size_t i = 0; i < n; i++) {
        h[i & 3] ^= d[i];
        h[i & 3] *= 0x100000001b3ULL;
    }
    for (int k = 0; k < 4; k++) {
        h[k] ^= n;
        h[k] *= 0x100000001b3ULL;
        memcpy(out + 8 * k, &h[k], 8);
    }
}

void elf_build_hash(const struct elf_image *img, uint8_t out[32])
{
    digest(img->data, img->size, out);
}

void elf_load_symbols(struct elf_image *img)
{
    if (img->syms) /* loaded already (elf_parse does): a second load would overrun them */
        return;
    const Elf64_Ehdr *eh = (const void *)img->data;
    if (img->size < sizeof *eh)
        return;
    const uint8_t *d = img->data;
    size_t size = img->size;
    if (eh->e_shoff == 0 || eh->e_shoff % 8 || eh->e_shnum == 0 ||
        eh->e_shentsize != sizeof(Elf64_Shdr))
        return;
    if (!fits(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
        return;
    const Elf64_Shdr *sh = (const void *)(d + eh->e_shoff);
    /* .symtab; a stripped file (a shared library) still has its exported .dynsym. */
    unsigned type = SHT_DYNSYM;
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_SYMTAB)
            type = SHT_SYMTAB;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != type || sh[i].sh_entsize != sizeof(Elf64_Sym))
            continue;
        if (sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (!fits(sh[i].sh_offset, sh[i].sh_size, size) || !fits(str->sh_offset, str->sh_size, size))
            continue;
        if (sh[i].sh_offset % 8 || str->sh_size == 0)
            continue;
        const char *strtab = (const char *)d + str->sh_offset;
        if (strtab[str->sh_size - 1] != '\0')
            continue; /* names could run off the table */
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        const Elf64_Sym *st = (const void *)(d + sh[i].sh_offset);
        img->syms = calloc(n ? n : 1, sizeof *img->syms);
        if (!img->syms)
            return;
        for (size_t k = 0; k < n; k++) {
            int type = ELF64_ST_TYPE(st[k].st_info);
            if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE)
                continue;
            if (st[k].st_value == 0 || st[k].st_shndx == SHN_UNDEF || st[k].st_name >= str->sh_size)
                continue;
            const char *name = strtab + st[k].st_name;
            if (!*name || name[0] == '$' || !strncmp(name, ".L", 2))
                continue;
            img->syms[img->nsyms++] = (struct elf_symbol){st[k].st_value, st[k].st_size, name};
        }
        qsort(img->syms, img->nsyms, sizeof *img->syms, cmp_sym);
        return;
    }
}

int elf_parse(uint8_t *data, size_t size, struct elf_image *img, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    img->data = data;
    img->size = size;
    if (size < sizeof(Elf64_Ehdr))
        return jx_fail(err, errlen, "not an ELF file: only %zu bytes (truncated?)", size);
    const Elf64_Ehdr *eh = (const void *)data;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
        return jx_fail(err, errlen, "not an ELF file (bad magic)");
    if (eh->e_ident[EI_CLASS] != ELFCLASS64)
        return jx_fail(err, errlen, "not a 64-bit ELF file: jinx runs x86-64 programs only");
    if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
        return jx_fail(err, errlen, "not a little-endian ELF file");
    if (eh->e_machine != EM_X86_64)
        return jx_fail(err, errlen, "wrong machine %u: jinx runs x86-64 (EM_X86_64) programs only",
                    eh->e_machine);
    if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
        return jx_fail(err, errlen, "ELF type %u is not an executable (ET_EXEC or ET_DYN)",
                    eh->e_type);
    if (eh->e_phentsize != sizeof(Elf64_Phdr))
        return jx_fail(err, errlen, "bad program header size %u", eh->e_phentsize);
    if (eh->e_phnum == 0 || eh->e_phnum > 64)
        return jx_fail(err, errlen, "bad program header count %u", eh->e_phnum);
    if (!fits(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), size))
        return jx_fail(err, errlen, "program headers lie outside the file (truncated?)");
    if (eh->e_phoff % 8)
        return jx_fail(err, errlen, "program header table at 0x%llx is misaligned",
                    (unsigned long long)eh->e_phoff);
    img->pie = eh->e_type == ET_DYN;
    img->entry = eh->e_entry;
    img->phnum = eh->e_phnum;
    img->phentsize = eh->e_phentsize;

    const Elf64_Phdr *ph = (const void *)(data + eh->e_phoff);
    uint64_t phdr_from_pt = 0;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *p = &ph[i];
        switch (p->p_type) {
        case PT_INTERP:
            /* The interpreter's path: NUL-terminated inside the file, a sane length. */
            if (p->p_filesz < 2 || p->p_filesz > ELF_MAX_INTERP || !fits(p->p_offset, p->p_filesz, size) ||
                data[p->p_offset + p->p_filesz - 1] != 0 ||
                memchr(data + p->p_offset, 0, p->p_filesz) != data + p->p_offset + p->p_filesz - 1)
                return jx_fail(err, errlen, "bad PT_INTERP: the interpreter's path is not a "
                               "NUL-terminated string of at most %d bytes inside the file",
                               ELF_MAX_INTERP);
            memcpy(img->interp, data + p->p_offset, p->p_filesz);
            break;
        case PT_PHDR:
            phdr_from_pt = p->p_vaddr;
            break;
        case PT_GNU_STACK:
            img->stack_size = p->p_memsz;
            img->stack_phdr_off = eh->e_phoff + (uint64_t)i * sizeof(Elf64_Phdr);
            break;
        case PT_LOAD: {
            if (p->p_memsz == 0)
                break;
            if (img->nseg == ELF_MAX_SEGMENTS)
                return jx_fail(err, errlen, "too many PT_LOAD segments (max %d)", ELF_MAX_SEGMENTS);
            if (p->p_filesz > p->p_memsz)
                return jx_fail(err, errlen, "segment %u: file size 0x%llx exceeds memory size 0x%llx",
                            i, (unsigned long long)p->p_filesz, (unsigned long long)p->p_memsz);
            if (p->p_memsz > ELF_MAX_SPAN)
                return jx_fail(err, errlen, "segment %u: memory size 0x%llx is too large (max 1 GiB)",
                            i, (unsigned long long)p->p_memsz);
            if (!fits(p->p_offset, p->p_filesz, size))
                return jx_fail(err, errlen, "segment %u: file range 0x%llx+0x%llx lies outside the "
                            "%zu-byte file (truncated?)", i, (unsigned long long)p->p_offset,
                            (unsigned long long)p->p_filesz, size);
            if ((p->p_vaddr & (PAGE_SIZE - 1)) != (p->p_offset & (PAGE_SIZE - 1)))
                return jx_fail(err, errlen, "segment %u: address and file offset are not congruent "
                            "modulo the page size", i);
            if (!fits(p->p_vaddr, p->p_memsz + PAGE_SIZE, MMAP_TOP))
                return jx_fail(err, errlen, "segment %u: address range 0x%llx+0x%llx is outside user "
                            "space", i, (unsigned long long)p->p_vaddr,
                            (unsigned long long)p->p_memsz);
            struct elf_segment *s = &img->seg[img->nseg++];
            s->vaddr = p->p_vaddr;
            s->memsz = p->p_memsz;
            s->offset = p->p_offset;
            s->filesz = p->p_filesz;
            s->prot = ((p->p_flags & PF_R) ? PROT_R : 0) | ((p->p_flags & PF_W) ? PROT_W : 0) |
                      ((p->p_flags & PF_X) ? PROT_X : 0);
            break;
        }
        default:
            break;
        }
    }
    if (img->nseg == 0)
        return jx_fail(err, errlen, "no loadable segments");
    qsort(img->seg, img->nseg, sizeof img->seg[0], cmp_seg);
    for (int i = 0; i + 1 < img->nseg; i++)
        if (img->seg[i].vaddr + img->seg[i].memsz > img->seg[i + 1].vaddr)
            return jx_fail(err, errlen, "overlapping segments at 0x%llx and 0x%llx",
                        (unsigned long long)img->seg[i].vaddr,
                        (unsigned long long)img->seg[i + 1].vaddr);
    img->lo = img->seg[0].vaddr & PAGE_MASK;
    const struct elf_segment *last = &img->seg[img->nseg - 1];
    img->hi = (last->vaddr + last->memsz + PAGE_SIZE - 1) & PAGE_MASK;
    if (img->hi - img->lo > ELF_MAX_SPAN)
        return jx_fail(err, errlen, "segments span 0x%llx bytes (max 1 GiB)",
                    (unsigned long long)(img->hi - img->lo));
    if (!img->pie && img->lo < USER_MIN)
        return jx_fail(err, errlen, "segment at 0x%llx is below the lowest user address 0x%llx",
                    (unsigned long long)img->lo, (unsigned long long)USER_MIN);
    if (img->pie && img->lo != 0)
        return jx_fail(err, errlen, "position-independent image does not start at address 0");
    int entry_ok = 0;
    for (int i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        if ((s->prot & PROT_X) && img->entry >= s->vaddr && img->entry < s->vaddr + s->memsz)
            entry_ok = 1;
        /* Where the program headers sit in memory, for AT_PHDR. */
        if (!phdr_from_pt && eh->e_phoff >= s->offset &&
            eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= s->offset + s->filesz)
            phdr_from_pt = s->vaddr + (eh->e_phoff - s->offset);
    }
    if (!entry_ok)
        return jx_fail(err, errlen, "entry point 0x%llx is not inside an executable segment",
                    (unsigned long long)img->entry);
    img->phdr_vaddr = phdr_from_pt;
    elf_load_symbols(img);
    return 0;
}

/* elf_read_file, and the fstat of the descriptor the bytes came from in *stp. */
static int read_file_st(const char *path, uint8_t **out, size_t *outsize, struct stat *stp,
                        char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return jx_fail(err, errlen, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return jx_fail(err, errlen, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > ELF_MAX_FILE) {
        close(fd);
        return jx_fail(err, errlen, "%s: file too large (%lld bytes, max 1 GiB)", path,
                    (long long)st.st_size);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size ? size : 1);
    if (!data) {
        close(fd);
        return jx_fail(err, errlen, "%s: out of memory", path);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, data + got, size - got);
        if (r <= 0) {
            free(data);
            close(fd);
            return jx_fail(err, errlen, "%s: read error", path);
        }
        got += (size_t)r;
    }
    close(fd);
    *out = data;
    *outsize = size;
    *stp = st;
    return 0;
}

int elf_read_file(const char *path, uint8_t **out, size_t *outsize, char *err, size_t errlen)
{
    struct stat st;
    return read_file_st(path, out, outsize, &st, err, errlen);
}

int elf_open(const char *path, struct elf_image *img, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    uint8_t *data;
    size_t size;
    struct stat st;
    if (read_file_st(path, &data, &size, &st, err, errlen) < 0)
        return -1;
    char inner[400];
    if (elf_parse(data, size, img, inner, sizeof inner) < 0) {
        elf_free(img);
        return jx_fail(err, errlen, "%s: %s", path, inner);
    }
    img->file_st = st;
    img->have_file_st = true;
    return 0;
}

void elf_free(struct elf_image *img)
{
    free(img->syms);
    free(img->data);
    memset(img, 0, sizeof *img);
}

const struct elf_symbol *elf_symbolize(const struct elf_image *img, uint64_t addr, uint64_t *off)
{
    size_t lo = 0, hi = img->nsyms;
    while (lo < hi) { /* first symbol with addr > target */
        size_t mid = (lo + hi) / 2;
        if (img->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    /* Among symbols at or below addr, take the nearest that contains it. */
    for (size_t i = lo; i-- > 0;) {
        const struct elf_symbol *s = &img->syms[i];
        /* An unsized symbol covers its own address (compared as addr == s->addr, since
         * s->addr + 1 wraps to 0 for a symbol at UINT64_MAX), and up to the next one's
         * (found by fuzz_elf: an unsized symbol followed by one at the same address whose
         * size wraps was found by nothing). */
        bool in = s->size ? addr < s->addr + s->size
                          : addr == s->addr || (i + 1 < img->nsyms && addr < img->syms[i + 1].addr);
        if (in) {
            if (off)
                *off = addr - s->addr;
            return s;
        }
        if (lo - i > 8 || addr - s->addr > (1u << 20))
            break;
    }
    return NULL;
}

uint64_t elf_lookup(const struct elf_image *img, const char *name)
{
    for (size_t i = 0; i < img->nsyms; i++)
        if (!strcmp(img->syms[i].name, name))
            return img->syms[i].addr;
    return 0;
}

void elf_format_addr(const struct elf_image *img, uint64_t bias, uint64_t addr, bool is_return,
                     char *buf, size_t len)
{
    uint64_t look = is_return && addr ? addr - 1 : addr, off = 0;
    const struct elf_symbol *s = look >= bias ? elf_symbolize(img, look - bias, &off) : NULL;
    if (s)
        off += addr - look;
    if (s && off)
        snprintf(buf, len, "%s+0x%llx", s->name, (unsigned long long)off);
    else if (s)
        snprintf(buf, len, "%s", s->name);
    else
        snprintf(buf, len, "0x%llx", (unsigned long long)addr);
}
