/* The .jinxdump record format, both ways. The parser treats its input as hostile: every
 * read goes through a cursor that checks the remaining length first. */
#include "dumpfile.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const dump_reg_names[DUMP_NREGS] = {
    "r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx",
    "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds",
    "es", "fs", "gs"};

const char *dump_tstate_name(uint32_t s)
{
    static const char *n[] = {"?", "running", "in syscall", "blocked", "sleeping", "new"};
    return s < sizeof n / sizeof n[0] ? n[s] : "?";
}

const char *dump_out_kind_name(uint32_t k)
{
    static const char *n[] = {"none", "exit", "signal", "deadlock", "timeout", "error"};
    return k < sizeof n / sizeof n[0] ? n[k] : "?";
}

/* ---- encoder --------------------------------------------------------------------- */

void dbuf_free(struct dbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static void put(struct dbuf *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void put_u16(struct dbuf *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(b, x, 2);
}

static void put_u32(struct dbuf *b, uint32_t v)
{
    uint8_t x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, 4);
}

static void put_u64(struct dbuf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, 8);
}

static void put_str(struct dbuf *b, const char *s)
{
    size_t n = strnlen(s, DUMP_MAX_STR);
    put_u32(b, (uint32_t)n);
    put(b, s, n);
}

/* Starts a record; returns the offset of its length field for rec_end. */
static size_t rec_begin(struct dbuf *b, uint32_t type, uint32_t flags)
{
    put_u32(b, type);
    put_u32(b, flags);
    size_t at = b->len;
    put_u64(b, 0);
    return at;
}

static void rec_end(struct dbuf *b, size_t at)
{
    if (b->oom)
        return;
    uint64_t len = b->len - at - 8;
    for (int i = 0; i < 8; i++)
        b->p[at + (size_t)i] = (uint8_t)(len >> (8 * i));
    static const uint8_t zero[8];
    put(b, zero, (8 - b->len % 8) % 8);
}

int dumpfile_encode(const struct dumpfile *d, struct dbuf *b)
{
    if (d->nthreads > DUMP_MAX_THREADS || d->nextra > DUMP_MAX_EXTRA)
        return -1;
    put(b, DUMP_MAGIC, 8);
    put_u16(b, DUMP_VERSION_MAJOR);
    put_u16(b, DUMP_VERSION_MINOR);
    put_u32(b, DUMP_HEADER_LEN);
    size_t at;
    if (d->has_run) {
        at = rec_begin(b, DREC_RUN, 0);
        put_u64(b, d->run.created);
        put_u64(b, d->run.seed);
        put_u64(b, d->run.mem);
        put_u32(b, d->run.max_vcpus);
        put_u32(b, d->run.flags);
        put_str(b, d->run.jinx_version);
        put_str(b, d->run.cmdline);
        rec_end(b, at);
    }
    at = rec_begin(b, DREC_IMAGE, DREC_F_REQUIRED);
    put(b, d->image.sha256, SHA256_LEN);
    put_u64(b, d->image.bias);
    put_u64(b, d->image.size);
    put_str(b, d->image.path);
    rec_end(b, at);

    const struct dump_outcome *o = &d->outcome;
    at = rec_begin(b, DREC_OUTCOME, DREC_F_REQUIRED);
    put_u32(b, o->kind);
    put_u32(b, (uint32_t)o->signal);
    put_u32(b, o->thread);
    put_u32(b, (uint32_t)o->vector);
    put_u32(b, (uint32_t)o->exit_status);
    put_u32(b, 0);
    put_u64(b, o->rip);
    put_u64(b, o->errcode);
    put_u64(b, o->cr2);
    put_str(b, o->detail);
    rec_end(b, at);

    for (size_t i = 0; i < d->nthreads; i++) {
        const struct dump_thread *t = &d->threads[i];
        at = rec_begin(b, DREC_THREAD, DREC_F_REQUIRED);
        put_u32(b, t->tid);
        put_u32(b, t->state);
        put_u32(b, t->vcpu);
        put_u32(b, t->flags);
        put_u64(b, t->wait_addr);
        for (int r = 0; r < DUMP_NREGS; r++)
            put_u64(b, t->regs[r]);
        put_u32(b, t->has_fpregs ? DUMP_FPREGS_LEN : 0);
        put_u32(b, 0);
        if (t->has_fpregs)
            put(b, t->fpregs, DUMP_FPREGS_LEN);
        rec_end(b, at);
    }

    at = rec_begin(b, DREC_CORE, DREC_F_REQUIRED);
    put(b, d->core.sha256, SHA256_LEN);
    put_u64(b, d->core.size);
    put_str(b, d->core.name);
    rec_end(b, at);

    for (size_t i = 0; i < d->nextra; i++) {
        const struct dump_record *r = &d->extra[i];
        if (r->type == DREC_END)
            return -1;
        at = rec_begin(b, r->type, r->flags);
        put(b, r->data, r->len);
        rec_end(b, at);
    }

    uint8_t digest[SHA256_LEN];
    if (b->oom)
        return -1;
    sha256(b->p, b->len, digest);
    at = rec_begin(b, DREC_END, DREC_F_REQUIRED);
    put(b, digest, SHA256_LEN);
    rec_end(b, at);
    return b->oom ? -1 : 0;
}

