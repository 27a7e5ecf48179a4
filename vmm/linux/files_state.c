/* The file layer as guest state (files.h): private file mappings, descriptor tables in
 * snapshots, and the digests a dump records. */
#include "linux/files_int.h"
#include "linux/pipes.h"
#include "linux/cpuidload.h"
#include "kvm/snapimage.h"
#include "kvm/vm.h"
#include "lib/sha256.h"
#include "lib/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAP_CHUNK 65536

int64_t files_pread_user(struct vm *vm, int hostfd, uint64_t va, uint64_t len, uint64_t off)
{
    uint64_t done = 0;
    if (va + len < va)
        return -EFAULT;
    while (done < len) {
        uint64_t at = va + done;
        size_t chunk = PAGE_SIZE - (at & (PAGE_SIZE - 1));
        if (chunk > len - done)
            chunk = (size_t)(len - done);
        uint8_t *p = gm_user_ptr(&vm->gm, at, true);
        if (!p)
            return done ? (int64_t)done : -EFAULT;
        /* The VMM writes guest memory: its own dirty log must hear of it (snapshots). */
        gm_mark_dirty(&vm->gm, (uint64_t)(p - vm->gm.host));
        ssize_t r = pread(hostfd, p, chunk, (off_t)(off + done));
        if (r < 0)
            return done ? (int64_t)done : -errno;
        done += (uint64_t)r;
        if ((size_t)r < chunk)
            break;
    }
    return (int64_t)done;
}

static int64_t map_file(struct vm *vm, struct gfile *f, int hostfd, uint64_t addr, uint64_t len,
                        int prot, int flags, uint64_t off);

int64_t files_mmap(struct vm *vm, uint64_t addr, uint64_t len, int prot, int flags, int fd,
                   uint64_t off)
{
    int type = flags & 0xf;
    if (type != 1 /* MAP_SHARED */ && type != 2 /* MAP_PRIVATE */ && type != 3)
        return -EINVAL;
    if ((off & (PAGE_SIZE - 1)) || (int64_t)off < 0 || (prot & ~7))
        return -EINVAL;
    if (len == 0 || len > (1ULL << 46))
        return -EINVAL;
    struct gfile *f = fd_get(vm->files, fd, NULL);
    if (!f)
        return -EBADF;
    if (f->dir || f->pipe) {
        gfile_put(f);
        return -ENODEV;
    }
    if (type != 2 && (prot & 2)) { /* a shared writable mapping would write the host file */
        gfile_put(f);
        files_note_refused(vm, 9 /* SYS_mmap */, 0, fd, -1, REFUSED_SHARED_MAP, -EACCES);
        return -EACCES;
    }
    /* A file the program wrote: its bytes as they are now, through a memfd. */
    int hostfd = f->hostfd;
    if (f->ino && (hostfd = files_ovl_memfd(vm->files, f->ino)) < 0) {
        gfile_put(f);
        return hostfd;
    }
    int64_t r = map_file(vm, f, hostfd, addr, len, prot, flags, off);
    if (hostfd != f->hostfd)
        close(hostfd);
    gfile_put(f);
    return r;
}

static int64_t map_file(struct vm *vm, struct gfile *f, int hostfd, uint64_t addr, uint64_t len,
                        int prot, int flags, uint64_t off)
{
    enum mm_mode mode = (flags & 0x100000) ? MM_FIXED_NOREPLACE : (flags & 0x10) ? MM_FIXED
                                                                                : MM_HINT;
    uint64_t want = (len + PAGE_SIZE - 1) & PAGE_MASK;
    if (mode == MM_FIXED && files_map_over_same(vm, hostfd, addr, want, prot, off) == 0) {
        /* The same bytes, now perhaps executable (ld.so maps a library read-only whole,
         * then its text again): its CPUID sites are patched like a new mapping's. */
        cpuidload_file_map(vm, f->path, hostfd, addr, off, len, prot);
        return (int64_t)addr;
    }
    /* Made with its final protection and filled through the frames (files_map.c): no
     * downgrade afterwards. PROT_NONE keeps no frames unless mapped accessible first. */
    int mprot = prot ? prot : 3;
    int64_t at = mm_map_mode(&vm->mm, addr, len, mprot, mode);
    if (at < 0) {
        return at;
    }
    /* The file's bytes; past its end the pages stay zero (Linux would raise SIGBUS on
     * whole pages past the end: a program that touches them is already wrong). */
    int64_t ret = files_fill_frames(vm, hostfd, (uint64_t)at, want, off);
    if (ret >= 0)
        ret = at;
    else if (ret == -EFAULT)
        ret = -ENOMEM; /* guest memory ran out while filling the mapping */
    if (ret >= 0) /* written through the frames: the guest's protection does not matter */
        cpuidload_file_map(vm, f->path, hostfd, (uint64_t)at, off, len, prot);
    if (ret < 0) {
        mm_unmap(&vm->mm, (uint64_t)at, len);
        return ret;
    }
    if (mprot != prot)
        mm_protect(&vm->mm, (uint64_t)at, len, prot);
    return at;
}

