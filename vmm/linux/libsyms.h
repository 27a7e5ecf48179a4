/* Symbols of the shared libraries a dynamically linked program has loaded, for its
 * backtraces (jinx-vmm's report, so jinx test's; jinxctl inspect of a dump).
 *
 * The libraries are found as gdb finds them in a core: the program's PT_DYNAMIC in
 * memory, its DT_DEBUG entry (ld.so points it at its r_debug), r_debug.r_map, then the
 * link_map list of (load bias, path). All of that is guest memory, so untrusted: every
 * read may fail, the walk is bounded (LIBSYMS_MAX_LIBS entries, names shorter than
 * PATH_MAX), and a name is used only through the caller's resolve(), which maps it to a
 * host file the guest could read (the VMM: its file layer's confined resolution; a dump:
 * the files the program opened), so that no guest can make jinx open any other host
 * file. The files are parsed by elf_open (validated; .symtab, else .dynsym) and kept by
 * canonical path until the cache is freed. For a library without .symtab, its detached
 * debug file (/usr/lib/debug/.build-id/xx/yyyy.debug, Debian's -dbg packages) gives the
 * full symbols when it is installed. Safe to call from several threads at once. */
#ifndef JINX_LIBSYMS_H
#define JINX_LIBSYMS_H
#include "linux/elfparse.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIBSYMS_MAX_LIBS 256     /* link_map entries walked */
#define LIBSYMS_MAX_FILES 64     /* files kept in the cache */

struct libsyms;
struct libsyms_file;

struct libsyms_mem {
    bool (*read)(void *ctx, uint64_t va, void *dst, size_t len);
    /* The canonical host path (PATH_MAX bytes) of the library the guest names `path`, if
     * it is one the guest may read; false otherwise. Asked once per name: the answer is
     * kept in the cache. */
    bool (*resolve)(void *ctx, const char *path, char *out);
    void *ctx;
    uint64_t dynamic;            /* run-time address of the program's PT_DYNAMIC, 0: none */
};

/* The libraries loaded at one moment: (load bias, file) pairs, valid until the cache
 * they came from is freed. */
struct libmap {
    size_t n;
    struct libmap_entry {
        uint64_t bias;           /* load address minus link-time address */
        const struct libsyms_file *file;
    } e[LIBSYMS_MAX_FILES];
};

struct lib_hit {
    const struct elf_image *img; /* its symbols (the debug file's when installed) */
    const char *name;            /* the file's base name */
    uint64_t bias;
    bool text;                   /* va lies in an executable segment */
};

/* An empty cache; NULL when out of memory (a NULL cache maps nothing). */
struct libsyms *libsyms_new(void);
void libsyms_free(struct libsyms *ls);

/* Link-time address of img's PT_DYNAMIC, 0 when it has none (a static program). */
uint64_t libsyms_dynamic(const struct elf_image *img);

/* Walks the program's link_map now into map (empty for a static program, or before
 * ld.so has set DT_DEBUG). The program itself is not in it. */
void libsyms_map(struct libsyms *ls, const struct libsyms_mem *m, struct libmap *map);
/* The mapped library one of whose loaded segments holds va. */
bool libmap_find(const struct libmap *map, uint64_t va, struct lib_hit *hit);
/* The executable segments [lo, hi) of the mapped libraries whose base name want accepts,
 * into ranges (at most max); the count. */
size_t libmap_text_of(const struct libmap *map, bool (*want)(const char *name),
                      uint64_t (*ranges)[2], size_t max);
/* "libc.so.6!abort+0x2f", or "libc.so.6+0x8aeec" where no symbol holds it, for a va
 * in a mapped library (a return address, is_return, is looked up one byte back, as
 * elf_format_addr does); false when va is in none. */
bool libmap_format(const struct libmap *map, uint64_t va, bool is_return, char *buf,
                   size_t len);

#endif
