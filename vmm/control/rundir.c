/* The control-socket directory (rundir.h). */
#include "control/rundir.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rundir_path(char *buf, size_t len, char *err, size_t errlen)
{
    const char *env = getenv("JINX_RUNTIME_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (env && *env)
        n = snprintf(buf, len, "%s", env);
    else if (xdg && *xdg)
        n = snprintf(buf, len, "%s/jinx", xdg);
    else
        n = snprintf(buf, len, "/tmp/jinx-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= len) {
        snprintf(err, errlen, "control socket directory path too long (set JINX_RUNTIME_DIR to "
                 "a short directory such as /tmp/jinx)");
        return -1;
    }
    return 0;
}

int rundir_check(const char *dir, bool create, char *err, size_t errlen)
{
    struct stat st;
    if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create control socket directory %s: %s (set "
                 "JINX_RUNTIME_DIR to a directory you own, or run with --no-control)", dir,
                 strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) < 0) {
        snprintf(err, errlen, "control socket directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "control socket directory %s is a symbolic link: refusing it "
                 "(set JINX_RUNTIME_DIR to the real directory)", dir);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "control socket directory %s is not a directory (remove it or "
                 "set JINX_RUNTIME_DIR)", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "control socket directory %s belongs to uid %u, not to you (uid "
                 "%u): refusing it (remove it or set JINX_RUNTIME_DIR to a directory you own)",
                 dir, (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "control socket directory %s is writable by %s (mode %04o): "
                 "refusing it (chmod go-w %s, or set JINX_RUNTIME_DIR)", dir,
                 (st.st_mode & S_IWOTH) ? "others" : "its group",
                 (unsigned)(st.st_mode & 07777), dir);
        return -1;
    }
    return 0;
}
