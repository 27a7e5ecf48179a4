/* ELF core files: writer (dump.c) and validating reader (inspect.c). x86-64 only, like
 * the guests: structures are written and read in host (little-endian) layout. */
#include "dump/corefile.h"
#include "lib/util.h"
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <unistd.h>

#define PAGE 4096u

_Static_assert(sizeof(struct elf_prstatus) == 336, "x86-64 elf_prstatus");
_Static_assert(sizeof(struct elf_prpsinfo) == 136, "x86-64 elf_prpsinfo");
_Static_assert(sizeof(elf_gregset_t) == DUMP_NREGS * 8, "user_regs_struct");


/* ---- writer ---------------------------------------------------------------------- */

/* Sequential output with holes: data is buffered and hashed; a hole is hashed as zeros
 * and skipped with lseek, so zero pages cost no disk space. */
struct out {
    int fd;
    struct sha256 sha;
    uint64_t pos;               /* file position after everything emitted */
    uint8_t *buf;
    size_t nbuf;
    int error;                  /* errno of the first failure */
};

#define OUTBUF (1u << 20)

static void flush(struct out *o)
{
    size_t done = 0;
    while (!o->error && done < o->nbuf) {
        ssize_t n = write(o->fd, o->buf + done, o->nbuf - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            o->error = n < 0 ? errno : EIO;
        else
            done += (size_t)n;
    }
    o->nbuf = 0;
}

static void emit(struct out *o, const void *p, size_t len)
{
    sha256_update(&o->sha, p, len);
    o->pos += len;
    const uint8_t *s = p;
    while (len && !o->error) {
        size_t take = OUTBUF - o->nbuf < len ? OUTBUF - o->nbuf : len;
        memcpy(o->buf + o->nbuf, s, take);
        o->nbuf += take;
        s += take;
        len -= take;
        if (o->nbuf == OUTBUF)
            flush(o);
    }
}

static const uint8_t zero_page[PAGE];

static void emit_hole(struct out *o, uint64_t len)
{
    flush(o);
    for (uint64_t left = len; left; ) {
        size_t n = left < PAGE ? (size_t)left : PAGE;
        sha256_update(&o->sha, zero_page, n);
        left -= n;
    }
    o->pos += len;
    if (!o->error && lseek(o->fd, (off_t)o->pos, SEEK_SET) < 0)
        o->error = errno;
}

struct notes {
    uint8_t *p;
    size_t len, cap;
    bool oom;
};

static void note_put(struct notes *n, const void *p, size_t len)
{
    size_t padded = (len + 3) & ~(size_t)3;
    if (n->oom)
        return;
    if (n->len + padded > n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 8192;
        while (cap < n->len + padded)
            cap *= 2;
        uint8_t *q = realloc(n->p, cap);
        if (!q) {
            n->oom = true;
            return;
        }
        n->p = q;
        n->cap = cap;
    }
    memcpy(n->p + n->len, p, len);
    memset(n->p + n->len + len, 0, padded - len);
    n->len += padded;
}

static void note(struct notes *n, uint32_t type, const void *desc, size_t len)
{
    Elf64_Nhdr h = {.n_namesz = 5, .n_descsz = (Elf64_Word)len, .n_type = type};
    note_put(n, &h, sizeof h);
    note_put(n, "CORE", 5);
    note_put(n, desc, len);
}

static void thread_notes(struct notes *n, const struct core_desc *d, const struct core_thread *t)
{
    struct elf_prstatus ps;
    memset(&ps, 0, sizeof ps);
    ps.pr_info.si_signo = t->cursig;
    ps.pr_cursig = (short)t->cursig;
    ps.pr_pid = (int)t->tid;
    ps.pr_ppid = 0;
    ps.pr_pgrp = ps.pr_sid = d->pid;
    memcpy(&ps.pr_reg, t->regs, sizeof ps.pr_reg);
    ps.pr_fpvalid = t->fpregs != NULL;
    note(n, NT_PRSTATUS, &ps, sizeof ps);
    if (t->fpregs)
        note(n, NT_FPREGSET, t->fpregs, DUMP_FPREGS_LEN);
}

/* Lays the patches that overlap [va, va + PAGE) over the page read there. */
static void apply_patches(const struct core_desc *d, uint64_t va, uint8_t *page)
{
    for (size_t i = 0; i < d->npatches; i++) {
        const struct core_patch *p = &d->patches[i];
        if (p->len == 0 || p->len > sizeof p->bytes)
            continue;
        for (uint32_t k = 0; k < p->len; k++)
            if (p->va + k >= va && p->va + k - va < PAGE)
                page[p->va + k - va] = p->bytes[k];
    }
}

int core_write(int fd, const struct core_desc *d, uint8_t sha[SHA256_LEN], uint64_t *size,
               char *err, size_t errlen)
{
    if (d->nthreads == 0 || d->nthreads > CORE_MAX_THREADS)
        return jx_fail(err, errlen, "core: %zu threads (1..%d)", d->nthreads, CORE_MAX_THREADS);
    if (d->nsegs + 1 > CORE_MAX_LOADS)
        return jx_fail(err, errlen, "core: %zu memory segments, at most %d", d->nsegs,
                    CORE_MAX_LOADS - 1);
    struct notes n = {0};
    for (size_t i = 0; i < d->nthreads; i++) {
        thread_notes(&n, d, &d->threads[i]);
        if (i)
            continue;
        /* Process-wide notes follow the first thread's, as Linux writes them. */
        struct elf_prpsinfo pi;
        memset(&pi, 0, sizeof pi);
        pi.pr_state = 0;
        pi.pr_sname = 'R';
        pi.pr_pid = d->pid;
        pi.pr_pgrp = pi.pr_sid = d->pid;
        snprintf(pi.pr_fname, sizeof pi.pr_fname, "%s", d->fname ? d->fname : "");
        snprintf(pi.pr_psargs, sizeof pi.pr_psargs, "%s", d->psargs ? d->psargs : "");
        note(&n, NT_PRPSINFO, &pi, sizeof pi);
        if (d->signo) {
            uint8_t si[128] = {0};
            int32_t f[3] = {d->signo, 0, d->si_code};
            memcpy(si, f, sizeof f);
            memcpy(si + 16, &d->fault_addr, 8);
            note(&n, NT_SIGINFO, si, sizeof si);
        }
        if (d->auxv && d->nauxv)
            note(&n, NT_AUXV, d->auxv, d->nauxv * 8);
    }
    if (n.oom) {
        free(n.p);
        return jx_fail(err, errlen, "core: out of memory");
    }
    size_t phnum = 1 + d->nsegs;
    uint64_t notes_off = sizeof(Elf64_Ehdr) + phnum * sizeof(Elf64_Phdr);
    uint64_t data_off = (notes_off + n.len + PAGE - 1) & ~(uint64_t)(PAGE - 1);

    struct out o = {.fd = fd, .buf = malloc(OUTBUF)};
    if (!o.buf) {
        free(n.p);
        return jx_fail(err, errlen, "core: out of memory");
    }
    sha256_init(&o.sha);
    Elf64_Ehdr eh;
    memset(&eh, 0, sizeof eh);
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
    eh.e_type = ET_CORE;
    eh.e_machine = EM_X86_64;
    eh.e_version = EV_CURRENT;
    eh.e_phoff = sizeof eh;
    eh.e_ehsize = sizeof eh;
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = (Elf64_Half)phnum;
    emit(&o, &eh, sizeof eh);
    Elf64_Phdr ph = {.p_type = PT_NOTE, .p_offset = notes_off, .p_filesz = n.len, .p_align = 4};
    emit(&o, &ph, sizeof ph);
    uint64_t off = data_off;
    for (size_t i = 0; i < d->nsegs; i++) {
        const struct core_seg *s = &d->segs[i];
        Elf64_Phdr lp = {.p_type = PT_LOAD, .p_flags = s->flags, .p_offset = off,
                         .p_vaddr = s->vaddr, .p_filesz = s->size, .p_memsz = s->size,
                         .p_align = PAGE};
        emit(&o, &lp, sizeof lp);
        off += s->size;
    }
    emit(&o, n.p, n.len);
    free(n.p);
    emit_hole(&o, data_off - o.pos);
    static __thread uint8_t page[PAGE];
    for (size_t i = 0; i < d->nsegs && !o.error; i++) {
        const struct core_seg *s = &d->segs[i];
        uint64_t hole = 0;
        for (uint64_t a = s->vaddr; a < s->vaddr + s->size && !o.error; a += PAGE) {
            bool mem = d->read(d->ctx, a, page, PAGE);
            if (mem)
                apply_patches(d, a, page);
            if (!mem || !memcmp(page, zero_page, PAGE)) {
                hole += PAGE;
                continue;
            }
            if (hole)
                emit_hole(&o, hole);
            hole = 0;
            emit(&o, page, PAGE);
        }
        if (hole)
            emit_hole(&o, hole);
    }
    flush(&o);
    /* A trailing hole has no bytes yet: give the file its full length. */
    if (!o.error && ftruncate(fd, (off_t)o.pos) < 0)
        o.error = errno;
    free(o.buf);
    if (o.error)
        return jx_fail(err, errlen, "core: write failed: %s", strerror(o.error));
    sha256_final(&o.sha, sha);
    *size = o.pos;
    return 0;
}

/* ---- reader ---------------------------------------------------------------------- */

static int cmp_load(const void *a, const void *b)
{
    const struct core_load *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int parse_notes(struct corefile *c, const uint8_t *p, uint64_t len, char *err,
                       size_t errlen)
{
    uint64_t off = 0;
    while (off < len) {
        if (len - off < sizeof(Elf64_Nhdr))
            return jx_fail(err, errlen, "core: note header cut short");
        Elf64_Nhdr h;
        memcpy(&h, p + off, sizeof h);
        off += sizeof h;
        uint64_t nsz = ((uint64_t)h.n_namesz + 3) & ~3ULL;
        uint64_t dsz = ((uint64_t)h.n_descsz + 3) & ~3ULL;
        if (nsz > len - off || dsz > len - off - nsz)
            return jx_fail(err, errlen, "core: note of type %u runs past its segment", h.n_type);
        const uint8_t *name = p + off;
        const uint8_t *desc = p + off + nsz;
        off += nsz + dsz;
        if (h.n_namesz != 5 || memcmp(name, "CORE", 5) != 0)
            continue; /* LINUX and other owners: not ours to read */
        switch (h.n_type) {
        case NT_PRSTATUS: {
            if (h.n_descsz < sizeof(struct elf_prstatus))
                return jx_fail(err, errlen, "core: NT_PRSTATUS of %u bytes", h.n_descsz);
            if (c->nthreads >= CORE_MAX_THREADS)
                return jx_fail(err, errlen, "core: more than %d threads", CORE_MAX_THREADS);
            struct elf_prstatus ps;
            memcpy(&ps, desc, sizeof ps);
            struct core_note_thread *x = realloc(c->threads, (c->nthreads + 1) * sizeof *x);
            if (!x)
                return jx_fail(err, errlen, "core: out of memory");
            c->threads = x;
            struct core_note_thread *t = &c->threads[c->nthreads++];
            memset(t, 0, sizeof *t);
            t->tid = (uint32_t)ps.pr_pid;
            t->cursig = ps.pr_cursig;
            memcpy(t->regs, &ps.pr_reg, sizeof t->regs);
            break;
        }
        case NT_FPREGSET:
            if (h.n_descsz != DUMP_FPREGS_LEN || !c->nthreads)
                return jx_fail(err, errlen, "core: misplaced or malformed NT_FPREGSET");
            c->threads[c->nthreads - 1].has_fpregs = true;
            break;
        case NT_PRPSINFO: {
            if (h.n_descsz < sizeof(struct elf_prpsinfo))
                return jx_fail(err, errlen, "core: NT_PRPSINFO of %u bytes", h.n_descsz);
            struct elf_prpsinfo pi;
            memcpy(&pi, desc, sizeof pi);
            memcpy(c->fname, pi.pr_fname, sizeof pi.pr_fname);
            c->fname[sizeof pi.pr_fname] = '\0';
            memcpy(c->psargs, pi.pr_psargs, sizeof pi.pr_psargs);
            c->psargs[sizeof pi.pr_psargs] = '\0';
            break;
        }
        case NT_SIGINFO:
            if (h.n_descsz < 12)
                return jx_fail(err, errlen, "core: NT_SIGINFO of %u bytes", h.n_descsz);
            memcpy(&c->signo, desc, 4);
            break;
        case NT_AUXV:
            if (h.n_descsz % 16)
                return jx_fail(err, errlen, "core: NT_AUXV of %u bytes", h.n_descsz);
            c->nauxv = h.n_descsz / 8 < 128 ? h.n_descsz / 8 : 128;
            memcpy(c->auxv, desc, c->nauxv * 8);
            break;
        default:
            break;
        }
    }
    return 0;
}

int core_parse(const uint8_t *data, size_t size, struct corefile *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->data = data;
    c->size = size;
    Elf64_Ehdr eh;
    if (size < sizeof eh)
        return jx_fail(err, errlen, "core: file too short for an ELF header (%zu bytes)", size);
    memcpy(&eh, data, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return jx_fail(err, errlen, "core: not an ELF file");
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_type != ET_CORE || eh.e_machine != EM_X86_64)
        return jx_fail(err, errlen, "core: not an x86-64 ELF core file");
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM)
        return jx_fail(err, errlen, "core: bad program header table (%u entries of %u bytes)",
                    eh.e_phnum, eh.e_phentsize);
    if (eh.e_phoff > size || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > size - eh.e_phoff)
        return jx_fail(err, errlen, "core: program headers run past the end of the file");
    int rc = 0;
    bool seen_note = false;
    c->loads = calloc(eh.e_phnum, sizeof *c->loads);
    if (!c->loads)
        return jx_fail(err, errlen, "core: out of memory");
    for (unsigned i = 0; i < eh.e_phnum && rc == 0; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, data + eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD && ph.p_type != PT_NOTE)
            continue;
        if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
            rc = jx_fail(err, errlen, "core: segment %u (offset 0x%llx, %llu bytes) runs past the "
                      "end of the file (%zu bytes): truncated?", i,
                      (unsigned long long)ph.p_offset, (unsigned long long)ph.p_filesz, size);
            break;
        }
        if (ph.p_type == PT_NOTE) {
            if (ph.p_filesz > CORE_MAX_NOTES)
                rc = jx_fail(err, errlen, "core: notes segment too large");
            else
                rc = parse_notes(c, data + ph.p_offset, ph.p_filesz, err, errlen);
            seen_note = true;
            continue;
        }
        if (ph.p_filesz > ph.p_memsz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr) {
            rc = jx_fail(err, errlen, "core: segment %u has inconsistent sizes", i);
            break;
        }
        c->loads[c->nloads++] = (struct core_load){.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
                                                   .offset = ph.p_offset,
                                                   .filesz = ph.p_filesz, .flags = ph.p_flags};
    }
    if (rc == 0 && !seen_note)
        rc = jx_fail(err, errlen, "core: no notes segment");
    if (rc == 0 && c->nthreads == 0)
        rc = jx_fail(err, errlen, "core: no threads (NT_PRSTATUS)");
    if (rc < 0) {
        core_free(c);
        return rc;
    }
    qsort(c->loads, c->nloads, sizeof *c->loads, cmp_load);
    return 0;
}

