/* Pipes, eventfds and poll in the guest (pipes.h). */
#include "linux/pipes.h"
#include "linux/pipes_int.h"
#include "linux/files.h"
#include "linux/files_int.h"
#include "linux/futex.h"
#include "linux/syscall.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

void gpipe_put(struct gpipe *p)
{
    if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(p->buf);
        epoll_free_items(p->items, p->nitems);
        free(p);
    }
}

static struct gpipe *gpipe_get(struct gpipe *p)
{
    if (p)
        __atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
    return p;
}

struct gpipe *gpipe_new(uint32_t id, bool eventfd, bool semaphore)
{
    struct gpipe *p = calloc(1, sizeof *p);
    if (!p || (!eventfd && !(p->buf = malloc(p->size = PIPE_CAP)))) {
        free(p);
        return NULL;
    }
    p->id = id;
    p->refs = 1;
    p->eventfd = eventfd;
    p->semaphore = semaphore;
    return p;
}

struct gfile *gpipe_end(struct gpipe *p, int end)
{
    struct gfile *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->hostfd = -1;
    atomic_init(&f->refs, 1);
    f->pipe = gpipe_get(p);
    f->end = (uint8_t)end;
    return f;
}

struct gfile *gpipe_sock(struct gpipe *rx, struct gpipe *tx)
{
    struct gfile *f = gpipe_end(rx, END_SOCK);
    if (f)
        f->tx = gpipe_get(tx);
    return f;
}

/* The calls that read (read, readv, recvfrom), and those with one buffer (not readv or
 * writev): the blocked-call checks below see them by number. */
static bool is_read(uint64_t nr) { return nr == SYS_read || nr == SYS_readv || nr == SYS_recvfrom; }
static bool is_flat(uint64_t nr)
{
    return nr == SYS_read || nr == SYS_write || nr == SYS_recvfrom || nr == SYS_sendto;
}

/* The pipe a read or write of f moves bytes through, and as which end. */
static struct gpipe *io_pipe(const struct gfile *f, bool reading)
{
    return f->end == END_SOCK && !reading ? f->tx : f->pipe;
}
static int io_end(const struct gfile *f, bool reading)
{
    return f->end == END_SOCK ? (reading ? END_READ : END_WRITE) : f->end;
}

static uint64_t key_of(const struct gpipe *p, int end)
{
    return PIPE_KEY_BASE + ((uint64_t)p->id << 4) + (end == END_WRITE ? 8 : 0);
}

/* Tells serialized execution what this syscall was (serialize_after_syscall). */
void pipe_sync_note(struct vcpu *v, int kind, uint64_t key, uint32_t arg)
{
    v->sync_kind = (uint8_t)kind;
    v->sync_addr = key;
    v->sync_arg = arg;
}

/* The pipe or eventfd behind guest fd, with its end; NULL when fd is not one. */
struct gfile *pipe_fd(struct files *fs, int64_t fd, bool *nonblock)
{
    if (fd < 3 || fd >= FILES_MAX)
        return NULL;
    struct gfile *f = fs->fd[fd].f;
    if (!f || !f->pipe)
        return NULL;
    if (nonblock)
        *nonblock = fs->fd[fd].nonblock;
    return f;
}

/* Is some descriptor of the table an open end (END_READ/END_WRITE) of p? */
bool pipe_end_open(struct files *fs, const struct gpipe *p, int end)
{
    for (int i = 3; i < fs->hi; i++) {
        const struct gfile *f = fs->fd[i].f;
        if (f && (f->end == END_SOCK ? (end == END_READ ? f->pipe : f->tx) == p
                                     : f->pipe == p && f->end == end))
            return true;
    }
    return false;
}

/* A read or write's buffers: (buf, len) or an iovec array. n segments or -errno. */
struct seg { uint64_t base, len; };
static int segs_of(struct vm *vm, uint64_t nr, uint64_t a1, uint64_t a2, struct seg *s,
                   int cap, uint64_t *total)
{
    *total = 0;
    if (is_flat(nr)) {
        *total = a2 > 0x7FFFF000 ? 0x7FFFF000 : a2;
        if (s)
            s[0] = (struct seg){a1, *total};
        return 1;
    }
    if (a2 > MAX_SEGS)
        return -EINVAL;
    int n = 0;
    for (uint64_t i = 0; i < a2; i++) {
        uint64_t e[2];
        if (!copy_from_user(&vm->gm, e, a1 + i * 16, 16))
            return -EFAULT;
        if (e[1] > 0x7FFFF000 || *total + e[1] > 0x7FFFF000)
            return -EINVAL;
        if (e[1]) {
            if (s && n == cap)
                return -EFAULT; /* another thread changed the array since it was counted */
            if (s)
                s[n] = (struct seg){e[0], e[1]};
            n++;
            *total += e[1];
        }
    }
    return n;
}

