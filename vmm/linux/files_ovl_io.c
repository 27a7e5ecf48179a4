/* The private writable layer (files_ovl.c): reads, writes, stats, mappings, collection of
 * unlinked files, and the written files copied out (--out-dir) or listed (dumps). */
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
        int64_t w = ovl_write(&fs->ovl, ino, off + done, tmp, n, files_ovl_now(fs));
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
    return files_ovl_checked(vm, r);
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
