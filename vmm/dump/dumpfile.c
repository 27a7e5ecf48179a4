/* The .jinxdump record format, both ways. The parser treats its input as hostile: every
 * read goes through a cursor that checks the remaining length first. */
#include "dump/dumpfile.h"
#include "dump/dumpfiles.h"
#include "lib/bytes.h"
#include "lib/util.h"
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

/* Starts a record; returns the offset of its length field for rec_end. */
static size_t rec_begin(struct dbuf *b, uint32_t type, uint32_t flags)
{
    bput_u32(b, type);
    bput_u32(b, flags);
    size_t at = b->len;
    bput_u64(b, 0);
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
    bput(b, zero, (8 - b->len % 8) % 8);
}

int dumpfile_encode(const struct dumpfile *d, struct dbuf *b)
{
    if (d->nthreads > DUMP_MAX_THREADS || d->nextra > DUMP_MAX_EXTRA)
        return -1;
    bput(b, DUMP_MAGIC, 8);
    bput_u16(b, DUMP_VERSION_MAJOR);
    bput_u16(b, DUMP_VERSION_MINOR);
    bput_u32(b, DUMP_HEADER_LEN);
    size_t at;
    if (d->has_run) {
        at = rec_begin(b, DREC_RUN, 0);
        bput_u64(b, d->run.created);
        bput_u64(b, d->run.seed);
        bput_u64(b, d->run.mem);
        bput_u32(b, d->run.max_vcpus);
        bput_u32(b, d->run.flags);
        bput_str(b, d->run.jinx_version, DUMP_MAX_STR);
        bput_str(b, d->run.cmdline, DUMP_MAX_STR);
        rec_end(b, at);
    }
    at = rec_begin(b, DREC_IMAGE, DREC_F_REQUIRED);
    bput(b, d->image.sha256, SHA256_LEN);
    bput_u64(b, d->image.bias);
    bput_u64(b, d->image.size);
    bput_str(b, d->image.path, DUMP_MAX_STR);
    rec_end(b, at);

    const struct dump_outcome *o = &d->outcome;
    at = rec_begin(b, DREC_OUTCOME, DREC_F_REQUIRED);
    bput_u32(b, o->kind);
    bput_u32(b, (uint32_t)o->signal);
    bput_u32(b, o->thread);
    bput_u32(b, (uint32_t)o->vector);
    bput_u32(b, (uint32_t)o->exit_status);
    bput_u32(b, 0);
    bput_u64(b, o->rip);
    bput_u64(b, o->errcode);
    bput_u64(b, o->cr2);
    bput_str(b, o->detail, DUMP_MAX_STR);
    rec_end(b, at);

    for (size_t i = 0; i < d->nthreads; i++) {
        const struct dump_thread *t = &d->threads[i];
        at = rec_begin(b, DREC_THREAD, DREC_F_REQUIRED);
        bput_u32(b, t->tid);
        bput_u32(b, t->state);
        bput_u32(b, t->vcpu);
        bput_u32(b, t->flags);
        bput_u64(b, t->wait_addr);
        for (int r = 0; r < DUMP_NREGS; r++)
            bput_u64(b, t->regs[r]);
        bput_u32(b, t->has_fpregs ? DUMP_FPREGS_LEN : 0);
        bput_u32(b, 0);
        if (t->has_fpregs)
            bput(b, t->fpregs, DUMP_FPREGS_LEN);
        rec_end(b, at);
    }

    at = rec_begin(b, DREC_CORE, DREC_F_REQUIRED);
    bput(b, d->core.sha256, SHA256_LEN);
    bput_u64(b, d->core.size);
    bput_str(b, d->core.name, DUMP_MAX_STR);
    rec_end(b, at);

    if (d->has_files) {
        at = rec_begin(b, DREC_FILES, 0);
        dumpfiles_encode(d, b);
        rec_end(b, at);
    }

    for (size_t i = 0; i < d->nextra; i++) {
        const struct dump_record *r = &d->extra[i];
        if (r->type == DREC_END || r->type == DREC_FILES)
            return -1;
        at = rec_begin(b, r->type, r->flags);
        bput(b, r->data, r->len);
        rec_end(b, at);
    }

    uint8_t digest[SHA256_LEN];
    if (b->oom)
        return -1;
    sha256(b->p, b->len, digest);
    at = rec_begin(b, DREC_END, DREC_F_REQUIRED);
    bput(b, digest, SHA256_LEN);
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
    dumpfiles_free(d);
    d->threads = NULL;
    d->extra = NULL;
    d->nthreads = d->nextra = 0;
}

/* ---- parser ---------------------------------------------------------------------- */

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
    case DREC_FILES: return "FILES";
    case 7: return "CPUID";
    case DREC_END: return "END";
    default: return "unknown";
    }
}