/* Moves up to max bytes between the ring and the segments. Bytes moved or -EFAULT. */
static int64_t ring_io(struct vm *vm, struct gpipe *p, const struct seg *s, int n, uint64_t max,
                       bool to_user)
{
    uint64_t done = 0;
    for (int i = 0; i < n && done < max; i++) {
        uint64_t off = 0;
        while (off < s[i].len && done < max) {
            uint32_t at = to_user ? p->head : (p->head + p->len) % p->size;
            uint64_t chunk = p->size - at;
            if (chunk > s[i].len - off)
                chunk = s[i].len - off;
            if (chunk > max - done)
                chunk = max - done;
            bool ok = to_user ? copy_to_user(&vm->gm, s[i].base + off, p->buf + at, chunk)
                              : copy_from_user(&vm->gm, p->buf + at, s[i].base + off, chunk);
            if (!ok)
                return done ? (int64_t)done : -EFAULT;
            if (to_user) {
                p->head = (uint32_t)((p->head + chunk) % p->size);
                p->len -= (uint32_t)chunk;
            } else {
                p->len += (uint32_t)chunk;
            }
            off += chunk;
            done += chunk;
        }
    }
    return (int64_t)done;
}

/* A ring of size bytes for p, which is empty (head 0). False: out of memory, p as was. */
static bool resize(struct gpipe *p, uint32_t size)
{
    uint8_t *b = malloc(size);
    if (!b)
        return false;
    free(p->buf);
    p->buf = b;
    p->size = size;
    p->head = 0;
    return true;
}

uint32_t pipe_space(const struct gpipe *p)
{
    return p->len >= PIPE_CAP ? 0 : PIPE_CAP - p->len;
}

/* How many of a write's total bytes p takes now, or -EAGAIN to wait (pipes.h's
 * PIPE_STRETCH rule when blocking; nonblocking, what fits, but never part of a write of
 * up to PIPE_ATOMIC bytes). */
static int64_t write_take(const struct gpipe *p, uint64_t total, bool nonblock)
{
    uint32_t space = pipe_space(p);
    if (nonblock) {
        if (space == 0 || (total <= PIPE_ATOMIC && space < total))
            return -EAGAIN;
        return (int64_t)(total < space ? total : space);
    }
    if (total <= space)
        return (int64_t)total;
    if (total <= PIPE_CAP || p->len)
        return -EAGAIN;
    return total < PIPE_STRETCH ? (int64_t)total : PIPE_STRETCH;
}

/* The read or write of nr (read/readv/write/writev) on end f with args a1, a2, as far as
 * it can go now: a result, or -EAGAIN when it must wait. Caller holds vm->lock and
 * fs->lock. */
static int64_t io_segs(struct vm *vm, struct gpipe *p, int end, bool reading,
                       const struct seg *s, int n, uint64_t total, bool nonblock);

static int64_t try_io(struct vm *vm, struct gfile *f, uint64_t nr, uint64_t a1, uint64_t a2,
                      bool nonblock)
{
    bool reading = is_read(nr);
    struct gpipe *p = io_pipe(f, reading);
    int end = io_end(f, reading);
    /* The segments: on the stack for a few, else on the heap (no big per-thread array:
     * a vCPU thread's stack is small). */
    uint64_t total;
    int n = segs_of(vm, nr, a1, a2, NULL, 0, &total);
    if (n < 0)
        return n;
    struct seg few[8], *s = n <= 8 ? few : malloc((size_t)n * sizeof *s);
    if (!s)
        return -ENOMEM;
    n = segs_of(vm, nr, a1, a2, s, n > 8 ? n : 8, &total);
    int64_t r = n < 0 ? n : io_segs(vm, p, end, reading, s, n, total, nonblock);
    if (s != few)
        free(s);
    return r;
}

