/* jinx's per-user cache directory and its files (the CPU model cache, kvm/cpucache.h; the
 * code-scan cache, linux/scancache.h). Everything read from it is untrusted input to the
 * caller's own parser: these helpers only find, read and write whole small files.
 *
 * Where: $JINX_CACHE_DIR, else $XDG_CACHE_HOME/jinx (absolute), else $HOME/.cache/jinx
 * (absolute); directories made 0700 when missing. */
#ifndef JINX_CACHEDIR_H
#define JINX_CACHEDIR_H
#include <stddef.h>

/* The directory in out, or -1 when no variable gives one (then nothing is cached). */
int cachedir_path(char *out, size_t outlen);

/* The whole regular file at path (not followed if a symlink), 1..max bytes, malloc'd,
 * length in *len; NULL when missing, of another kind, empty, too big or unreadable. */
char *cachedir_read(const char *path, size_t max, size_t *len);

/* Writes text as path inside dir, atomically (a temporary .TAG-XXXXXX file renamed), mode
 * 0644, making dir first. 0, or -1 (then path is untouched). */
int cachedir_write(const char *dir, const char *path, const char *tag, const char *text,
                   size_t len);

#endif
