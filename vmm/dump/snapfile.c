/* SNAPSHOT record codec (snapfile.h). */
#include "dump/snapfile.h"
#include "lib/util.h"
#include "lib/bytes.h"
#include "kvm/layout.h"
#include "kvm/guestmem.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NREGS (sizeof(struct kvm_regs) / 8)
_Static_assert(sizeof(struct kvm_regs) == 18 * 8, "kvm_regs is 18 u64");


static void put_regs(struct dbuf *b, const struct kvm_regs *r)
{
    uint64_t w[NREGS];
    memcpy(w, r, sizeof w);
    for (size_t i = 0; i < NREGS; i++)
        bput_u64(b, w[i]);
}

static void get_regs(struct bcur *c, struct kvm_regs *r)
{
    uint64_t w[NREGS];
    for (size_t i = 0; i < NREGS; i++)
        w[i] = bget_u64(c);
    memcpy(r, w, sizeof w);
}

static void put_blob(struct dbuf *b, const void *p, uint32_t len)
{
    bput_u32(b, len);
    bput(b, p, len);
}

/* XSAVE areas are mostly zeros past the components in use: store up to the last
 * nonzero byte. */
static uint32_t trimmed(const uint8_t *p, uint32_t len)
{
    while (len && !p[len - 1])
        len--;
    return len;
}

#define SNAPFILE_VMA_ATTRS 1u