/* try_io's work on the segments. */
static int64_t io_segs(struct vm *vm, struct gpipe *p, int end, bool reading,
                       const struct seg *s, int n, uint64_t total, bool nonblock)
{
    struct files *fs = vm->files;
    if (end == END_EVENT) {
        if (total < 8 || n != 1 || s[0].len < 8)
            return total < 8 ? -EINVAL : -EINVAL;
        if (reading) {
            if (p->count == 0)
                return -EAGAIN;
            uint64_t val = p->semaphore ? 1 : p->count;
            if (!copy_to_user(&vm->gm, s[0].base, &val, 8))
                return -EFAULT;
            p->count -= val;
            return 8;
        }
        uint64_t val;
        if (!copy_from_user(&vm->gm, &val, s[0].base, 8))
            return -EFAULT;
        if (val == UINT64_MAX)
            return -EINVAL;
        if (p->count > UINT64_MAX - 1 - val)
            return -EAGAIN;
        p->count += val;
        return 8;
    }
    if (reading != (end == END_READ))
        return -EBADF;
    if (total == 0)
        return 0;
    if (reading) {
        if (p->len == 0)
            return pipe_end_open(fs, p, END_WRITE) ? -EAGAIN : 0;
        int64_t r = ring_io(vm, p, s, n, p->len, true);
        if (p->len == 0 && p->size > PIPE_CAP)
            resize(p, PIPE_CAP); /* a stretched write is all read: back to the usual ring */
        return r;
    }
    if (!pipe_end_open(fs, p, END_READ))
        return -EPIPE;
    int64_t take = write_take(p, total, nonblock);
    if (take > p->size - p->len && !resize(p, (uint32_t)take)) /* only when empty */
        take = p->size;
    return take < 0 ? take : ring_io(vm, p, s, n, (uint64_t)take, false);
}

/* Would the blocked read or write of nr on f go now (a result other than -EAGAIN)?
 * Caller holds vm->lock and fs->lock. */
static bool would_go(struct vm *vm, struct gfile *f, uint64_t nr, uint64_t a1, uint64_t a2)
{
    bool reading = is_read(nr);
    struct gpipe *p = io_pipe(f, reading);
    if (f->end == END_EVENT) {
        uint64_t val = 0;
        if (reading)
            return p->count != 0;
        return !copy_from_user(&vm->gm, &val, a1, 8) || p->count <= UINT64_MAX - 1 - val ||
               nr != SYS_write;
    }
    if (reading)
        return p->len || !pipe_end_open(vm->files, p, END_WRITE);
    uint64_t total;
    return segs_of(vm, nr, a1, a2, NULL, 0, &total) < 0 || !pipe_end_open(vm->files, p, END_READ) ||
           write_take(p, total, false) != -EAGAIN;
}

/* Wakes every blocked caller whose call would now go, to make it again (SYSRET_RERUN:
 * the thread reruns the syscall, kvm/vm.c, exactly as a thread restored blocked does).
 * Caller holds vm->lock and fs->lock. */
void pipes_kick_locked(struct vm *vm)
{
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *w = vm->vcpus[i];
        if (!w->tid || w->state != T_BLOCKED || w->woken || !pipe_key(w->wait_addr))
            continue;
        const struct kvm_regs *b = &w->blocked_regs;
        bool go;
        if (w->wait_addr < PIPE_KEY_BASE) {
            go = pipes_poller_ready_locked(vm, w);
        } else {
            struct gfile *f = pipe_fd(vm->files, (int64_t)(int)b->rdi, NULL);
            go = !f || would_go(vm, f, b->rax, b->rsi, b->rdx);
        }
        if (go) {
            futex_unblock_locked(vm, w, SYSRET_RERUN);
            pthread_cond_signal(&w->cv);
        }
    }
}

void pipes_closed(struct vm *vm, struct gpipe *p)
{
    (void)p;
    pthread_mutex_lock(&vm->lock);
    pthread_mutex_lock(&vm->files->lock);
    pipes_kick_locked(vm);
    pthread_mutex_unlock(&vm->files->lock);
    pthread_mutex_unlock(&vm->lock);
}

int64_t pipes_install(struct vm *vm, struct gfile **f, int n, int flags, int *out)
{
    struct files *fs = vm->files;
    pthread_mutex_lock(&fs->lock);
    int got = 0;
    for (int i = 3; i < FILES_MAX && got < n; i++)
        if (!fs->fd[i].f)
            out[got++] = i;
    if (got == n)
        for (int i = 0; i < n; i++)
            files_set_fd(fs, out[i], (struct fdent){.f = f[i],
                                                    .cloexec = (flags & G_O_CLOEXEC) != 0,
                                                    .nonblock = (flags & G_O_NONBLOCK) != 0});
    pthread_mutex_unlock(&fs->lock);
    if (got == n)
        return 0;
    for (int i = 0; i < n; i++)
        gfile_put(f[i]);
    return -EMFILE;
}

