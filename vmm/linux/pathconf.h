/* Which host paths the guest may read, and confined path resolution.
 *
 * The guest sees host paths as they are on the host (its cwd starts as jinx-vmm's), but
 * only inside the grants: directories (--ro-dir, recursive) and single files (the program,
 * its interpreter, its libraries, /etc/ld.so.cache). A guest path is resolved here, not by
 * the host kernel: made absolute against the guest's cwd, `.` and `..` taken lexically,
 * every symlink met read and substituted (at most 40), giving a canonical path with no
 * symlink in it; that path must lie inside a grant. The open that follows (files.c) uses
 * RESOLVE_NO_SYMLINKS, so a symlink swapped in between makes the open fail rather than
 * escape. Paths are untrusted guest input: any byte string up to PATHCONF_MAX.
 *
 * Errors are what a program expects: -ENOENT (nothing there), -ENOTDIR, -ELOOP,
 * -ENAMETOOLONG, and -EACCES for an existing path outside every grant (a missing one
 * outside is -ENOENT). Pure host code but for lstat/readlink; unit-tested and fuzzed. */
#ifndef JINX_PATHCONF_H
#define JINX_PATHCONF_H
#include <stdbool.h>
#include <stddef.h>

#define PATHCONF_MAX 4096
#define PATHCONF_MAX_GRANTS 256

struct grant {
    char *path;     /* canonical host path (realpath) */
    size_t len;
    bool dir;       /* a directory: everything under it too */
};

struct grants {
    struct grant g[PATHCONF_MAX_GRANTS];
    int n;
};

/* Grants HOST_PATH (made canonical with realpath). want_dir: it must be a directory
 * (--ro-dir). Granting the same path twice is harmless. 0, or -1 with a message naming
 * the path and what to do. */
int grants_add(struct grants *g, const char *host_path, bool want_dir, char *err,
               size_t errlen);
void grants_free(struct grants *g);

/* Is canonical path p inside a grant? (p itself a granted file, or a granted directory
 * or under one.) */
bool grants_allow(const struct grants *g, const char *p);

/* Lexical normalization: path (absolute, or relative to cwd, which is absolute) to an
 * absolute path without `.`, `..`, or repeated slashes, into out. `..` at the root stays
 * at the root, as the kernel does. 0, or -ENAMETOOLONG / -ENOENT (empty path). */
int path_normalize(const char *cwd, const char *path, char *out, size_t outlen);

/* Full confined resolution of the guest path into canonical host path out
 * (PATHCONF_MAX bytes). follow_last: a final symlink is followed (not for readlink or
 * AT_SYMLINK_NOFOLLOW). 0, or -errno as described above. */
int path_resolve(const struct grants *g, const char *cwd, const char *path, bool follow_last,
                 char *out);

/* The private writable layer's say over a canonical path (linux/ovl.h: ovl_lookup): 1 a
 * directory of its own, 2 another object of its own, -1 nothing there (removed, or below
 * a directory it made), 0 the host decides. */
struct path_overlay {
    int (*lookup)(void *ctx, const char *p);
    void *ctx;
};
/* path_resolve, asking ov first at every step (ov NULL: the host alone). An object of the
 * overlay is allowed wherever it is. */
int path_resolve_ovl(const struct grants *g, const char *cwd, const char *path,
                     bool follow_last, char *out, const struct path_overlay *ov);

#endif