void core_free(struct corefile *c)
{
    free(c->loads);
    free(c->threads);
    c->loads = NULL;
    c->threads = NULL;
    c->nloads = c->nthreads = 0;
}

/* The last segment starting at or below va (segments are sorted), if it holds va. */
static const struct core_load *find_load(const struct corefile *c, uint64_t va)
{
    size_t lo = 0, hi = c->nloads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->loads[mid].vaddr <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct core_load *l = &c->loads[lo - 1];
    return va - l->vaddr < l->memsz ? l : NULL;
}

bool core_read(const struct corefile *c, uint64_t va, void *dst, size_t len)
{
    uint8_t *out = dst;
    while (len) {
        const struct core_load *l = find_load(c, va);
        if (!l)
            return false;
        uint64_t in = va - l->vaddr;
        uint64_t n = l->memsz - in < len ? l->memsz - in : len;
        /* Bytes past p_filesz (up to p_memsz) read as zero. */
        uint64_t from_file = in < l->filesz ? (l->filesz - in < n ? l->filesz - in : n) : 0;
        if (from_file)
            memcpy(out, c->data + l->offset + in, (size_t)from_file);
        memset(out + from_file, 0, (size_t)(n - from_file));
        out += n;
        va += n;
        len -= (size_t)n;
        if (n == 0)
            return false;
    }
    return true;
}
