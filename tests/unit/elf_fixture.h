/* Fixture of test_vmm_elfparse.c and test_vmm_elfsyms.c: a builder of small valid ELF
 * images (executable or static-pie, with or without sections) to mutate, and checks of
 * what the parser says. After cmocka.h, for its assertions. */
#ifndef JINX_TEST_ELF_FIXTURE_H
#define JINX_TEST_ELF_FIXTURE_H
#include "kvm/layout.h"
#include "linux/elfparse.h"
#include <elf.h>
#include <stdlib.h>
#include <string.h>

/* ---- sanitizer detection (for known-bug guards, see known_bugs_enabled) ---- */
#if defined(__SANITIZE_ADDRESS__)
#define JX_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define JX_SANITIZED 1
#endif
#endif
#ifndef JX_SANITIZED
#define JX_SANITIZED 0
#endif

/* Misaligned header tables used to be read in place (UB, fatal under UBSan); the parser
 * now rejects a misaligned program header table and ignores a misaligned section header
 * table, so these inputs run in every build. */
static inline int known_bugs_enabled(void)
{
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* The builder                                                                          */
/* ------------------------------------------------------------------------------------ */

/* File layout of the built image (offsets):
 *   0x0000 ELF header, 0x0040 NPH program headers
 *   0x1000 .text  (RX, vaddr BASE+0x1000, 0x200 bytes, entry at its start)
 *   0x2000 .rodata(R,  vaddr BASE+0x2000, 0x100 bytes)
 *   0x2fb0 .data  (RW, vaddr BASE+0x3fb0, filesz 0x50, memsz 0x1050: bss up to BASE+0x5000)
 *   0x3000 .symtab, then .strtab, .shstrtab, then section headers (8-aligned) */
#define BASE_EXEC  0x400000ULL
#define NPH        6
#define PH_R       0
#define PH_TEXT    1
#define PH_RODATA  2
#define PH_DATA    3
#define PH_STACK   4
#define PH_RELRO   5
#define OFF_TEXT   0x1000
#define OFF_RODATA 0x2000
#define OFF_DATA   0x2fb0
#define OFF_SYMTAB 0x3000
#define DATA_FILE_END 0x3000 /* end of the last segment's file bytes */
#define NSH        6
#define SH_TEXT    1
#define SH_DATA    2
#define SH_SYMTAB  3
#define SH_STRTAB  4
#define SH_SHSTR   5

struct symdef {
    const char *name;
    int type;
    uint64_t value, size;
    uint16_t shndx;
};

/* Values are relative to the image base (BASE_EXEC for ET_EXEC, 0 for static-pie). */
static const struct symdef SYMS[] = {
    {"circle.c", STT_FILE, 0, 0, SHN_ABS},
    {"main", STT_FUNC, 0x1000, 0x40, SH_TEXT},
    {"helper", STT_FUNC, 0x1040, 0x20, SH_TEXT},
    {"label", STT_NOTYPE, 0x1080, 0, SH_TEXT},      /* unsized: extends to "outer" */
    {"outer", STT_FUNC, 0x1100, 0x100, SH_TEXT},
    {"inner", STT_FUNC, 0x1110, 0x10, SH_TEXT},     /* nested inside outer */
    {"counter", STT_OBJECT, 0x4000, 8, SH_DATA},
    {"printf", STT_FUNC, 0, 0, SHN_UNDEF},          /* undefined: ignored */
    {".Ltmp0", STT_NOTYPE, 0x1050, 0, SH_TEXT},     /* local label: ignored */
    {"$x", STT_NOTYPE, 0x1060, 0, SH_TEXT},         /* mapping symbol: ignored */
    {"", STT_FUNC, 0x1070, 4, SH_TEXT},             /* nameless: ignored */
    {".text", STT_SECTION, 0x1000, 0, SH_TEXT},     /* section symbol: ignored */
    {"tlsvar", STT_TLS, 0x10, 8, SH_DATA},          /* TLS: ignored */
};
#define NSYMDEF (sizeof SYMS / sizeof SYMS[0])
#define NSYMS_KEPT 6 /* main helper label outer inner counter */

struct built {
    uint8_t *d;
    size_t n;
    uint64_t base;
    size_t symtab_off, nsym, strtab_off, strtab_size, shoff;
};

static inline struct built build(int pie, int with_sections)
{
    struct built b = {0};
    b.base = pie ? 0 : BASE_EXEC;
    size_t cap = 0x4000;
    b.d = calloc(1, cap);
    assert_non_null(b.d);
    uint8_t *d = b.d;

    /* code and data bytes */
    memset(d + OFF_TEXT, 0x90, 0x200);
    d[OFF_TEXT] = 0xf4; /* hlt at the entry, for looks */
    memset(d + OFF_RODATA, 'r', 0x100);
    memset(d + OFF_DATA, 'd', 0x50);

    /* symbol table + string table */
    b.symtab_off = OFF_SYMTAB;
    b.nsym = NSYMDEF + 1;
    Elf64_Sym *st = (Elf64_Sym *)(d + b.symtab_off);
    b.strtab_off = b.symtab_off + b.nsym * sizeof(Elf64_Sym);
    char *str = (char *)d + b.strtab_off;
    size_t sl = 1; /* str[0] = "" */
    for (size_t i = 0; i < NSYMDEF; i++) {
        Elf64_Sym *s = &st[i + 1];
        if (SYMS[i].name[0]) {
            s->st_name = (uint32_t)sl;
            strcpy(str + sl, SYMS[i].name);
            sl += strlen(SYMS[i].name) + 1;
        }
        s->st_info = ELF64_ST_INFO(STB_GLOBAL, SYMS[i].type);
        s->st_shndx = SYMS[i].shndx;
        s->st_value = (SYMS[i].shndx == SHN_UNDEF || SYMS[i].type == STT_FILE ||
                       SYMS[i].type == STT_TLS)
                          ? SYMS[i].value
                          : b.base + SYMS[i].value;
        s->st_size = SYMS[i].size;
    }
    b.strtab_size = sl;
    size_t shstr_off = b.strtab_off + sl;
    static const char shstr[] = "\0.text\0.data\0.symtab\0.strtab\0.shstrtab";
    memcpy(d + shstr_off, shstr, sizeof shstr);
    b.shoff = (shstr_off + sizeof shstr + 7) & ~(size_t)7;
    b.n = with_sections ? b.shoff + NSH * sizeof(Elf64_Shdr) : DATA_FILE_END;
    assert_true(b.n <= cap);

    if (with_sections) {
        Elf64_Shdr *sh = (Elf64_Shdr *)(d + b.shoff);
        sh[SH_TEXT] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_PROGBITS,
                                   .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
                                   .sh_addr = b.base + 0x1000, .sh_offset = OFF_TEXT,
                                   .sh_size = 0x200, .sh_addralign = 16};
        sh[SH_DATA] = (Elf64_Shdr){.sh_name = 7, .sh_type = SHT_PROGBITS,
                                   .sh_flags = SHF_ALLOC | SHF_WRITE,
                                   .sh_addr = b.base + 0x3fb0, .sh_offset = OFF_DATA,
                                   .sh_size = 0x50, .sh_addralign = 8};
        sh[SH_SYMTAB] = (Elf64_Shdr){.sh_name = 13, .sh_type = SHT_SYMTAB,
                                     .sh_offset = b.symtab_off,
                                     .sh_size = b.nsym * sizeof(Elf64_Sym),
                                     .sh_link = SH_STRTAB, .sh_info = 1, .sh_addralign = 8,
                                     .sh_entsize = sizeof(Elf64_Sym)};
        sh[SH_STRTAB] = (Elf64_Shdr){.sh_name = 21, .sh_type = SHT_STRTAB,
                                     .sh_offset = b.strtab_off, .sh_size = b.strtab_size,
                                     .sh_addralign = 1};
        sh[SH_SHSTR] = (Elf64_Shdr){.sh_name = 29, .sh_type = SHT_STRTAB,
                                    .sh_offset = shstr_off, .sh_size = sizeof shstr,
                                    .sh_addralign = 1};
    }

    Elf64_Ehdr *eh = (Elf64_Ehdr *)d;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_ident[EI_OSABI] = ELFOSABI_SYSV;
    eh->e_type = pie ? ET_DYN : ET_EXEC;
    eh->e_machine = EM_X86_64;
    eh->e_version = EV_CURRENT;
    eh->e_entry = b.base + 0x1000;
    eh->e_phoff = sizeof(Elf64_Ehdr);
    eh->e_shoff = with_sections ? b.shoff : 0;
    eh->e_ehsize = sizeof(Elf64_Ehdr);
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = NPH;
    eh->e_shentsize = sizeof(Elf64_Shdr);
    eh->e_shnum = with_sections ? NSH : 0;
    eh->e_shstrndx = with_sections ? SH_SHSTR : 0;

    Elf64_Phdr *ph = (Elf64_Phdr *)(d + eh->e_phoff);
    uint64_t phend = sizeof(Elf64_Ehdr) + NPH * sizeof(Elf64_Phdr);
    ph[PH_R] = (Elf64_Phdr){PT_LOAD, PF_R, 0, b.base, b.base, phend, phend, 0x1000};
    ph[PH_TEXT] = (Elf64_Phdr){PT_LOAD, PF_R | PF_X, OFF_TEXT, b.base + 0x1000,
                               b.base + 0x1000, 0x200, 0x200, 0x1000};
    ph[PH_RODATA] = (Elf64_Phdr){PT_LOAD, PF_R, OFF_RODATA, b.base + 0x2000, b.base + 0x2000,
                                 0x100, 0x100, 0x1000};
    ph[PH_DATA] = (Elf64_Phdr){PT_LOAD, PF_R | PF_W, OFF_DATA, b.base + 0x3fb0,
                               b.base + 0x3fb0, 0x50, 0x1050, 0x1000};
    ph[PH_STACK] = (Elf64_Phdr){PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 0x20000, 0x10};
    ph[PH_RELRO] = (Elf64_Phdr){PT_GNU_RELRO, PF_R, OFF_DATA, b.base + 0x3fb0,
                                b.base + 0x3fb0, 0x50, 0x50, 1};
    return b;
}

