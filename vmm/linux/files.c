/* The guest's read-only file layer (files.h): descriptors, opens, reads, stats. */
#include "linux/files.h"
#include "linux/files_int.h"
#include "linux/procself.h"
#include "linux/procsys.h"
#include "linux/pipes.h"
#include "linux/futex.h"
#include "kvm/vm.h"
#include "lib/util.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AT_FDCWD_G (-100)
#define G_O_ACCMODE 3
#define G_O_CLOEXEC 02000000
#define G_O_PATH 010000000
#define G_O_TMPFILE 020000000

_Static_assert(sizeof(struct stat) == 144, "struct stat is the guest's x86-64 layout");

struct gfile *gfile_get(struct gfile *f)
{
    if (f)
        atomic_fetch_add(&f->refs, 1);
    return f;
}

void gfile_put(struct gfile *f)
{
    if (f && atomic_fetch_sub(&f->refs, 1) == 1) {
        if (f->hostfd >= 0)
            close(f->hostfd);
        gpipe_put(f->pipe);
        gpipe_put(f->tx);
        free(f->dents);
        free(f->path);
        free(f);
    }
}

int files_init(struct files *fs, const char *exe, uint64_t file_mem, char *err, size_t errlen)
{
    memset(fs, 0, sizeof *fs);
    pthread_mutex_init(&fs->lock, NULL);
    ovl_init(&fs->ovl, file_mem ? file_mem : OVL_DEFAULT_LIMIT);
    if (!getcwd(fs->cwd, sizeof fs->cwd))
        return jx_fail(err, errlen, "cannot read the current directory: %s", strerror(errno));
    memcpy(fs->cwd0, fs->cwd, sizeof fs->cwd0);
    char *rp = realpath(exe, NULL);
    snprintf(fs->exe, sizeof fs->exe, "%s", rp ? rp : exe);
    free(rp);
    return 0;
}

void files_destroy(struct files *fs)
{
    for (int i = 0; i < FILES_MAX; i++)
        gfile_put(fs->fd[i].f);
    for (size_t i = 0; i < fs->nopened; i++)
        free(fs->opened[i].path);
    free(fs->opened);
    ovl_free(&fs->ovl);
    grants_free(&fs->grants);
    pthread_mutex_destroy(&fs->lock);
    memset(fs->fd, 0, sizeof fs->fd);
}

/* The host file at canonical path p, opened without following any symlink (one swapped
 * in after resolution fails the open instead of escaping). O_PATH: no I/O, any type. */
int files_open_path(const char *p, bool follow_last)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW),
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, p, &how, sizeof how);
    return fd < 0 ? -errno : fd;
}

/* /tmp, and the cwd when no grant shows it: directories of the program's own, not
 * opaque: a host object below them stays what it was (EACCES outside the grants, a jinx
 * limit noted when opened), a new name is the program's. Their ancestors hidden by one of
 * them are made too. */

static int seed_dir(struct files *fs, const char *p, uint32_t mode)
{
    if (grants_allow(&fs->grants, p))
        return 0;
    char a[PATHCONF_MAX];
    size_t n = strlen(p);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != 0)
            continue;
        memcpy(a, p, i);
        a[i] = 0;
        uint64_t ino;
        int k = ovl_lookup(&fs->ovl, a, &ino);
        if (k > 0)
            continue;
        if (k == 0 && i < n)
            continue; /* a host directory on the way: traversed, as before */
        int64_t r = ovl_create(&fs->ovl, a, S_IFDIR | (i == n ? mode : 0755), false,
                               VTIME_EPOCH_NS);
        if (r < 0)
            return (int)r;
    }
    return 0;
}

int files_seed(struct files *fs, char *err, size_t errlen)
{
    if (seed_dir(fs, "/tmp", 01777) < 0 || (strcmp(fs->cwd0, "/") && seed_dir(fs, fs->cwd0, 0755) < 0))
        return jx_fail(err, errlen, "out of memory");
    return 0;
}

