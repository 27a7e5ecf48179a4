/* epoll instances in the guest (pipes.h, pipes_int.h): epoll_create/epoll_create1,
 * epoll_ctl, epoll_wait/epoll_pwait/epoll_pwait2 over pipes, eventfds, other epoll
 * instances and files (EPERM, as Linux: a regular file cannot be watched).
 *
 * Level-triggered: EPOLLET is accepted and reported as level (a program that drains to
 * EAGAIN, as edge-triggered ones must, sees the same; one that does not is woken again).
 * EPOLLONESHOT disarms the interest once reported, until EPOLL_CTL_MOD. Ready events come
 * in the order the interests were added, so a serialized run is deterministic. A wait
 * with nothing ready blocks on PIPE_KEY_EPOLL; pipe operations rerun it (pipes.c). An
 * instance holds no instance that holds another (ELOOP): no cycles, depth at most 2. */
#include "linux/pipes_int.h"
#include "linux/futex.h"
#include "linux/syscall.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define EPOLL_CLOEXEC_ 02000000
#define EPOLLONESHOT_ (1u << 30)
#define EPOLLET_ (1u << 31)
#define EPOLLEXCLUSIVE_ (1u << 28)
#define EPOLLWAKEUP_ (1u << 29)
#define EPOLL_POLLBITS 0x3fffu
#define CTL_ADD 1
#define CTL_DEL 2
#define CTL_MOD 3
#define EV_SIZE 12 /* struct epoll_event is packed on x86-64 */
#define MAX_EVENTS (1 << 20)

struct gpipe *gpipe_new_epoll(uint32_t id)
{
    struct gpipe *p = gpipe_new(id, true, false); /* no ring */
    if (p) {
        p->eventfd = false;
        p->epoll = true;
    }
    return p;
}

/* Does interest it still name the file it was added for? */
static bool item_live(struct files *fs, const struct epitem *it)
{
    return it->fd < 3 || (it->fd < FILES_MAX && fs->fd[it->fd].f == it->f);
}

/* What interest it reports now (0: nothing). */
static uint32_t item_events(struct files *fs, const struct epitem *it)
{
    if (!it->events || !item_live(fs, it))
        return 0;
    return (uint16_t)pipes_ready(fs, it->fd, (short)(it->events & EPOLL_POLLBITS));
}

bool epoll_has_events(struct files *fs, const struct gpipe *p)
{
    /* Instances inside instances: no cycle can form (epoll_ctl), but a chain can grow;
     * like Linux (EP_MAX_NESTS) look no deeper than 4, and keep the stack small. */
    static __thread int depth;
    if (depth > 4)
        return false;
    depth++;
    bool any = false;
    for (int i = 0; i < p->nitems && !any; i++)
        any = item_events(fs, &p->items[i]) != 0;
    depth--;
    return any;
}

/* Drops the interests whose descriptor was closed (they never report again). */
static void purge(struct files *fs, struct gpipe *p)
{
    int k = 0;
    for (int i = 0; i < p->nitems; i++) {
        if (item_live(fs, &p->items[i]))
            p->items[k++] = p->items[i];
        else
            gfile_put(p->items[i].f);
    }
    p->nitems = k;
}

/* The epoll instance behind epfd, or NULL. */
static struct gpipe *epoll_of(struct files *fs, int64_t epfd)
{
    struct gfile *f = pipe_fd(fs, epfd, NULL);
    return f && f->end == END_EPOLL ? f->pipe : NULL;
}

bool epoll_waiter_ready(struct vm *vm, int64_t epfd)
{
    struct gpipe *p = epoll_of(vm->files, epfd);
    return !p || epoll_has_events(vm->files, p); /* gone: the rerun answers EBADF */
}

/* Reports up to max ready interests into the guest's array at uev (oneshot ones disarm).
 * Count or -EFAULT. Caller holds fs->lock. */
static int64_t collect(struct vm *vm, struct gpipe *p, uint64_t uev, int max)
{
    int64_t n = 0;
    for (int i = 0; i < p->nitems && n < max; i++) {
        struct epitem *it = &p->items[i];
        uint32_t ev = item_events(vm->files, it);
        if (!ev)
            continue;
        uint8_t e[EV_SIZE];
        memcpy(e, &ev, 4);
        memcpy(e + 4, &it->data, 8);
        if (!copy_to_user(&vm->gm, uev + (uint64_t)n * EV_SIZE, e, EV_SIZE))
            return n ? n : -EFAULT;
        if (it->events & EPOLLONESHOT_)
            it->events = 0;
        n++;
    }
    return n;
}

