/* Pipes, eventfds and socket pairs inside the guest (issue 28): pipe/pipe2,
 * eventfd/eventfd2, socketpair(AF_UNIX, SOCK_STREAM) (two pipes, one each way), their
 * read/readv/write/writev/sendto/recvfrom, fstat/lseek/fcntl/ioctl(FIONREAD); poll/ppoll
 * and select/pselect6 (pipes_poll.c) and epoll (epoll.c) over them and over the file
 * layer's descriptors (always ready). A pipe is a ring in VMM memory, an eventfd a
 * counter, an epoll instance an interest list; each lives in the descriptor table as a
 * files.h gfile naming a gpipe.
 *
 * A read of an empty pipe or eventfd, a write to a full one, a poll, select or epoll_wait
 * with nothing ready block the thread exactly as a futex wait does (futex.h): the
 * thread's state is T_BLOCKED on a key outside the user half (PIPE_KEY: one per pipe and
 * direction, one for every kind of poller), so the deadlock detector, virtual time and
 * snapshots treat it like any wait. Whoever may make it possible (a read or write that
 * moved bytes, a close, an epoll_ctl) wakes every waiter whose call would now go, which
 * then makes its syscall again (SYSRET_RERUN: kvm/sysread.c, as a thread restored
 * blocked does), all under vm->lock: who gets which bytes depends only on the order of
 * the calls, so a serialized run is deterministic. Serialized execution hears of each
 * pipe operation as a futex wait (blocked, or EX_F_NOBLOCK) or wake on its key
 * (vcpu.sync_*). Snapshots carry every pipe's bytes, counter and interests (files_save),
 * another VM gets its own copies (files_restore), and images and dumps carry them too
 * (files_state_export). */
#ifndef JINX_PIPES_H
#define JINX_PIPES_H
#include "kvm/vm.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PIPE_CAP 65536u              /* bytes a pipe holds (Linux's default) */
#define PIPE_ATOMIC 4096u            /* PIPE_BUF: writes up to it are never split */
/* A blocking write is never cut short, as on Linux: one up to PIPE_CAP waits until there
 * is room for all of it, a bigger one until the pipe is empty, which then takes it whole,
 * as a pipe whose size F_SETPIPE_SZ raised would (up to PIPE_STRETCH, Linux's default
 * pipe-max-size; a bigger write comes back short). So the result of each write depends
 * only on the bytes in the pipe, never on how far a partial write got. */
#define PIPE_STRETCH (1u << 20)
#define PIPE_KEY_BASE 0xffffe00000000000ULL
#define PIPE_KEY_POLL (PIPE_KEY_BASE - 64)     /* every blocked poll/ppoll */
#define PIPE_KEY_SELECT (PIPE_KEY_BASE - 48)   /* every blocked select/pselect6 */
#define PIPE_KEY_EPOLL (PIPE_KEY_BASE - 32)    /* every blocked epoll_wait/epoll_pwait */
/* PIPE_KEY_BASE - 16: every blocked rt_sigtimedwait (SIG_KEY, linux/signals.h) */
static inline bool pipe_key(uint64_t a) { return a >= PIPE_KEY_POLL && a < PIPE_KEY_BASE + (1ULL << 40); }

/* An epoll instance's interest: descriptor fd while it still names file f (closing it
 * ends the interest, as closing the last reference does on Linux). */
struct epitem {
    int fd;
    uint32_t events;                 /* EPOLL* asked; 0 once an EPOLLONESHOT fired */
    uint64_t data;
    struct gfile *f;                 /* a reference; NULL for fds 0-2 */
};

/* What a wait on pipe key k is, for deadlock reports: "poll", "select", "epoll_wait", or
 * "a read of pipe 3" / "a write to pipe 3" (an eventfd's too) into buf. */
const char *pipe_key_what(uint64_t k, char *buf, size_t len);

struct gpipe {
    uint32_t id;
    bool eventfd, semaphore, epoll;
    uint8_t *buf;                    /* ring of size bytes (pipes) */
    uint32_t size;                   /* PIPE_CAP, more while a stretched write is in it */
    uint32_t head, len;
    uint64_t count;                  /* eventfd's counter */
    struct epitem *items;            /* an epoll instance's interest list, in ADD order */
    int nitems, capitems;
    int refs;                        /* gfiles naming it (under vm->lock or alone) */
};

/* Handles nr when it is a pipe/eventfd/poll syscall, or a descriptor call on a pipe or
 * eventfd descriptor (*handled set). Result, -errno or SYSRET_BLOCKED. */
int64_t pipes_syscall(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                      bool *handled);
/* A blocked poll/select/epoll_wait whose deadline came (futex.c): its result, 0, after
 * select's sets are emptied. Caller holds vm->lock. */
int64_t pipes_timed_out_locked(struct vm *vm, struct vcpu *v);
/* A descriptor was closed or replaced: the pipe's waiters may now see EOF or EPIPE.
 * Takes vm->lock; call without fs->lock. */
void pipes_closed(struct vm *vm, struct gpipe *p);
void gpipe_put(struct gpipe *p);

/* A new pipe (a 64 KiB ring) or eventfd with id, empty; one reference. NULL: no memory. */
struct gpipe *gpipe_new(uint32_t id, bool eventfd, bool semaphore);
/* The same for an epoll instance (epoll.c), with no interest. */
struct gpipe *gpipe_new_epoll(uint32_t id);
/* A new descriptor-table file naming end (0 read, 1 write, 2 eventfd) of p, which it
 * holds a reference to; one reference. NULL: no memory. */
struct gfile *gpipe_end(struct gpipe *p, int end);
/* A socketpair end receiving from rx and sending into tx (references to both). */
struct gfile *gpipe_sock(struct gpipe *rx, struct gpipe *tx);

/* Snapshots (files_state.c): the bytes and counters of every pipe a table names. */
struct pipe_saved {
    struct gpipe *p;                 /* one reference held */
    uint8_t *bytes;
    uint32_t len;
    uint64_t count;
    struct epitem *items;            /* an epoll instance's interest (references held) */
    int nitems;
};
void pipes_save(struct pipe_saved **out, int *n, struct gpipe *const *pipes, int npipes);
void pipes_restore(const struct pipe_saved *s, int n);
/* Puts saved state s into p (another VM's copy of s->p: a worker's, or an image's).
 * 0, or -1 when s lost its bytes (out of memory when it was saved). */
int pipes_fill(struct gpipe *p, const uint8_t *bytes, uint32_t len, uint64_t count);
/* Gives epoll instance p the interest items (n of them; their f ignored), each naming
 * what fs's descriptor fd is now if match(fd, f) says it is the same file (another VM's
 * or an image's table brought here); others are dropped. 0, or -1 out of memory. */
int epoll_rebind(struct gpipe *p, const struct epitem *items, int n, struct files *fs,
                 bool (*match)(const void *ctx, int fd, const struct gfile *f), const void *ctx);
void pipes_saved_free(struct pipe_saved **s, int *n);

#endif
