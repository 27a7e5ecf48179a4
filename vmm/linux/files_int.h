/* Shared by the file layer's own modules (files.c, files_stat.c, files_state.c): not an
 * interface for anyone else. */
#ifndef JINX_FILES_INT_H
#define JINX_FILES_INT_H
#include "linux/files.h"
#include <stdatomic.h>
#include <stddef.h>

/* An open host file, shared by the descriptors and snapshots that name it. */
struct gfile {
    int hostfd;
    bool dir;
    atomic_int refs;
    uint8_t *dents;          /* a directory's entries, read at open (d_off rewritten) */
    size_t dents_len;
    char *path;              /* canonical host path it was opened at (snapshot images) */
    struct gpipe *pipe;      /* a pipe end, eventfd, epoll instance or socket's receiving
                              * pipe (pipes.h; hostfd -1), else NULL */
    struct gpipe *tx;        /* a socket's sending pipe (its peer's receiving one) */
    uint8_t end;             /* 0 read end, 1 write end, 2 eventfd, 3 epoll, 4 socket */
    uint64_t ino;            /* a file or directory of the writable layer (ovl.h; hostfd
                              * -1), else 0 */
};

struct gfile *gfile_get(struct gfile *f);
void gfile_put(struct gfile *f);
/* The descriptor's file with a reference held (put it back), or NULL; *off its offset. */
struct gfile *fd_get(struct files *fs, int64_t fd, uint64_t *off);
/* Reads guest path uptr and resolves it relative to dirfd (AT_FDCWD: the cwd). */
int files_guest_path(struct vm *vm, int64_t dirfd, uint64_t uptr, bool follow_last,
                     char *canon);
/* Opens canonical p as O_PATH without following symlinks (but a final one when
 * follow_last). fd or -errno. */
int files_open_path(const char *p, bool follow_last);
/* EROFS inside a grant, the resolution's error elsewhere. */
int64_t files_write_path(struct vm *vm, int64_t dirfd, uint64_t uptr, bool creates);

/* pread from host fd straight into guest memory [va, va+len) (marked dirty). Bytes read,
 * or -errno (-EFAULT: an unmapped guest page before any byte). */
int64_t files_pread_user(struct vm *vm, int hostfd, uint64_t va, uint64_t len, uint64_t off);
/* files_map.c: fills the frames behind the mapped range [va, va+len) from host fd at off
 * through their host addresses, whatever the pages' protection, in bulk (marked dirty;
 * zeroes past the file's end stay). Pages without a frame are skipped. 0 or -errno. */
int64_t files_fill_frames(struct vm *vm, int hostfd, uint64_t va, uint64_t len, uint64_t off);
/* A MAP_FIXED file mapping over pages that already hold its contents: ld.so maps a whole
 * library from offset 0 read-only, then maps its segments again at their places, most
 * of which hold the same file offsets. When every page of [va, va+len) has a frame, not
 * writable, with exactly the bytes a fresh mapping of host fd at off would have, the
 * frames stay and only the protection changes (no frames freed, made and filled again):
 * 0. Else nothing changed: -EAGAIN. */
int64_t files_map_over_same(struct vm *vm, int hostfd, uint64_t va, uint64_t len, int prot,
                            uint64_t off);

/* Opens canonical path canon (already resolved inside the grants) for reading as the
 * guest's open flags ask (O_NOFOLLOW, O_DIRECTORY; a write access is refused). 0 and *out
 * (one reference), or -errno. */
int files_open_canon(const char *canon, int flags, struct gfile **out);
/* Adds canon to the files a dump records (fs->opened). Takes no lock: the caller holds
 * fs->lock or is alone. */
void files_remember(struct files *fs, const char *canon);

/* files_refuse.c: a file operation refused where Linux would have done it, noted as a
 * jinx limit (limitlog.h, "files") for real execution (for a simulation, in
 * sandbox_lims): a failure after it may be jinx's, not the program's. uptr: the guest
 * path (0: fd names the file); flags: open's flags, -1 for other calls; err: the answer
 * (only -EROFS and -EACCES are noted). An open outside the grants of what libc reads and
 * copes without (/proc, /sys, time zones, locales) is not noted. */
enum files_refusal {
    REFUSED_WRITE,      /* would write, create, remove or rename: the layer is read-only */
    REFUSED_OUTSIDE,    /* an open for reading of an existing path outside the grants */
    REFUSED_KIND,       /* a FIFO, device or socket inside a grant: never opened */
    REFUSED_SHARED_MAP, /* a shared writable mapping of a file (mmap) */
};
void files_note_refused(struct vm *vm, uint64_t nr, uint64_t uptr, int64_t fd, int flags,
                        enum files_refusal why, int64_t err);