static int64_t do_wait(struct vm *vm, struct vcpu *v, const uint64_t a[6], uint64_t timeout_ns)
{
    int max = (int)a[2];
    if (max <= 0 || max > MAX_EVENTS)
        return -EINVAL;
    pthread_mutex_lock(&vm->lock);
    pthread_mutex_lock(&vm->files->lock);
    int64_t epfd = (int64_t)(int)a[0];
    bool open = epfd >= 0 && epfd < FILES_MAX && (epfd < 3 || vm->files->fd[epfd].f);
    struct gpipe *p = epoll_of(vm->files, epfd);
    int64_t r = !open ? -EBADF : !p ? -EINVAL : collect(vm, p, a[1], max);
    pipe_sync_note(v, SYNC_WAIT, PIPE_KEY_EPOLL, 0);
    if (r == 0 && timeout_ns) {
        uint64_t deadline = timeout_ns == UINT64_MAX ? NO_DEADLINE : vm_vtime(vm) + timeout_ns;
        futex_block_locked(vm, v, PIPE_KEY_EPOLL, deadline);
        r = SYSRET_BLOCKED;
    }
    pthread_mutex_unlock(&vm->files->lock);
    pthread_mutex_unlock(&vm->lock);
    return r;
}

static bool holds_epoll(const struct gpipe *p)
{
    for (int i = 0; i < p->nitems; i++)
        if (p->items[i].f && p->items[i].f->end == END_EPOLL)
            return true;
    return false;
}

/* Is instance p, or an instance it holds, one that holds q? */
static bool reaches(const struct gpipe *p, const struct gpipe *q)
{
    for (int i = 0; i < p->nitems; i++) {
        const struct gfile *f = p->items[i].f;
        if (f && f->end == END_EPOLL && (f->pipe == q || holds_epoll(f->pipe)))
            return true;
    }
    return false;
}

/* epoll_ctl's checks and change. Caller holds fs->lock. */
static int64_t ctl_locked(struct vm *vm, int64_t epfd, int op, int64_t fd, uint64_t uev)
{
    struct files *fs = vm->files;
    bool epfd_open = epfd >= 0 && epfd < FILES_MAX && (epfd < 3 || fs->fd[epfd].f);
    bool fd_open = fd >= 0 && fd < FILES_MAX && (fd < 3 || fs->fd[fd].f);
    if (!epfd_open || !fd_open)
        return -EBADF;
    struct gpipe *p = epoll_of(fs, epfd);
    if (!p || fd == epfd || op < CTL_ADD || op > CTL_MOD)
        return -EINVAL;
    struct gfile *f = fd < 3 ? NULL : fs->fd[fd].f;
    if (f && !f->pipe)
        return -EPERM; /* a regular file or directory */
    uint32_t ev[3] = {0};
    if (op != CTL_DEL && !copy_from_user(&vm->gm, ev, uev, EV_SIZE))
        return -EFAULT;
    uint64_t data;
    memcpy(&data, (uint8_t *)ev + 4, 8);
    int at = 0;
    while (at < p->nitems && !(p->items[at].fd == fd && item_live(fs, &p->items[at])))
        at++;
    bool found = at < p->nitems;
    if (op == CTL_DEL || op == CTL_MOD) {
        if (!found)
            return -ENOENT;
        if (op == CTL_DEL) {
            gfile_put(p->items[at].f);
            memmove(&p->items[at], &p->items[at + 1],
                    (size_t)(p->nitems - at - 1) * sizeof *p->items);
            p->nitems--;
        } else {
            if ((ev[0] | p->items[at].events) & EPOLLEXCLUSIVE_)
                return -EINVAL;
            p->items[at].events = ev[0] & ~EPOLLWAKEUP_;
            p->items[at].data = data;
        }
        return 0;
    }
    if (found)
        return -EEXIST;
    if (f && f->end == END_EPOLL && (holds_epoll(f->pipe) || reaches(f->pipe, p) ||
                                     f->pipe == p))
        return -ELOOP;
    if (f && f->end == END_EPOLL && (ev[0] & EPOLLEXCLUSIVE_))
        return -EINVAL;
    if (p->nitems == p->capitems)
        purge(fs, p);
    if (p->nitems == p->capitems) {
        int cap = p->capitems ? 2 * p->capitems : 8;
        struct epitem *n = cap <= FILES_MAX * 2 ? realloc(p->items, (size_t)cap * sizeof *n) : NULL;
        if (!n)
            return -ENOMEM;
        p->items = n;
        p->capitems = cap;
    }
    p->items[p->nitems++] = (struct epitem){(int)fd, ev[0] & ~EPOLLWAKEUP_, data, gfile_get(f)};
    return 0;
}