int snapfile_encode(const struct snap_image *s, struct dbuf *b)
{
    char why[160];
    if (snapimg_validate(s, why, sizeof why) < 0)
        return -1;
    bput_u64(b, s->mem);
    bput_u32(b, s->nvcpus);
    bput_u32(b, 0);
    bput_u32(b, (uint32_t)s->next_tid);
    bput_u32(b, (uint32_t)s->live);
    bput_u32(b, (uint32_t)s->blocked);
    bput_u32(b, 0);
    bput_u64(b, s->wait_counter);
    bput_u64(b, s->vtime);
    bput_u64(b, s->rng);
    for (int i = 0; i < SNAP_SIGACTS; i++)
        bput_u64(b, s->sigact[i]);
    bput_u64(b, s->brk_base);
    bput_u64(b, s->brk_cur);
    bput_u32(b, (uint32_t)s->nvmas);
    /* VMA format: 0, start and end (older writers); 1, and a u64 of lazy (bit 32) and
     * protection (bits 0..2) after them (linux/mm.h: lazy mappings). */
    bput_u32(b, SNAPFILE_VMA_ATTRS);
    for (size_t i = 0; i < s->nvmas; i++) {
        bput_u64(b, s->vmas[i].start);
        bput_u64(b, s->vmas[i].end);
        bput_u64(b, ((uint64_t)(s->vmas[i].lazy ? 1 : 0) << 32) | (s->vmas[i].prot & 7));
    }
    bput_u64(b, s->frames_used);
    bput_u64(b, s->frames_next);
    uint64_t words = snapimg_bitmap_words(s->mem);
    bput_u64(b, words);
    for (uint64_t w = 0; w < words; w++)
        bput_u64(b, s->frame_bitmap[w]);
    bput_u64(b, s->table_cursor);
    bput_u32(b, (uint32_t)s->ntables);
    bput_u32(b, 0);
    for (size_t i = 0; i < s->ntables; i++) {
        bput_u64(b, s->tables[i].frame);
        bput_u64(b, s->tables[i].level);
    }
    for (int i = 0; i < 256; i++)
        bput_u64(b, s->pml4_user[i]);
    for (uint32_t i = 0; i < s->nvcpus; i++) {
        const struct snapimg_vcpu *v = &s->v[i];
        bput_u32(b, v->flags);
        bput_u32(b, v->tid);
        bput_u32(b, v->state);
        bput_u32(b, v->wait_bitset);
        bput_u64(b, v->clear_child_tid);
        bput_u64(b, v->sigmask);
        bput_u64(b, v->wait_addr);
        bput_u64(b, v->wait_deadline);
        bput_u64(b, v->wait_seq);
        bput_u64(b, (uint64_t)v->wait_result);
        put_regs(b, &v->blocked_regs);
        if (v->flags & SNAPF_HAS_KVM) {
            put_regs(b, &v->regs);
            put_blob(b, &v->sregs, sizeof v->sregs);
            put_blob(b, v->xsave, v->xsave ? trimmed(v->xsave, v->xsave_len) : 0);
        }
        if (v->flags & SNAPF_START) {
            put_regs(b, &v->start_regs);
            put_blob(b, &v->start_sregs, sizeof v->start_sregs);
            put_blob(b, v->start_xsave, v->start_xsave ? trimmed(v->start_xsave,
                                                                 v->start_xsave_len) : 0);
        }
    }
    bput_u64(b, s->npages);
    for (size_t i = 0; i < s->npages; i++) {
        bput_u64(b, s->pages[i].frame);
        bput(b, s->pages[i].data, PAGE_SIZE);
    }
    /* The file layer's state (added in dump format 1.1; older readers stop before it). */
    bput_u32(b, (uint32_t)s->nfds);
    bput_u32(b, 0);
    bput_str(b, s->cwd ? s->cwd : "", SNAP_MAX_PATH);
    for (size_t i = 0; i < s->nfds; i++) {
        const struct snapimg_fd *f = &s->fds[i];
        bool pipe = f->flags & SNAP_FD_PIPE;
        bput_u32(b, f->fd);
        bput_u32(b, f->flags);
        bput_u64(b, pipe ? (uint64_t)f->tx << 32 | (uint64_t)f->pipe << 8 | f->end : f->off);
        bput_str(b, pipe ? "" : f->path, SNAP_MAX_PATH);
    }
    /* The pipes and eventfds (format 1.2; older readers stop before it). */
    bput_u32(b, (uint32_t)s->npipes);
    bput_u32(b, s->next_pipe);
    for (size_t i = 0; i < s->npipes; i++) {
        const struct snapimg_pipe *p = &s->pipes[i];
        bput_u32(b, p->id);
        bput_u32(b, p->flags);
        bput_u64(b, p->count);
        bput_u32(b, p->len);
        if (p->len)
            bput(b, p->bytes, p->len);
        if (p->flags & SNAP_PIPE_EPOLL) {
            bput_u32(b, p->nitems);
            for (uint32_t k = 0; k < p->nitems; k++) {
                bput_u32(b, p->items[k].fd);
                bput_u32(b, p->items[k].events);
                bput_u64(b, p->items[k].data);
            }
        }
    }
    /* The written files (format 1.3; older readers stop before it). */
    if (s->has_ovl) {
        bput_u64(b, s->ninodes);
        bput_u64(b, s->nents);
        bput_u64(b, s->next_ino);
        bput_u64(b, s->ovl_limit);
        for (size_t i = 0; i < s->ninodes; i++) {
            const struct snapimg_inode *in = &s->inodes[i];
            bput_u64(b, in->ino);
            bput_u32(b, in->mode);
            bput_u32(b, in->nlink);
            bput_u64(b, in->mtime);
            bput_u64(b, in->size);
            if (in->size)
                bput(b, in->bytes, (size_t)in->size);
        }
        for (size_t i = 0; i < s->nents; i++) {
            bput_u64(b, s->ents[i].ino);
            bput_u32(b, s->ents[i].opaque);
            bput_str(b, s->ents[i].path, SNAP_MAX_PATH);
        }
        uint32_t nov = 0;
        for (size_t i = 0; i < s->nfds; i++)
            nov += (s->fds[i].flags & SNAP_FD_OVL) != 0;
        bput_u32(b, nov);
        for (size_t i = 0; i < s->nfds; i++)
            if (s->fds[i].flags & SNAP_FD_OVL) {
                bput_u32(b, s->fds[i].fd);
                bput_u64(b, s->fds[i].ino);
            }
        /* Pending signals (format 1.4; older readers stop before it), after the written
         * files, which every image of a VM with a file layer has. */
        bput_u64(b, s->sig_shared);
        bput_u32(b, s->nvcpus);
        bput_u32(b, 0);
        for (uint32_t i = 0; i < s->nvcpus; i++) {
            bput_u64(b, s->v[i].sigpending);
            bput_u64(b, s->v[i].sigpend_tkill);
        }
    }
    return b->oom ? -1 : 0;
}

