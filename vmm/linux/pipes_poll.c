/* poll, ppoll, select and pselect6 over the guest's descriptors (pipes_int.h). A call
 * with nothing ready blocks on PIPE_KEY_POLL or PIPE_KEY_SELECT like a futex wait; a
 * pipe operation that may make it ready reruns it (pipes.c, kick_locked), which then
 * answers from the arrays in guest memory, unchanged while it waited. */
#include "linux/pipes_int.h"
#include "linux/futex.h"
#include "linux/signals.h"
#include "linux/syscall.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#define SEL_IN (POLLIN_ | POLLRDNORM_ | POLLHUP_ | POLLERR_)
#define SEL_OUT (POLLOUT_ | POLLWRNORM_ | POLLERR_)
#define SEL_EX POLLPRI_
#define SEL_WORDS (FILES_MAX / 64)

short pipes_ready(struct files *fs, int fd, short events)
{
    if (fd < 0)
        return 0;
    if (fd < 3) /* the terminal streams: stdin readable, stdout and stderr writable */
        return (short)(events & (fd == 0 ? (POLLIN_ | POLLRDNORM_) : (POLLOUT_ | POLLWRNORM_)));
    if (fd >= FILES_MAX || !fs->fd[fd].f)
        return POLLNVAL_;
    struct gfile *f = fs->fd[fd].f;
    if (!f->pipe) /* a file or directory: always ready */
        return (short)(events & (POLLIN_ | POLLRDNORM_ | POLLOUT_ | POLLWRNORM_));
    struct gpipe *p = f->pipe;
    short r = 0;
    if (f->end == END_EPOLL) {
        if (epoll_has_events(fs, p))
            r |= POLLIN_ | POLLRDNORM_;
    } else if (f->end == END_EVENT) {
        if (p->count)
            r |= POLLIN_ | POLLRDNORM_;
        if (p->count < UINT64_MAX - 1)
            r |= POLLOUT_ | POLLWRNORM_;
    } else if (f->end == END_SOCK) { /* a closed peer: end of file, and writes fail */
        bool peer = pipe_end_open(fs, p, END_WRITE);
        if (p->len || !peer)
            r |= POLLIN_ | POLLRDNORM_;
        if (!peer)
            r |= POLLHUP_ | POLLRDHUP_;
        if (!peer || pipe_space(f->tx) >= PIPE_ATOMIC)
            r |= POLLOUT_ | POLLWRNORM_;
    } else if (f->end == END_READ) {
        if (p->len)
            r |= POLLIN_ | POLLRDNORM_;
        if (!pipe_end_open(fs, p, END_WRITE))
            r |= POLLHUP_;
    } else {
        if (!pipe_end_open(fs, p, END_READ))
            r |= POLLERR_;
        else if (pipe_space(p) >= PIPE_ATOMIC)
            r |= POLLOUT_ | POLLWRNORM_;
    }
    return (short)(r & (events | POLLERR_ | POLLHUP_));
}

/* poll over the guest's pollfd array: ready descriptors or -errno; writes the revents
 * only when write is set (a waiter's check must leave its array alone). Caller holds
 * fs->lock. */
static int64_t poll_eval(struct vm *vm, uint64_t ufds, uint64_t nfds, bool write)
{
    if (nfds > FILES_MAX) /* RLIMIT_NOFILE */
        return -EINVAL;
    int64_t ready = 0;
    for (uint64_t i = 0; i < nfds; i++) {
        struct { int fd; short events, revents; } pf;
        if (!copy_from_user(&vm->gm, &pf, ufds + i * 8, 8))
            return -EFAULT;
        pf.revents = pipes_ready(vm->files, pf.fd, pf.events);
        ready += pf.revents != 0;
        if (write && !copy_to_user(&vm->gm, ufds + i * 8 + 6, &pf.revents, 2))
            return -EFAULT;
    }
    return ready;
}

/* select over the guest's three fd_sets (a NULL pointer: none) of nfds descriptors:
 * ready bits or -errno (EBADF for a set bit of a closed descriptor); writes the sets
 * back only when write is set. Caller holds fs->lock. */
