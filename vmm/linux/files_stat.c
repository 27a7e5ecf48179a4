/* The file layer's metadata calls (files.h): stat family, statx, access, readlink, getcwd,
 * chdir. Each resolves through the grants and asks the host about an O_PATH descriptor
 * opened without following symlinks, never about a path the host would resolve. */
#include "linux/files_int.h"
#include "linux/procsys.h"
#include "kvm/vm.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define G_AT_SYMLINK_NOFOLLOW 0x100
#define G_AT_EMPTY_PATH 0x1000

/* stat of the host object behind O_PATH descriptor pfd, or of an open file. */
static int64_t put_stat(struct vm *vm, int hostfd, uint64_t statbuf)
{
    struct stat st;
    if (fstat(hostfd, &st) < 0)
        return -errno;
    return copy_to_user(&vm->gm, statbuf, &st, sizeof st) ? 0 : -EFAULT;
}

int64_t files_fstat(struct vm *vm, int64_t fd, uint64_t statbuf)
{
    struct gfile *f = fd_get(vm->files, fd, NULL);
    if (!f)
        return -EBADF;
    int64_t r = f->ino ? files_ovl_stat(vm, f->ino, statbuf) : put_stat(vm, f->hostfd, statbuf);
    gfile_put(f);
    return r;
}

/* /proc/cpuinfo and /sys/devices/system/cpu's names (procsys.h): their stand-in's O_PATH
 * descriptor or -ENOENT; -EEXIST for any other path. */
static int synthetic_fd(struct vm *vm, uint64_t uptr)
{
    char given[64];
    if (strncpy_from_user(&vm->gm, given, uptr, sizeof given) != 0 ||
        (strncmp(given, "/proc/", 6) && strncmp(given, "/sys/", 5)))
        return -EEXIST;
    return procsys_path_fd(vm, given);
}

/* The O_PATH descriptor of guest path uptr (dirfd-relative), or -errno; a file of the
 * writable layer: -EEXIST and *ino. */
static int open_guest(struct vm *vm, int64_t dirfd, uint64_t uptr, bool follow, uint64_t *ino)
{
    char canon[PATHCONF_MAX];
    int ps = synthetic_fd(vm, uptr);
    if (ps != -EEXIST)
        return ps;
    int r = files_guest_path(vm, dirfd, uptr, follow, canon);
    if (r)
        return r;
    if (files_ovl_kind(vm->files, canon, ino) > 0)
        return -EEXIST;
    r = files_open_path(canon, follow);
    return r == -EXDEV ? -ELOOP : r;
}

/* Is guest path uptr empty (AT_EMPTY_PATH asks about dirfd itself)? */
static int empty_path(struct vm *vm, uint64_t uptr)
{
    char c;
    if (!copy_from_user(&vm->gm, &c, uptr, 1))
        return -EFAULT;
    return c == 0;
}

int64_t files_stat_path(struct vm *vm, int64_t dirfd, uint64_t uptr, uint64_t statbuf,
                        uint64_t flags)
{
    if (flags & ~(uint64_t)(G_AT_SYMLINK_NOFOLLOW | G_AT_EMPTY_PATH | 0x800 /* NO_AUTOMOUNT */))
        return -EINVAL;
    int e = empty_path(vm, uptr);
    if (e < 0)
        return e;
    if (e) {
        if (!(flags & G_AT_EMPTY_PATH))
            return -ENOENT;
        return dirfd == -100 ? -ENOENT : files_fstat(vm, dirfd, statbuf);
    }
    uint64_t ino;
    int pfd = open_guest(vm, dirfd, uptr, !(flags & G_AT_SYMLINK_NOFOLLOW), &ino);
    if (pfd == -EEXIST)
        return files_ovl_stat(vm, ino, statbuf);
    if (pfd < 0)
        return pfd;
    int64_t r = put_stat(vm, pfd, statbuf);
    close(pfd);
    return r;
}

int64_t files_statx(struct vm *vm, int64_t dirfd, uint64_t uptr, uint64_t flags,
                    uint64_t mask, uint64_t buf)
{
    if (flags & ~(uint64_t)(G_AT_SYMLINK_NOFOLLOW | G_AT_EMPTY_PATH | 0x800 | 0x6000))
        return -EINVAL;
    int e = empty_path(vm, uptr);
    if (e < 0)
        return e;
    int hfd, own = 0;
    struct gfile *f = NULL;
    if (e) {
        if (!(flags & G_AT_EMPTY_PATH))
            return -ENOENT;
        if (dirfd >= 0 && dirfd < 3)
            return -ENOSYS; /* the terminal streams: glibc falls back to fstat */
        f = fd_get(vm->files, dirfd, NULL);
        if (!f)
            return -EBADF;
        if (f->ino) {
            int64_t r = files_ovl_statx(vm, f->ino, buf);
            gfile_put(f);
            return r;
        }
        hfd = f->hostfd;
    } else {
        uint64_t ino;
        hfd = open_guest(vm, dirfd, uptr, !(flags & G_AT_SYMLINK_NOFOLLOW), &ino);
        if (hfd == -EEXIST)
            return files_ovl_statx(vm, ino, buf);
        if (hfd < 0)
            return hfd;
        own = 1;
    }
    uint8_t stx[256];
    long r = syscall(SYS_statx, hfd, "", AT_EMPTY_PATH, (unsigned)mask & 0xfff, stx);
    int64_t ret = r < 0 ? -errno : (copy_to_user(&vm->gm, buf, stx, sizeof stx) ? 0 : -EFAULT);
    if (own)
        close(hfd);
    gfile_put(f);
    return ret;
}

