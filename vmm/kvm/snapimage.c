/* The in-memory snapshot image and its checks (snapimage.h). */
#include "kvm/snapimage.h"
#include "kvm/guestmem.h"
#include "kvm/layout.h"
#include "lib/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void snapimg_free(struct snap_image *s)
{
    free(s->v);
    free(s->vmas);
    free(s->frame_bitmap);
    free(s->tables);
    free(s->pages);
    for (size_t i = 0; i < s->nfds; i++)
        free(s->fds[i].path);
    free(s->fds);
    for (size_t i = 0; i < s->npipes; i++) {
        free(s->pipes[i].bytes);
        free(s->pipes[i].items);
    }
    free(s->pipes);
    free(s->cwd);
    for (size_t i = 0; i < s->ninodes; i++)
        free(s->inodes[i].bytes);
    free(s->inodes);
    for (size_t i = 0; i < s->nents; i++)
        free(s->ents[i].path);
    free(s->ents);
    memset(s, 0, sizeof *s);
}

uint64_t snapimg_bytes(const struct snap_image *s) { return (uint64_t)s->npages * PAGE_SIZE; }

uint64_t snapimg_bitmap_words(uint64_t mem) { return (mem / PAGE_SIZE + 63) / 64; }

static bool bit(const uint64_t *bm, uint64_t f) { return (bm[f / 64] >> (f % 64)) & 1; }