static int64_t select_eval(struct vm *vm, int64_t nfds, const uint64_t ptr[3], bool write)
{
    if (nfds < 0)
        return -EINVAL;
    if (nfds > FILES_MAX)
        nfds = FILES_MAX; /* Linux looks no further than its table */
    size_t bytes = (size_t)(nfds + 63) / 64 * 8;
    uint64_t in[3][SEL_WORDS], out[3][SEL_WORDS];
    static const short want[3] = {SEL_IN, SEL_OUT, SEL_EX};
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    for (int k = 0; k < 3; k++)
        if (ptr[k] && bytes && !copy_from_user(&vm->gm, in[k], ptr[k], bytes))
            return -EFAULT;
    int64_t ready = 0;
    for (int64_t fd = 0; fd < nfds; fd++) {
        uint64_t bit = 1ULL << (fd % 64);
        int w = (int)(fd / 64);
        if (!((in[0][w] | in[1][w] | in[2][w]) & bit))
            continue;
        short r = pipes_ready(vm->files, (int)fd, (short)(SEL_IN | SEL_OUT | SEL_EX));
        if (r & POLLNVAL_)
            return -EBADF;
        for (int k = 0; k < 3; k++)
            if ((in[k][w] & bit) && (r & want[k])) {
                out[k][w] |= bit;
                ready++;
            }
    }
    for (int k = 0; write && k < 3; k++)
        if (ptr[k] && bytes && !copy_to_user(&vm->gm, ptr[k], out[k], bytes))
            return -EFAULT;
    return ready;
}

bool pipes_poller_ready_locked(struct vm *vm, const struct vcpu *w)
{
    const struct kvm_regs *b = &w->blocked_regs;
    const uint64_t sets[3] = {b->rsi, b->rdx, b->r10};
    switch (w->wait_addr) {
    case PIPE_KEY_POLL: return poll_eval(vm, b->rdi, b->rsi, false) != 0;
    case PIPE_KEY_SELECT: return select_eval(vm, (int64_t)(int)b->rdi, sets, false) != 0;
    case PIPE_KEY_EPOLL: return epoll_waiter_ready(vm, (int64_t)(int)b->rdi);
    case SIG_KEY: return signals_waiter_ready_locked(vm, w); /* a pipe cannot change it */
    }
    return true;
}

int64_t pipes_timed_out_locked(struct vm *vm, struct vcpu *v)
{
    const struct kvm_regs *b = &v->blocked_regs;
    if (v->wait_addr == SIG_KEY)
        return -EAGAIN; /* sigtimedwait: no signal came in time */
    if (v->wait_addr == PIPE_KEY_SELECT) {
        /* select's sets hold what it waited for until now: none of it came. */
        static const uint64_t zero[SEL_WORDS];
        int64_t nfds = (int64_t)(int)b->rdi;
        size_t bytes = (size_t)((nfds > FILES_MAX ? FILES_MAX : nfds) + 63) / 64 * 8;
        const uint64_t sets[3] = {b->rsi, b->rdx, b->r10};
        for (int k = 0; k < 3; k++)
            if (sets[k] && bytes && !copy_to_user(&vm->gm, sets[k], zero, bytes))
                return -EFAULT;
        /* And the time left, as Linux writes it back: none (a timeval or a timespec). */
        if (b->r8 && !copy_to_user(&vm->gm, b->r8, zero, 16))
            return -EFAULT;
    }
    return 0; /* poll's revents were written as 0 when it blocked; epoll wrote nothing */
}

/* Answers now (r ready, or timeout 0) or blocks on key until the deadline. */
static int64_t wait_or_answer(struct vm *vm, struct vcpu *v, uint64_t key, int64_t r,
                              uint64_t timeout_ns)
{
    pipe_sync_note(v, SYNC_WAIT, key, 0);
    if (r != 0 || timeout_ns == 0)
        return r;
    uint64_t deadline = timeout_ns == UINT64_MAX ? NO_DEADLINE : vm_vtime(vm) + timeout_ns;
    futex_block_locked(vm, v, key, deadline);
    return SYSRET_BLOCKED;
}

