/* What pipes.c (pipes and eventfds), pipes_poll.c (poll and select) and epoll.c share: the
 * Linux constants they answer with and the descriptor helpers. Callers hold fs->lock
 * where a helper reads the descriptor table. */
#ifndef JINX_PIPES_INT_H
#define JINX_PIPES_INT_H
#include "linux/files.h"
#include "linux/files_int.h"
#include "linux/pipes.h"

#define G_O_NONBLOCK 04000
#define G_O_CLOEXEC 02000000
#define G_O_DIRECT 040000
#define EFD_SEMAPHORE_ 1
#define MAX_SEGS 1024
#define END_READ 0
#define END_WRITE 1
#define END_EVENT 2
#define END_EPOLL 3                  /* an epoll instance (epoll.c): gpipe.items */
#define END_SOCK 4                   /* a socketpair end: reads pipe, writes tx */
#define POLLRDHUP_ 0x2000
#define MSG_DONTWAIT_ 0x40
#define MSG_NOSIGNAL_ 0x4000
#define POLLIN_ 0x001
#define POLLPRI_ 0x002
#define POLLOUT_ 0x004
#define POLLERR_ 0x008
#define POLLHUP_ 0x010
#define POLLNVAL_ 0x020
#define POLLRDNORM_ 0x040
#define POLLWRNORM_ 0x100
#define SYNC_WAIT 1
#define SYNC_WAKE 2

/* Tells serialized execution what this syscall was (serialize_after_syscall): a wait
 * (SYNC_WAIT, blocked or not) or a wake (SYNC_WAKE) on key. */
void pipe_sync_note(struct vcpu *v, int kind, uint64_t key, uint32_t arg);
/* The pipe, eventfd or epoll file behind guest fd (and its O_NONBLOCK); NULL otherwise. */
struct gfile *pipe_fd(struct files *fs, int64_t fd, bool *nonblock);
/* The room a pipe has for writes that must not wait (none once it holds PIPE_CAP). */
uint32_t pipe_space(const struct gpipe *p);
/* Is some descriptor of the table an open end (END_READ/END_WRITE) of p? */
bool pipe_end_open(struct files *fs, const struct gpipe *p, int end);
/* poll's readiness of descriptor fd for events (POLLNVAL for a closed one; files and
 * directories are always ready). */
short pipes_ready(struct files *fs, int fd, short events);

/* Reruns every blocked read, write, poll, select or epoll_wait that would now go
 * (SYSRET_RERUN). Caller holds vm->lock and fs->lock. */
void pipes_kick_locked(struct vm *vm);
/* The next pipe/eventfd/epoll id (kept with the descriptor table: the same in every
 * simulation of a fragment). */
uint32_t pipes_new_id(struct vm *vm);
/* Puts nends new files naming ends of p at the lowest free descriptors (out[]), with
 * flags' O_CLOEXEC and O_NONBLOCK. 0 or -errno. */
int64_t pipes_new_fds(struct vm *vm, struct gpipe *p, int nends, const int *ends, int flags,
                      int *out);
/* Puts the n files f (their references) at the lowest free descriptors (out[]), with
 * flags' O_CLOEXEC and O_NONBLOCK. 0, or -EMFILE (the files then released). */
int64_t pipes_install(struct vm *vm, struct gfile **f, int n, int flags, int *out);
/* A guest timespec (usec: a timeval) at uptr as ns: UINT64_MAX for NULL. 0 or -errno. */
int64_t pipes_timeout_ns(struct vm *vm, uint64_t uptr, bool usec, uint64_t *ns);

/* epoll.c: epoll_create/create1/ctl/wait/pwait/pwait2 (*handled set when nr is one). */
int64_t epoll_syscall(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                      bool *handled);
/* Would epoll instance p report something now? Caller holds fs->lock. */
bool epoll_has_events(struct files *fs, const struct gpipe *p);
/* Would a blocked epoll_wait on epfd now return? */
bool epoll_waiter_ready(struct vm *vm, int64_t epfd);
/* Interest lists for snapshots: a copy holding references; its release; p's list set
 * to a copy of items. 0, or -1 out of memory. */
int epoll_copy_items(struct epitem **out, const struct epitem *items, int n);
void epoll_free_items(struct epitem *items, int n);
int epoll_set_items(struct gpipe *p, const struct epitem *items, int n);

/* pipes_poll.c: poll/ppoll/select/pselect6 (*handled set when nr is one). */
int64_t pipes_poll_syscall(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                           bool *handled);
/* Would blocked poller w (PIPE_KEY_POLL/SELECT/EPOLL) now return? Reads only. */
bool pipes_poller_ready_locked(struct vm *vm, const struct vcpu *w);

#endif