/* Both copy only up to the higher of the two tables' high-water marks (above both,
 * every entry is free) and the cwd string, not its whole buffer: a pass over all
 * FILES_MAX entries and 4 KiB cost ~5 us of every restore. */
static int files_span(const struct files *fs, const struct files_state *st)
{
    int n = fs->hi > st->hi ? fs->hi : st->hi;
    return n > FILES_MAX ? FILES_MAX : n;
}

void files_save(struct files *fs, struct files_state *st)
{
    pthread_mutex_lock(&fs->lock);
    int n = files_span(fs, st);
    for (int i = 0; i < n; i++) {
        gfile_put(st->fd[i].f);
        st->fd[i] = fs->fd[i];
        gfile_get(st->fd[i].f);
    }
    st->hi = fs->hi = n;
    memcpy(st->cwd, fs->cwd, strnlen(fs->cwd, sizeof fs->cwd - 1) + 1);
    /* The pipes' bytes and counters are guest state too (pipes.h). */
    struct gpipe *pipes[2 * FILES_MAX];
    int np = 0;
    for (int i = 3; i < n; i++)
        for (int side = 0; side < 2; side++) { /* a socket's two pipes */
            struct gpipe *p = !st->fd[i].f ? NULL : side ? st->fd[i].f->tx : st->fd[i].f->pipe;
            bool seen = !p;
            for (int k = 0; k < np && !seen; k++)
                seen = pipes[k] == p;
            if (!seen)
                pipes[np++] = p;
        }
    if (np || st->npipes)
        pipes_save(&st->pipes, &st->npipes, pipes, np);
    st->next_pipe = fs->next_pipe; /* ids are guest state: a key of each wait */
    st->owner = fs;
    if (ovl_copy(&st->ovl, &fs->ovl) < 0) /* what the program wrote: its bytes shared */
        st->ovl.gen = 0;
    pthread_mutex_unlock(&fs->lock);
}

/* fs's own copy of the pipe end that st's f is: one new gpipe per saved pipe (filled from
 * its saved bytes) and one new gfile per gfile of st, so that descriptors sharing a file
 * still share it. made[k] is the copy of st->pipes[k]; from/to pair the gfiles made. */
/* This VM's copy of st's saved pipe p: made[k] for st->pipes[k], made on first use. */
static struct gpipe *local_pipe(const struct files_state *st, const struct gpipe *p,
                                struct gpipe **made)
{
    int k = 0;
    while (k < st->npipes && st->pipes[k].p != p)
        k++;
    if (k == st->npipes) /* not saved (out of memory then) */
        return NULL;
    const struct pipe_saved *ps = &st->pipes[k];
    if (!made[k]) {
        made[k] = ps->p->epoll ? gpipe_new_epoll(ps->p->id)
                               : gpipe_new(ps->p->id, ps->p->eventfd, ps->p->semaphore);
        if (made[k] && pipes_fill(made[k], ps->bytes, ps->len, ps->count) < 0) {
            gpipe_put(made[k]);
            made[k] = NULL;
        }
    }
    return made[k];
}

static struct gfile *foreign_end(const struct files_state *st, struct gfile *f,
                                 struct gpipe **made, struct gfile **from, struct gfile **to,
                                 int *nmade)
{
    for (int k = 0; k < *nmade; k++)
        if (from[k] == f)
            return gfile_get(to[k]);
    struct gpipe *rx = local_pipe(st, f->pipe, made), *tx = f->tx ? local_pipe(st, f->tx, made) : NULL;
    if (!rx || (f->tx && !tx))
        return NULL;
    struct gfile *g = f->tx ? gpipe_sock(rx, tx) : gpipe_end(rx, f->end);
    if (g) {
        from[*nmade] = f;
        to[(*nmade)++] = gfile_get(g);
    }
    return g;
}

