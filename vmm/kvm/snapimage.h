/* A snapshot as an image (struct snap_image): the whole machine state a fragment starts
 * from, in plain memory, as snapshot_export makes it and snapshot_load_into loads it into
 * a fresh VM (kvm/snapshot.h). dump/snapfile.h is its byte form, the SNAPSHOT record of
 * a .jinxdump.
 *
 * An image read from a file is untrusted: snapimg_validate checks that the VMAs are
 * sorted and disjoint user ranges, that every stored page is a frame in use, and walks
 * the page tables (every present entry of a table points to a recorded table of the
 * next level, every leaf to a data frame in use), so that loading it can never make the
 * VMM write outside guest memory or treat a data frame as a table. Pure code, no KVM. */
#ifndef JINX_SNAPIMAGE_H
#define JINX_SNAPIMAGE_H
#include "linux/mm.h"
#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_SIGACTS 65
#define SNAP_MAX_VMAS (1u << 16)
#define SNAP_MAX_TID 0x3FFFFFFF

enum { SNAP_T_FREE = 0, SNAP_T_RUNNING = 1, SNAP_T_BLOCKED = 2 }; /* == enum tstate */

enum {
    SNAPF_EXISTS = 1u << 0,
    SNAPF_WOKEN = 1u << 1,
    SNAPF_RESULT_IN_RAX = 1u << 2,
    SNAPF_START = 1u << 3,     /* start_pending: start_* apply before it first runs */
    SNAPF_HAS_KVM = 1u << 4,   /* regs/sregs/xsave: it has run */
    SNAPF_ALL_ = 0x1F
};

struct snapimg_vcpu {
    uint32_t flags, tid, state, wait_bitset;
    uint64_t clear_child_tid, sigmask, wait_addr, wait_deadline, wait_seq;
    uint64_t sigpending, sigpend_tkill; /* signals pending for it (format 1.4) */
    int64_t wait_result;
    struct kvm_regs blocked_regs, regs, start_regs;
    struct kvm_sregs sregs, start_sregs;
    const uint8_t *xsave, *start_xsave;   /* borrowed; NULL: none */
    uint32_t xsave_len, start_xsave_len;  /* at most sizeof(struct kvm_xsave) */
};

struct snapimg_table {
    uint64_t frame;
    uint8_t level;             /* 1 (page table) .. 3 (PDPT) */
};

struct snapimg_page {
    uint64_t frame;
    const uint8_t *data;       /* borrowed: PAGE_SIZE bytes */
};

/* One open guest descriptor (linux/files.h): the file layer reopens path, which must lie
 * inside the loading run's grants, and puts the descriptor back at fd with its offset. */
#define SNAP_MAX_FDS 1024      /* == FILES_MAX */
#define SNAP_MAX_PATH 4096     /* == PATHCONF_MAX, with its NUL */
#define SNAP_FD_CLOEXEC 1u
#define SNAP_FD_PIPE 2u        /* a pipe end or an eventfd: pipe and end, no path */
#define SNAP_FD_NONBLOCK 4u    /* O_NONBLOCK (pipe ends and eventfds) */
#define SNAP_FD_WRONLY 8u      /* opened O_WRONLY (format 1.3) */
#define SNAP_FD_RDWR 16u       /* opened O_RDWR */
#define SNAP_FD_APPEND 32u     /* O_APPEND */
#define SNAP_FD_OVL 64u        /* a file the program wrote: ino, no path (format 1.3) */
#define SNAP_FD_ALL_ 127u
enum { SNAP_END_READ = 0, SNAP_END_WRITE = 1, SNAP_END_EVENT = 2, SNAP_END_EPOLL = 3,
       SNAP_END_SOCK = 4 }; /* == linux/pipes_int.h's END_* */
struct snapimg_fd {
    uint32_t fd, flags;        /* fd 3..SNAP_MAX_FDS-1, ascending; flags: SNAP_FD_* */
    uint64_t off;
    char *path;                /* owned: canonical absolute host path; NULL for a pipe */
    uint32_t pipe;             /* SNAP_FD_PIPE: index in snap_image.pipes */
    uint32_t end;              /* SNAP_FD_PIPE: SNAP_END_* (EVENT for an eventfd, EPOLL for
                                * an epoll instance, only; SOCK: a socketpair end reading
                                * pipe and writing tx, two plain pipes) */
    uint32_t tx;               /* SNAP_END_SOCK: index in snap_image.pipes */
    uint64_t ino;              /* SNAP_FD_OVL: an inode of snap_image.inodes */
};