int dumpfile_add_record(struct dumpfile *d, uint32_t type, uint32_t flags, const void *data,
                        uint64_t len)
{
    if (type == DREC_END || d->nextra >= DUMP_MAX_EXTRA || len > DUMP_MAX_FILE)
        return -1;
    struct dump_record *x = realloc(d->extra, (d->nextra + 1) * sizeof *x);
    if (!x)
        return -1;
    d->extra = x;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return -1;
    if (len)
        memcpy(copy, data, len);
    d->extra[d->nextra++] = (struct dump_record){.type = type, .flags = flags, .data = copy,
                                                 .len = len};
    return 0;
}

void dumpfile_free(struct dumpfile *d)
{
    free(d->threads);
    for (size_t i = 0; i < d->nextra; i++)
        free(d->extra[i].data);
    free(d->extra);
    d->threads = NULL;
    d->extra = NULL;
    d->nthreads = d->nextra = 0;
}

/* ---- parser ---------------------------------------------------------------------- */

/* A bounds-checked reader over one record's payload. Any short read sets bad; callers
 * check once at the end of the record. */
struct cur {
    const uint8_t *p;
    size_t left;
    bool bad;
};

static bool take(struct cur *c, void *dst, size_t n)
{
    if (c->bad || c->left < n) {
        c->bad = true;
        if (dst)
            memset(dst, 0, n);
        return false;
    }
    if (dst)
        memcpy(dst, c->p, n);
    c->p += n;
    c->left -= n;
    return true;
}