/* Does st's descriptor fd still name f (an epoll interest's file)? */
static bool same_in_state(const void *ctx, int fd, const struct gfile *f)
{
    return ((const struct files_state *)ctx)->fd[fd].f == f;
}

/* files_restore from another VM's table. Caller holds fs->lock. */
static int restore_foreign(struct files *fs, const struct files_state *st, int n)
{
    struct gpipe **made = calloc((size_t)st->npipes + 1, sizeof *made);
    struct gfile **from = calloc((size_t)n + 1, sizeof *from);
    struct gfile **to = calloc((size_t)n + 1, sizeof *to);
    int nmade = 0, rc = made && from && to ? 0 : -1;
    for (int i = 0; i < n; i++) {
        gfile_put(fs->fd[i].f);
        fs->fd[i] = st->fd[i];
        struct gfile *f = st->fd[i].f;
        if (!f || !f->pipe) {
            gfile_get(f); /* an open file never changes: shared */
            continue;
        }
        fs->fd[i].f = rc == 0 ? foreign_end(st, f, made, from, to, &nmade) : NULL;
        if (!fs->fd[i].f)
            rc = -1;
    }
    /* An epoll instance's interests name this table's files, now all in place. */
    for (int k = 0; rc == 0 && k < st->npipes; k++)
        if (made[k] && made[k]->epoll &&
            epoll_rebind(made[k], st->pipes[k].items, st->pipes[k].nitems, fs, same_in_state,
                         st) < 0)
            rc = -1;
    for (int k = 0; made && k < st->npipes; k++)
        gpipe_put(made[k]);
    for (int k = 0; to && k < nmade; k++)
        gfile_put(to[k]);
    free(made);
    free(from);
    free(to);
    return rc;
}

int files_restore(struct files *fs, const struct files_state *st)
{
    pthread_mutex_lock(&fs->lock);
    int n = files_span(fs, st), rc = 0;
    if (st->owner && st->owner != fs) {
        rc = restore_foreign(fs, st, n);
    } else {
        for (int i = 0; i < n; i++) {
            gfile_put(fs->fd[i].f);
            fs->fd[i] = st->fd[i];
            gfile_get(fs->fd[i].f);
        }
        pipes_restore(st->pipes, st->npipes);
    }
    fs->hi = n;
    memcpy(fs->cwd, st->cwd, strnlen(st->cwd, sizeof st->cwd - 1) + 1);
    fs->next_pipe = st->next_pipe;
    if (ovl_copy(&fs->ovl, &st->ovl) < 0)
        rc = -1;
    pthread_mutex_unlock(&fs->lock);
    return rc;
}

void files_state_free(struct files_state *st)
{
    ovl_free(&st->ovl);
    pipes_saved_free(&st->pipes, &st->npipes);
    for (int i = 0; i < FILES_MAX; i++) {
        gfile_put(st->fd[i].f);
        st->fd[i].f = NULL;
    }
}

int file_sha256(const char *path, uint8_t out[32], uint64_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    struct sha256 s;
    sha256_init(&s);
    char *buf = malloc(MAP_CHUNK);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    uint64_t total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, MAP_CHUNK);
        if (n < 0) {
            int e = errno;
            close(fd);
            free(buf);
            return -e;
        }
        if (n == 0)
            break;
        sha256_update(&s, buf, (size_t)n);
        total += (uint64_t)n;
    }
    close(fd);
    free(buf);
    sha256_final(&s, out);
    if (size)
        *size = total;
    return 0;
}

int files_hash(struct files *fs, char *err, size_t errlen)
{
    for (size_t i = 0; i < fs->nopened; i++) {
        int r = file_sha256(fs->opened[i].path, fs->opened[i].sha256, &fs->opened[i].size);
        if (r < 0)
            return jx_fail(err, errlen, "cannot read %s, which the program opened: %s",
                           fs->opened[i].path, strerror(-r));
    }
    return 0;
}

