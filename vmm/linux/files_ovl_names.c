/* The private writable layer (files_ovl.c): the calls that change names and sizes below
 * the cwd, /tmp and the grants: unlink, rmdir, mkdir, rename, truncate, ftruncate,
 * fallocate, chmod and times. */
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
    int64_t r = files_resolve_w(vm, dirfd, uptr, false, &w);
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
    return files_ovl_checked(vm, r);
}

static int64_t do_mkdir(struct vm *vm, int64_t dirfd, uint64_t uptr, uint32_t mode, bool *handled)
{
    struct files *fs = vm->files;
    struct wres w;
    int64_t r = files_resolve_w(vm, dirfd, uptr, false, &w);
    if (r < 0 || !w.writable) {
        *handled = r < 0 && r != -EACCES;
        return r == 0 ? -EROFS : r;
    }
    if (w.kind != W_NONE)
        return -EEXIST;
    pthread_mutex_lock(&fs->lock);
    r = ovl_create(&fs->ovl, w.canon, S_IFDIR | (mode & 07777 & ~UMASK), true, files_ovl_now(fs));
    pthread_mutex_unlock(&fs->lock);
    return files_ovl_checked(vm, r < 0 ? r : 0);
}

static int64_t do_rename(struct vm *vm, int64_t ofd, uint64_t oldp, int64_t nfd, uint64_t newp,
                         uint64_t flags, bool *handled)
{
    struct files *fs = vm->files;
    struct wres *o = malloc(2 * sizeof *o);
    if (!o)
        return -ENOMEM;
    struct wres *n = o + 1;
    int64_t r = files_resolve_w(vm, ofd, oldp, false, o);
    if (r == 0)
        r = files_resolve_w(vm, nfd, newp, false, n);
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
    else if (files_under(n->canon, o->canon))
        r = -EINVAL;
    else if (o->kind == W_HDIR && !dir_empty(fs, o))
        r = -EXDEV; /* a host directory with things in it: not copied (cp -r copes) */
    else {
        if (o->kind == W_HFILE)
            r = files_copy_up(fs, o->canon, UINT64_MAX);
        else if (o->kind == W_HDIR) {
            pthread_mutex_lock(&fs->lock);
            r = ovl_create(&fs->ovl, o->canon, S_IFDIR | 0755, true, files_ovl_now(fs));
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
    return files_ovl_checked(vm, r < 0 ? r : 0);
}

static int64_t do_truncate(struct vm *vm, uint64_t uptr, int64_t len, bool *handled)
{
    struct files *fs = vm->files;
    struct wres w;
    int64_t r = files_resolve_w(vm, -100, uptr, true, &w);
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
        r = files_copy_up(fs, w.canon, (uint64_t)len);
        if (r < 0)
            return files_ovl_checked(vm, r);
        w.ino = (uint64_t)r;
    }
    pthread_mutex_lock(&fs->lock);
    r = ovl_truncate(&fs->ovl, w.ino, (uint64_t)len, files_ovl_now(fs));
    pthread_mutex_unlock(&fs->lock);
    return files_ovl_checked(vm, r);
}

/* chmod, chown, utimes of a path in the writable area: the overlay's own files change
 * (mode, time); a host file's stay as they are (accepted: nothing to copy for them). */
static int64_t do_attr(struct vm *vm, int64_t dirfd, uint64_t uptr, bool follow, uint32_t mode,
                       bool *handled)
{
    struct files *fs = vm->files;
    struct wres w;
    int64_t r = files_resolve_w(vm, dirfd, uptr, follow, &w);
    if (r < 0 || !w.writable) {
        *handled = r < 0 && r != -EACCES;
        return r;
    }
    if (w.kind == W_NONE)
        return -ENOENT;
    if (w.kind == W_OFILE || w.kind == W_ODIR) {
        pthread_mutex_lock(&fs->lock);
        ovl_touch(&fs->ovl, w.ino, mode, files_ovl_now(fs));
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
                ovl_touch(&fs->ovl, ino, 0, files_ovl_now(fs));
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
                : ovl_truncate(&fs->ovl, ino, a[1], files_ovl_now(fs));
        else if (nr == SYS_fallocate) {
            const struct ovl_inode *in = ovl_inode(&fs->ovl, ino);
            if (acc == 0)
                r = -EBADF;
            else if (a[1] & ~1ULL) /* only mode 0 and FALLOC_FL_KEEP_SIZE */
                r = -EOPNOTSUPP;
            else if ((int64_t)a[2] < 0 || (int64_t)a[3] <= 0 || a[2] + a[3] < a[2])
                r = -EINVAL;
            else if (in && !(a[1] & 1) && a[2] + a[3] > in->size)
                r = ovl_truncate(&fs->ovl, ino, a[2] + a[3], files_ovl_now(fs));
        } else if (nr == SYS_fchmod) {
            ovl_touch(&fs->ovl, ino, (uint32_t)a[1] | S_IFREG, files_ovl_now(fs));
        }
        pthread_mutex_unlock(&fs->lock);
        return files_ovl_checked(vm, r);
    }
    default:
        *handled = false;
        return -ENOSYS;
    }
}