/* The written files' section after the pipes; absent before format 1.3. */
static int parse_ovl(struct bcur *c, struct snap_image *s, char *err, size_t errlen)
{
    if (c->left == 0)
        return 0;
    uint64_t ni = bget_u64(c), ne = bget_u64(c);
    s->next_ino = bget_u64(c);
    s->ovl_limit = bget_u64(c);
    s->has_ovl = true;
    if (c->bad || ni > SNAP_MAX_OVL_ENTS || ne > SNAP_MAX_OVL_ENTS || ni * 32 > c->left ||
        ne * 13 > c->left)
        return jx_fail(err, errlen, "SNAPSHOT: written files' section malformed or cut short");
    if ((ni && !(s->inodes = calloc(ni, sizeof *s->inodes))) ||
        (ne && !(s->ents = calloc(ne, sizeof *s->ents))))
        return jx_fail(err, errlen, "out of memory");
    for (uint64_t i = 0; i < ni; i++) {
        struct snapimg_inode *in = &s->inodes[i];
        in->ino = bget_u64(c);
        in->mode = bget_u32(c);
        in->nlink = bget_u32(c);
        in->mtime = bget_u64(c);
        in->size = bget_u64(c);
        s->ninodes++;
        if (c->bad || in->size > c->left)
            return jx_fail(err, errlen, "SNAPSHOT: written file %llu cut short",
                           (unsigned long long)i);
        const uint8_t *p = in->size ? bget_ptr(c, (size_t)in->size) : NULL;
        if (in->size && !(in->bytes = malloc((size_t)in->size)))
            return jx_fail(err, errlen, "out of memory");
        if (in->size)
            memcpy(in->bytes, p, (size_t)in->size);
    }
    char *path = malloc(SNAP_MAX_PATH);
    if (!path)
        return jx_fail(err, errlen, "out of memory");
    for (uint64_t i = 0; i < ne; i++) {
        s->ents[i].ino = bget_u64(c);
        s->ents[i].opaque = bget_u32(c);
        if (!bget_str(c, path, SNAP_MAX_PATH)) {
            free(path);
            return jx_fail(err, errlen, "SNAPSHOT: written file name %llu malformed",
                           (unsigned long long)i);
        }
        if (!(s->ents[i].path = strdup(path))) {
            free(path);
            return jx_fail(err, errlen, "out of memory");
        }
        s->nents++;
    }
    free(path);
    uint32_t nov = bget_u32(c);
    if (c->bad || nov > SNAP_MAX_FDS)
        return jx_fail(err, errlen, "SNAPSHOT: written files' descriptors malformed");
    for (uint32_t i = 0; i < nov; i++) {
        uint32_t fd = bget_u32(c);
        uint64_t ino = bget_u64(c);
        size_t k = 0;
        while (k < s->nfds && s->fds[k].fd != fd)
            k++;
        if (c->bad || k == s->nfds || !(s->fds[k].flags & SNAP_FD_OVL))
            return jx_fail(err, errlen, "SNAPSHOT: written file descriptor %u unknown", fd);
        s->fds[k].ino = ino;
    }
    return 0;
}

/* The pending signals after the written files; absent before format 1.4 (none). */
static int parse_signals(struct bcur *c, struct snap_image *s, char *err, size_t errlen)
{
    if (c->left == 0)
        return 0;
    s->sig_shared = bget_u64(c);
    uint32_t n = bget_u32(c);
    bget_u32(c);
    if (c->bad || n != s->nvcpus || (uint64_t)n * 16 > c->left)
        return jx_fail(err, errlen, "SNAPSHOT: pending signals' section malformed");
    for (uint32_t i = 0; i < n; i++) {
        s->v[i].sigpending = bget_u64(c);
        /* Which of them tkill sent: a subset of them (anything else is dropped). */
        s->v[i].sigpend_tkill = bget_u64(c) & s->v[i].sigpending;
    }
    return 0;
}

