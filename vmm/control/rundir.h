/* Where control sockets live: $JINX_RUNTIME_DIR, else $XDG_RUNTIME_DIR/jinx, else
 * /tmp/jinx-<uid>. Shared by jinx-vmm (creates the directory and its socket) and
 * jinxctl (looks for sockets there). The directory must be ours and not writable by
 * anyone else, or another user could plant or replace sockets in it. */
#ifndef JINX_RUNDIR_H
#define JINX_RUNDIR_H
#include <stdbool.h>
#include <stddef.h>

/* Computes the directory's path. Returns 0, or -1 with a message if it is too long. */
int rundir_path(char *buf, size_t len, char *err, size_t errlen);
/* Checks that dir is a real directory (not a symlink) owned by us, not writable by group
 * or others. With create, makes it first (mode 0700) if it does not exist.
 * Returns 0, or -1 with a message naming the problem and the fix. */
int rundir_check(const char *dir, bool create, char *err, size_t errlen);

#endif
