/* SNAPSHOT record codec (snapfile.h). */
#include "dump/snapfile.h"
#include "lib/util.h"
#include "lib/bytes.h"
#include "kvm/layout.h"
#include "kvm/guestmem.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define NREGS (sizeof(struct kvm_regs) / 8)
_Static_assert(sizeof(struct kvm_regs) == 18 * 8, "kvm_regs is 18 u64");


void snapimg_free(struct snap_image *s)
{
    free(s->v);
    free(s->vmas);
    free(s->frame_bitmap);
    free(s->tables);
    free(s->pages);
    memset(s, 0, sizeof *s);
}

uint64_t snapimg_bytes(const struct snap_image *s) { return (uint64_t)s->npages * PAGE_SIZE; }

static uint64_t bitmap_words(uint64_t mem) { return (mem / PAGE_SIZE + 63) / 64; }

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

int snapfile_encode(const struct snap_image *s, struct dbuf *b)
{
    char why[160];
    if (snapfile_validate(s, why, sizeof why) < 0)
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
    bput_u32(b, 0);
    for (size_t i = 0; i < s->nvmas; i++) {
        bput_u64(b, s->vmas[i].start);
        bput_u64(b, s->vmas[i].end);
    }
    bput_u64(b, s->frames_used);
    bput_u64(b, s->frames_next);
    uint64_t words = bitmap_words(s->mem);
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
    return b->oom ? -1 : 0;
}

/* ---- validation ------------------------------------------------------------------ */

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

int snapfile_validate(const struct snap_image *s, char *err, size_t errlen)
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
    for (uint64_t f = nframes; f < bitmap_words(s->mem) * 64; f++)
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
    return 0;
}

/* ---- parser ---------------------------------------------------------------------- */

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
    bget_u32(&c);
    if (c.bad)
        return jx_fail(err, errlen, "SNAPSHOT record too short");
    if (s->mem < (16ULL << 20) || s->mem > MAX_GUEST_MEM || s->mem % (2ULL << 20))
        return jx_fail(err, errlen, "SNAPSHOT: guest memory size %llu is out of range",
                    (unsigned long long)s->mem);
    if (s->nvcpus < 1 || s->nvcpus > MAX_VCPUS)
        return jx_fail(err, errlen, "SNAPSHOT: %u vCPUs (expected 1..%d)", s->nvcpus, MAX_VCPUS);
    if (nvmas > SNAP_MAX_VMAS || (uint64_t)nvmas * 16 > c.left)
        return jx_fail(err, errlen, "SNAPSHOT: %u VMAs do not fit the record", nvmas);
    uint64_t words = bitmap_words(s->mem), nframes = s->mem / PAGE_SIZE;
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
    if (c.bad) {
        jx_fail(err, errlen, "SNAPSHOT record cut short");
        goto out;
    }
    char why[200];
    if (snapfile_validate(s, why, sizeof why) < 0) {
        jx_fail(err, errlen, "SNAPSHOT: %s", why);
        goto out;
    }
    rc = 0;
out:
    if (rc < 0)
        snapimg_free(s);
    return rc;
}
