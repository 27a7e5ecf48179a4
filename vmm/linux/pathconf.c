/* Grants and confined path resolution (pathconf.h). */
#include "linux/pathconf.h"
#include "lib/util.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SYMLINK_HOPS 40

int grants_add(struct grants *g, const char *host_path, bool want_dir, char *err,
               size_t errlen)
{
    char *canon = realpath(host_path, NULL);
    if (!canon)
        return jx_fail(err, errlen, "%s: %s (a granted path must exist)", host_path,
                       strerror(errno));
    struct stat st;
    if (stat(canon, &st) < 0) {
        int e = errno;
        free(canon);
        return jx_fail(err, errlen, "%s: %s", host_path, strerror(e));
    }
    if (want_dir && !S_ISDIR(st.st_mode)) {
        free(canon);
        return jx_fail(err, errlen, "%s is not a directory (--ro-dir grants a directory)",
                       host_path);
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
        free(canon);
        return jx_fail(err, errlen, "%s is neither a regular file nor a directory", host_path);
    }
    for (int i = 0; i < g->n; i++)
        if (!strcmp(g->g[i].path, canon)) {
            free(canon);
            return 0;
        }
    if (g->n == PATHCONF_MAX_GRANTS) {
        free(canon);
        return jx_fail(err, errlen, "too many granted paths (at most %d): grant a common "
                       "directory instead", PATHCONF_MAX_GRANTS);
    }
    g->g[g->n++] = (struct grant){canon, strlen(canon), S_ISDIR(st.st_mode)};
    return 0;
}

void grants_free(struct grants *g)
{
    for (int i = 0; i < g->n; i++)
        free(g->g[i].path);
    g->n = 0;
}

bool grants_allow(const struct grants *g, const char *p)
{
    for (int i = 0; i < g->n; i++) {
        const struct grant *x = &g->g[i];
        if (!strcmp(p, x->path))
            return true;
        if (x->dir && (x->len == 1 ||
                       (!strncmp(p, x->path, x->len) && p[x->len] == '/')))
            return true;
    }
    return false;
}

int path_normalize(const char *cwd, const char *path, char *out, size_t outlen)
{
    if (!path[0])
        return -ENOENT;
    if (outlen < 2)
        return -ENAMETOOLONG;
    size_t n = 0;
    out[n++] = '/';
    /* Two passes over the same component loop: cwd (when path is relative), then path. */
    const char *parts[2] = {path[0] == '/' ? "" : cwd, path};
    for (int k = 0; k < 2; k++) {
        const char *s = parts[k];
        while (*s) {
            while (*s == '/')
                s++;
            const char *e = s;
            while (*e && *e != '/')
                e++;
            size_t len = (size_t)(e - s);
            if (len == 0 || (len == 1 && s[0] == '.')) {
                /* nothing */
            } else if (len == 2 && s[0] == '.' && s[1] == '.') {
                while (n > 1 && out[n - 1] != '/')
                    n--;
                if (n > 1)
                    n--; /* the slash before the dropped component */
            } else {
                if (n + (n > 1) + len + 1 > outlen)
                    return -ENAMETOOLONG;
                if (n > 1)
                    out[n++] = '/';
                memcpy(out + n, s, len);
                n += len;
            }
            s = e;
        }
    }
    out[n] = 0;
    return 0;
}

/* An error met at host path p: the host's errno inside a grant; outside, -ENOENT. */
static int walk_error(const struct grants *g, const char *p, int e)
{
    return grants_allow(g, p) ? -e : -ENOENT;
}

/* The walk's buffers: on the heap, the vCPU threads' stacks being small. */
struct walk {
    char cur[PATHCONF_MAX], prefix[PATHCONF_MAX], next[2 * PATHCONF_MAX + 2],
        target[PATHCONF_MAX];
};

static int resolve(const struct grants *g, const char *cwd, const char *path, bool follow_last,
                   char *out, struct walk *w, const struct path_overlay *ov)
{
    char *cur = w->cur, *prefix = w->prefix, *next = w->next, *target = w->target;
    int rc = path_normalize(cwd, path, cur, PATHCONF_MAX);
    if (rc)
        return rc;
    int hops = 0;
again:;
    size_t i = 1;
    while (cur[i]) {
        size_t j = i;
        while (cur[j] && cur[j] != '/')
            j++;
        memcpy(prefix, cur, j);
        prefix[j] = 0;
        bool last = cur[j] == 0;
        int o = ov ? ov->lookup(ov->ctx, prefix) : 0;
        if (o < 0) /* removed, or below a directory the program made */
            return -ENOENT;
        if (o > 0) {
            if (!last && o != 1)
                return -ENOTDIR;
            i = last ? j : j + 1;
            continue;
        }
        struct stat st;
        if (lstat(prefix, &st) < 0)
            return walk_error(g, prefix, errno);
        if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
            if (++hops > MAX_SYMLINK_HOPS)
                return -ELOOP;
            ssize_t tl = readlink(prefix, target, PATHCONF_MAX - 1);
            if (tl <= 0)
                return walk_error(g, prefix, tl < 0 ? errno : ENOENT);
            target[tl] = 0;
            /* The link's directory, then its target, then the rest of the path. */
            size_t dl = i - 1; /* cur[0..i-1) is the parent, without its trailing slash */
            int m = snprintf(next, sizeof w->next, "%.*s/%s%s", (int)dl, cur, target, cur + j);
            if (m < 0 || (size_t)m >= sizeof w->next)
                return -ENAMETOOLONG;
            rc = path_normalize("/", target[0] == '/' ? next + dl + 1 : next, cur, PATHCONF_MAX);
            if (rc)
                return rc;
            goto again;
        }
        if (!last && !S_ISDIR(st.st_mode))
            return walk_error(g, prefix, ENOTDIR);
        i = last ? j : j + 1;
    }
    memcpy(out, cur, strlen(cur) + 1);
    return grants_allow(g, out) || (ov && ov->lookup(ov->ctx, out) > 0) ? 0 : -EACCES;
}

int path_resolve(const struct grants *g, const char *cwd, const char *path, bool follow_last,
                 char *out)
{
    return path_resolve_ovl(g, cwd, path, follow_last, out, NULL);
}

int path_resolve_ovl(const struct grants *g, const char *cwd, const char *path,
                     bool follow_last, char *out, const struct path_overlay *ov)
{
    struct walk *w = malloc(sizeof *w);
    if (!w)
        return -ENOMEM;
    int r = resolve(g, cwd, path, follow_last, out, w, ov);
    free(w);
    return r;
}