/* The pipe section after the descriptors; absent in dumps older than format 1.2. */
static int parse_pipes(struct bcur *c, struct snap_image *s, char *err, size_t errlen)
{
    if (c->left == 0)
        return 0;
    uint32_t n = bget_u32(c);
    s->next_pipe = bget_u32(c);
    if (c->bad || n > SNAP_MAX_PIPES || (uint64_t)n * 20 > c->left)
        return jx_fail(err, errlen, "SNAPSHOT: pipe section malformed or cut short");
    if (n && !(s->pipes = calloc(n, sizeof *s->pipes)))
        return jx_fail(err, errlen, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        struct snapimg_pipe *p = &s->pipes[i];
        p->id = bget_u32(c);
        p->flags = bget_u32(c);
        p->count = bget_u64(c);
        p->len = bget_u32(c);
        s->npipes++;
        const uint8_t *bytes = c->bad || p->len > SNAP_PIPE_CAP ? NULL : bget_ptr(c, p->len);
        if (c->bad || p->len > SNAP_PIPE_CAP)
            return jx_fail(err, errlen, "SNAPSHOT: pipe %u malformed or cut short", i);
        if (p->len && !(p->bytes = malloc(p->len)))
            return jx_fail(err, errlen, "out of memory");
        if (p->len)
            memcpy(p->bytes, bytes, p->len);
        if (!(p->flags & SNAP_PIPE_EPOLL))
            continue;
        uint32_t ni = bget_u32(c);
        if (c->bad || ni > SNAP_MAX_FDS || (uint64_t)ni * 16 > c->left)
            return jx_fail(err, errlen, "SNAPSHOT: epoll %u malformed or cut short", i);
        if (ni && !(p->items = calloc(ni, sizeof *p->items)))
            return jx_fail(err, errlen, "out of memory");
        for (; p->nitems < ni; p->nitems++) {
            p->items[p->nitems].fd = bget_u32(c);
            p->items[p->nitems].events = bget_u32(c);
            p->items[p->nitems].data = bget_u64(c);
        }
    }
    return 0;
}

/* The descriptor section after the pages; absent in dumps older than format 1.1. */
static int parse_fds(struct bcur *c, struct snap_image *s, char *err, size_t errlen)
{
    if (c->left == 0)
        return 0;
    uint32_t n = bget_u32(c);
    bget_u32(c);
    char *path = malloc(SNAP_MAX_PATH);
    if (!path)
        return jx_fail(err, errlen, "out of memory");
    int rc = -1;
    if (c->bad || n > SNAP_MAX_FDS || (uint64_t)n * 20 > c->left ||
        !bget_str(c, path, SNAP_MAX_PATH)) {
        jx_fail(err, errlen, "SNAPSHOT: descriptor section malformed or cut short");
        goto out;
    }
    if (path[0] && !(s->cwd = strdup(path)))
        goto oom;
    if (n && !(s->fds = calloc(n, sizeof *s->fds)))
        goto oom;
    for (uint32_t i = 0; i < n; i++) {
        struct snapimg_fd *f = &s->fds[i];
        f->fd = bget_u32(c);
        f->flags = bget_u32(c);
        f->off = bget_u64(c);
        if (!bget_str(c, path, SNAP_MAX_PATH)) {
            jx_fail(err, errlen, "SNAPSHOT: descriptor %u malformed or cut short", i);
            goto out;
        }
        s->nfds++;
        if (f->flags & SNAP_FD_PIPE) { /* validated with the pipes (snapimage.c) */
            f->tx = (uint32_t)(f->off >> 32);
            f->pipe = (uint32_t)(f->off >> 8 & 0xffffff);
            f->end = (uint32_t)(f->off & 0xff);
            f->off = path[0] ? 1 : 0; /* a path on a pipe: refused as nonzero offset */
            continue;
        }
        if (!(f->path = strdup(path)))
            goto oom;
    }
    rc = 0;
    goto out;
oom:
    jx_fail(err, errlen, "out of memory");
out:
    free(path);
    return rc;
}

