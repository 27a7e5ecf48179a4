/* `jinxctl inspect`: the files a dump records (its FILES record), each with whether it
 * still reads the same now ("unchanged", "CHANGED", "unreadable": what replay will say),
 * and the --ro-dir grants. Nothing printed for a dump without a FILES record. */
#ifndef JINX_INSPECT_FILES_H
#define JINX_INSPECT_FILES_H
#include "dump/dumpfile.h"
#include <stdio.h>

void inspect_files_text(const struct dumpfile *d, FILE *f);
/* Appends ,"files":[...],"ro_dirs":[...] to a JSON object being printed. */
void inspect_files_json(const struct dumpfile *d, FILE *f);

#endif
