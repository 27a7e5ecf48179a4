/* `jinxctl inspect`: the shared libraries in a dump's backtraces (linux/libsyms.h over
 * the core's memory). A name from the guest's link_map is followed only to a file the
 * dump says the program opened (its FILES record) and that still has the recorded
 * SHA-256, or to the image's own interpreter (PT_INTERP: loaded by jinx, not opened by
 * the program): never to any other host file, and never to a library that has changed
 * since the crash (its symbols would name the wrong functions). */
#ifndef JINX_INSPECT_LIBS_H
#define JINX_INSPECT_LIBS_H
#include "dump/corefile.h"
#include "dump/dumpfile.h"
#include "linux/elfparse.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct inspect_libs;

/* The libraries loaded at the crash; NULL for a static program or when none can be
 * followed (every function takes NULL and then finds nothing). d, core and img must
 * outlive the result. */
struct inspect_libs *inspect_libs_open(const struct dumpfile *d, const struct corefile *core,
                                       const struct elf_image *img, uint64_t bias);
/* va lies in a library's executable segment. */
bool inspect_libs_text(const struct inspect_libs *l, uint64_t va);
/* "libc.so.6!abort+0x2f" for va in a library (libmap_format), else elf_format_addr of
 * the program img loaded at bias. */
void inspect_libs_symbolize(const struct inspect_libs *l, const struct elf_image *img,
                            uint64_t bias, uint64_t va, bool is_return, char *buf, size_t len);
void inspect_libs_close(struct inspect_libs *l);

#endif
