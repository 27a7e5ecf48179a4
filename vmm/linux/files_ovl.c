/* The private writable file layer in the file syscalls (files_int.h; the tables: ovl.h).
 *
 * Where the program may write: its starting cwd, /tmp and the grants. What it creates
 * or writes there goes into fs->ovl (a host file it opens for writing is copied in
 * first); what it removes or renames away from the host is hidden by a whiteout. Nothing
 * is ever written on the host. Elsewhere the refusals of the read-only layer stay (a
 * jinx limit, files_refuse.c). Every path, size and offset is guest input. */
#include "linux/files_int.h"
#include "linux/futex.h"
#include "linux/limitlog.h"
#include "kvm/vm.h"
#include "lib/util.h"
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

uint64_t files_ovl_now(struct files *fs)
{
    return VTIME_EPOCH_NS + (fs->vm ? vm_vtime(fs->vm) : 0);
}

bool files_under(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    return n && !strncmp(p, dir, n) && (p[n] == 0 || p[n] == '/' || n == 1);
}

bool files_writable(const struct files *fs, const char *p)
{
    return grants_allow(&fs->grants, p) || files_under(p, "/tmp") || (fs->cwd0[0] && files_under(p, fs->cwd0));
}

int files_ovl_kind(struct files *fs, const char *p, uint64_t *ino)
{
    pthread_mutex_lock(&fs->lock);
    int k = ovl_lookup(&fs->ovl, p, ino);
    pthread_mutex_unlock(&fs->lock);
    return k;
}

/* A limit of the writable layer met: noted for `jinx test` ("could not test"). */
static void note_full(struct vm *vm)
{
    struct files *fs = vm->files;
    struct limits *ls = vm->sandbox ? &vm->sandbox_lims : &vm->limits;
    limits_note(ls, LIMIT_FILES, 4000, "raise it with --file-mem SIZE",
                "the program wrote more than %llu MiB of files",
                (unsigned long long)(fs->ovl.limit >> 20));
    if (vm->sandbox)
        atomic_fetch_add(&vm->sandbox_limits, 1);
}

int64_t files_ovl_checked(struct vm *vm, int64_t r)
{
    struct files *fs = vm->files;
    pthread_mutex_lock(&fs->lock);
    bool hit = fs->ovl.limit_hit;
    fs->ovl.limit_hit = false;
    pthread_mutex_unlock(&fs->lock);
    if (hit && r == -ENOSPC)
        note_full(vm);
    return r;
}

/* ---- directories' entries ------------------------------------------------------- */

struct dents {
    uint8_t *buf;
    size_t len, cap;
    int err;
};

static void dent_add(struct dents *d, uint64_t ino, uint8_t type, const char *name)
{
    size_t nl = strlen(name), rec = (19 + nl + 1 + 7) & ~(size_t)7;
    if (d->err)
        return;
    if (d->len + rec > FILES_MAX_DIR) {
        d->err = -ENOMEM;
        return;
    }
    if (d->len + rec > d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 4096;
        while (cap < d->len + rec)
            cap *= 2;
        uint8_t *n = realloc(d->buf, cap);
        if (!n) {
            d->err = -ENOMEM;
            return;
        }
        d->buf = n;
        d->cap = cap;
    }
    uint8_t *p = d->buf + d->len;
    memset(p, 0, rec);
    memcpy(p, &ino, 8);
    int64_t next = (int64_t)(d->len + rec);
    memcpy(p + 8, &next, 8);
    uint16_t r16 = (uint16_t)rec;
    memcpy(p + 16, &r16, 2);
    p[18] = type;
    memcpy(p + 19, name, nl);
    d->len += rec;
}

struct merge_ctx {
    struct files *fs;
    struct dents *d;
};

static void add_child(void *ctx, const struct ovl_ent *e)
{
    struct merge_ctx *m = ctx;
    if (!e->ino)
        return;
    const struct ovl_inode *in = ovl_inode(&m->fs->ovl, e->ino);
    dent_add(m->d, e->ino, in && S_ISDIR(in->mode) ? DT_DIR : DT_REG, strrchr(e->path, '/') + 1);
}

/* f's entries: its host ones (f->dents, when it has them) but the names the overlay has,
 * then the overlay's. Caller holds fs->lock. */