/* The base directory of a relative guest path: the cwd or directory descriptor dirfd. */
int files_base_dir(struct files *fs, int64_t dirfd, const char *path, char *base)
{
    if (path[0] == '/' || dirfd == AT_FDCWD_G) {
        pthread_mutex_lock(&fs->lock);
        memcpy(base, fs->cwd, strlen(fs->cwd) + 1);
        pthread_mutex_unlock(&fs->lock);
        return 0;
    }
    if (dirfd < 0 || dirfd >= FILES_MAX)
        return -EBADF;
    struct gfile *f = fd_get(fs, dirfd, NULL);
    int r = !f ? -EBADF : !f->dir || f->pipe ? -ENOTDIR : !f->path ? -EBADF : 0;
    if (r == 0)
        memcpy(base, f->path, strnlen(f->path, PATHCONF_MAX - 1) + 1);
    base[PATHCONF_MAX - 1] = 0;
    gfile_put(f);
    return r;
}

static int ovl_hook(void *ctx, const char *p)
{
    uint64_t ino;
    return files_ovl_kind(ctx, p, &ino);
}

/* Reads a guest path and resolves it (dirfd-relative) into canon. 0 or -errno. */
int files_guest_path(struct vm *vm, int64_t dirfd, uint64_t uptr, bool follow_last,
                      char *canon)
{
    char path[PATHCONF_MAX], base[PATHCONF_MAX];
    int r = strncpy_from_user(&vm->gm, path, uptr, sizeof path);
    if (r == -1)
        return -EFAULT;
    if (r == -2)
        return -ENAMETOOLONG;
    if (!strcmp(path, "/proc/self/exe")) { /* the program, as the loader may ask */
        memcpy(canon, vm->files->exe, strlen(vm->files->exe) + 1);
        return grants_allow(&vm->files->grants, canon) ? 0 : -ENOENT;
    }
    int b = files_base_dir(vm->files, dirfd, path, base);
    if (b)
        return b;
    struct path_overlay hook = {ovl_hook, vm->files};
    return path_resolve_ovl(&vm->files->grants, base, path, follow_last, canon, &hook);
}

/* The calls that would create or change something: EROFS inside a grant (or in a granted
 * directory, for a new name), the resolution's error elsewhere. */
int64_t files_write_path(struct vm *vm, int64_t dirfd, uint64_t uptr, bool creates)
{
    char canon[PATHCONF_MAX], path[PATHCONF_MAX], parent[PATHCONF_MAX];
    int r = files_guest_path(vm, dirfd, uptr, false, canon);
    if (r == 0)
        return -EROFS;
    if (r != -ENOENT || !creates)
        return r;
    /* A new name: EROFS when its directory is granted. */
    if (strncpy_from_user(&vm->gm, path, uptr, sizeof path) != 0)
        return r;
    char *slash = strrchr(path, '/');
    const char *dir = slash ? (slash == path ? "/" : (*slash = 0, path)) : ".";
    char base[PATHCONF_MAX];
    if (files_base_dir(vm->files, dirfd, dir, base))
        return r;
    /* A directory outside the grants that exists: Linux would perhaps have created the
     * name there, jinx refuses (EACCES, a jinx limit: files_refuse.c). */
    struct path_overlay hook = {ovl_hook, vm->files};
    int pr = path_resolve_ovl(&vm->files->grants, base, dir, true, parent, &hook);
    return pr == 0 ? -EROFS : pr == -EACCES ? -EACCES : r;
}

void files_remember(struct files *fs, const char *canon)
{
    for (size_t i = 0; i < fs->nopened; i++)
        if (!strcmp(fs->opened[i].path, canon))
            return;
    struct opened_file *n = realloc(fs->opened, (fs->nopened + 1) * sizeof *n);
    if (!n)
        return;
    fs->opened = n;
    n[fs->nopened] = (struct opened_file){.path = strdup(canon)};
    if (n[fs->nopened].path)
        fs->nopened++;
}