int64_t pipes_new_fds(struct vm *vm, struct gpipe *p, int nends, const int *ends, int flags,
                      int *out)
{
    struct gfile *f[2] = {0};
    for (int i = 0; i < nends && i < 2; i++)
        if (!(f[i] = gpipe_end(p, ends[i]))) {
            gfile_put(f[0]);
            return -ENOMEM;
        }
    return pipes_install(vm, f, nends, flags, out);
}

/* Ids in creation order, kept with the descriptor table (snapshots restore them), so a
 * pipe's wait key is the same in every simulation and replay of a fragment. */
uint32_t pipes_new_id(struct vm *vm)
{
    pthread_mutex_lock(&vm->files->lock);
    uint32_t id = ++vm->files->next_pipe & 0x0fffffff;
    pthread_mutex_unlock(&vm->files->lock);
    return id;
}

static int64_t do_pipe2(struct vm *vm, uint64_t ufds, uint64_t flags)
{
    if (flags & ~(uint64_t)(G_O_CLOEXEC | G_O_NONBLOCK | G_O_DIRECT))
        return -EINVAL;
    int probe[2] = {0, 0};
    if (!copy_to_user(&vm->gm, ufds, probe, sizeof probe))
        return -EFAULT;
    struct gpipe *p = gpipe_new(pipes_new_id(vm), false, false);
    if (!p)
        return -ENOMEM;
    int fds[2], ends[2] = {END_READ, END_WRITE};
    int64_t r = pipes_new_fds(vm, p, 2, ends, (int)flags, fds);
    gpipe_put(p);
    if (r)
        return r;
    return copy_to_user(&vm->gm, ufds, fds, sizeof fds) ? 0 : -EFAULT;
}

static int64_t do_eventfd(struct vm *vm, uint64_t initval, uint64_t flags)
{
    if (flags & ~(uint64_t)(G_O_CLOEXEC | G_O_NONBLOCK | EFD_SEMAPHORE_))
        return -EINVAL;
    struct gpipe *p = gpipe_new(pipes_new_id(vm), true, flags & EFD_SEMAPHORE_);
    if (!p)
        return -ENOMEM;
    p->count = (uint32_t)initval;
    int fd, end = END_EVENT;
    int64_t r = pipes_new_fds(vm, p, 1, &end, (int)flags, &fd);
    gpipe_put(p);
    return r ? r : fd;
}

/* socketpair(AF_UNIX, SOCK_STREAM): two pipes, one each way. */
static int64_t do_socketpair(struct vm *vm, const uint64_t a[6], bool *handled)
{
    int domain = (int)a[0], type = (int)a[1] & ~(G_O_NONBLOCK | G_O_CLOEXEC);
    if (domain == 2 || domain == 10) /* AF_INET, AF_INET6 */
        return -EOPNOTSUPP;
    if (domain != 1)
        return -EAFNOSUPPORT;
    if (type != 1) { /* datagram and seqpacket pairs: not here, a jinx limit */
        *handled = false;
        return -ENOSYS;
    }
    if ((int)a[2] != 0 && (int)a[2] != 1)
        return -EPROTONOSUPPORT;
    int probe[2] = {0, 0};
    if (!copy_to_user(&vm->gm, a[3], probe, sizeof probe))
        return -EFAULT;
    struct gpipe *one = gpipe_new(pipes_new_id(vm), false, false);
    struct gpipe *two = one ? gpipe_new(pipes_new_id(vm), false, false) : NULL;
    struct gfile *f[2] = {two ? gpipe_sock(two, one) : NULL, NULL};
    f[1] = f[0] ? gpipe_sock(one, two) : NULL;
    gpipe_put(one);
    gpipe_put(two);
    if (!f[1]) {
        gfile_put(f[0]);
        return -ENOMEM;
    }
    int fds[2];
    int64_t r = pipes_install(vm, f, 2, (int)a[1], fds);
    if (r)
        return r;
    return copy_to_user(&vm->gm, a[3], fds, sizeof fds) ? 0 : -EFAULT;
}