/* The image's pipes: st's saved ones, in order (a pipe descriptor names its index). */
static int export_pipes(const struct files_state *st, struct snap_image *img)
{
    img->next_pipe = st->next_pipe;
    if (st->npipes && !(img->pipes = calloc((size_t)st->npipes, sizeof *img->pipes)))
        return -1;
    for (int k = 0; k < st->npipes; k++) {
        const struct pipe_saved *ps = &st->pipes[k];
        struct snapimg_pipe *o = &img->pipes[img->npipes++];
        *o = (struct snapimg_pipe){.id = ps->p->id, .count = ps->count, .len = ps->len,
                                   .flags = (ps->p->eventfd ? SNAP_PIPE_EVENTFD : 0) |
                                            (ps->p->semaphore ? SNAP_PIPE_SEMAPHORE : 0) |
                                            (ps->p->epoll ? SNAP_PIPE_EPOLL : 0)};
        if (ps->len && (!ps->bytes || !(o->bytes = malloc(ps->len))))
            return -1;
        if (ps->len)
            memcpy(o->bytes, ps->bytes, ps->len);
        if (ps->nitems && !(o->items = calloc((size_t)ps->nitems, sizeof *o->items)))
            return -1;
        for (int i = 0; i < ps->nitems; i++) /* an interest whose fd was closed is gone */
            if (same_in_state(st, ps->items[i].fd, ps->items[i].f))
                o->items[o->nitems++] = (struct snapimg_epitem){
                    (uint32_t)ps->items[i].fd, ps->items[i].events, ps->items[i].data};
    }
    return 0;
}

static int saved_index(const struct files_state *st, const struct gpipe *p)
{
    for (int k = 0; k < st->npipes; k++)
        if (st->pipes[k].p == p)
            return k;
    return -1;
}

/* The written files into the image (bytes copied). */
static int export_ovl(const struct ovl *o, struct snap_image *img)
{
    img->has_ovl = true;
    img->next_ino = o->next_ino;
    img->ovl_limit = o->limit;
    if (o->ninodes && !(img->inodes = calloc(o->ninodes, sizeof *img->inodes)))
        return -1;
    if (o->nents && !(img->ents = calloc(o->nents, sizeof *img->ents)))
        return -1;
    for (size_t i = 0; i < o->ninodes; i++) {
        const struct ovl_inode *in = &o->inodes[i];
        struct snapimg_inode *x = &img->inodes[img->ninodes++];
        *x = (struct snapimg_inode){.ino = in->ino, .size = S_ISDIR(in->mode) ? 0 : in->size,
                                    .mtime = in->mtime, .mode = in->mode, .nlink = in->nlink};
        if (x->size && !(x->bytes = malloc(x->size)))
            return -1;
        if (x->size)
            memcpy(x->bytes, in->data->bytes, x->size);
    }
    for (size_t i = 0; i < o->nents; i++) {
        img->ents[i] = (struct snapimg_ent){strdup(o->ents[i].path), o->ents[i].ino,
                                            o->ents[i].opaque};
        if (!img->ents[i].path)
            return -1;
        img->nents++;
    }
    return 0;
}

/* The image's written files into fs->ovl (validated: snapimg_validate_fds). */
static int import_ovl(struct files *fs, const struct snap_image *img, char *err, size_t errlen)
{
    if (!img->has_ovl)
        return 0;
    /* The run's own bound: a replay meets the limit where the run did. */
    if (img->ovl_limit >= (1ULL << 20) && img->ovl_limit <= (1ULL << 40)) {
        pthread_mutex_lock(&fs->lock);
        fs->ovl.limit = img->ovl_limit;
        pthread_mutex_unlock(&fs->lock);
    }
    uint64_t total = 0;
    for (size_t i = 0; i < img->ninodes; i++)
        total += img->inodes[i].size;
    if (total > fs->ovl.limit)
        return jx_fail(err, errlen, "the snapshot holds %llu MiB of files the program wrote, "
                       "more than its --file-mem (%llu MiB)",
                       (unsigned long long)(total >> 20), (unsigned long long)(fs->ovl.limit >> 20));
    struct ovl o;
    ovl_init(&o, fs->ovl.limit + (uint64_t)(img->ninodes + img->nents) * (OVL_ENT_COST + SNAP_MAX_PATH));
    o.inodes = calloc(img->ninodes + 1, sizeof *o.inodes);
    o.ents = calloc(img->nents + 1, sizeof *o.ents);
    int rc = o.inodes && o.ents ? 0 : -1;
    o.capinodes = img->ninodes + 1;
    o.capents = img->nents + 1;
    for (size_t i = 0; rc == 0 && i < img->ninodes; i++) {
        const struct snapimg_inode *x = &img->inodes[i];
        struct ovl_inode *in = &o.inodes[o.ninodes];
        *in = (struct ovl_inode){.ino = x->ino, .mode = x->mode, .nlink = x->nlink,
                                 .size = x->size, .mtime = x->mtime};
        if (x->size) {
            in->data = calloc(1, sizeof *in->data);
            if (!in->data || !(in->data->bytes = malloc(x->size))) {
                free(in->data);
                rc = -1;
                break;
            }
            atomic_init(&in->data->refs, 1);
            in->data->cap = x->size;
            memcpy(in->data->bytes, x->bytes, x->size);
            o.bytes += x->size;
        }
        o.bytes += OVL_ENT_COST;
        o.ninodes++;
    }
    for (size_t i = 0; rc == 0 && i < img->nents; i++) {
        o.ents[i] = (struct ovl_ent){strdup(img->ents[i].path), img->ents[i].ino,
                                     img->ents[i].opaque != 0};
        if (!o.ents[i].path)
            rc = -1;
        else {
            o.bytes += OVL_ENT_COST + strlen(o.ents[i].path);
            o.nents++;
        }
    }
    o.next_ino = img->next_ino;
    o.gen = 0;
    pthread_mutex_lock(&fs->lock);
    uint64_t limit = fs->ovl.limit;
    if (rc == 0)
        rc = ovl_copy(&fs->ovl, &o) < 0 ? -1 : 0;
    fs->ovl.limit = limit;
    pthread_mutex_unlock(&fs->lock);
    ovl_free(&o);
    return rc < 0 ? jx_fail(err, errlen, "out of memory") : 0;
}

