/* ELF executable parsing and validation. The file is untrusted: every offset, size and
 * address is checked before use, and a bad file is rejected with a message that says
 * what is wrong. Pure host code: no KVM, unit-tested on crafted files. */
#ifndef JINX_ELFPARSE_H
#define JINX_ELFPARSE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define ELF_MAX_SEGMENTS 16
#define ELF_MAX_FILE     (1ULL << 30)
#define ELF_MAX_SPAN     (1ULL << 30)
#define ELF_MAX_INTERP   256

#define PROT_R 1
#define PROT_W 2
#define PROT_X 4

struct elf_segment {
    uint64_t vaddr, memsz, offset, filesz;
    int prot;
};

struct elf_symbol {
    uint64_t addr, size;
    const char *name;      /* points into the image's file data */
};

struct elf_image {
    uint8_t *data;
    size_t size;
    int pie;                 /* ET_DYN (PIE, static-pie, ld.so): loaded at a chosen base */
    uint64_t entry;          /* link-time address */
    uint64_t phdr_vaddr;     /* link-time address of the program headers, 0 if not loaded */
    uint64_t phnum, phentsize;
    uint64_t lo, hi;         /* page-rounded extent of the loaded segments */
    uint64_t stack_size;     /* PT_GNU_STACK p_memsz (musl's default thread stack hint) */
    uint64_t stack_phdr_off; /* file offset of the PT_GNU_STACK header, 0 if none */
    struct elf_segment seg[ELF_MAX_SEGMENTS];
    int nseg;
    struct elf_symbol *syms; /* sorted by address */
    size_t nsyms;
    char interp[ELF_MAX_INTERP]; /* PT_INTERP's path ("" when static) */
    struct stat file_st;     /* elf_open: the file's fstat when its bytes were read (the */
    bool have_file_st;       /* code-scan cache's key, linux/scancache.h) */
};

/* An FNV-1a based digest of the whole file, to tell builds apart. Computed on demand, not
 * by elf_parse: it reads every byte, ~1 ms for a 1 MB program on every boot otherwise. */
void elf_build_hash(const struct elf_image *img, uint8_t out[32]);

/* Parses and validates an in-memory ELF; takes ownership of data (freed by elf_free).
 * Returns 0, or -1 with a message in err. */
int elf_parse(uint8_t *data, size_t size, struct elf_image *img, char *err, size_t errlen);
/* Reads and parses PATH. */
int elf_open(const char *path, struct elf_image *img, char *err, size_t errlen);
void elf_free(struct elf_image *img);
/* The whole regular file PATH (at most ELF_MAX_FILE bytes) into *data (malloc'd). */
int elf_read_file(const char *path, uint8_t **data, size_t *size, char *err, size_t errlen);
/* img->syms from img->data's .symtab, else its .dynsym (a stripped shared library keeps
 * its exported symbols there); silently none when the section headers are unusable. */
void elf_load_symbols(struct elf_image *img);

/* Symbol containing link-time address addr (with *off set), or NULL. */
const struct elf_symbol *elf_symbolize(const struct elf_image *img, uint64_t addr, uint64_t *off);
/* "name+0x12", "name" or "0x..." for a run-time address (bias: load minus link address).
 * A return address (is_return) is looked up at addr-1: a call to a noreturn function may
 * be the last instruction of its caller. */
void elf_format_addr(const struct elf_image *img, uint64_t bias, uint64_t addr, bool is_return,
                     char *buf, size_t len);
/* Address of a symbol by name, 0 if absent. */
uint64_t elf_lookup(const struct elf_image *img, const char *name);

#endif