/* read/readv/write/writev on a pipe or eventfd descriptor, recvfrom/sendto on a socket's
 * (dontwait: MSG_DONTWAIT). */
static int64_t do_io(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                     bool dontwait)
{
    pthread_mutex_lock(&vm->lock);
    pthread_mutex_lock(&vm->files->lock);
    bool nonblock = false;
    struct gfile *f = pipe_fd(vm->files, (int64_t)(int)a[0], &nonblock);
    int64_t r = f ? try_io(vm, f, nr, a[1], a[2], nonblock || dontwait) : -EBADF;
    bool reading = is_read(nr);
    int end = f ? io_end(f, reading) : 0;
    uint64_t key = f ? key_of(io_pipe(f, reading),
                              end == END_EVENT ? (reading ? END_READ : END_WRITE) : end) : 0;
    if (r == -EAGAIN && !nonblock && !dontwait && f) {
        pipe_sync_note(v, SYNC_WAIT, key, 0);
        futex_block_locked(vm, v, key, NO_DEADLINE);
        r = SYSRET_BLOCKED;
    } else if (f) {
        /* Bytes moved: a waiter on the other side may go now. */
        pipe_sync_note(v, r > 0 ? SYNC_WAKE : SYNC_WAIT, key, 0);
        if (r > 0)
            pipes_kick_locked(vm); /* bytes or counts moved: a waiter may go now */
    }
    pthread_mutex_unlock(&vm->files->lock);
    pthread_mutex_unlock(&vm->lock);
    return r; /* -EPIPE: syscall.c raises SIGPIPE */
}

/* fstat of a pipe (S_IFIFO) or eventfd (an anonymous inode, mode 0600). */
static int64_t do_fstat(struct vm *vm, struct gfile *f, uint64_t buf)
{
    uint8_t st[144];
    memset(st, 0, sizeof st);
    uint64_t nlink = 1, blksize = 4096, ino = f->pipe->id;
    uint32_t mode = f->end == END_SOCK ? 0140777 : f->end >= END_EVENT ? 0600 : 0010600;
    memcpy(st + 8, &ino, 8);
    memcpy(st + 16, &nlink, 8);
    memcpy(st + 24, &mode, 4);
    memcpy(st + 56, &blksize, 8);
    return copy_to_user(&vm->gm, buf, st, sizeof st) ? 0 : -EFAULT;
}

static int64_t fd_call(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                       bool *handled)
{
    struct files *fs = vm->files;
    int64_t fd = (int64_t)(int)a[0];
    pthread_mutex_lock(&fs->lock);
    bool nb;
    struct gfile *f = pipe_fd(fs, fd, &nb);
    int64_t r = -ENOSYS;
    *handled = f != NULL;
    if (f) {
        switch (nr) {
        case SYS_lseek: case SYS_pread64: case SYS_pwrite64: case SYS_fadvise64:
            r = -ESPIPE;
            break;
        case SYS_fsync: case SYS_fdatasync: r = -EINVAL; break;
        case SYS_fstat: r = do_fstat(vm, f, a[1]); break;
        case SYS_ioctl:
            if (a[1] == 0x541B && f->end <= END_WRITE) { /* FIONREAD */
                int n = (int)f->pipe->len;
                r = copy_to_user(&vm->gm, a[2], &n, sizeof n) ? 0 : -EFAULT;
            } else {
                r = -ENOTTY;
            }
            break;
        case SYS_fcntl:
            if ((int)a[1] == 3) { /* F_GETFL: O_RDONLY, O_WRONLY or O_RDWR */
                r = (f->end == END_READ ? 0 : f->end == END_WRITE ? 1 : 2) |
                    (nb ? G_O_NONBLOCK : 0);
            } else if ((int)a[1] == 4) { /* F_SETFL */
                /* A flag of the open file: every descriptor dup'd from it sees it. */
                for (int i = 3; i < fs->hi; i++)
                    if (fs->fd[i].f == f)
                        fs->fd[i].nonblock = (a[2] & G_O_NONBLOCK) != 0;
                r = 0;
            } else {
                *handled = false; /* files.c: dup, cloexec */
            }
            break;
        default:
            *handled = false;
        }
    }
    pthread_mutex_unlock(&fs->lock);
    if (f && !*handled && (nr == SYS_read || nr == SYS_readv || nr == SYS_write ||
                           nr == SYS_writev)) {
        *handled = true;
        return f->end == END_EPOLL ? -EINVAL : do_io(vm, v, nr, a, false);
    }
    return r;
}