static int64_t do_ctl(struct vm *vm, struct vcpu *v, const uint64_t a[6])
{
    pthread_mutex_lock(&vm->lock);
    pthread_mutex_lock(&vm->files->lock);
    int64_t r = ctl_locked(vm, (int64_t)(int)a[0], (int)a[1], (int64_t)(int)a[2], a[3]);
    if (r == 0) { /* a new interest may be ready: its instance's waiters */
        pipe_sync_note(v, SYNC_WAKE, PIPE_KEY_EPOLL, 0);
        pipes_kick_locked(vm);
    }
    pthread_mutex_unlock(&vm->files->lock);
    pthread_mutex_unlock(&vm->lock);
    return r;
}

static int64_t do_create(struct vm *vm, uint64_t flags)
{
    if (flags & ~(uint64_t)EPOLL_CLOEXEC_)
        return -EINVAL;
    struct gpipe *p = gpipe_new_epoll(pipes_new_id(vm));
    if (!p)
        return -ENOMEM;
    int fd, end = END_EPOLL;
    int64_t r = pipes_new_fds(vm, p, 1, &end, (flags & EPOLL_CLOEXEC_) ? G_O_CLOEXEC : 0, &fd);
    gpipe_put(p);
    return r ? r : fd;
}

int64_t epoll_syscall(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                      bool *handled)
{
    *handled = true;
    uint64_t ns;
    int64_t r;
    switch (nr) {
    case SYS_epoll_create:
        return (int)a[0] <= 0 ? -EINVAL : do_create(vm, 0);
    case SYS_epoll_create1:
        return do_create(vm, a[0]);
    case SYS_epoll_ctl:
        return do_ctl(vm, v, a);
    case SYS_epoll_wait: case SYS_epoll_pwait: { /* the mask changes nothing: no handlers */
        int64_t ms = (int64_t)(int)a[3];
        return do_wait(vm, v, a, ms < 0 ? UINT64_MAX : (uint64_t)ms * 1000000ULL);
    }
    case SYS_epoll_pwait2:
        if ((r = pipes_timeout_ns(vm, a[3], false, &ns)) < 0)
            return r;
        return do_wait(vm, v, a, ns);
    }
    *handled = false;
    return -ENOSYS;
}

int epoll_copy_items(struct epitem **out, const struct epitem *items, int n)
{
    *out = NULL;
    if (n <= 0)
        return 0;
    if (!(*out = malloc((size_t)n * sizeof **out)))
        return -1;
    for (int i = 0; i < n; i++) {
        (*out)[i] = items[i];
        gfile_get(items[i].f);
    }
    return 0;
}

void epoll_free_items(struct epitem *items, int n)
{
    for (int i = 0; i < n; i++)
        gfile_put(items[i].f);
    free(items);
}

int epoll_set_items(struct gpipe *p, const struct epitem *items, int n)
{
    struct epitem *copy;
    if (epoll_copy_items(&copy, items, n) < 0)
        return -1;
    epoll_free_items(p->items, p->nitems);
    p->items = copy;
    p->nitems = p->capitems = n;
    return 0;
}

int epoll_rebind(struct gpipe *p, const struct epitem *items, int n, struct files *fs,
                 bool (*match)(const void *ctx, int fd, const struct gfile *f), const void *ctx)
{
    epoll_free_items(p->items, p->nitems);
    p->items = NULL;
    p->nitems = p->capitems = 0;
    if (n <= 0)
        return 0;
    if (!(p->items = malloc((size_t)n * sizeof *p->items)))
        return -1;
    p->capitems = n;
    for (int i = 0; i < n; i++) {
        int fd = items[i].fd;
        if (fd < 0 || fd >= FILES_MAX || (fd >= 3 && (!fs->fd[fd].f || !match(ctx, fd, items[i].f))))
            continue; /* closed in the table it came from: the interest is gone */
        struct epitem it = items[i];
        it.f = fd < 3 ? NULL : gfile_get(fs->fd[fd].f);
        p->items[p->nitems++] = it;
    }
    return 0;
}