/* The guest's x86-64 open and *at flags and the I/O bounds, as files.c and files_ovl*.c
 * read them (Linux's values, whatever the host's headers say). */
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

/* files_ovl.c: the private writable layer over the grants. */
/* Is canonical p where the program may write (its starting cwd, /tmp, a grant)? */
bool files_writable(const struct files *fs, const char *p);
/* The overlay's say over canonical p (ovl_lookup, taking fs->lock): 1 dir, 2 file, -1
 * nothing there, 0 the host's. *ino its inode. */
int files_ovl_kind(struct files *fs, const char *p, uint64_t *ino);
/* A gfile of overlay inode ino at canonical path p (a directory's entries merged). */
int files_ovl_gfile(struct files *fs, const char *p, uint64_t ino, bool dir, struct gfile **out);
/* A host directory's entries (f->dents) with the overlay's names over them. */
int files_merge_dents(struct files *fs, struct gfile *f);
/* open/openat with a write access, O_CREAT or O_TRUNC: 0 and *out, 1 when the layer
 * leaves it to the read-only path (outside the writable area, a read of a host file),
 * or -errno. */
int files_ovl_open(struct vm *vm, int64_t dirfd, uint64_t uptr, int flags, uint32_t mode,
                   struct gfile **out, char *canon);
int64_t files_ovl_read(struct vm *vm, struct gfile *f, uint64_t buf, uint64_t len, uint64_t off);
/* write/writev/pwrite64/pwritev: handled (*handled) for a descriptor of a file. */
int64_t files_ovl_write_call(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled);
uint64_t files_ovl_size(struct files *fs, uint64_t ino);
/* The calls that change names and sizes, inside the writable area; *handled false for
 * paths outside it (write_syscall refuses them). */
int64_t files_ovl_change(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled);
/* struct stat / struct statx of overlay inode ino into guest buf. */
int64_t files_ovl_stat(struct vm *vm, uint64_t ino, uint64_t buf);
int64_t files_ovl_statx(struct vm *vm, uint64_t ino, uint64_t buf);
/* A memfd holding inode ino's bytes (for mmap), or -errno. */
int files_ovl_memfd(struct files *fs, uint64_t ino);
/* Drops unlinked inodes no descriptor names. Caller holds fs->lock. */
void files_ovl_gc(struct files *fs);
/* The base directory of a relative guest path (cwd or dirfd's path). */
int files_base_dir(struct files *fs, int64_t dirfd, const char *path, char *base);

/* Shared by files_ovl*.c: what a path to change names (files_resolve_w). */
enum { W_NONE, W_ODIR, W_OFILE, W_HDIR, W_HFILE };
struct wres {
    char canon[PATHCONF_MAX];
    int kind;
    uint64_t ino;     /* W_O*: the inode */
    bool host;        /* a host object the program can see is at canon */
    bool slash;       /* the path ended in '/' */
    bool writable;
};
/* Resolves guest path uptr (dirfd-relative) to what it names, or where a new name would
 * go (its parent must exist). 0 or -errno (-EACCES: outside what the program sees). */
int files_resolve_w(struct vm *vm, int64_t dirfd, uint64_t uptr, bool follow_last, struct wres *w);
/* Host file canon copied into the overlay (its first max bytes). ino or -errno. */
int64_t files_copy_up(struct files *fs, const char *canon, uint64_t max);
/* r, noting the --file-mem limit when r is the ENOSPC it caused. */
int64_t files_ovl_checked(struct vm *vm, int64_t r);
uint64_t files_ovl_now(struct files *fs);   /* a file's time: virtual, in ns */
bool files_under(const char *p, const char *dir);

/* files_stat.c */
int64_t files_fstat(struct vm *vm, int64_t fd, uint64_t statbuf);
int64_t files_stat_path(struct vm *vm, int64_t dirfd, uint64_t uptr, uint64_t statbuf,
                        uint64_t flags);
int64_t files_statx(struct vm *vm, int64_t dirfd, uint64_t uptr, uint64_t flags,
                    uint64_t mask, uint64_t buf);
int64_t files_access(struct vm *vm, int64_t dirfd, uint64_t uptr, uint64_t mode,
                     uint64_t flags);
int64_t files_readlink(struct vm *vm, int64_t dirfd, uint64_t uptr, uint64_t buf,
                       uint64_t size);
int64_t files_getcwd(struct vm *vm, uint64_t buf, uint64_t size);
int64_t files_chdir(struct vm *vm, uint64_t uptr);

#endif