/* A directory's entries, read once at open; d_off becomes the next entry's position in
 * this buffer (the guest's getdents64/lseek offset). */
static int load_dents(struct gfile *f)
{
    size_t cap = 32768, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    for (;;) {
        if (cap - len < 4096) {
            if (cap >= FILES_MAX_DIR) {
                free(buf);
                return -ENOMEM;
            }
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return -ENOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        long n = syscall(SYS_getdents64, f->hostfd, buf + len, cap - len);
        if (n < 0) {
            int e = errno;
            free(buf);
            return -e;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    for (size_t p = 0; p < len;) {
        uint16_t reclen;
        memcpy(&reclen, buf + p + 16, 2);
        if (reclen < 20 || p + reclen > len)
            break;
        int64_t next = (int64_t)(p + reclen);
        memcpy(buf + p + 8, &next, 8);
        p += reclen;
    }
    f->dents = buf;
    f->dents_len = len;
    return 0;
}

static int lowest_free(struct files *fs, int from)
{
    for (int i = from < 3 ? 3 : from; i < FILES_MAX; i++)
        if (!fs->fd[i].f)
            return i;
    return -EMFILE;
}

int files_open_canon(const char *canon, int flags, struct gfile **out)
{
    bool wants_write = (flags & G_O_ACCMODE) != 0 || (flags & G_O_TRUNC);
    int r, pfd = files_open_path(canon, !(flags & G_O_NOFOLLOW));
    if (pfd < 0)
        return pfd == -ELOOP || pfd == -EXDEV ? -ELOOP : pfd;
    struct stat st;
    if (fstat(pfd, &st) < 0) {
        int e = errno;
        close(pfd);
        return -e;
    }
    if (S_ISLNK(st.st_mode)) { /* O_NOFOLLOW on a symlink */
        close(pfd);
        return -ELOOP;
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        close(pfd); /* FIFOs, devices, sockets: never opened for I/O */
        return -EACCES;
    }
    if (wants_write) {
        close(pfd);
        return S_ISDIR(st.st_mode) ? -EISDIR : -EROFS;
    }
    if ((flags & G_O_DIRECTORY) && !S_ISDIR(st.st_mode)) {
        close(pfd);
        return -ENOTDIR;
    }
    /* Reopening the O_PATH descriptor reaches the same inode, whatever the path is now. */
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
    int hfd = open(proc, O_RDONLY | O_CLOEXEC | (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
    int e = errno;
    close(pfd);
    if (hfd < 0)
        return -e;
    struct gfile *f = calloc(1, sizeof *f);
    if (!f) {
        close(hfd);
        return -ENOMEM;
    }
    f->hostfd = hfd;
    f->dir = S_ISDIR(st.st_mode);
    atomic_init(&f->refs, 1);
    f->path = strdup(canon);
    r = !f->path ? -ENOMEM : f->dir ? load_dents(f) : 0;
    if (r < 0) {
        gfile_put(f);
        return r;
    }
    *out = f;
    return 0;
}

/* open/openat; *why: what kind of refusal an EROFS or EACCES answer is (files_refuse.c). */
static int64_t open_at(struct vm *vm, int64_t dirfd, uint64_t uptr, int flags, uint32_t mode,
                       enum files_refusal *why)
{
    char canon[PATHCONF_MAX];
    struct files *fs = vm->files;
    bool writes = (flags & G_O_ACCMODE) != 0 || (flags & (G_O_CREAT | G_O_TRUNC));
    *why = REFUSED_WRITE;
    struct gfile *f;
    bool synthetic = false; /* a /proc/self file made from the guest's state */
    if ((flags & G_O_TMPFILE) == G_O_TMPFILE) {
        int t = files_ovl_open(vm, dirfd, uptr, flags, mode, &f, canon);
        if (t == 0) {
            synthetic = true;
            goto install;
        }
        if (t < 0)
            return t;
        int64_t w = files_write_path(vm, dirfd, uptr, true);
        return w == -EROFS || w == -EACCES ? w : -EOPNOTSUPP;
    }
    char given[64]; /* the /proc and /sys names made here are short (vCPU stacks are not deep) */
    if (strncpy_from_user(&vm->gm, given, uptr, sizeof given) == 0 &&
        (!strncmp(given, "/proc/", 6) || !strncmp(given, "/sys/", 5))) {
        bool d = (flags & G_O_DIRECTORY) != 0;
        int ps = procself_open(vm, given, writes, d, &f);
        if (ps == 1)
            ps = procsys_open(vm, given, writes, d, &f);
        if (ps <= 0) {
            if (ps < 0)
                return ps;
            synthetic = true;
            goto install;
        }
    }
    if (writes) { /* the writable layer (files_ovl.c), where the program may write */
        int w = files_ovl_open(vm, dirfd, uptr, flags, mode, &f, canon);
        if (w == 0) {
            synthetic = f->ino != 0; /* not a host file: a dump does not hash it */
            goto install;
        }
        if (w < 0)
            return w;
    }
    int r = files_guest_path(vm, dirfd, uptr, !(flags & G_O_NOFOLLOW), canon);
    uint64_t ino;
    int k = r == 0 ? files_ovl_kind(fs, canon, &ino) : 0;
    if (k > 0) { /* a file or directory the program made */
        if ((flags & G_O_DIRECTORY) && k != 1)
            return -ENOTDIR;
        if ((r = files_ovl_gfile(fs, canon, ino, k == 1, &f)) < 0)
            return r;
        synthetic = true;
        goto install;
    }
    if (r == -ENOENT && (flags & G_O_CREAT))
        return files_write_path(vm, dirfd, uptr, true);
    /* O_CREAT|O_EXCL on a name that exists: EEXIST, as Linux checks before the write. */
    if ((r == 0 || r == -EACCES) && (flags & (G_O_CREAT | G_O_EXCL)) == (G_O_CREAT | G_O_EXCL))
        return -EEXIST;
    if (r) {
        if (!writes)
            *why = REFUSED_OUTSIDE;
        return r;
    }
    if ((r = files_open_canon(canon, flags, &f)) < 0) {
        if (r == -EACCES)
            *why = REFUSED_KIND;
        return r;
    }
    if (f->dir && (r = files_merge_dents(fs, f)) < 0) {
        gfile_put(f);
        return r;
    }
install:
    pthread_mutex_lock(&fs->lock);
    int fd = lowest_free(fs, 3);
    if (fd >= 0) {
        files_set_fd(fs, fd, (struct fdent){f, 0, (flags & G_O_CLOEXEC) != 0, false,
                                            (uint8_t)(flags & G_O_ACCMODE),
                                            (flags & G_O_APPEND) != 0});
        if (!f->dir && !synthetic)
            files_remember(fs, canon);
    }
    pthread_mutex_unlock(&fs->lock);
    if (fd < 0)
        gfile_put(f);
    return fd;
}

static int64_t do_open(struct vm *vm, uint64_t nr, int64_t dirfd, uint64_t uptr, int flags,
                       uint32_t mode)
{
    enum files_refusal why;
    int64_t r = open_at(vm, dirfd, uptr, flags, mode, &why);
    files_note_refused(vm, nr, uptr, -1, flags, why, r);
    return r;
}

/* The descriptor's file with a reference held (put it back), or NULL. */
struct gfile *fd_get(struct files *fs, int64_t fd, uint64_t *off)
{
    if (fd < 3 || fd >= FILES_MAX)
        return NULL;
    pthread_mutex_lock(&fs->lock);
    struct gfile *f = gfile_get(fs->fd[fd].f);
    if (off)
        *off = fs->fd[fd].off;
    pthread_mutex_unlock(&fs->lock);
    return f;
}

/* pread of up to len bytes at off into guest buf. Bytes read or -errno. */
static int64_t read_at(struct vm *vm, struct gfile *f, uint64_t buf, uint64_t len, uint64_t off)
{
    if (f->dir)
        return -EISDIR;
    if (len > MAX_IO)
        len = MAX_IO;
    if (off > (uint64_t)INT64_MAX)
        return -EINVAL;
    if (f->ino)
        return files_ovl_read(vm, f, buf, len, off);
    return files_pread_user(vm, f->hostfd, buf, len, off);
}

/* read/readv: at the descriptor's offset, which moves by what was read. */
static int64_t do_read(struct vm *vm, int64_t fd, uint64_t buf, uint64_t len, bool vec)
{
    struct files *fs = vm->files;
    uint64_t off;
    struct gfile *f = fd_get(fs, fd, &off);
    if (!f)
        return -EBADF;
    int64_t total = 0;
    if (fs->fd[fd].acc == 1) {
        total = -EBADF; /* opened O_WRONLY */
    } else if (!vec) {
        total = read_at(vm, f, buf, len, off);
    } else if (len > MAX_IOV) {
        total = -EINVAL;
    } else {
        for (uint64_t i = 0; i < len; i++) {
            uint64_t e[2];
            if (!copy_from_user(&vm->gm, e, buf + i * 16, 16)) {
                total = total ? total : -EFAULT;
                break;
            }
            if (e[1] > MAX_IO) {
                total = total ? total : -EINVAL;
                break;
            }
            int64_t r = e[1] ? read_at(vm, f, e[0], e[1], off + (uint64_t)total) : 0;
            if (r < 0) {
                total = total ? total : r;
                break;
            }
            total += r;
            if ((uint64_t)r < e[1])
                break;
        }
    }
    if (total > 0) {
        pthread_mutex_lock(&fs->lock);
        if (fs->fd[fd].f == f)
            fs->fd[fd].off = off + (uint64_t)total;
        pthread_mutex_unlock(&fs->lock);
    }
    gfile_put(f);
    return total;
}

static int64_t do_lseek(struct files *fs, int64_t fd, int64_t off, int whence)
{
    uint64_t cur;
    struct gfile *f = fd_get(fs, fd, &cur);
    if (!f)
        return -EBADF;
    int64_t base = 0, r;
    struct stat st;
    if (whence == 0)
        base = 0;
    else if (whence == 1)
        base = (int64_t)cur;
    else if (whence == 2 && !f->dir && f->ino)
        base = (int64_t)files_ovl_size(fs, f->ino);
    else if (whence == 2 && !f->dir && fstat(f->hostfd, &st) == 0)
        base = st.st_size;
    else {
        gfile_put(f);
        return -EINVAL;
    }
    if ((off > 0 && base > INT64_MAX - off) || base + off < 0)
        r = -EINVAL;
    else
        r = base + off;
    if (r >= 0) {
        pthread_mutex_lock(&fs->lock);
        if (fs->fd[fd].f == f)
            fs->fd[fd].off = (uint64_t)r;
        pthread_mutex_unlock(&fs->lock);
    }
    gfile_put(f);
    return r;
}

static int64_t do_getdents(struct vm *vm, int64_t fd, uint64_t buf, uint64_t count)
{
    struct files *fs = vm->files;
    uint64_t off;
    struct gfile *f = fd_get(fs, fd, &off);
    if (!f)
        return -EBADF;
    int64_t r = 0;
    if (!f->dir) {
        r = -ENOTDIR;
    } else {
        size_t p = off, n = 0;
        while (p < f->dents_len) {
            uint16_t reclen;
            memcpy(&reclen, f->dents + p + 16, 2);
            if (reclen < 20 || p + reclen > f->dents_len || n + reclen > count)
                break;
            n += reclen;
            p += reclen;
        }
        if (n == 0 && off < f->dents_len)
            r = -EINVAL; /* the buffer cannot hold the next entry */
        else if (n && !copy_to_user(&vm->gm, buf, f->dents + off, n))
            r = -EFAULT;
        else {
            r = (int64_t)n;
            pthread_mutex_lock(&fs->lock);
            if (fs->fd[fd].f == f)
                fs->fd[fd].off = off + n;
            pthread_mutex_unlock(&fs->lock);
        }
    }
    gfile_put(f);
    return r;
}

static int64_t do_close(struct vm *vm, int64_t fd)
{
    struct files *fs = vm->files;
    if (fd < 3 || fd >= FILES_MAX)
        return -EBADF;
    pthread_mutex_lock(&fs->lock);
    struct gfile *f = fs->fd[fd].f;
    bool pipe = f && f->pipe;
    fs->fd[fd] = (struct fdent){0};
    const struct ovl_inode *in = f && f->ino ? ovl_inode(&fs->ovl, f->ino) : NULL;
    if (in && in->nlink == 0) /* the last name went before: its bytes go now */
        files_ovl_gc(fs);
    pthread_mutex_unlock(&fs->lock);
    gfile_put(f);
    if (pipe) /* its other end's waiters may see EOF or EPIPE now */
        pipes_closed(vm, NULL);
    return f ? 0 : -EBADF;
}

/* dup/dup2/dup3/F_DUPFD: newfd < 0 means the lowest free from min. */
static int64_t do_dup(struct files *fs, int64_t oldfd, int64_t newfd, int64_t min, bool cloexec)
{
    if (oldfd < 3 || oldfd >= FILES_MAX || newfd >= FILES_MAX || min >= FILES_MAX)
        return oldfd >= 0 && oldfd < 3 ? -EINVAL : -EBADF;
    if (newfd >= 0 && newfd < 3)
        return -EINVAL; /* the terminal streams stay what they are */
    pthread_mutex_lock(&fs->lock);
    int64_t r;
    struct gfile *old = NULL;
    if (!fs->fd[oldfd].f) {
        r = -EBADF;
    } else {
        r = newfd >= 0 ? newfd : lowest_free(fs, (int)min);
        if (r >= 0 && r != oldfd) {
            old = fs->fd[r].f;
            struct fdent e = fs->fd[oldfd];
            e.f = gfile_get(e.f);
            e.cloexec = cloexec;
            files_set_fd(fs, (int)r, e);
        }
    }
    pthread_mutex_unlock(&fs->lock);
    gfile_put(old);
    return r;
}

static int64_t do_fcntl(struct files *fs, int64_t fd, int cmd, uint64_t arg)
{
    if (fd >= 0 && fd < 3) {
        switch (cmd) {
        case F_GETFD: case F_SETFD: case F_SETFL: return 0;
        case F_GETFL: return fd == 0 ? O_RDONLY : O_WRONLY;
        default: return -EINVAL;
        }
    }
    if (fd < 0 || fd >= FILES_MAX || !fs->fd[fd].f)
        return -EBADF;
    switch (cmd) {
    case F_DUPFD: case F_DUPFD_CLOEXEC: /* at or above arg, which is below RLIMIT_NOFILE */
        return arg >= FILES_MAX ? -EINVAL : do_dup(fs, fd, -1, (int64_t)arg, cmd == F_DUPFD_CLOEXEC);
    case F_GETFD: return fs->fd[fd].cloexec ? FD_CLOEXEC : 0;
    case F_SETFD: fs->fd[fd].cloexec = arg & FD_CLOEXEC; return 0;
    case F_GETFL:
        return fs->fd[fd].acc | (fs->fd[fd].append ? O_APPEND : 0) |
               (fs->fd[fd].f->dir ? O_DIRECTORY : 0);
    case F_SETFL: return 0;
    case F_GETLK: case F_SETLK: case F_SETLKW: return 0;
    default: return -EINVAL;
    }
}

/* mkdir, mknod and symlink of a name that exists: EEXIST, as Linux checks it before the
 * write; else files_write_path's answer for a new name. */
static int64_t create_path(struct vm *vm, int64_t dirfd, uint64_t uptr)
{
    char canon[PATHCONF_MAX];
    int r = files_guest_path(vm, dirfd, uptr, false, canon);
    if (r == 0 || r == -EACCES)
        return -EEXIST;
    return files_write_path(vm, dirfd, uptr, true);
}

/* The calls that would write: EROFS in a granted directory (even for a new name), EACCES
 * in an existing one outside the grants; either refusal is noted (files_refuse.c). */
static int64_t write_syscall(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled)
{
    int64_t r, fd = (int64_t)(int)a[0];
    uint64_t up = 0; /* the path refused, for the note */
    r = files_ovl_change(vm, nr, a, handled); /* inside the writable area */
    if (*handled)
        return r;
    *handled = true;
    switch (nr) {
    case SYS_mkdir: case SYS_mknod:
        r = create_path(vm, AT_FDCWD_G, up = a[0]);
        break;
    case SYS_rename: case SYS_link: /* the old name must exist */
        r = files_write_path(vm, AT_FDCWD_G, up = a[0], false);
        break;
    case SYS_symlink:
        r = create_path(vm, AT_FDCWD_G, up = a[1]);
        break;
    case SYS_unlink: case SYS_rmdir: case SYS_truncate: case SYS_chmod: case SYS_chown:
    case SYS_lchown: case SYS_utime: case SYS_utimes:
        r = files_write_path(vm, AT_FDCWD_G, up = a[0], false);
        break;
    case SYS_mkdirat: case SYS_mknodat:
        r = create_path(vm, fd, up = a[1]);
        break;
    case SYS_renameat: case SYS_renameat2: case SYS_linkat:
        r = files_write_path(vm, fd, up = a[1], false);
        break;
    case SYS_symlinkat:
        r = create_path(vm, (int64_t)(int)a[1], up = a[2]);
        break;
    case SYS_unlinkat: case SYS_fchmodat: case SYS_fchownat: case SYS_futimesat:
        r = files_write_path(vm, fd, up = a[1], false);
        break;
    case SYS_utimensat:
        if (!a[1])
            r = fd < 3 || fd >= FILES_MAX || !vm->files->fd[fd].f ? -EBADF : -EROFS;
        else
            r = files_write_path(vm, fd, up = a[1], false);
        break;
    case SYS_ftruncate: case SYS_fallocate:
        return a[0] < FILES_MAX && a[0] >= 3 && vm->files->fd[a[0]].f ? -EINVAL
               : a[0] < 3 ? -EINVAL : -EBADF;
    case SYS_fchmod: case SYS_fchown:
        r = a[0] < FILES_MAX && (a[0] < 3 || vm->files->fd[a[0]].f) ? -EROFS : -EBADF;
        break;
    case SYS_fsync: case SYS_fdatasync: case SYS_syncfs: case SYS_flock:
        return a[0] < FILES_MAX && (a[0] < 3 || vm->files->fd[a[0]].f) ? 0 : -EBADF;
    case SYS_fadvise64: /* advice only: accepted on a file; the streams 0-2 are pipes here */
        return a[0] >= FILES_MAX || (a[0] >= 3 && !vm->files->fd[a[0]].f) ? -EBADF
               : a[0] < 3 ? -ESPIPE : a[3] > 5 ? -EINVAL : 0;
    default:
        *handled = false;
        return -ENOSYS;
    }
    files_note_refused(vm, nr, up, fd, -1, REFUSED_WRITE, r);
    return r;
}

int64_t files_syscall(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled)
{
    struct files *fs = vm->files;
    int64_t fd = (int64_t)(int)a[0];
    bool std = fd >= 0 && fd < 3;
    *handled = true;
    switch (nr) {
    case SYS_open: return do_open(vm, nr, AT_FDCWD_G, a[0], (int)a[1], (uint32_t)a[2]);
    case SYS_openat: return do_open(vm, nr, fd, a[1], (int)a[2], (uint32_t)a[3]);
    case SYS_creat: return do_open(vm, nr, AT_FDCWD_G, a[0], G_O_CREAT | 1 | G_O_TRUNC, (uint32_t)a[1]);
    case SYS_write: case SYS_writev: case SYS_pwrite64: case SYS_pwritev: {
        if (std)
            break;
        int64_t r = files_ovl_write_call(vm, nr, a, handled);
        if (*handled)
            return r;
        *handled = true;
        return nr == SYS_pwrite64 || nr == SYS_pwritev ? r : -EBADF;
    }
    case SYS_read: if (std) break; return do_read(vm, fd, a[1], a[2], false);
    case SYS_readv: if (std) break; return do_read(vm, fd, a[1], a[2], true);
    case SYS_pread64: {
        if (std)
            return -ESPIPE;
        struct gfile *f = fd_get(fs, fd, NULL);
        if (!f)
            return -EBADF;
        int64_t r = (int64_t)a[3] < 0 ? -EINVAL : read_at(vm, f, a[1], a[2], a[3]);
        gfile_put(f);
        return r;
    }
    case SYS_lseek: if (std) break; return do_lseek(fs, fd, (int64_t)a[1], (int)a[2]);
    case SYS_getdents64: return std ? -ENOTDIR : do_getdents(vm, fd, a[1], a[2]);
    case SYS_close: if (std) break; return do_close(vm, fd);
    case SYS_fstat: if (std) break; return files_fstat(vm, fd, a[1]);
    case SYS_stat: return files_stat_path(vm, AT_FDCWD_G, a[0], a[1], 0);
    case SYS_lstat: return files_stat_path(vm, AT_FDCWD_G, a[0], a[1], 0x100);
    case SYS_newfstatat: {
        char c;
        if (std && (a[3] & 0x1000) && copy_from_user(&vm->gm, &c, a[1], 1) && !c)
            break; /* the terminal streams: syscall.c */
        return files_stat_path(vm, fd, a[1], a[2], a[3]);
    }
    case SYS_statx: return files_statx(vm, fd, a[1], a[2], a[3], a[4]);
    case SYS_access: case SYS_faccessat:
#ifdef SYS_faccessat2
    case SYS_faccessat2:
#endif
    {
        /* Asking whether a path may be written: "no" (EROFS) is a refusal too. */
        bool at = nr != SYS_access;
        int64_t r = files_access(vm, at ? fd : AT_FDCWD_G, a[at], a[at + 1],
                                 nr == SYS_faccessat || nr == SYS_access ? 0 : a[3]);
        if (a[at + 1] & 2)
            files_note_refused(vm, nr, a[at], -1, -1, REFUSED_WRITE, r == -EROFS ? r : 0);
        return r;
    }
    case SYS_readlink: return files_readlink(vm, AT_FDCWD_G, a[0], a[1], a[2]);
    case SYS_readlinkat: return files_readlink(vm, fd, a[1], a[2], a[3]);
    case SYS_getcwd: return files_getcwd(vm, a[0], a[1]);
    case SYS_chdir: return files_chdir(vm, a[0]);
    case SYS_fcntl: return do_fcntl(fs, fd, (int)a[1], a[2]);
    case SYS_dup: return do_dup(fs, fd, -1, 3, false);
    case SYS_dup2:
        if ((int)a[0] == (int)a[1])
        {
            struct gfile *f = fd_get(fs, fd, NULL);
            gfile_put(f);
            return f ? fd : -EBADF;
        }
    {
        int64_t r = do_dup(fs, fd, (int64_t)(int)a[1], 3, false);
        if (r >= 0)
            pipes_closed(vm, NULL); /* it may have replaced a pipe end */
        return r;
    }
    case SYS_dup3: {
        if ((int)a[0] == (int)a[1] || (a[2] & ~(uint64_t)G_O_CLOEXEC))
            return -EINVAL;
        int64_t r = do_dup(fs, fd, (int64_t)(int)a[1], 3, (a[2] & G_O_CLOEXEC) != 0);
        if (r >= 0)
            pipes_closed(vm, NULL);
        return r;
    }
    default:
        return write_syscall(vm, nr, a, handled);
    }
    *handled = false;
    return -ENOSYS;
}