int files_state_export(const struct files_state *st, struct snap_image *img)
{
    if (export_ovl(&st->ovl, img) < 0)
        return -1;
    size_t n = 0;
    for (int i = 3; i < FILES_MAX; i++)
        n += st->fd[i].f != NULL;
    if (st->cwd[0] && !(img->cwd = strdup(st->cwd)))
        return -1;
    if (n && !(img->fds = calloc(n, sizeof *img->fds)))
        return -1;
    if (export_pipes(st, img) < 0)
        return -1;
    for (int i = 3; i < FILES_MAX; i++) {
        const struct fdent *e = &st->fd[i];
        if (!e->f)
            continue;
        struct snapimg_fd *o = &img->fds[img->nfds];
        *o = (struct snapimg_fd){.fd = (uint32_t)i, .off = e->off,
                                 .flags = e->cloexec ? SNAP_FD_CLOEXEC : 0};
        if (e->f->pipe) {
            int k = saved_index(st, e->f->pipe), t = e->f->tx ? saved_index(st, e->f->tx) : 0;
            if (k < 0 || t < 0)
                return -1; /* not saved: out of memory when it was */
            o->flags |= SNAP_FD_PIPE | (e->nonblock ? SNAP_FD_NONBLOCK : 0);
            o->pipe = (uint32_t)k;
            o->tx = (uint32_t)t;
            o->end = e->f->end;
            o->off = 0;
        } else if (!(o->path = strdup(e->f->path ? e->f->path : ""))) {
            return -1;
        } else {
            o->flags |= (e->acc == 1 ? SNAP_FD_WRONLY : e->acc == 2 ? SNAP_FD_RDWR : 0) |
                        (e->append ? SNAP_FD_APPEND : 0) | (e->f->ino ? SNAP_FD_OVL : 0);
            o->ino = e->f->ino;
        }
        img->nfds++;
    }
    return 0;
}

/* The image's pipes, made again (validated: snapimg_validate_fds); made[k] is pipes[k]. */
static int import_pipes(const struct snap_image *img, struct gpipe **made, char *err,
                        size_t errlen)
{
    for (size_t k = 0; k < img->npipes; k++) {
        const struct snapimg_pipe *ip = &img->pipes[k];
        made[k] = ip->flags & SNAP_PIPE_EPOLL ? gpipe_new_epoll(ip->id)
                  : gpipe_new(ip->id, ip->flags & SNAP_PIPE_EVENTFD,
                              ip->flags & SNAP_PIPE_SEMAPHORE);
        if (!made[k] || pipes_fill(made[k], ip->bytes, ip->len, ip->count) < 0)
            return jx_fail(err, errlen, "out of memory");
    }
    return 0;
}