int64_t pipes_syscall(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                      bool *handled)
{
    *handled = true;
    switch (nr) {
    case SYS_pipe: return do_pipe2(vm, a[0], 0);
    case SYS_pipe2: return do_pipe2(vm, a[0], a[1]);
    case SYS_eventfd: return do_eventfd(vm, a[0], 0);
    case SYS_eventfd2: return do_eventfd(vm, a[0], a[1]);
    case SYS_read: case SYS_readv: case SYS_write: case SYS_writev: case SYS_lseek:
    case SYS_pread64: case SYS_pwrite64: case SYS_fstat: case SYS_ioctl: case SYS_fcntl:
    case SYS_fadvise64: case SYS_fsync: case SYS_fdatasync:
        return fd_call(vm, v, nr, a, handled);
    case SYS_socketpair: return do_socketpair(vm, a, handled);
    case SYS_sendto: case SYS_recvfrom: {
        /* A connected stream: no address; flags MSG_DONTWAIT and MSG_NOSIGNAL (syscall.c).
         * Anything else (MSG_PEEK, MSG_WAITALL, an address) is a jinx limit. */
        int64_t fd = (int64_t)(int)a[0];
        pthread_mutex_lock(&vm->files->lock);
        bool open = fd >= 0 && fd < FILES_MAX && (fd < 3 || vm->files->fd[fd].f);
        struct gfile *f = pipe_fd(vm->files, fd, NULL);
        bool sock = f && f->end == END_SOCK;
        pthread_mutex_unlock(&vm->files->lock);
        if (!sock)
            return open ? -ENOTSOCK : -EBADF;
        if ((a[3] & ~(uint64_t)(MSG_DONTWAIT_ | MSG_NOSIGNAL_)) || a[4] ||
            (nr == SYS_sendto && a[5])) {
            *handled = false;
            return -ENOSYS;
        }
        return do_io(vm, v, nr, a, a[3] & MSG_DONTWAIT_);
    }
    }
    int64_t r = pipes_poll_syscall(vm, v, nr, a, handled);
    return *handled ? r : epoll_syscall(vm, v, nr, a, handled);
}

void pipes_save(struct pipe_saved **out, int *n, struct gpipe *const *pipes, int npipes)
{
    pipes_saved_free(out, n);
    if (!npipes)
        return;
    struct pipe_saved *s = calloc((size_t)npipes, sizeof *s);
    if (!s)
        return;
    for (int i = 0; i < npipes; i++) {
        struct gpipe *p = pipes[i];
        s[i].p = gpipe_get(p);
        s[i].len = p->len;
        s[i].count = p->count;
        if (p->epoll && epoll_copy_items(&s[i].items, p->items, p->nitems) == 0)
            s[i].nitems = p->nitems;
        if (p->len && (s[i].bytes = malloc(p->len))) {
            uint32_t first = p->size - p->head < p->len ? p->size - p->head : p->len;
            memcpy(s[i].bytes, p->buf + p->head, first);
            memcpy(s[i].bytes + first, p->buf, p->len - first);
        }
    }
    *out = s;
    *n = npipes;
}

int pipes_fill(struct gpipe *p, const uint8_t *bytes, uint32_t len, uint64_t count)
{
    p->head = 0;
    if (len > p->size && (!p->buf || len > PIPE_STRETCH || !resize(p, len)))
        len = 0; /* out of memory, or not a pipe's: fails below */
    p->len = bytes && p->buf ? len : 0;
    if (p->len)
        memcpy(p->buf, bytes, p->len);
    p->count = count;
    return p->len == len ? 0 : -1;
}

void pipes_restore(const struct pipe_saved *s, int n)
{
    for (int i = 0; i < n; i++) {
        pipes_fill(s[i].p, s[i].bytes, s[i].len, s[i].count);
        if (s[i].p->epoll)
            epoll_set_items(s[i].p, s[i].items, s[i].nitems);
    }
}

void pipes_saved_free(struct pipe_saved **s, int *n)
{
    for (int i = 0; i < *n; i++) {
        gpipe_put((*s)[i].p);
        free((*s)[i].bytes);
        epoll_free_items((*s)[i].items, (*s)[i].nitems);
    }
    free(*s);
    *s = NULL;
    *n = 0;
}
