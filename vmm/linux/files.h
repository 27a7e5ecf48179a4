/* The guest's read-only files: its descriptor table (fds 3..FILES_MAX-1; 0-2 are the
 * terminal streams, syscall.c) over host files opened read-only inside the grants
 * (pathconf.h), and the file syscalls: open/openat, read/pread64/readv/preadv, lseek,
 * fstat/stat/lstat/newfstatat/statx, close, dup/dup2/dup3, fcntl, access/faccessat(2),
 * readlink(at), getdents64, getcwd, chdir, and the calls that would write (EROFS inside a
 * grant, the resolution's error outside), plus the private file mmap.
 *
 * Nothing is ever written on the host and nothing outside the grants is opened. Offsets
 * and descriptors are VMM state: files_save/files_restore carry them through snapshots.
 * Every file ever opened is remembered (path, identity) so that a dump can record its
 * SHA-256 and a replay can refuse a changed file. */
#ifndef JINX_FILES_H
#define JINX_FILES_H
#include "linux/pathconf.h"
#include "linux/ovl.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define FILES_MAX 1024     /* RLIMIT_NOFILE as the guest sees it */
#define FILES_MAX_DIR (16u << 20) /* bytes of directory entries one open directory holds */

struct vm;
struct vcpu;
struct gfile;

struct fdent {
    struct gfile *f;       /* NULL: free */
    uint64_t off;
    bool cloexec;
    bool nonblock;         /* O_NONBLOCK (pipes and eventfds: pipes.h) */
    uint8_t acc;           /* files: O_RDONLY 0, O_WRONLY 1, O_RDWR 2 */
    bool append;           /* O_APPEND */
};

/* A file the program opened, for dumps (files_hash fills sha256). */
struct opened_file {
    char *path;
    uint64_t size;
    uint8_t sha256[32];
};

struct files {
    pthread_mutex_t lock;
    struct grants grants;
    char cwd[PATHCONF_MAX];
    char exe[PATHCONF_MAX];            /* /proc/self/exe's answer */
    struct fdent fd[FILES_MAX];
    int hi;                            /* fd[hi..] have never been used: saves and restores stop there */
    struct opened_file *opened;
    size_t nopened;
    uint32_t next_pipe;                /* the next pipe's or eventfd's id (pipes.h) */
    struct ovl ovl;                    /* what the program wrote (ovl.h; under lock) */
    char cwd0[PATHCONF_MAX];           /* the starting cwd: writable, with /tmp and grants */
    struct vm *vm;                     /* its VM (virtual time for files' times) */
};

/* Puts e at descriptor fd (0 <= fd < FILES_MAX) and keeps hi above it: every
 * descriptor the guest gets goes through here. Caller holds fs->lock. */
static inline void files_set_fd(struct files *fs, int fd, struct fdent e)
{
    fs->fd[fd] = e;
    if (fd >= fs->hi)
        fs->hi = fd + 1;
}

/* A saved descriptor table (a snapshot's). */
struct pipe_saved;
struct files_state {
    const struct files *owner;         /* the table it was saved from */
    struct pipe_saved *pipes;          /* the bytes of the pipes it names (pipes.h) */
    int npipes;
    uint32_t next_pipe;
    struct fdent fd[FILES_MAX];
    int hi;                            /* fd[hi..] are free */
    char cwd[PATHCONF_MAX];
    struct ovl ovl;                    /* the written files (shares their bytes) */
};

/* cwd: the guest's starting directory (jinx-vmm's); exe: the program's path; file_mem:
 * the most bytes of files the program may write (0: OVL_DEFAULT_LIMIT). 0, or -1 with a
 * message. */
int files_init(struct files *fs, const char *exe, uint64_t file_mem, char *err, size_t errlen);
/* After the grants are in: /tmp, and the cwd when no grant shows it, become the
 * program's own directories (empty, private). */
int files_seed(struct files *fs, char *err, size_t errlen);
void files_destroy(struct files *fs);

/* Handles syscall nr if it is a file syscall (*handled set); the result or -errno. */
int64_t files_syscall(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled);

/* mmap of guest fd (MAP_PRIVATE; MAP_SHARED only without PROT_WRITE): maps the range,
 * fills it from the file (zeroes past its end) and sets prot. Address or -errno. */
int64_t files_mmap(struct vm *vm, uint64_t addr, uint64_t len, int prot, int flags, int fd,
                   uint64_t off);

void files_save(struct files *fs, struct files_state *st);
/* Puts st back into fs. st may come from another VM's table (a worker VM brought to the
 * program's snapshot): files are then shared, pipes and eventfds copied, since each VM
 * changes its own. 0, or -1 out of memory (fs then lacks those pipes). */
int files_restore(struct files *fs, const struct files_state *st);
void files_state_free(struct files_state *st);

/* A saved table as a snapshot image's descriptors, pipes and cwd (kvm/snapimage.h: dumps
 * carry them), and back into a fresh VM's table: every file is reopened by its canonical
 * path, which must lie inside fs's grants (the image is untrusted), every pipe and eventfd
 * made again with its id and bytes, and each descriptor gets its offset and flags again.
 * 0, or -1 with a message naming the file. */
struct snap_image;
int files_state_export(const struct files_state *st, struct snap_image *img);
int files_import(struct files *fs, const struct snap_image *img, char *err, size_t errlen);

/* SHA-256 of every file opened so far (into fs->opened). 0, or -1 with a message (a
 * file became unreadable). */
int files_hash(struct files *fs, char *err, size_t errlen);
/* Copies every file the program wrote into host directory dir (made if missing), at
 * dir/<its absolute path>, never following a symlink. Prints what it did on stderr.
 * 0, or -1 with a message. */
int files_copy_out(struct files *fs, const char *dir, char *err, size_t errlen);
/* Calls fn for each regular file the program wrote (path, bytes, size), sorted. */
void files_each_written(struct files *fs, void (*fn)(void *ctx, const char *path,
                        const uint8_t *bytes, uint64_t size), void *ctx);

/* SHA-256 of host file path; 0 or -errno. */
int file_sha256(const char *path, uint8_t out[32], uint64_t *size);

#endif