static uint32_t get_u32(struct cur *c)
{
    uint8_t x[4];
    take(c, x, 4);
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

static uint64_t get_u64(struct cur *c)
{
    uint64_t lo = get_u32(c);
    return lo | (uint64_t)get_u32(c) << 32;
}

/* A length-prefixed string into dst (size cap): refused when longer than the field,
 * when it runs past the record, or when it holds a NUL (C strings must stay whole). */
static bool get_str(struct cur *c, char *dst, size_t cap)
{
    dst[0] = '\0';
    uint32_t n = get_u32(c);
    if (c->bad || n >= cap || n > c->left) {
        c->bad = true;
        return false;
    }
    if (memchr(c->p, 0, n)) {
        c->bad = true;
        return false;
    }
    take(c, dst, n);
    dst[n] = '\0';
    return !c->bad;
}


static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

static const char *type_name(uint32_t t)
{
    switch (t) {
    case DREC_OUTCOME: return "OUTCOME";
    case DREC_IMAGE: return "IMAGE";
    case DREC_RUN: return "RUN";
    case DREC_THREAD: return "THREAD";
    case DREC_CORE: return "CORE";
    case DREC_END: return "END";
    default: return "unknown";
    }
}

static int parse_thread(struct cur *c, struct dumpfile *d, char *err, size_t errlen)
{
    if (d->nthreads >= DUMP_MAX_THREADS)
        return jx_fail(err, errlen, "more than %d THREAD records", DUMP_MAX_THREADS);
    struct dump_thread t;
    memset(&t, 0, sizeof t);
    t.tid = get_u32(c);
    t.state = get_u32(c);
    t.vcpu = get_u32(c);
    t.flags = get_u32(c);
    t.wait_addr = get_u64(c);
    for (int r = 0; r < DUMP_NREGS; r++)
        t.regs[r] = get_u64(c);
    uint32_t fplen = get_u32(c);
    get_u32(c);
    if (c->bad)
        return jx_fail(err, errlen, "THREAD record too short");
    if (fplen != 0 && fplen != DUMP_FPREGS_LEN)
        return jx_fail(err, errlen, "THREAD %u: FPU area of %u bytes (expected 0 or %d)", t.tid,
                    fplen, DUMP_FPREGS_LEN);
    if (fplen && !take(c, t.fpregs, DUMP_FPREGS_LEN))
        return jx_fail(err, errlen, "THREAD %u: FPU area cut short", t.tid);
    t.has_fpregs = fplen != 0;
    if (t.tid == 0 || t.tid > 0x3FFFFFFF)
        return jx_fail(err, errlen, "THREAD with invalid tid %u", t.tid);
    if (t.state < DT_RUNNING || t.state > DT_NEW)
        return jx_fail(err, errlen, "THREAD %u: unknown state %u", t.tid, t.state);
    if (t.flags & ~DT_F_CRASHED)
        return jx_fail(err, errlen, "THREAD %u: unknown flags 0x%x", t.tid, t.flags);
    for (size_t i = 0; i < d->nthreads; i++)
        if (d->threads[i].tid == t.tid)
            return jx_fail(err, errlen, "two THREAD records for tid %u", t.tid);
    struct dump_thread *x = realloc(d->threads, (d->nthreads + 1) * sizeof *x);
    if (!x)
        return jx_fail(err, errlen, "out of memory");
    d->threads = x;
    d->threads[d->nthreads++] = t;
    return 0;
}

int dumpfile_parse(const uint8_t *buf, size_t len, unsigned flags, struct dumpfile *d,
                   char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (len < DUMP_HEADER_LEN || memcmp(buf, DUMP_MAGIC, 8) != 0)
        return jx_fail(err, errlen, "not a jinx dump (no JINXDUMP header)");
    if (len > DUMP_MAX_FILE)
        return jx_fail(err, errlen, "file too large for a jinx dump (%zu bytes)", len);
    d->major = le16(buf + 8);
    d->minor = le16(buf + 10);
    uint32_t hlen = le32(buf + 12);
    if (d->major != DUMP_VERSION_MAJOR)
        return jx_fail(err, errlen, "dump format version %u.%u, this jinx reads %d.x",
                    d->major, d->minor, DUMP_VERSION_MAJOR);
    if (hlen < DUMP_HEADER_LEN || hlen % 8 || hlen > len)
        return jx_fail(err, errlen, "bad header length %u", hlen);
    bool seen_image = false, seen_outcome = false, seen_core = false, seen_end = false;
    size_t off = hlen;
    int rc = 0;
    while (off < len) {
        if (seen_end) {
            rc = jx_fail(err, errlen, "%zu bytes after the END record (the file was appended to)",
                      len - off);
            goto out;
        }
        if (len - off < DUMP_REC_HDR_LEN) {
            rc = jx_fail(err, errlen, "truncated: record header at offset %zu is cut short", off);
            goto out;
        }
        uint32_t type = le32(buf + off), rflags = le32(buf + off + 4);
        uint64_t plen = le64(buf + off + 8);
        size_t body = off + DUMP_REC_HDR_LEN;
        if (plen > len - body) {
            rc = jx_fail(err, errlen, "truncated: %s record at offset %zu claims %llu bytes, "
                      "%zu remain", type_name(type), off, (unsigned long long)plen, len - body);
            goto out;
        }
        size_t padded = (size_t)plen + (8 - (size_t)plen % 8) % 8;
        if (padded > len - body) {
            rc = jx_fail(err, errlen, "truncated: padding of the record at offset %zu", off);
            goto out;
        }
        for (size_t i = body + (size_t)plen; i < body + padded; i++)
            if (buf[i]) {
                rc = jx_fail(err, errlen, "nonzero padding after the record at offset %zu", off);
                goto out;
            }
        if (rflags & ~DREC_F_REQUIRED) {
            rc = jx_fail(err, errlen, "record at offset %zu has unknown flags 0x%x", off, rflags);
            goto out;
        }
        struct cur c = {.p = buf + body, .left = (size_t)plen};
        switch (type) {
        case DREC_END: {
            uint8_t want[SHA256_LEN], got[SHA256_LEN];
            /* Its own header is outside the digest: allow exactly one form of it. */
            if (plen != SHA256_LEN || rflags != DREC_F_REQUIRED || !take(&c, want, SHA256_LEN)) {
                rc = jx_fail(err, errlen, "END record malformed");
                goto out;
            }
            sha256(buf, off, got);
            if (!(flags & DUMPFILE_NO_CHECKSUM) && memcmp(want, got, SHA256_LEN) != 0) {
                rc = jx_fail(err, errlen, "checksum mismatch: the dump is corrupted (bytes "
                          "0..%zu do not match the digest in its END record)", off);
                goto out;
            }
            seen_end = true;
            break;
        }
        case DREC_IMAGE:
            if (seen_image) {
                rc = jx_fail(err, errlen, "two IMAGE records");
                goto out;
            }
            seen_image = true;
            take(&c, d->image.sha256, SHA256_LEN);
            d->image.bias = get_u64(&c);
            d->image.size = get_u64(&c);
            if (!get_str(&c, d->image.path, sizeof d->image.path) || !d->image.path[0]) {
                rc = jx_fail(err, errlen, "IMAGE record malformed (path)");
                goto out;
            }
            break;
        case DREC_RUN:
            if (d->has_run) {
                rc = jx_fail(err, errlen, "two RUN records");
                goto out;
            }
            d->has_run = true;
            d->run.created = get_u64(&c);
            d->run.seed = get_u64(&c);
            d->run.mem = get_u64(&c);
            d->run.max_vcpus = get_u32(&c);
            d->run.flags = get_u32(&c);
            if (!get_str(&c, d->run.jinx_version, sizeof d->run.jinx_version) ||
                !get_str(&c, d->run.cmdline, sizeof d->run.cmdline)) {
                rc = jx_fail(err, errlen, "RUN record malformed");
                goto out;
            }
            break;
        case DREC_OUTCOME: {
            if (seen_outcome) {
                rc = jx_fail(err, errlen, "two OUTCOME records");
                goto out;
            }
            seen_outcome = true;
            struct dump_outcome *o = &d->outcome;
            o->kind = get_u32(&c);
            o->signal = (int32_t)get_u32(&c);
            o->thread = get_u32(&c);
            o->vector = (int32_t)get_u32(&c);
            o->exit_status = (int32_t)get_u32(&c);
            get_u32(&c);
            o->rip = get_u64(&c);
            o->errcode = get_u64(&c);
            o->cr2 = get_u64(&c);
            if (!get_str(&c, o->detail, sizeof o->detail)) {
                rc = jx_fail(err, errlen, "OUTCOME record malformed");
                goto out;
            }
            if (o->kind < DOUT_EXIT || o->kind > DOUT_ERROR || o->signal < 0 || o->signal > 64 ||
                o->vector < -1 || o->vector > 31 || o->exit_status < 0 || o->exit_status > 255) {
                rc = jx_fail(err, errlen, "OUTCOME record has out-of-range values");
                goto out;
            }
            break;
        }
        case DREC_THREAD:
            if (parse_thread(&c, d, err, errlen) < 0) {
                rc = -1;
                goto out;
            }
            break;
        case DREC_CORE:
            if (seen_core) {
                rc = jx_fail(err, errlen, "two CORE records");
                goto out;
            }
            seen_core = true;
            take(&c, d->core.sha256, SHA256_LEN);
            d->core.size = get_u64(&c);
            if (!get_str(&c, d->core.name, sizeof d->core.name) || !d->core.name[0] ||
                strchr(d->core.name, '/') || !strcmp(d->core.name, ".") ||
                !strcmp(d->core.name, "..")) {
                rc = jx_fail(err, errlen, "CORE record malformed (the core file name must be a "
                          "plain file name)");
                goto out;
            }
            break;
        default:
            if (rflags & DREC_F_REQUIRED) {
                rc = jx_fail(err, errlen, "record type %u is required but unknown to this jinx "
                          "(written by a newer version?)", type);
                goto out;
            }
            if (dumpfile_add_record(d, type, rflags, c.p, plen) < 0) {
                rc = jx_fail(err, errlen, "too many records of unknown types");
                goto out;
            }
            c.left = 0;
            break;
        }
        if (c.bad) {
            rc = jx_fail(err, errlen, "%s record at offset %zu is too short", type_name(type), off);
            goto out;
        }
        off = body + padded;
    }
    if (!seen_end)
        rc = jx_fail(err, errlen, "truncated: no END record (the file is incomplete)");
    else if (!seen_image || !seen_outcome || !seen_core || d->nthreads == 0)
        rc = jx_fail(err, errlen, "incomplete dump: missing %s record",
                  !seen_image ? "IMAGE" : !seen_outcome ? "OUTCOME" : !seen_core ? "CORE"
                                                                      : "THREAD");
    else if (d->outcome.kind == DOUT_SIGNAL) {
        bool found = false;
        for (size_t i = 0; i < d->nthreads; i++)
            found |= d->threads[i].tid == d->outcome.thread;
        if (!found)
            rc = jx_fail(err, errlen, "OUTCOME names thread %u, which has no THREAD record",
                      d->outcome.thread);
    }
out:
    if (rc < 0)
        dumpfile_free(d);
    return rc;
}

int dumpfile_read(const char *path, struct dumpfile *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not hang us */
    if (fd < 0)
        return jx_fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return jx_fail(err, errlen, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > DUMP_MAX_FILE) {
        close(fd);
        return jx_fail(err, errlen, "%s: too large for a jinx dump", path);
    }
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        return jx_fail(err, errlen, "out of memory reading %s", path);
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    char e[512];
    int rc = dumpfile_parse(buf, got, 0, d, e, sizeof e);
    if (rc < 0)
        jx_fail(err, errlen, "%s: %s", path, e);
    free(buf);
    return rc;
}
