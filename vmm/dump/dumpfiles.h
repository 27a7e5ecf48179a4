/* The FILES record's codec (dumpfile.h declares the dumpfile_add_* builders; this is the
 * part dumpfile.c calls). The payload is untrusted: counts bounded, paths absolute. */
#ifndef JINX_DUMPFILES_H
#define JINX_DUMPFILES_H
#include "dump/dumpfile.h"

void dumpfiles_encode(const struct dumpfile *d, struct dbuf *b);
/* Parses the payload into d (has_files set). 0, or -1 with a message. */
int dumpfiles_parse(struct bcur *c, struct dumpfile *d, char *err, size_t errlen);
void dumpfiles_free(struct dumpfile *d);

#endif