/* ---- validation ------------------------------------------------------------------ */

static bool get_blob(struct bcur *c, void *dst, size_t size)
{
    uint32_t n = bget_u32(c);
    if (n != size) {
        c->bad = true;
        return false;
    }
    return bget(c, dst, size);
}

static const uint8_t *get_xsave(struct bcur *c, uint32_t *len)
{
    *len = bget_u32(c);
    if (*len > sizeof(struct kvm_xsave)) {
        c->bad = true;
        return NULL;
    }
    return *len ? bget_ptr(c, *len) : NULL;
}

int snapfile_parse(const uint8_t *buf, size_t len, struct snap_image *s, char *err,
                   size_t errlen)
{
    memset(s, 0, sizeof *s);
    struct bcur c = bcur_make(buf, len);
    int rc = -1;
    s->mem = bget_u64(&c);
    s->nvcpus = bget_u32(&c);
    bget_u32(&c);
    s->next_tid = (int32_t)bget_u32(&c);
    s->live = (int32_t)bget_u32(&c);
    s->blocked = (int32_t)bget_u32(&c);
    bget_u32(&c);
    s->wait_counter = bget_u64(&c);
    s->vtime = bget_u64(&c);
    s->rng = bget_u64(&c);
    for (int i = 0; i < SNAP_SIGACTS; i++)
        s->sigact[i] = bget_u64(&c);
    s->brk_base = bget_u64(&c);
    s->brk_cur = bget_u64(&c);
    uint32_t nvmas = bget_u32(&c);
    uint32_t vma_format = bget_u32(&c);
    size_t vma_bytes = vma_format == SNAPFILE_VMA_ATTRS ? 24 : 16;
    if (c.bad)
        return jx_fail(err, errlen, "SNAPSHOT record too short");
    if (s->mem < (16ULL << 20) || s->mem > MAX_GUEST_MEM || s->mem % (2ULL << 20))
        return jx_fail(err, errlen, "SNAPSHOT: guest memory size %llu is out of range",
                    (unsigned long long)s->mem);
    if (s->nvcpus < 1 || s->nvcpus > MAX_VCPUS)
        return jx_fail(err, errlen, "SNAPSHOT: %u vCPUs (expected 1..%d)", s->nvcpus, MAX_VCPUS);
    if (vma_format > SNAPFILE_VMA_ATTRS)
        return jx_fail(err, errlen, "SNAPSHOT: VMA format %u (at most %u)", vma_format,
                       SNAPFILE_VMA_ATTRS);
    if (nvmas > SNAP_MAX_VMAS || (uint64_t)nvmas * vma_bytes > c.left)
        return jx_fail(err, errlen, "SNAPSHOT: %u VMAs do not fit the record", nvmas);
    uint64_t words = snapimg_bitmap_words(s->mem), nframes = s->mem / PAGE_SIZE;
    s->vmas = malloc((nvmas ? nvmas : 1) * sizeof *s->vmas);
    s->frame_bitmap = calloc(words, 8);
    s->v = calloc(s->nvcpus, sizeof *s->v);
    if (!s->vmas || !s->frame_bitmap || !s->v) {
        jx_fail(err, errlen, "out of memory");
        goto out;
    }
    s->nvmas = nvmas;
    for (uint32_t i = 0; i < nvmas; i++) {
        s->vmas[i].start = bget_u64(&c);
        s->vmas[i].end = bget_u64(&c);
        uint64_t attrs = vma_format == SNAPFILE_VMA_ATTRS ? bget_u64(&c) : 0;
        s->vmas[i].lazy = (attrs >> 32) & 1;
        s->vmas[i].prot = s->vmas[i].lazy ? (uint32_t)(attrs & 7) : 0;
    }
    s->frames_used = bget_u64(&c);
    s->frames_next = bget_u64(&c);
    if (bget_u64(&c) != words) {
        jx_fail(err, errlen, "SNAPSHOT: frame bitmap size does not match the memory size");
        goto out;
    }
    for (uint64_t w = 0; w < words; w++)
        s->frame_bitmap[w] = bget_u64(&c);
    s->table_cursor = bget_u64(&c);
    uint32_t ntables = bget_u32(&c);
    bget_u32(&c);
    if (c.bad || ntables > nframes || (uint64_t)ntables * 16 > c.left) {
        jx_fail(err, errlen, "SNAPSHOT: page-table list malformed or cut short");
        goto out;
    }
    s->tables = malloc((ntables ? ntables : 1) * sizeof *s->tables);
    if (!s->tables) {
        jx_fail(err, errlen, "out of memory");
        goto out;
    }
    s->ntables = ntables;
    for (uint32_t i = 0; i < ntables; i++) {
        s->tables[i].frame = bget_u64(&c);
        uint64_t level = bget_u64(&c);
        s->tables[i].level = level > 255 ? 255 : (uint8_t)level;
    }
    for (int i = 0; i < 256; i++)
        s->pml4_user[i] = bget_u64(&c);
    for (uint32_t i = 0; i < s->nvcpus && !c.bad; i++) {
        struct snapimg_vcpu *v = &s->v[i];
        v->flags = bget_u32(&c);
        v->tid = bget_u32(&c);
        v->state = bget_u32(&c);
        v->wait_bitset = bget_u32(&c);
        v->clear_child_tid = bget_u64(&c);
        v->sigmask = bget_u64(&c);
        v->wait_addr = bget_u64(&c);
        v->wait_deadline = bget_u64(&c);
        v->wait_seq = bget_u64(&c);
        v->wait_result = (int64_t)bget_u64(&c);
        get_regs(&c, &v->blocked_regs);
        if (v->flags & SNAPF_HAS_KVM) {
            get_regs(&c, &v->regs);
            get_blob(&c, &v->sregs, sizeof v->sregs);
            v->xsave = get_xsave(&c, &v->xsave_len);
        }
        if (v->flags & SNAPF_START) {
            get_regs(&c, &v->start_regs);
            get_blob(&c, &v->start_sregs, sizeof v->start_sregs);
            v->start_xsave = get_xsave(&c, &v->start_xsave_len);
        }
    }
    uint64_t npages = bget_u64(&c);
    if (c.bad || npages > nframes || npages > c.left / (8 + PAGE_SIZE)) {
        jx_fail(err, errlen, "SNAPSHOT: vCPU state or page list malformed or cut short");
        goto out;
    }
    s->pages = malloc((npages ? npages : 1) * sizeof *s->pages);
    if (!s->pages) {
        jx_fail(err, errlen, "out of memory");
        goto out;
    }
    s->npages = npages;
    for (uint64_t i = 0; i < npages; i++) {
        s->pages[i].frame = bget_u64(&c);
        s->pages[i].data = bget_ptr(&c, PAGE_SIZE);
    }
    if (!c.bad && (parse_fds(&c, s, err, errlen) < 0 || parse_pipes(&c, s, err, errlen) < 0 ||
                   parse_ovl(&c, s, err, errlen) < 0 ||
                   (s->has_ovl && parse_signals(&c, s, err, errlen) < 0)))
        goto out;
    if (c.bad) {
        jx_fail(err, errlen, "SNAPSHOT record cut short");
        goto out;
    }
    char why[200];
    if (snapimg_validate(s, why, sizeof why) < 0) {
        jx_fail(err, errlen, "SNAPSHOT: %s", why);
        goto out;
    }
    rc = 0;
out:
    if (rc < 0)
        snapimg_free(s);
    return rc;
}