/* The files the program wrote (linux/ovl.h, format 1.3): inodes with their bytes, and
 * the names (canonical absolute paths, unique; ino 0: a whiteout) over the host's. */
#define SNAP_MAX_OVL_ENTS (1u << 20)
#define SNAP_MAX_OVL_BYTES (1ULL << 40)
struct snapimg_inode {
    uint64_t ino, size, mtime;  /* ino unique, nonzero */
    uint32_t mode, nlink;       /* mode: S_IFREG or S_IFDIR and permissions */
    uint8_t *bytes;             /* owned; size bytes (NULL when 0; none for a directory) */
};
struct snapimg_ent {
    char *path;                 /* owned */
    uint64_t ino;
    uint32_t opaque;
};

/* A pipe or eventfd the descriptors name (linux/pipes.h): its id (the key of its waits),
 * the bytes it holds, oldest first, or the eventfd's counter. */
#define SNAP_MAX_PIPES SNAP_MAX_FDS
#define SNAP_PIPE_CAP (1u << 20) /* == PIPE_STRETCH: the most bytes a pipe holds */
#define SNAP_PIPE_IDS 0x0fffffffu
#define SNAP_PIPE_EVENTFD 1u
#define SNAP_PIPE_SEMAPHORE 2u
#define SNAP_PIPE_EPOLL 4u     /* an epoll instance: items, no bytes */
/* An epoll instance's interest in descriptor fd (an image's: it names whatever the
 * image's fd is). */
struct snapimg_epitem {
    uint32_t fd, events;       /* fd 0..SNAP_MAX_FDS-1 */
    uint64_t data;
};
struct snapimg_pipe {
    uint32_t id, flags;        /* id 1..SNAP_PIPE_IDS, unique; flags: SNAP_PIPE_* */
    uint64_t count;            /* an eventfd's counter (below UINT64_MAX) */
    uint32_t len;              /* a pipe's bytes, at most SNAP_PIPE_CAP; 0 for an eventfd */
    uint8_t *bytes;            /* owned; NULL when len is 0 */
    struct snapimg_epitem *items; /* owned: an epoll instance's, at most SNAP_MAX_FDS */
    uint32_t nitems;
};

struct snap_image {
    uint64_t mem;              /* bytes of guest memory */
    uint32_t nvcpus;
    struct snapimg_vcpu *v;    /* owned, nvcpus entries */
    int32_t next_tid, live, blocked;
    uint64_t wait_counter, vtime, rng;
    uint64_t sigact[SNAP_SIGACTS];
    uint64_t sig_shared;       /* signals pending for the process (format 1.4) */
    struct vma *vmas;          /* owned */
    size_t nvmas;
    uint64_t brk_base, brk_cur;
    uint64_t frames_used, frames_next;
    uint64_t *frame_bitmap;    /* owned, (mem / PAGE_SIZE + 63) / 64 words */
    uint64_t table_cursor;
    struct snapimg_table *tables; /* owned, ascending */
    size_t ntables;
    uint64_t pml4_user[256];
    struct snapimg_page *pages;   /* owned array; data borrowed */
    size_t npages;
    char *cwd;                    /* owned: the guest's working directory; NULL: unknown */
    struct snapimg_fd *fds;       /* owned: open descriptors (files), ascending by fd */
    size_t nfds;
    struct snapimg_pipe *pipes;   /* owned: the pipes and eventfds fds name */
    size_t npipes;
    uint32_t next_pipe;           /* the id the program's next pipe or eventfd gets, less 1 */
    bool has_ovl;                 /* the written files' section (format 1.3) */
    struct snapimg_inode *inodes; /* owned */
    size_t ninodes;
    struct snapimg_ent *ents;     /* owned */
    size_t nents;
    uint64_t next_ino, ovl_limit; /* the next inode number; the run's --file-mem */
};

void snapimg_free(struct snap_image *s);
/* Words of an image's frame bitmap for mem bytes of guest memory. */
uint64_t snapimg_bitmap_words(uint64_t mem);
/* The checks above; snapfile_parse makes them too. 0, or -1 with a message. */
int snapimg_validate(const struct snap_image *s, char *err, size_t errlen);
/* The descriptor and cwd part of those checks. */
int snapimg_validate_fds(const struct snap_image *s, char *err, size_t errlen);
/* Bytes of guest memory the image stores (pages x PAGE_SIZE). */
uint64_t snapimg_bytes(const struct snap_image *s);

#endif
