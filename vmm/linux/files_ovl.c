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

#define G_O_CREAT 0100
#define G_O_EXCL 0200
#define G_O_TRUNC 01000
#define G_O_APPEND 02000
#define G_O_DIRECTORY 0200000
#define G_O_NOFOLLOW 0400000
#define G_AT_REMOVEDIR 0x200
#define G_AT_SYMLINK_NOFOLLOW 0x100
#define IO_CHUNK 65536
#define MAX_IO 0x7FFFF000ULL
#define MAX_IOV 1024
#define OVL_DEV 0x6a78 /* st_dev of the written files ("jx") */
#define UMASK 022

static uint64_t now_ns(struct files *fs)
{
    return VTIME_EPOCH_NS + (fs->vm ? vm_vtime(fs->vm) : 0);
}

static bool under(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    return n && !strncmp(p, dir, n) && (p[n] == 0 || p[n] == '/' || n == 1);
}

bool files_writable(const struct files *fs, const char *p)
{
    return grants_allow(&fs->grants, p) || under(p, "/tmp") || (fs->cwd0[0] && under(p, fs->cwd0));
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

static int64_t checked(struct vm *vm, int64_t r)
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

enum { W_NONE, W_ODIR, W_OFILE, W_HDIR, W_HFILE };

struct wres {
    char canon[PATHCONF_MAX];
    int kind;
    uint64_t ino;     /* W_O*: the inode */
    bool host;        /* a host object the program can see is at canon */
    bool slash;       /* the path ended in '/' */
    bool writable;
};

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

static int resolve_w(struct vm *vm, int64_t dirfd, uint64_t uptr, bool follow_last, struct wres *w)
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
static int64_t copy_up(struct files *fs, const char *canon, uint64_t max)
{
    uint8_t *b = NULL;
    uint64_t len = 0;
    uint32_t mode = 0;
    int r = read_host(fs, canon, max, &b, &len, &mode);
    if (r < 0)
        return r;
    pthread_mutex_lock(&fs->lock);
    int64_t ino = ovl_create_with(&fs->ovl, canon, S_IFREG | mode, b, len, now_ns(fs));
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
    int64_t r = resolve_w(vm, dirfd, uptr, true, w);
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
        int64_t ino = ovl_create_unnamed(&fs->ovl, S_IFREG | (mode & 07777 & ~UMASK), now_ns(fs));
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
    return (int)checked(vm, r);
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
    int64_t r = resolve_w(vm, dirfd, uptr, !(flags & G_O_NOFOLLOW), w);
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
        r = ovl_create(&fs->ovl, w->canon, S_IFREG | (mode & 07777 & ~UMASK), false, now_ns(fs));
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
            r = ovl_truncate(&fs->ovl, w->ino, 0, now_ns(fs));
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
        r = copy_up(fs, w->canon, (flags & G_O_TRUNC) ? 0 : UINT64_MAX);
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
    return (int)checked(vm, r);
}

/* ---- reads and writes ------------------------------------------------------------ */

uint64_t files_ovl_size(struct files *fs, uint64_t ino)
{
    pthread_mutex_lock(&fs->lock);
    const struct ovl_inode *in = ovl_inode(&fs->ovl, ino);
    uint64_t s = in ? in->size : 0;
    pthread_mutex_unlock(&fs->lock);
    return s;
}

int64_t files_ovl_read(struct vm *vm, struct gfile *f, uint64_t buf, uint64_t len, uint64_t off)
{
    struct files *fs = vm->files;
    if (len > MAX_IO)
        len = MAX_IO;
    pthread_mutex_lock(&fs->lock);
    const struct ovl_inode *in = ovl_inode(&fs->ovl, f->ino);
    int64_t r;
    if (!in)
        r = -EIO;
    else if (S_ISDIR(in->mode))
        r = -EISDIR;
    else if (off >= in->size)
        r = 0;
    else {
        uint64_t n = in->size - off < len ? in->size - off : len;
        r = copy_to_user(&vm->gm, buf, in->data->bytes + off, n) ? (int64_t)n : -EFAULT;
    }
    pthread_mutex_unlock(&fs->lock);
    return r;
}

/* Writes guest [buf, buf+len) at off into inode ino. Caller holds fs->lock. */
static int64_t write_at(struct vm *vm, uint64_t ino, uint64_t buf, uint64_t len, uint64_t off,
                        uint8_t *tmp)
{
    struct files *fs = vm->files;
    uint64_t done = 0;
    if (len > MAX_IO)
        len = MAX_IO;
    while (done < len) {
        size_t n = len - done > IO_CHUNK ? IO_CHUNK : (size_t)(len - done);
        if (!copy_from_user(&vm->gm, tmp, buf + done, n))
            return done ? (int64_t)done : -EFAULT;
        int64_t w = ovl_write(&fs->ovl, ino, off + done, tmp, n, now_ns(fs));
        if (w < 0)
            return done ? (int64_t)done : w;
        done += (uint64_t)w;
    }
    return (int64_t)done;
}

int64_t files_ovl_write_call(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled)
{
    struct files *fs = vm->files;
    int64_t fd = (int64_t)(int)a[0];
    *handled = false;
    if (fd < 3 || fd >= FILES_MAX)
        return -EBADF;
    bool positional = nr == SYS_pwrite64 || nr == SYS_pwritev;
    if (positional && (int64_t)a[3] < 0)
        return fs->fd[fd].f ? (*handled = true, -EINVAL) : -EBADF;
    uint8_t *tmp = malloc(IO_CHUNK);
    if (!tmp)
        return (*handled = true, -ENOMEM);
    pthread_mutex_lock(&fs->lock);
    struct fdent e = fs->fd[fd];
    int64_t r = 0;
    if (!e.f || e.f->pipe) {
        pthread_mutex_unlock(&fs->lock);
        free(tmp);
        return -EBADF; /* not ours: the caller's answer */
    }
    *handled = true;
    if (!e.f->ino || e.acc == 0 || e.f->dir) {
        r = e.f->dir ? -EISDIR : -EBADF;
        goto out;
    }
    const struct ovl_inode *in = ovl_inode(&fs->ovl, e.f->ino);
    if (!in) {
        r = -EIO;
        goto out;
    }
    uint64_t off = positional ? a[3] : e.append ? in->size : e.off;
    if (nr == SYS_write || nr == SYS_pwrite64) {
        r = write_at(vm, e.f->ino, a[1], a[2], off, tmp);
    } else if (a[2] > MAX_IOV) {
        r = -EINVAL;
    } else {
        for (uint64_t i = 0; i < a[2]; i++) {
            uint64_t v[2];
            if (!copy_from_user(&vm->gm, v, a[1] + i * 16, 16)) {
                r = r ? r : -EFAULT;
                break;
            }
            if (v[1] > MAX_IO) {
                r = r ? r : -EINVAL;
                break;
            }
            int64_t w = v[1] ? write_at(vm, e.f->ino, v[0], v[1], off + (uint64_t)r, tmp) : 0;
            if (w < 0) {
                r = r ? r : w;
                break;
            }
            r += w;
            if ((uint64_t)w < v[1])
                break;
        }
    }
    if (r > 0 && !positional && fs->fd[fd].f == e.f)
        fs->fd[fd].off = off + (uint64_t)r;
out:
    pthread_mutex_unlock(&fs->lock);
    free(tmp);
    return checked(vm, r);
}

/* ---- stat ------------------------------------------------------------------------- */

int64_t files_ovl_stat(struct vm *vm, uint64_t ino, uint64_t buf)
{
    struct files *fs = vm->files;
    struct stat st = {0};
    pthread_mutex_lock(&fs->lock);
    const struct ovl_inode *in = ovl_inode(&fs->ovl, ino);
    if (in) {
        st.st_dev = OVL_DEV;
        st.st_ino = in->ino;
        st.st_nlink = S_ISDIR(in->mode) ? 2 : in->nlink;
        st.st_mode = in->mode;
        st.st_size = S_ISDIR(in->mode) ? 4096 : (off_t)in->size;
        st.st_blksize = 4096;
        st.st_blocks = (blkcnt_t)((st.st_size + 4095) / 4096 * 8);
        st.st_atim.tv_sec = st.st_mtim.tv_sec = st.st_ctim.tv_sec = (time_t)(in->mtime / 1000000000ULL);
        st.st_atim.tv_nsec = st.st_mtim.tv_nsec = st.st_ctim.tv_nsec = (long)(in->mtime % 1000000000ULL);
    }
    pthread_mutex_unlock(&fs->lock);
    if (!in)
        return -ENOENT;
    return copy_to_user(&vm->gm, buf, &st, sizeof st) ? 0 : -EFAULT;
}

int64_t files_ovl_statx(struct vm *vm, uint64_t ino, uint64_t buf)
{
    struct files *fs = vm->files;
    struct statx sx;
    _Static_assert(sizeof sx == 256, "struct statx is 256 bytes");
    memset(&sx, 0, sizeof sx);
    pthread_mutex_lock(&fs->lock);
    const struct ovl_inode *in = ovl_inode(&fs->ovl, ino);
    if (in) {
        sx.stx_mask = STATX_BASIC_STATS;
        sx.stx_blksize = 4096;
        sx.stx_nlink = S_ISDIR(in->mode) ? 2 : in->nlink;
        sx.stx_mode = (uint16_t)in->mode;
        sx.stx_ino = in->ino;
        sx.stx_size = S_ISDIR(in->mode) ? 4096 : in->size;
        sx.stx_blocks = (sx.stx_size + 4095) / 4096 * 8;
        struct statx_timestamp t = {(int64_t)(in->mtime / 1000000000ULL),
                                    (uint32_t)(in->mtime % 1000000000ULL), 0};
        sx.stx_atime = sx.stx_btime = sx.stx_ctime = sx.stx_mtime = t;
        sx.stx_dev_major = OVL_DEV >> 8;
        sx.stx_dev_minor = OVL_DEV & 0xff;
    }
    pthread_mutex_unlock(&fs->lock);
    if (!in)
        return -ENOENT;
    return copy_to_user(&vm->gm, buf, &sx, sizeof sx) ? 0 : -EFAULT;
}

int files_ovl_memfd(struct files *fs, uint64_t ino)
{
    int fd = (int)syscall(SYS_memfd_create, "jinx-file", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    pthread_mutex_lock(&fs->lock);
    const struct ovl_inode *in = ovl_inode(&fs->ovl, ino);
    int r = in ? 0 : -EBADF;
    uint64_t done = 0;
    while (r == 0 && in && done < in->size) {
        ssize_t n = pwrite(fd, in->data->bytes + done, in->size - done, (off_t)done);
        if (n <= 0)
            r = -EIO;
        else
            done += (uint64_t)n;
    }
    pthread_mutex_unlock(&fs->lock);
    if (r < 0) {
        close(fd);
        return r;
    }
    return fd;
}

static bool fd_names(void *ctx, uint64_t ino)
{
    struct files *fs = ctx;
    for (int i = 3; i < fs->hi; i++)
        if (fs->fd[i].f && fs->fd[i].f->ino == ino)
            return true;
    return false;
}

void files_ovl_gc(struct files *fs)
{
    ovl_gc(&fs->ovl, fd_names, fs);
}

/* ---- names ------------------------------------------------------------------------ */

/* Is directory w (an overlay or host one) empty as the program sees it? */
static bool dir_empty(struct files *fs, const struct wres *w)
{
    pthread_mutex_lock(&fs->lock);
    bool ovl_live = ovl_has_children(&fs->ovl, w->canon);
    pthread_mutex_unlock(&fs->lock);
    if (ovl_live)
        return false;
    if (!w->host)
        return true;
    struct gfile *h;
    if (files_open_canon(w->canon, G_O_DIRECTORY, &h) < 0)
        return true;
    h->path = h->path ? h->path : strdup(w->canon);
    int r = files_merge_dents(fs, h);
    bool empty = true;
    for (size_t p = 0; r == 0 && p < h->dents_len;) {
        uint16_t reclen;
        memcpy(&reclen, h->dents + p + 16, 2);
        if (reclen < 20 || p + reclen > h->dents_len)
            break;
        const char *name = (const char *)h->dents + p + 19;
        if (strcmp(name, ".") && strcmp(name, ".."))
            empty = false;
        p += reclen;
    }
    gfile_put(h);
    return empty;
}

static int64_t do_unlink(struct vm *vm, int64_t dirfd, uint64_t uptr, bool rmdir, bool *handled)
{
    struct files *fs = vm->files;
    struct wres w;
    int64_t r = resolve_w(vm, dirfd, uptr, false, &w);
    if (r < 0 || !w.writable) {
        *handled = r == -ENOENT || r == -ENOTDIR || r == -ENAMETOOLONG || r == -EFAULT ||
                   r == -ELOOP;
        return r;
    }
    bool dir = w.kind == W_ODIR || w.kind == W_HDIR;
    if (w.kind == W_NONE)
        return -ENOENT;
    if (!rmdir && dir)
        return -EISDIR;
    if (rmdir && !dir)
        return -ENOTDIR;
    if (rmdir && !dir_empty(fs, &w))
        return -ENOTEMPTY;
    pthread_mutex_lock(&fs->lock);
    r = ovl_remove(&fs->ovl, w.canon, w.host);
    files_ovl_gc(fs);
    pthread_mutex_unlock(&fs->lock);
    return checked(vm, r);
}

static int64_t do_mkdir(struct vm *vm, int64_t dirfd, uint64_t uptr, uint32_t mode, bool *handled)
{
    struct files *fs = vm->files;
    struct wres w;
    int64_t r = resolve_w(vm, dirfd, uptr, false, &w);
    if (r < 0 || !w.writable) {
        *handled = r < 0 && r != -EACCES;
        return r == 0 ? -EROFS : r;
    }
    if (w.kind != W_NONE)
        return -EEXIST;
    pthread_mutex_lock(&fs->lock);
    r = ovl_create(&fs->ovl, w.canon, S_IFDIR | (mode & 07777 & ~UMASK), true, now_ns(fs));
    pthread_mutex_unlock(&fs->lock);
    return checked(vm, r < 0 ? r : 0);
}

static int64_t do_rename(struct vm *vm, int64_t ofd, uint64_t oldp, int64_t nfd, uint64_t newp,
                         uint64_t flags, bool *handled)
{
    struct files *fs = vm->files;
    struct wres *o = malloc(2 * sizeof *o), *n = o + 1;
    if (!o)
        return -ENOMEM;
    int64_t r = resolve_w(vm, ofd, oldp, false, o);
    if (r == 0)
        r = resolve_w(vm, nfd, newp, false, n);
    if (r < 0 || !o->writable || !n->writable) {
        *handled = r < 0 && r != -EACCES;
        free(o);
        return r;
    }
    bool odir = o->kind == W_ODIR || o->kind == W_HDIR, ndir = n->kind == W_ODIR || n->kind == W_HDIR;
    if (flags & ~1ULL)
        r = -EINVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT */
    else if (o->kind == W_NONE)
        r = -ENOENT;
    else if (!strcmp(o->canon, n->canon))
        r = 0;
    else if ((flags & 1) && n->kind != W_NONE)
        r = -EEXIST;
    else if (n->kind != W_NONE && odir && !ndir)
        r = -ENOTDIR;
    else if (n->kind != W_NONE && !odir && ndir)
        r = -EISDIR;
    else if (ndir && !dir_empty(fs, n))
        r = -ENOTEMPTY;
    else if (under(n->canon, o->canon))
        r = -EINVAL;
    else if (o->kind == W_HDIR && !dir_empty(fs, o))
        r = -EXDEV; /* a host directory with things in it: not copied (cp -r copes) */
    else {
        if (o->kind == W_HFILE)
            r = copy_up(fs, o->canon, UINT64_MAX);
        else if (o->kind == W_HDIR) {
            pthread_mutex_lock(&fs->lock);
            r = ovl_create(&fs->ovl, o->canon, S_IFDIR | 0755, true, now_ns(fs));
            pthread_mutex_unlock(&fs->lock);
        }
        if (r >= 0) {
            pthread_mutex_lock(&fs->lock);
            r = ovl_rename(&fs->ovl, o->canon, n->canon, o->host);
            if (r == 0 && n->host && ndir) { /* the host directory it replaced stays hidden */
                struct ovl_ent *e = ovl_find(&fs->ovl, n->canon);
                if (e)
                    e->opaque = true;
            }
            files_ovl_gc(fs);
            pthread_mutex_unlock(&fs->lock);
        }
    }
    free(o);
    return checked(vm, r < 0 ? r : 0);
}

static int64_t do_truncate(struct vm *vm, uint64_t uptr, int64_t len, bool *handled)
{
    struct files *fs = vm->files;
    struct wres w;
    int64_t r = resolve_w(vm, -100, uptr, true, &w);
    if (r < 0 || !w.writable) {
        *handled = r < 0 && r != -EACCES;
        return r;
    }
    if (len < 0)
        return -EINVAL;
    if (w.kind == W_NONE)
        return -ENOENT;
    if (w.kind == W_ODIR || w.kind == W_HDIR)
        return -EISDIR;
    if (w.kind == W_HFILE) {
        r = copy_up(fs, w.canon, (uint64_t)len);
        if (r < 0)
            return checked(vm, r);
        w.ino = (uint64_t)r;
    }
    pthread_mutex_lock(&fs->lock);
    r = ovl_truncate(&fs->ovl, w.ino, (uint64_t)len, now_ns(fs));
    pthread_mutex_unlock(&fs->lock);
    return checked(vm, r);
}

/* chmod, chown, utimes of a path in the writable area: the overlay's own files change
 * (mode, time); a host file's stay as they are (accepted: nothing to copy for them). */
static int64_t do_attr(struct vm *vm, int64_t dirfd, uint64_t uptr, bool follow, uint32_t mode,
                       bool *handled)
{
    struct files *fs = vm->files;
    struct wres w;
    int64_t r = resolve_w(vm, dirfd, uptr, follow, &w);
    if (r < 0 || !w.writable) {
        *handled = r < 0 && r != -EACCES;
        return r;
    }
    if (w.kind == W_NONE)
        return -ENOENT;
    if (w.kind == W_OFILE || w.kind == W_ODIR) {
        pthread_mutex_lock(&fs->lock);
        ovl_touch(&fs->ovl, w.ino, mode, now_ns(fs));
        pthread_mutex_unlock(&fs->lock);
    }
    return 0;
}

/* A descriptor's overlay inode (0: not one), and its access mode. */
static uint64_t fd_ino(struct files *fs, int64_t fd, int *acc, bool *open)
{
    *open = false;
    if (fd < 3 || fd >= FILES_MAX)
        return 0;
    pthread_mutex_lock(&fs->lock);
    struct gfile *f = fs->fd[fd].f;
    *open = f != NULL;
    uint64_t ino = f && !f->pipe ? f->ino : 0;
    *acc = fs->fd[fd].acc;
    pthread_mutex_unlock(&fs->lock);
    return ino;
}

int64_t files_ovl_change(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled)
{
    struct files *fs = vm->files;
    int64_t fd = (int64_t)(int)a[0];
    *handled = true;
    int acc;
    bool open;
    switch (nr) {
    case SYS_unlink: return do_unlink(vm, -100, a[0], false, handled);
    case SYS_rmdir: return do_unlink(vm, -100, a[0], true, handled);
    case SYS_unlinkat:
        if (a[2] & ~(uint64_t)G_AT_REMOVEDIR)
            return -EINVAL;
        return do_unlink(vm, fd, a[1], a[2] & G_AT_REMOVEDIR, handled);
    case SYS_mkdir: return do_mkdir(vm, -100, a[0], (uint32_t)a[1], handled);
    case SYS_mkdirat: return do_mkdir(vm, fd, a[1], (uint32_t)a[2], handled);
    case SYS_rename: return do_rename(vm, -100, a[0], -100, a[1], 0, handled);
    case SYS_renameat: return do_rename(vm, fd, a[1], (int64_t)(int)a[2], a[3], 0, handled);
    case SYS_renameat2: return do_rename(vm, fd, a[1], (int64_t)(int)a[2], a[3], a[4], handled);
    case SYS_truncate: return do_truncate(vm, a[0], (int64_t)a[1], handled);
    case SYS_chmod: return do_attr(vm, -100, a[0], true, (uint32_t)a[1] | S_IFREG, handled);
    case SYS_fchmodat: return do_attr(vm, fd, a[1], true, (uint32_t)a[2] | S_IFREG, handled);
    case SYS_chown: case SYS_lchown: case SYS_utime: case SYS_utimes:
        return do_attr(vm, -100, a[0], nr != SYS_lchown, 0, handled);
    case SYS_fchownat: case SYS_futimesat:
        return do_attr(vm, fd, a[1], true, 0, handled);
    case SYS_utimensat:
        if (!a[1]) {
            uint64_t ino = fd_ino(fs, fd, &acc, &open);
            if (!open)
                return -EBADF;
            if (ino) {
                pthread_mutex_lock(&fs->lock);
                ovl_touch(&fs->ovl, ino, 0, now_ns(fs));
                pthread_mutex_unlock(&fs->lock);
                return 0;
            }
            *handled = false;
            return -EROFS;
        }
        return do_attr(vm, fd, a[1], !(a[3] & G_AT_SYMLINK_NOFOLLOW), 0, handled);
    case SYS_ftruncate: case SYS_fallocate: case SYS_fchmod: case SYS_fchown: {
        uint64_t ino = fd_ino(fs, fd, &acc, &open);
        if (!ino) {
            *handled = false;
            return -EBADF;
        }
        int64_t r = 0;
        pthread_mutex_lock(&fs->lock);
        if (nr == SYS_ftruncate)
            r = acc == 0 ? -EINVAL : (int64_t)a[1] < 0 ? -EINVAL
                : ovl_truncate(&fs->ovl, ino, a[1], now_ns(fs));
        else if (nr == SYS_fallocate) {
            const struct ovl_inode *in = ovl_inode(&fs->ovl, ino);
            if (acc == 0)
                r = -EBADF;
            else if (a[1] & ~1ULL) /* only mode 0 and FALLOC_FL_KEEP_SIZE */
                r = -EOPNOTSUPP;
            else if ((int64_t)a[2] < 0 || (int64_t)a[3] <= 0 || a[2] + a[3] < a[2])
                r = -EINVAL;
            else if (in && !(a[1] & 1) && a[2] + a[3] > in->size)
                r = ovl_truncate(&fs->ovl, ino, a[2] + a[3], now_ns(fs));
        } else if (nr == SYS_fchmod) {
            ovl_touch(&fs->ovl, ino, (uint32_t)a[1] | S_IFREG, now_ns(fs));
        }
        pthread_mutex_unlock(&fs->lock);
        return checked(vm, r);
    }
    default:
        *handled = false;
        return -ENOSYS;
    }
}

/* ---- the written files, out ------------------------------------------------------- */

void files_each_written(struct files *fs, void (*fn)(void *ctx, const char *path,
                        const uint8_t *bytes, uint64_t size), void *ctx)
{
    pthread_mutex_lock(&fs->lock);
    for (size_t i = 0; i < fs->ovl.nents; i++) {
        const struct ovl_ent *e = &fs->ovl.ents[i];
        const struct ovl_inode *in = ovl_inode(&fs->ovl, e->ino);
        if (in && S_ISREG(in->mode))
            fn(ctx, e->path, in->data ? in->data->bytes : NULL, in->size);
    }
    pthread_mutex_unlock(&fs->lock);
}

/* Opens (making directories) dir/<p> for writing, one component at a time, never
 * following a symlink. fd or -errno. */
static int open_out(int root, const char *p, bool is_dir)
{
    char buf[PATHCONF_MAX];
    snprintf(buf, sizeof buf, "%s", p);
    int cur = dup(root);
    char *save = NULL;
    for (char *c = strtok_r(buf, "/", &save); c && cur >= 0;) {
        char *next = strtok_r(NULL, "/", &save);
        if (!strcmp(c, "..") || !strcmp(c, ".")) {
            close(cur);
            return -EINVAL;
        }
        int nfd;
        if (next || is_dir) {
            if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST) {
                int e = errno;
                close(cur);
                return -e;
            }
            nfd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        } else {
            nfd = openat(cur, c, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        }
        int e = errno;
        close(cur);
        if (nfd < 0)
            return -e;
        cur = nfd;
        c = next;
    }
    return cur;
}

int files_copy_out(struct files *fs, const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return jx_fail(err, errlen, "--out-dir %s: %s", dir, strerror(errno));
    int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return jx_fail(err, errlen, "--out-dir %s: %s", dir, strerror(errno));
    int rc = 0, nfiles = 0;
    uint64_t bytes = 0;
    pthread_mutex_lock(&fs->lock);
    for (size_t i = 0; i < fs->ovl.nents && rc == 0; i++) {
        const struct ovl_ent *e = &fs->ovl.ents[i];
        const struct ovl_inode *in = ovl_inode(&fs->ovl, e->ino);
        if (!in || (!S_ISREG(in->mode) && !S_ISDIR(in->mode)))
            continue;
        int fd = open_out(root, e->path, S_ISDIR(in->mode));
        if (fd < 0) {
            rc = jx_fail(err, errlen, "--out-dir %s: cannot write %s there: %s", dir, e->path,
                         strerror(-fd));
            break;
        }
        for (uint64_t done = 0; S_ISREG(in->mode) && done < in->size;) {
            ssize_t n = write(fd, in->data->bytes + done, in->size - done);
            if (n <= 0) {
                rc = jx_fail(err, errlen, "--out-dir %s: writing %s: %s", dir, e->path,
                             strerror(errno));
                break;
            }
            done += (uint64_t)n;
        }
        if (S_ISREG(in->mode)) {
            nfiles++;
            bytes += in->size;
        }
        close(fd);
    }
    pthread_mutex_unlock(&fs->lock);
    close(root);
    if (rc == 0)
        jx_err("jinx: %d file%s the program wrote (%llu bytes) copied to %s", nfiles,
               nfiles == 1 ? "" : "s", (unsigned long long)bytes, dir);
    return rc;
}
