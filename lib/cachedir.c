/* The cache directory (cachedir.h). */
#include "lib/cachedir.h"
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int cachedir_path(char *out, size_t outlen)
{
    const char *d = getenv("JINX_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"),
               *h = getenv("HOME");
    int w;
    if (d && d[0])
        w = snprintf(out, outlen, "%s", d);
    else if (x && x[0] == '/')
        w = snprintf(out, outlen, "%s/jinx", x);
    else if (h && h[0] == '/')
        w = snprintf(out, outlen, "%s/.cache/jinx", h);
    else
        return -1;
    return w > 0 && (size_t)w < outlen ? 0 : -1;
}

char *cachedir_read(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    char *t = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= max && (t = malloc((size_t)st.st_size))) {
        ssize_t r = pread(fd, t, (size_t)st.st_size, 0);
        if (r != st.st_size) {
            free(t);
            t = NULL;
        }
        *len = (size_t)st.st_size;
    }
    close(fd);
    return t;
}

/* mkdir -p of dir (0700 for what it makes). */
static int make_dirs(const char *dir)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return -1;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0700) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

int cachedir_write(const char *dir, const char *path, const char *tag, const char *text,
                   size_t len)
{
    char tmp[4200];
    if (make_dirs(dir) < 0 || snprintf(tmp, sizeof tmp, "%s/.%s-XXXXXX", dir, tag) >= (int)sizeof tmp)
        return -1;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -1;
    bool ok = write(fd, text, len) == (ssize_t)len;
    ok &= fchmod(fd, 0644) == 0;
    ok &= close(fd) == 0;
    if (!ok || rename(tmp, path) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