static int import_fds(struct files *fs, const struct snap_image *img, struct gpipe **made,
                      char *err, size_t errlen)
{
    for (size_t i = 0; i < img->nfds; i++) {
        const struct snapimg_fd *d = &img->fds[i];
        struct gfile *f;
        if (d->flags & SNAP_FD_PIPE) {
            f = d->end == SNAP_END_SOCK ? gpipe_sock(made[d->pipe], made[d->tx])
                                        : gpipe_end(made[d->pipe], (int)d->end);
            if (!f)
                return jx_fail(err, errlen, "out of memory");
        } else if (d->flags & SNAP_FD_OVL) {
            pthread_mutex_lock(&fs->lock);
            const struct ovl_inode *in = ovl_inode(&fs->ovl, d->ino);
            bool dir = in && S_ISDIR(in->mode);
            pthread_mutex_unlock(&fs->lock);
            int r = in ? files_ovl_gfile(fs, d->path, d->ino, dir, &f) : -ENOENT;
            if (r < 0)
                return jx_fail(err, errlen, "descriptor %u: %s", d->fd, strerror(-r));
        } else {
            if (!grants_allow(&fs->grants, d->path))
                return jx_fail(err, errlen, "descriptor %u names %s, which this run does not "
                               "let the program read (run with the same --ro-dir options)",
                               d->fd, d->path);
            int r = files_open_canon(d->path, 0, &f);
            if (r < 0)
                return jx_fail(err, errlen, "descriptor %u: cannot reopen %s: %s", d->fd,
                               d->path, strerror(-r));
        }
        pthread_mutex_lock(&fs->lock);
        gfile_put(fs->fd[d->fd].f);
        files_set_fd(fs, (int)d->fd, (struct fdent){f, d->off, (d->flags & SNAP_FD_CLOEXEC) != 0,
                                                    (d->flags & SNAP_FD_NONBLOCK) != 0,
                                                    (d->flags & SNAP_FD_WRONLY) ? 1
                                                    : (d->flags & SNAP_FD_RDWR) ? 2 : 0,
                                                    (d->flags & SNAP_FD_APPEND) != 0});
        if (!f->dir && !f->pipe && !f->ino)
            files_remember(fs, d->path);
        pthread_mutex_unlock(&fs->lock);
    }
    return 0;
}

static bool any_file(const void *ctx, int fd, const struct gfile *f)
{
    (void)ctx, (void)fd, (void)f;
    return true; /* an image's interest names whatever its descriptor is */
}

/* The epoll instances' interests, once every descriptor is in place. */
static int import_interests(struct files *fs, const struct snap_image *img, struct gpipe **made,
                            char *err, size_t errlen)
{
    for (size_t k = 0; k < img->npipes; k++) {
        const struct snapimg_pipe *ip = &img->pipes[k];
        if (!ip->nitems)
            continue;
        struct epitem *it = calloc(ip->nitems, sizeof *it);
        if (!it)
            return jx_fail(err, errlen, "out of memory");
        for (uint32_t i = 0; i < ip->nitems; i++)
            it[i] = (struct epitem){(int)ip->items[i].fd, ip->items[i].events,
                                    ip->items[i].data, NULL};
        pthread_mutex_lock(&fs->lock);
        int r = epoll_rebind(made[k], it, (int)ip->nitems, fs, any_file, NULL);
        pthread_mutex_unlock(&fs->lock);
        free(it);
        if (r < 0)
            return jx_fail(err, errlen, "out of memory");
    }
    return 0;
}

int files_import(struct files *fs, const struct snap_image *img, char *err, size_t errlen)
{
    if (snapimg_validate_fds(img, err, errlen) < 0)
        return -1;
    if (img->cwd && strlen(img->cwd) < sizeof fs->cwd)
        memcpy(fs->cwd, img->cwd, strlen(img->cwd) + 1);
    struct gpipe **made = calloc(img->npipes + 1, sizeof *made);
    int rc = made ? 0 : jx_fail(err, errlen, "out of memory");
    if (rc == 0)
        rc = import_ovl(fs, img, err, errlen); /* before the descriptors that name it */
    if (rc == 0)
        rc = import_pipes(img, made, err, errlen);
    if (rc == 0)
        rc = import_fds(fs, img, made, err, errlen);
    if (rc == 0)
        rc = import_interests(fs, img, made, err, errlen);
    for (size_t k = 0; made && k < img->npipes; k++)
        gpipe_put(made[k]); /* the descriptors hold them */
    free(made);
    pthread_mutex_lock(&fs->lock);
    fs->next_pipe = img->next_pipe;
    pthread_mutex_unlock(&fs->lock);
    return rc;
}