static int merge(struct files *fs, struct gfile *f, bool dots)
{
    struct dents d = {0};
    if (dots) {
        dent_add(&d, f->ino, DT_DIR, ".");
        dent_add(&d, 1, DT_DIR, "..");
    }
    char child[PATHCONF_MAX + 256];
    for (size_t p = 0; f->dents && p < f->dents_len;) {
        uint16_t reclen;
        memcpy(&reclen, f->dents + p + 16, 2);
        if (reclen < 20 || p + reclen > f->dents_len)
            break;
        const char *name = (const char *)f->dents + p + 19;
        size_t nl = strnlen(name, reclen - 19);
        int n = snprintf(child, sizeof child, "%s/%.*s", strcmp(f->path, "/") ? f->path : "",
                         (int)nl, name);
        bool dot = !strcmp(name, ".") || !strcmp(name, "..");
        if (dot || n < 0 || (size_t)n >= sizeof child || !ovl_find(&fs->ovl, child)) {
            uint64_t ino;
            memcpy(&ino, f->dents + p, 8);
            char nm[256];
            snprintf(nm, sizeof nm, "%.*s", (int)nl, name);
            dent_add(&d, ino, f->dents[p + 18], nm);
        }
        p += reclen;
    }
    struct merge_ctx m = {fs, &d};
    ovl_children(&fs->ovl, f->path, add_child, &m);
    if (d.err) {
        free(d.buf);
        return d.err;
    }
    free(f->dents);
    f->dents = d.buf;
    f->dents_len = d.len;
    return 0;
}

static void any_child(void *ctx, const struct ovl_ent *e)
{
    (void)e;
    *(bool *)ctx = true;
}

int files_merge_dents(struct files *fs, struct gfile *f)
{
    pthread_mutex_lock(&fs->lock);
    bool any = false;
    ovl_children(&fs->ovl, f->path, any_child, &any);
    int r = any ? merge(fs, f, false) : 0;
    pthread_mutex_unlock(&fs->lock);
    return r;
}

int files_ovl_gfile(struct files *fs, const char *p, uint64_t ino, bool dir, struct gfile **out)
{
    struct gfile *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->hostfd = -1;
    f->ino = ino;
    f->dir = dir;
    atomic_init(&f->refs, 1);
    if (!(f->path = strdup(p))) {
        free(f);
        return -ENOMEM;
    }
    if (dir) {
        /* A directory of the overlay over a host one (not opaque) shows both. */
        pthread_mutex_lock(&fs->lock);
        const struct ovl_ent *e = ovl_find(&fs->ovl, p);
        bool host = e && !e->opaque && grants_allow(&fs->grants, p);
        pthread_mutex_unlock(&fs->lock);
        if (host) {
            struct gfile *h;
            if (files_open_canon(p, G_O_DIRECTORY, &h) == 0) {
                f->dents = h->dents;
                f->dents_len = h->dents_len;
                h->dents = NULL;
                gfile_put(h);
            }
        }
        pthread_mutex_lock(&fs->lock);
        int r = merge(fs, f, !host);
        pthread_mutex_unlock(&fs->lock);
        if (r < 0) {
            gfile_put(f);
            return r;
        }
    }
    *out = f;
    return 0;
}

/* ---- resolving a path to change ------------------------------------------------- */

static int ovl_cb(void *ctx, const char *p)
{
    uint64_t ino;
    return files_ovl_kind(ctx, p, &ino);
}

/* Is a host object at canonical p visible to the program (granted, not hidden)? */
static bool host_visible(struct files *fs, const char *p, struct stat *st)
{
    if (!grants_allow(&fs->grants, p))
        return false;
    pthread_mutex_lock(&fs->lock);
    uint64_t ino;
    const struct ovl_ent *e = ovl_find(&fs->ovl, p);
    int k = e ? 0 : ovl_lookup(&fs->ovl, p, &ino);
    /* An entry at p itself shadows the host object; whether one is below it depends on
     * the ancestors, so drop to them: */
    if (e) {
        char parent[PATHCONF_MAX];
        snprintf(parent, sizeof parent, "%s", p);
        char *s = strrchr(parent, '/');
        if (s && s != parent) {
            *s = 0;
            const struct ovl_ent *pe = ovl_find(&fs->ovl, parent);
            k = pe ? (!pe->ino || pe->opaque ? -1 : 0) : ovl_lookup(&fs->ovl, parent, &ino);
            if (k > 0)
                k = 0;
        } else {
            k = 0;
        }
    }
    pthread_mutex_unlock(&fs->lock);
    if (k < 0)
        return false;
    return lstat(p, st) == 0;
}

