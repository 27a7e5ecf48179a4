/* Source lines for code addresses, from the image's DWARF line tables, for the
 * backtraces of `jinxctl inspect`. The line tables are read by binutils' addr2line (it
 * knows every DWARF version gcc and clang emit), run without a shell on the image file;
 * an image without debug info, or a host without addr2line, simply gets no lines.
 *
 * Addresses are link-time addresses (the image's own vaddrs: subtract the load bias).
 * A return address should be passed minus one, so that the line is the call's. */
#ifndef JINX_SRCLINE_H
#define JINX_SRCLINE_H
#include <stddef.h>
#include <stdint.h>

#define SRCLINE_LEN 160
#define SRCLINE_MAX 64 /* addresses per call */

/* Fills out[i] with "file:line" for addrs[i], or "" when unknown (n <= SRCLINE_MAX).
 * Returns how many were found, or -1 with a message (addr2line missing or failed; out
 * is then all ""). The environment variable JINX_ADDR2LINE names another program. */
int srcline_resolve(const char *image, const uint64_t *addrs, size_t n,
                    char out[][SRCLINE_LEN], char *err, size_t errlen);

/* One line of addr2line's output -> "file:line" in out, or "" for "??:0", "file:?" and
 * anything malformed; a " (discriminator N)" suffix is dropped. Exposed for tests. */
void srcline_parse(const char *line, char *out, size_t len);

#endif
