/* A dump's FILES record (dumpfile.h) from a VM: the --ro-dir grants and every file the
 * program opened, hashed now (SHA-256 and size), so that `jinx-vmm replay` can grant the
 * same and refuse a file that has changed since. A file that cannot be read any more is
 * left out with a warning: the dump is still worth writing. */
#ifndef JINX_DUMP_FILES_H
#define JINX_DUMP_FILES_H
#include "dump/dumpfile.h"

struct vm;
void dump_fill_files(struct dumpfile *d, struct vm *vm);
/* Every file d records must read the same now (size and SHA-256). 0, or -1 with a message
 * naming the file and what to do. */
int dump_check_files(const struct dumpfile *d, char *err, size_t errlen);

#endif