static void classify(struct files *fs, struct wres *w)
{
    struct stat st;
    int k = files_ovl_kind(fs, w->canon, &w->ino);
    w->host = host_visible(fs, w->canon, &st);
    w->kind = k == 1 ? W_ODIR : k == 2 ? W_OFILE : k < 0 || !w->host ? W_NONE
              : S_ISDIR(st.st_mode) ? W_HDIR : W_HFILE;
    w->writable = files_writable(fs, w->canon);
}

int files_resolve_w(struct vm *vm, int64_t dirfd, uint64_t uptr, bool follow_last, struct wres *w)
{
    struct files *fs = vm->files;
    char path[PATHCONF_MAX], base[PATHCONF_MAX], parent[PATHCONF_MAX];
    struct path_overlay hook = {ovl_cb, fs};
    memset(w, 0, sizeof *w);
    int r = strncpy_from_user(&vm->gm, path, uptr, sizeof path);
    if (r == -1)
        return -EFAULT;
    if (r == -2)
        return -ENAMETOOLONG;
    if (!path[0])
        return -ENOENT;
    if ((r = files_base_dir(fs, dirfd, path, base)) < 0)
        return r;
    r = path_resolve_ovl(&fs->grants, base, path, follow_last, w->canon, &hook);
    if (r == 0) {
        classify(fs, w);
        return 0;
    }
    if (r != -ENOENT && r != -EACCES)
        return r;
    /* Nothing the program sees there: its parent, and the name in it. */
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') {
        path[--n] = 0;
        w->slash = true;
    }
    char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dir = slash ? (slash == path ? "/" : (*slash = 0, path)) : ".";
    if (!strcmp(name, ".") || !strcmp(name, "..") || !name[0])
        return r;
    if (strlen(name) > 255) /* NAME_MAX */
        return -ENAMETOOLONG;
    int pr = path_resolve_ovl(&fs->grants, base, dir, true, parent, &hook);
    if (pr < 0)
        return pr;
    uint64_t ino;
    int k = files_ovl_kind(fs, parent, &ino);
    struct stat st;
    if (k == 2 || (k == 0 && (stat(parent, &st) < 0 || !S_ISDIR(st.st_mode))))
        return -ENOTDIR;
    int m = snprintf(w->canon, sizeof w->canon, "%s/%s", strcmp(parent, "/") ? parent : "", name);
    if (m < 0 || (size_t)m >= sizeof w->canon)
        return -ENAMETOOLONG;
    classify(fs, w);
    if (r == -EACCES && w->kind != W_NONE)
        return r;
    return 0;
}

/* The host file at canon, read whole (at most limit bytes: else -ENOSPC, the limit). */
static int read_host(struct files *fs, const char *canon, uint64_t max, uint8_t **out,
                     uint64_t *len, uint32_t *mode)
{
    struct gfile *h;
    int r = files_open_canon(canon, G_O_NOFOLLOW, &h) /* a symlink: ELOOP, never followed */;
    if (r < 0)
        return r;
    struct stat st;
    if (fstat(h->hostfd, &st) < 0) {
        r = -errno;
        gfile_put(h);
        return r;
    }
    uint64_t size = (uint64_t)st.st_size;
    *mode = st.st_mode & 07777;
    if (size > max)
        size = max;
    if (size > fs->ovl.limit) {
        gfile_put(h);
        pthread_mutex_lock(&fs->lock);
        fs->ovl.limit_hit = true;
        pthread_mutex_unlock(&fs->lock);
        return -ENOSPC;
    }
    uint8_t *b = malloc(size ? size : 1);
    uint64_t got = 0;
    while (b && got < size) {
        ssize_t n = pread(h->hostfd, b + got, size - got, (off_t)got);
        if (n <= 0)
            break;
        got += (uint64_t)n;
    }
    gfile_put(h);
    if (!b)
        return -ENOMEM;
    *out = b;
    *len = got;
    pthread_mutex_lock(&fs->lock);
    files_remember(fs, canon); /* the replay must find the same bytes */
    pthread_mutex_unlock(&fs->lock);
    return 0;
}

/* Copies host file canon into the overlay (its first max bytes). ino or -errno. */
int64_t files_copy_up(struct files *fs, const char *canon, uint64_t max)
{
    uint8_t *b = NULL;
    uint64_t len = 0;
    uint32_t mode = 0;
    int r = read_host(fs, canon, max, &b, &len, &mode);
    if (r < 0)
        return r;
    pthread_mutex_lock(&fs->lock);
    int64_t ino = ovl_create_with(&fs->ovl, canon, S_IFREG | mode, b, len, files_ovl_now(fs));
    pthread_mutex_unlock(&fs->lock);
    free(b);
    return ino;
}