static int parse_thread(struct bcur *c, struct dumpfile *d, char *err, size_t errlen)
{
    if (d->nthreads >= DUMP_MAX_THREADS)
        return jx_fail(err, errlen, "more than %d THREAD records", DUMP_MAX_THREADS);
    struct dump_thread t;
    memset(&t, 0, sizeof t);
    t.tid = bget_u32(c);
    t.state = bget_u32(c);
    t.vcpu = bget_u32(c);
    t.flags = bget_u32(c);
    t.wait_addr = bget_u64(c);
    for (int r = 0; r < DUMP_NREGS; r++)
        t.regs[r] = bget_u64(c);
    uint32_t fplen = bget_u32(c);
    bget_u32(c);
    if (c->bad)
        return jx_fail(err, errlen, "THREAD record too short");
    if (fplen != 0 && fplen != DUMP_FPREGS_LEN)
        return jx_fail(err, errlen, "THREAD %u: FPU area of %u bytes (expected 0 or %d)", t.tid,
                    fplen, DUMP_FPREGS_LEN);
    if (fplen && !bget(c, t.fpregs, DUMP_FPREGS_LEN))
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

/* The IMAGE record's payload (the caller checks c->bad). 0, or -1 with a message. */
static int parse_image(struct bcur *c, struct dumpfile *d, bool *seen, char *err, size_t errlen)
{
    if (*seen)
        return jx_fail(err, errlen, "two IMAGE records");
    *seen = true;
    bget(c, d->image.sha256, SHA256_LEN);
    d->image.bias = bget_u64(c);
    d->image.size = bget_u64(c);
    if (!bget_str(c, d->image.path, sizeof d->image.path) || !d->image.path[0])
        return jx_fail(err, errlen, "IMAGE record malformed (path)");
    return 0;
}

/* The RUN record's payload (the caller checks c->bad). 0, or -1 with a message. */
static int parse_run(struct bcur *c, struct dumpfile *d, char *err, size_t errlen)
{
    if (d->has_run)
        return jx_fail(err, errlen, "two RUN records");
    d->has_run = true;
    d->run.created = bget_u64(c);
    d->run.seed = bget_u64(c);
    d->run.mem = bget_u64(c);
    d->run.max_vcpus = bget_u32(c);
    d->run.flags = bget_u32(c);
    if (!bget_str(c, d->run.jinx_version, sizeof d->run.jinx_version) ||
        !bget_str(c, d->run.cmdline, sizeof d->run.cmdline))
        return jx_fail(err, errlen, "RUN record malformed");
    return 0;
}

/* The OUTCOME record's payload (the caller checks c->bad). 0, or -1 with a message. */
static int parse_outcome(struct bcur *c, struct dumpfile *d, bool *seen, char *err, size_t errlen)
{
    if (*seen)
        return jx_fail(err, errlen, "two OUTCOME records");
    *seen = true;
    struct dump_outcome *o = &d->outcome;
    o->kind = bget_u32(c);
    o->signal = (int32_t)bget_u32(c);
    o->thread = bget_u32(c);
    o->vector = (int32_t)bget_u32(c);
    o->exit_status = (int32_t)bget_u32(c);
    bget_u32(c);
    o->rip = bget_u64(c);
    o->errcode = bget_u64(c);
    o->cr2 = bget_u64(c);
    if (!bget_str(c, o->detail, sizeof o->detail))
        return jx_fail(err, errlen, "OUTCOME record malformed");
    if (o->kind < DOUT_EXIT || o->kind > DOUT_ERROR || o->signal < 0 || o->signal > 64 ||
        o->vector < -1 || o->vector > 31 || o->exit_status < 0 || o->exit_status > 255)
        return jx_fail(err, errlen, "OUTCOME record has out-of-range values");
    return 0;
}

/* The CORE record's payload (the caller checks c->bad). 0, or -1 with a message. */
static int parse_core(struct bcur *c, struct dumpfile *d, bool *seen, char *err, size_t errlen)
{
    if (*seen)
        return jx_fail(err, errlen, "two CORE records");
    *seen = true;
    bget(c, d->core.sha256, SHA256_LEN);
    d->core.size = bget_u64(c);
    if (!bget_str(c, d->core.name, sizeof d->core.name) || !d->core.name[0] ||
        strchr(d->core.name, '/') || !strcmp(d->core.name, ".") ||
        !strcmp(d->core.name, ".."))
        return jx_fail(err, errlen, "CORE record malformed (the core file name must be a "
                               "plain file name)");
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
        struct bcur c = {.p = buf + body, .left = (size_t)plen};
        switch (type) {
        case DREC_END: {
            uint8_t want[SHA256_LEN], got[SHA256_LEN];
            /* Its own header is outside the digest: allow exactly one form of it. */
            if (plen != SHA256_LEN || rflags != DREC_F_REQUIRED || !bget(&c, want, SHA256_LEN)) {
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
            if (parse_image(&c, d, &seen_image, err, errlen) < 0) {
                rc = -1;
                goto out;
            }
            break;
        case DREC_RUN:
            if (parse_run(&c, d, err, errlen) < 0) {
                rc = -1;
                goto out;
            }
            break;
        case DREC_OUTCOME:
            if (parse_outcome(&c, d, &seen_outcome, err, errlen) < 0) {
                rc = -1;
                goto out;
            }
            break;
        case DREC_THREAD:
            if (parse_thread(&c, d, err, errlen) < 0) {
                rc = -1;
                goto out;
            }
            break;
        case DREC_CORE:
            if (parse_core(&c, d, &seen_core, err, errlen) < 0) {
                rc = -1;
                goto out;
            }
            break;
        case DREC_FILES:
            if (dumpfiles_parse(&c, d, err, errlen) < 0) {
                rc = -1;
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