int64_t files_access(struct vm *vm, int64_t dirfd, uint64_t uptr, uint64_t mode,
                     uint64_t flags)
{
    if (mode & ~7ULL)
        return -EINVAL;
    char canon[PATHCONF_MAX];
    int ps = synthetic_fd(vm, uptr);
    if (ps != -EEXIST) { /* the CPU files: read (and search) only */
        if (ps >= 0)
            close(ps);
        return ps < 0 ? ps : (mode & 2) ? -EACCES : 0;
    }
    int cr = files_guest_path(vm, dirfd, uptr, !(flags & G_AT_SYMLINK_NOFOLLOW), canon);
    if (cr)
        return cr;
    uint64_t ino;
    if (files_ovl_kind(vm->files, canon, &ino) > 0)
        return 0; /* the program's own: read, write, and search or run as root may */
    int pfd = files_open_path(canon, !(flags & G_AT_SYMLINK_NOFOLLOW));
    if (pfd < 0)
        return pfd == -EXDEV ? -ELOOP : pfd;
    struct stat st;
    int64_t r = fstat(pfd, &st) < 0 ? -errno : 0;
    close(pfd);
    if (r)
        return r;
    if ((mode & 2) && !files_writable(vm->files, canon)) /* W_OK */
        return -EROFS;
    if ((mode & 1) && !S_ISDIR(st.st_mode) && !(st.st_mode & 0111)) /* X_OK, as for root */
        return -EACCES;
    return 0;
}

int64_t files_readlink(struct vm *vm, int64_t dirfd, uint64_t uptr, uint64_t buf,
                       uint64_t size)
{
    char canon[PATHCONF_MAX], target[PATHCONF_MAX];
    if ((int64_t)size <= 0)
        return -EINVAL;
    int r = files_guest_path(vm, dirfd, uptr, false, canon);
    if (r)
        return r;
    ssize_t n;
    char path[PATHCONF_MAX];
    if (strncpy_from_user(&vm->gm, path, uptr, sizeof path) == 0 &&
        !strcmp(path, "/proc/self/exe")) {
        n = (ssize_t)strlen(canon);
        memcpy(target, canon, (size_t)n);
    } else {
        uint64_t ino;
        if (files_ovl_kind(vm->files, canon, &ino) > 0)
            return -EINVAL; /* the program's files are no symlinks */
        int pfd = files_open_path(canon, false);
        if (pfd < 0)
            return pfd;
        n = readlinkat(pfd, "", target, sizeof target);
        int e = errno;
        close(pfd);
        if (n < 0)
            return e == ENOENT ? -EINVAL : -e; /* not a symlink */
    }
    if ((uint64_t)n > size)
        n = (ssize_t)size;
    return copy_to_user(&vm->gm, buf, target, (size_t)n) ? n : -EFAULT;
}

int64_t files_getcwd(struct vm *vm, uint64_t buf, uint64_t size)
{
    size_t n = strlen(vm->files->cwd) + 1;
    if (size < n)
        return -ERANGE;
    return copy_to_user(&vm->gm, buf, vm->files->cwd, n) ? (int64_t)n : -EFAULT;
}

/* chdir: into a granted directory only (the cwd is then a canonical granted path). */
int64_t files_chdir(struct vm *vm, uint64_t uptr)
{
    char canon[PATHCONF_MAX];
    int r = files_guest_path(vm, -100, uptr, true, canon);
    if (r)
        return r;
    struct stat st;
    uint64_t ino;
    int k = files_ovl_kind(vm->files, canon, &ino);
    if (k == 2)
        return -ENOTDIR;
    if (k == 0 && stat(canon, &st) < 0)
        return -errno;
    if (k == 0 && !S_ISDIR(st.st_mode))
        return -ENOTDIR;
    pthread_mutex_lock(&vm->files->lock);
    memcpy(vm->files->cwd, canon, strlen(canon) + 1);
    pthread_mutex_unlock(&vm->files->lock);
    return 0;
}