/* O_TMPFILE: an unnamed file in directory uptr. */
static int tmpfile_open(struct vm *vm, int64_t dirfd, uint64_t uptr, int flags, uint32_t mode,
                        struct gfile **out, char *canon)
{
    struct files *fs = vm->files;
    struct wres *w = malloc(sizeof *w);
    if (!w)
        return -ENOMEM;
    int64_t r = files_resolve_w(vm, dirfd, uptr, true, w);
    if (r == 0 && !w->writable)
        r = 1;
    else if (r == 0 && w->kind == W_NONE)
        r = -ENOENT;
    else if (r == 0 && w->kind != W_ODIR && w->kind != W_HDIR)
        r = -ENOTDIR;
    else if (r == 0 && (flags & 3) == 0)
        r = -EINVAL;
    if (r == 0) {
        pthread_mutex_lock(&fs->lock);
        int64_t ino = ovl_create_unnamed(&fs->ovl, S_IFREG | (mode & 07777 & ~UMASK), files_ovl_now(fs));
        pthread_mutex_unlock(&fs->lock);
        if (ino < 0)
            r = ino;
        else {
            memcpy(canon, w->canon, strlen(w->canon) + 1);
            r = files_ovl_gfile(fs, w->canon, (uint64_t)ino, false, out);
        }
    } else if (r == -EACCES) {
        r = 1;
    }
    free(w);
    return (int)files_ovl_checked(vm, r);
}

int files_ovl_open(struct vm *vm, int64_t dirfd, uint64_t uptr, int flags, uint32_t mode,
                   struct gfile **out, char *canon)
{
    if ((flags & 020000000) == 020000000) /* O_TMPFILE (with O_DIRECTORY) */
        return tmpfile_open(vm, dirfd, uptr, flags, mode, out, canon);
    struct files *fs = vm->files;
    struct wres *w = malloc(sizeof *w);
    if (!w)
        return -ENOMEM;
    int acc = flags & 3;
    bool wr = acc != 0 || (flags & G_O_TRUNC);
    int64_t r = files_resolve_w(vm, dirfd, uptr, !(flags & G_O_NOFOLLOW), w);
    if (r < 0 || !w->writable)
        goto out_default;
    if (acc == 3) {
        r = -EINVAL;
        goto out;
    }
    if (w->kind != W_NONE && (flags & (G_O_CREAT | G_O_EXCL)) == (G_O_CREAT | G_O_EXCL)) {
        r = -EEXIST;
        goto out;
    }
    switch (w->kind) {
    case W_NONE:
        if (!(flags & G_O_CREAT)) {
            r = -ENOENT;
            goto out;
        }
        if (w->slash || (flags & G_O_DIRECTORY)) {
            r = -EISDIR;
            goto out;
        }
        pthread_mutex_lock(&fs->lock);
        r = ovl_create(&fs->ovl, w->canon, S_IFREG | (mode & 07777 & ~UMASK), false, files_ovl_now(fs));
        pthread_mutex_unlock(&fs->lock);
        if (r < 0)
            goto out;
        w->ino = (uint64_t)r;
        break;
    case W_ODIR:
        if (wr) {
            r = -EISDIR;
            goto out;
        }
        r = files_ovl_gfile(fs, w->canon, w->ino, true, out);
        goto out_canon;
    case W_OFILE:
        if (flags & G_O_DIRECTORY) {
            r = -ENOTDIR;
            goto out;
        }
        if (flags & G_O_TRUNC) {
            pthread_mutex_lock(&fs->lock);
            r = ovl_truncate(&fs->ovl, w->ino, 0, files_ovl_now(fs));
            pthread_mutex_unlock(&fs->lock);
            if (r < 0)
                goto out;
        }
        break;
    case W_HDIR:
        r = wr ? -EISDIR : 1;
        goto out;
    case W_HFILE:
        if (!wr) {
            r = 1; /* read from the host, as before */
            goto out;
        }
        r = files_copy_up(fs, w->canon, (flags & G_O_TRUNC) ? 0 : UINT64_MAX);
        if (r < 0)
            goto out;
        w->ino = (uint64_t)r;
        break;
    }
    r = files_ovl_gfile(fs, w->canon, w->ino, false, out);
out_canon:
    memcpy(canon, w->canon, strlen(w->canon) + 1);
    goto out;
out_default:
    r = r == -EACCES || (r == 0 && !w->writable) ? 1 : r;
out:
    free(w);
    return (int)files_ovl_checked(vm, r);
}