static inline Elf64_Ehdr *EH(struct built *b) { return (Elf64_Ehdr *)b->d; }
static inline Elf64_Phdr *PH(struct built *b, int i) { return (Elf64_Phdr *)(b->d + 0x40) + i; }
static inline Elf64_Shdr *SH(struct built *b, int i) { return (Elf64_Shdr *)(b->d + b->shoff) + i; }
static inline Elf64_Sym *SYM(struct built *b, int i)
{
    return (Elf64_Sym *)(b->d + b->symtab_off) + i;
}
/* Symbol-table index of a SYMS[] entry by name. */
static inline int symidx(const char *name)
{
    for (size_t i = 0; i < NSYMDEF; i++)
        if (!strcmp(SYMS[i].name, name))
            return (int)i + 1;
    fail_msg("no symbol %s in the builder", name);
    return -1;
}

/* Parses an exact-size heap copy of buf[0..n) (so ASan sees any over-read). */
static inline int parse_n(const uint8_t *buf, size_t n, struct elf_image *img, char *err,
                          size_t errlen)
{
    uint8_t *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    if (n)
        memcpy(copy, buf, n);
    err[0] = '\0';
    return elf_parse(copy, n, img, err, errlen);
}

static inline void expect_ok(struct built *b, struct elf_image *img)
{
    char err[512];
    int rc = parse_n(b->d, b->n, img, err, sizeof err);
    if (rc != 0)
        fail_msg("valid image rejected: %s", err);
}

#define expect_reject(b, needle) expect_reject_at(b, needle, __FILE__, __LINE__)
static inline void expect_reject_at(struct built *b, const char *needle, const char *file, int line)
{
    struct elf_image img;
    char err[512];
    int rc = parse_n(b->d, b->n, &img, err, sizeof err);
    if (rc != -1) {
        elf_free(&img);
        fail_msg("%s:%d: image accepted, expected rejection mentioning \"%s\"", file, line,
                 needle);
    }
    elf_free(&img); /* elf_parse took ownership of the copy */
    if (!strcasestr(err, needle))
        fail_msg("%s:%d: message \"%s\" does not mention \"%s\"", file, line, err, needle);
}

#endif