static int table_level_of(const struct snap_image *s, uint64_t frame)
{
    size_t lo = 0, hi = s->ntables;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->tables[mid].frame == frame)
            return s->tables[mid].level;
        if (s->tables[mid].frame < frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static const uint8_t *page_of(const struct snap_image *s, uint64_t frame)
{
    size_t lo = 0, hi = s->npages;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->pages[mid].frame == frame)
            return s->pages[mid].data;
        if (s->pages[mid].frame < frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* A present entry of a level-`level` table (4: the PML4). */
static int check_entry(const struct snap_image *s, int level, uint64_t e, char *err, size_t errlen)
{
    uint64_t nframes = s->mem / PAGE_SIZE;
    if (!e)
        return 0;
    uint64_t pa = e & PTE_ADDR, f = pa / PAGE_SIZE;
    if (level > 1) {
        if (!(e & PTE_P) || (e & (PTE_PS | PTE_TRAP)))
            return jx_fail(err, errlen, "page tables: a level-%d entry 0x%llx is not a plain "
                        "present table entry", level, (unsigned long long)e);
        if (table_level_of(s, f) != level - 1)
            return jx_fail(err, errlen, "page tables: a level-%d entry points to frame 0x%llx, "
                        "which is not a level-%d table", level, (unsigned long long)f, level - 1);
        return 0;
    }
    if (!(e & (PTE_P | PTE_SOFT)) || (e & PTE_TRAP))
        return jx_fail(err, errlen, "page tables: bad leaf entry 0x%llx", (unsigned long long)e);
    if (pa == GPA_AGENT || pa == GPA_MMIO_SYSCALL)
        return 0; /* the agent's two user-visible pages */
    if (pa < GPA_POOL || f >= nframes || !bit(s->frame_bitmap, f) || table_level_of(s, f))
        return jx_fail(err, errlen, "page tables: a leaf maps frame 0x%llx, which is not a data "
                    "frame in use", (unsigned long long)f);
    return 0;
}

int snapimg_validate(const struct snap_image *s, char *err, size_t errlen)
{
    if (s->mem < (16ULL << 20) || s->mem > MAX_GUEST_MEM || s->mem % (2ULL << 20))
        return jx_fail(err, errlen, "guest memory size %llu is out of range",
                    (unsigned long long)s->mem);
    uint64_t nframes = s->mem / PAGE_SIZE, pool = GPA_POOL / PAGE_SIZE;
    if (s->nvcpus < 1 || s->nvcpus > MAX_VCPUS || !s->v)
        return jx_fail(err, errlen, "%u vCPUs (expected 1..%d)", s->nvcpus, MAX_VCPUS);
    if (s->next_tid < 2 || s->next_tid > SNAP_MAX_TID || s->live < 1 ||
        s->live > (int32_t)s->nvcpus || s->blocked < 0 || s->blocked > s->live)
        return jx_fail(err, errlen, "thread counts out of range (next tid %d, live %d, blocked %d)",
                    s->next_tid, s->live, s->blocked);
    if (s->nvmas > SNAP_MAX_VMAS || (s->nvmas && !s->vmas))
        return jx_fail(err, errlen, "%zu VMAs (at most %u)", s->nvmas, SNAP_MAX_VMAS);
    for (size_t i = 0; i < s->nvmas; i++) {
        const struct vma *m = &s->vmas[i];
        if (m->start >= m->end || m->start % PAGE_SIZE || m->end % PAGE_SIZE ||
            m->start < USER_MIN || m->end > USER_TOP || (i && m->start < s->vmas[i - 1].end))
            return jx_fail(err, errlen, "VMA %zu [0x%llx, 0x%llx) is not a sorted, disjoint, "
                        "page-aligned user range", i, (unsigned long long)m->start,
                        (unsigned long long)m->end);
        if (m->lazy > 1 || m->prot > 7 || (!m->lazy && m->prot))
            return jx_fail(err, errlen, "VMA %zu: lazy %u, protection %u out of range", i,
                           m->lazy, m->prot);
    }
    if (s->brk_base > s->brk_cur || s->brk_cur > USER_TOP)
        return jx_fail(err, errlen, "brk out of range");
    if (!s->frame_bitmap)
        return jx_fail(err, errlen, "no frame bitmap");
    if (s->frames_used > nframes || s->frames_next >= nframes || s->frames_next < pool)
        return jx_fail(err, errlen, "frame allocator state out of range");
    for (uint64_t f = 0; f < pool; f++)
        if (!bit(s->frame_bitmap, f))
            return jx_fail(err, errlen, "frame bitmap: agent frame 0x%llx not in use",
                        (unsigned long long)f);
    for (uint64_t f = nframes; f < snapimg_bitmap_words(s->mem) * 64; f++)
        if (bit(s->frame_bitmap, f))
            return jx_fail(err, errlen, "frame bitmap: frame 0x%llx beyond guest memory",
                        (unsigned long long)f);
    if (s->table_cursor < pool || s->table_cursor > nframes || (s->ntables && !s->tables))
        return jx_fail(err, errlen, "page-table cursor out of range");
    for (size_t i = 0; i < s->ntables; i++) {
        const struct snapimg_table *t = &s->tables[i];
        if (t->frame < s->table_cursor || t->frame >= nframes || t->level < 1 || t->level > 3 ||
            (i && t->frame <= s->tables[i - 1].frame) || !bit(s->frame_bitmap, t->frame))
            return jx_fail(err, errlen, "page-table frame %zu (0x%llx, level %u) out of range, "
                        "unsorted or not in use", i, (unsigned long long)t->frame, t->level);
    }
    if (s->npages > nframes || (s->npages && !s->pages))
        return jx_fail(err, errlen, "%zu pages for %llu frames", s->npages,
                    (unsigned long long)nframes);
    for (size_t i = 0; i < s->npages; i++) {
        uint64_t f = s->pages[i].frame;
        if (f < pool || f >= nframes || (i && f <= s->pages[i - 1].frame) ||
            !bit(s->frame_bitmap, f) || !s->pages[i].data)
            return jx_fail(err, errlen, "page %zu (frame 0x%llx) out of range, unsorted or not "
                        "in use", i, (unsigned long long)f);
    }
    /* The page-table tree, from the PML4's user half down. */
    for (int i = 0; i < 256; i++)
        if (check_entry(s, 4, s->pml4_user[i], err, errlen) < 0)
            return -1;
    for (size_t i = 0; i < s->ntables; i++) {
        const uint8_t *p = page_of(s, s->tables[i].frame);
        for (int k = 0; p && k < 512; k++) {
            uint64_t e;
            memcpy(&e, p + 8 * k, 8);
            if (check_entry(s, s->tables[i].level, e, err, errlen) < 0)
                return -1;
        }
    }
    int with_tid = 0;
    for (uint32_t i = 0; i < s->nvcpus; i++) {
        const struct snapimg_vcpu *v = &s->v[i];
        if (v->flags & ~(uint32_t)SNAPF_ALL_)
            return jx_fail(err, errlen, "vCPU %u: unknown flags 0x%x", i, v->flags);
        if (!(v->flags & SNAPF_EXISTS))
            return jx_fail(err, errlen, "vCPU %u: missing", i);
        if (v->state > SNAP_T_BLOCKED || v->tid > SNAP_MAX_TID ||
            (v->tid == 0) != (v->state == SNAP_T_FREE) || (int64_t)v->tid >= s->next_tid)
            return jx_fail(err, errlen, "vCPU %u: thread %u in state %u is out of range", i, v->tid,
                        v->state);
        if (v->tid == 0 && (v->flags & (SNAPF_START | SNAPF_HAS_KVM)))
            return jx_fail(err, errlen, "vCPU %u: parked, but holds a thread's state", i);
        if ((v->flags & SNAPF_START) && (v->flags & SNAPF_HAS_KVM))
            return jx_fail(err, errlen, "vCPU %u: both a start state and a running state", i);
        for (uint32_t j = 0; v->tid && j < i; j++)
            if (s->v[j].tid == v->tid)
                return jx_fail(err, errlen, "two vCPUs run thread %u", v->tid);
        with_tid += v->tid != 0;
        if (((v->flags & SNAPF_HAS_KVM) && v->xsave_len > sizeof(struct kvm_xsave)) ||
            ((v->flags & SNAPF_START) && v->start_xsave_len > sizeof(struct kvm_xsave)))
            return jx_fail(err, errlen, "vCPU %u: XSAVE area too large", i);
        if (((v->flags & SNAPF_HAS_KVM) && v->sregs.cr3 != GPA_PML4) ||
            ((v->flags & SNAPF_START) && v->start_sregs.cr3 != GPA_PML4))
            return jx_fail(err, errlen, "vCPU %u: CR3 is not jinx's page-table root", i);
    }
    if (with_tid != s->live)
        return jx_fail(err, errlen, "%d live threads, but %d vCPUs hold a thread", s->live, with_tid);
    return snapimg_validate_fds(s, err, errlen);
}

/* A pipe descriptor names a pipe of the image with an end of its kind. */
static int validate_pipe_fd(const struct snap_image *s, const struct snapimg_fd *f, char *err,
                            size_t errlen)
{
    if (f->path || f->off || f->pipe >= s->npipes)
        return jx_fail(err, errlen, "descriptor %u: not a valid pipe descriptor", f->fd);
    uint32_t k = s->pipes[f->pipe].flags & (SNAP_PIPE_EVENTFD | SNAP_PIPE_EPOLL);
    bool sock = f->end == SNAP_END_SOCK;
    if (sock && (f->tx >= s->npipes || f->tx == f->pipe ||
                 (s->pipes[f->tx].flags & (SNAP_PIPE_EVENTFD | SNAP_PIPE_EPOLL))))
        return jx_fail(err, errlen, "descriptor %u: a socket's pipes are not two pipes", f->fd);
    if (!sock && f->tx)
        return jx_fail(err, errlen, "descriptor %u: a second pipe on no socket", f->fd);
    if (k == SNAP_PIPE_EVENTFD ? f->end != SNAP_END_EVENT
        : k == SNAP_PIPE_EPOLL ? f->end != SNAP_END_EPOLL
                               : f->end > SNAP_END_WRITE && !sock)
        return jx_fail(err, errlen, "descriptor %u: end %u of pipe kind %u", f->fd, f->end, k);
    return 0;
}

/* Pipes: bounded, ids unique and in range, an eventfd holds no bytes. */
static int validate_pipes(const struct snap_image *s, char *err, size_t errlen)
{
    if (s->npipes > SNAP_MAX_PIPES || (s->npipes && !s->pipes) || s->next_pipe > SNAP_PIPE_IDS)
        return jx_fail(err, errlen, "%zu pipes (at most %u) or next id %u", s->npipes,
                       SNAP_MAX_PIPES, s->next_pipe);
    for (size_t i = 0; i < s->npipes; i++) {
        const struct snapimg_pipe *p = &s->pipes[i];
        bool ev = p->flags & SNAP_PIPE_EVENTFD, ep = p->flags & SNAP_PIPE_EPOLL;
        if (p->id == 0 || p->id > SNAP_PIPE_IDS || (p->flags & ~7u) || (ev && ep) ||
            (!ev && (p->flags & SNAP_PIPE_SEMAPHORE)))
            return jx_fail(err, errlen, "pipe %zu: id %u or flags 0x%x invalid", i, p->id,
                           p->flags);
        if (p->len > SNAP_PIPE_CAP || ((ev || ep) && p->len) || (!ev && p->count) ||
            p->count == UINT64_MAX || (p->len && !p->bytes))
            return jx_fail(err, errlen, "pipe %u: %u bytes, counter %llu", p->id, p->len,
                           (unsigned long long)p->count);
        if ((!ep && p->nitems) || p->nitems > SNAP_MAX_FDS || (p->nitems && !p->items))
            return jx_fail(err, errlen, "pipe %u: %u epoll interests", p->id, p->nitems);
        for (uint32_t k = 0; k < p->nitems; k++)
            if (p->items[k].fd >= SNAP_MAX_FDS)
                return jx_fail(err, errlen, "epoll %u: interest in descriptor %u", p->id,
                               p->items[k].fd);
        for (size_t k = 0; k < i; k++)
            if (s->pipes[k].id == p->id)
                return jx_fail(err, errlen, "pipe id %u twice", p->id);
    }
    return 0;
}

static const struct snapimg_inode *find_inode(const struct snap_image *s, uint64_t ino)
{
    size_t lo = 0, hi = s->ninodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->inodes[mid].ino == ino)
            return &s->inodes[mid];
        if (s->inodes[mid].ino < ino)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* A canonical absolute path: '/', then names without '.', '..' or empty ones. */
static bool canonical(const char *p)
{
    size_t n = p ? strlen(p) : 0;
    if (!n || p[0] != '/' || n >= SNAP_MAX_PATH || (n > 1 && p[n - 1] == '/'))
        return false;
    for (const char *c = p; *c; c++)
        if (*c == '/' && (c[1] == '/' || (c[1] == '.' && (c[2] == '/' || !c[2] ||
                                                         (c[2] == '.' && (c[3] == '/' || !c[3]))))))
            return false;
    return true;
}

/* The written files: inodes ascending and bounded, names canonical, sorted, naming
 * inodes of the image. */
static int validate_ovl(const struct snap_image *s, char *err, size_t errlen)
{
    if (s->ninodes > SNAP_MAX_OVL_ENTS || s->nents > SNAP_MAX_OVL_ENTS ||
        (s->ninodes && !s->inodes) || (s->nents && !s->ents))
        return jx_fail(err, errlen, "%zu written files' inodes, %zu names (at most %u)",
                       s->ninodes, s->nents, SNAP_MAX_OVL_ENTS);
    uint64_t total = 0;
    for (size_t i = 0; i < s->ninodes; i++) {
        const struct snapimg_inode *in = &s->inodes[i];
        uint32_t type = in->mode & 0170000;
        if (!in->ino || in->ino >= s->next_ino || (i && in->ino <= s->inodes[i - 1].ino) ||
            (type != 0100000 && type != 0040000) || (in->mode & ~0177777u) ||
            (type == 0040000 && in->size) || in->size > SNAP_MAX_OVL_BYTES ||
            (in->size && !in->bytes) || (total += in->size) > SNAP_MAX_OVL_BYTES)
            return jx_fail(err, errlen, "written file inode %zu invalid (number %llu, mode 0%o, "
                           "%llu bytes)", i, (unsigned long long)in->ino, in->mode,
                           (unsigned long long)in->size);
    }
    for (size_t i = 0; i < s->nents; i++) {
        const struct snapimg_ent *e = &s->ents[i];
        if (!canonical(e->path) || (i && strcmp(e->path, s->ents[i - 1].path) <= 0) ||
            (e->ino && !find_inode(s, e->ino)) || e->opaque > 1)
            return jx_fail(err, errlen, "written file name %zu invalid (not canonical, "
                           "unsorted, or naming no inode)", i);
    }
    return 0;
}

int snapimg_validate_fds(const struct snap_image *s, char *err, size_t errlen)
{
    if (validate_pipes(s, err, errlen) < 0 || validate_ovl(s, err, errlen) < 0)
        return -1;
    if (s->cwd && (s->cwd[0] != '/' || strlen(s->cwd) >= SNAP_MAX_PATH))
        return jx_fail(err, errlen, "working directory is not an absolute path");
    if (s->nfds > SNAP_MAX_FDS || (s->nfds && !s->fds))
        return jx_fail(err, errlen, "%zu open descriptors (at most %u)", s->nfds, SNAP_MAX_FDS);
    for (size_t i = 0; i < s->nfds; i++) {
        const struct snapimg_fd *f = &s->fds[i];
        if (f->fd < 3 || f->fd >= SNAP_MAX_FDS || (i && f->fd <= s->fds[i - 1].fd))
            return jx_fail(err, errlen, "descriptor %u out of range or unsorted", f->fd);
        if (f->flags & ~SNAP_FD_ALL_)
            return jx_fail(err, errlen, "descriptor %u: unknown flags 0x%x", f->fd, f->flags);
        if (f->flags & SNAP_FD_PIPE) {
            if (validate_pipe_fd(s, f, err, errlen) < 0)
                return -1;
            continue;
        }
        if (!f->path || f->path[0] != '/' || strlen(f->path) >= SNAP_MAX_PATH)
            return jx_fail(err, errlen, "descriptor %u: its file is not an absolute path",
                           f->fd);
        if (f->off > (1ULL << 62))
            return jx_fail(err, errlen, "descriptor %u: offset out of range", f->fd);
        if ((f->flags & SNAP_FD_OVL) ? !find_inode(s, f->ino) : f->ino != 0)
            return jx_fail(err, errlen, "descriptor %u: names no written file", f->fd);
        if ((f->flags & SNAP_FD_WRONLY) && (f->flags & SNAP_FD_RDWR))
            return jx_fail(err, errlen, "descriptor %u: two access modes", f->fd);
    }
    return 0;
}

/* ---- parser ---------------------------------------------------------------------- */