static int64_t do_poll(struct vm *vm, struct vcpu *v, uint64_t ufds, uint64_t nfds,
                       uint64_t timeout_ns)
{
    pthread_mutex_lock(&vm->lock);
    pthread_mutex_lock(&vm->files->lock);
    int64_t r = poll_eval(vm, ufds, nfds, true);
    r = wait_or_answer(vm, v, PIPE_KEY_POLL, r, timeout_ns);
    pthread_mutex_unlock(&vm->files->lock);
    pthread_mutex_unlock(&vm->lock);
    return r;
}

static int64_t do_select(struct vm *vm, struct vcpu *v, const uint64_t a[6], uint64_t timeout_ns)
{
    pthread_mutex_lock(&vm->lock);
    pthread_mutex_lock(&vm->files->lock);
    const uint64_t sets[3] = {a[1], a[2], a[3]};
    /* Nothing ready: the sets stay as given (the rerun reads them), zeroed at timeout. */
    int64_t r = select_eval(vm, (int64_t)(int)a[0], sets, false);
    if (r > 0 || (r == 0 && timeout_ns == 0))
        r = select_eval(vm, (int64_t)(int)a[0], sets, true);
    else
        r = wait_or_answer(vm, v, PIPE_KEY_SELECT, r, timeout_ns);
    pthread_mutex_unlock(&vm->files->lock);
    pthread_mutex_unlock(&vm->lock);
    return r;
}

/* A guest timespec (or timeval: usec) as ns; UINT64_MAX for NULL (no timeout). */
int64_t pipes_timeout_ns(struct vm *vm, uint64_t uptr, bool usec, uint64_t *ns)
{
    *ns = UINT64_MAX;
    if (!uptr)
        return 0;
    int64_t t[2];
    if (!copy_from_user(&vm->gm, t, uptr, sizeof t))
        return -EFAULT;
    if (usec) { /* select normalizes microseconds of a second or more, as Linux does */
        t[0] += t[1] / 1000000 < 0 || t[0] > INT64_MAX - t[1] / 1000000 ? 0 : t[1] / 1000000;
        t[1] = t[1] % 1000000 * 1000;
    }
    if (t[0] < 0 || t[1] < 0 || t[1] >= 1000000000)
        return -EINVAL;
    *ns = (uint64_t)t[0] > 1000000000ULL * 1000 ? UINT64_MAX / 4 /* ~146 years: for ever */
          : (uint64_t)t[0] * 1000000000ULL + (uint64_t)t[1];
    return 0;
}

int64_t pipes_poll_syscall(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                           bool *handled)
{
    uint64_t ns;
    int64_t r;
    *handled = true;
    switch (nr) {
    case SYS_poll: {
        int64_t ms = (int64_t)(int)a[2];
        return do_poll(vm, v, a[0], a[1], ms < 0 ? UINT64_MAX : (uint64_t)ms * 1000000ULL);
    }
    case SYS_ppoll: /* the signal mask (a[3]) changes nothing: no handler ever runs */
        if ((r = pipes_timeout_ns(vm, a[2], false, &ns)) < 0)
            return r;
        return do_poll(vm, v, a[0], a[1], ns);
    case SYS_select:
        if ((r = pipes_timeout_ns(vm, a[4], true, &ns)) < 0)
            return r;
        return do_select(vm, v, a, ns);
    case SYS_pselect6:
        if ((r = pipes_timeout_ns(vm, a[4], false, &ns)) < 0)
            return r;
        return do_select(vm, v, a, ns);
    }
    *handled = false;
    return -ENOSYS;
}

const char *pipe_key_what(uint64_t k, char *buf, size_t len)
{
    switch (k) {
    case PIPE_KEY_POLL: return "poll";
    case PIPE_KEY_SELECT: return "select";
    case PIPE_KEY_EPOLL: return "epoll_wait";
    case SIG_KEY: return "sigwait (rt_sigtimedwait)";
    }
    uint64_t off = k - PIPE_KEY_BASE;
    snprintf(buf, len, "a %s pipe %llu", off & 8 ? "write to" : "read of",
             (unsigned long long)(off >> 4));
    return buf;
}
