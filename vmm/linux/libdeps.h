/* The shared libraries a dynamically linked program needs, found on the host as its
 * loader would find them, so that the file layer can grant exactly those files.
 *
 * elf_dynamic_strings parses an ELF file's dynamic section (untrusted bytes: every
 * offset and string is checked; fuzzed by tests/fuzz/fuzz_libdeps.c) and reports its
 * DT_NEEDED, DT_RPATH and DT_RUNPATH strings. libdeps_grant walks the program's needs
 * breadth-first: each name is looked for in DT_RPATH (when there is no DT_RUNPATH),
 * LD_LIBRARY_PATH, DT_RUNPATH ($ORIGIN expanded), then the system directories, and each
 * library found is granted (and walked). A library not found is not an error here: the
 * loader in the guest reports it as it would natively. */
#ifndef JINX_LIBDEPS_H
#define JINX_LIBDEPS_H
#include "linux/pathconf.h"
#include <stddef.h>
#include <stdint.h>

enum dyn_kind { DYN_NEEDED, DYN_RPATH, DYN_RUNPATH };

#define LIBDEPS_MAX 128   /* libraries granted at most */

/* Calls cb for every DT_NEEDED/DT_RPATH/DT_RUNPATH string of ELF file data. 0 (also for
 * a file without a dynamic section), or -1 with a message. */
int elf_dynamic_strings(const uint8_t *data, size_t size,
                        void (*cb)(void *ctx, enum dyn_kind kind, const char *s), void *ctx,
                        char *err, size_t errlen);

/* Grants program's libraries (and theirs). ld_library_path may be NULL. Returns the
 * number granted, or -1 with a message. */
int libdeps_grant(struct grants *g, const char *program, const char *ld_library_path,
                  char *err, size_t errlen);

#endif
