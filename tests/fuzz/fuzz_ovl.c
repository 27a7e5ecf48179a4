/* libFuzzer harness for the private writable file layer's tables (vmm/linux/ovl.c), which
 * the guest's file syscalls drive (untrusted): the input is a program of operations
 * (create, create with bytes, create unnamed, write, truncate, read, rename, remove,
 * lookup, children, garbage collection, snapshot and restore) over a small set of paths,
 * run against the tables and against a shadow of every file's bytes. Beyond "no crash,
 * no leak": after every operation the entries are sorted and unique, every named inode
 * exists, each inode's link count is the number of entries naming it, the memory
 * counted stays within the limit, and every file reads back as the shadow says,
 * including after a restore (a snapshot shares the bytes; a write after it must copy). */
#include "linux/ovl.h"
#include "tests/fuzz/fuzz_input.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NINO 64        /* inodes shadowed: numbers below this */
#define MAXOFF 4096    /* offsets and sizes the program uses stay below this + 255 */
#define SPAN (MAXOFF + 256)

static const char *const paths[16] = {
    "/",     "/a",     "/a/b",   "/a/b/c", "/a/c",   "/b",     "/b/a",   "/t",
    "/t/x",  "/t/y",   "/tmp",   "/tmp/f", "/a/b/c/d", "/ab", "/a.b",   "/b/a/x",
};

struct shadow {
    bool known[NINO];
    uint64_t size[NINO];
    uint8_t bytes[NINO][SPAN];
};

static struct shadow live, saved;
static uint8_t buf[SPAN];

static void check_tables(const struct ovl *o)
{
    if (o->bytes > o->limit || o->nents > o->capents || o->ninodes > o->capinodes)
        abort();
    for (size_t i = 0; i < o->nents; i++) {
        if (!o->ents[i].path || (i && strcmp(o->ents[i - 1].path, o->ents[i].path) >= 0))
            abort(); /* sorted, unique */
        if (o->ents[i].ino && !ovl_inode(o, o->ents[i].ino))
            abort(); /* a name names an inode that exists */
    }
    for (size_t k = 0; k < o->ninodes; k++) {
        const struct ovl_inode *in = &o->inodes[k];
        if (k && o->inodes[k - 1].ino >= in->ino)
            abort();
        uint32_t names = 0;
        for (size_t i = 0; i < o->nents; i++)
            names += o->ents[i].ino == in->ino;
        if (names != in->nlink)
            abort();
        if (S_ISREG(in->mode) && in->size && (!in->data || in->data->cap < in->size))
            abort();
    }
}

/* Every shadowed regular file reads back as its shadow. */
static void check_bytes(const struct ovl *o, const struct shadow *s)
{
    for (uint64_t ino = 1; ino < NINO; ino++) {
        const struct ovl_inode *in = ovl_inode(o, ino);
        if (!in || !s->known[ino] || !S_ISREG(in->mode))
            continue;
        if (in->size != s->size[ino])
            abort();
        if (ovl_read(o, ino, 0, buf, SPAN) != (int64_t)s->size[ino] ||
            memcmp(buf, s->bytes[ino], s->size[ino]))
            abort();
    }
}

static void fresh(int64_t ino)
{
    if (ino > 0 && ino < NINO) {
        live.known[ino] = true;
        live.size[ino] = 0;
    }
}

static void step(struct ovl *o, struct ovl *snap, bool *have_snap, struct cur *c, uint64_t t)
{
    unsigned op = take(c) % 13;
    const char *p = paths[take(c) % 16], *q = paths[take(c) % 16];
    uint64_t ino = take(c) % NINO;
    uint64_t off = (take(c) << 4) % MAXOFF;
    uint64_t len = take(c);
    uint8_t fill = (uint8_t)take(c);
    memset(buf, fill, len);
    int64_t r = 0;
    static int trace = -1; /* FUZZ_OVL_TRACE=1: each operation on stderr (reproducers) */
    if (trace < 0)
        trace = getenv("FUZZ_OVL_TRACE") != NULL;
    switch (op) {
    case 0: /* a file or a directory (opaque or not) */
        r = ovl_create(o, p, len & 1 ? S_IFDIR | 0755 : S_IFREG | 0644, len & 2, t);
        if (r == -EEXIST && !(ovl_find(o, p) && ovl_find(o, p)->ino))
            abort(); /* EEXIST only over a live name */
        fresh(r);
        break;
    case 1: /* a host file copied up */
        r = ovl_create_with(o, p, S_IFREG | 0600, buf, len, t);
        fresh(r);
        if (r > 0 && r < NINO) {
            memcpy(live.bytes[r], buf, len);
            live.size[r] = len;
        }
        break;
    case 2:
        fresh(r = ovl_create_unnamed(o, S_IFREG | 0600, t));
        break;
    case 3: {
        const struct ovl_inode *in = ovl_inode(o, ino);
        uint64_t before = in ? in->size : 0;
        r = ovl_write(o, ino, off, buf, len, t);
        if (r == (int64_t)len && len && live.known[ino]) {
            if (off > live.size[ino])
                memset(live.bytes[ino] + live.size[ino], 0, off - live.size[ino]);
            memcpy(live.bytes[ino] + off, buf, len);
            if (off + len > live.size[ino])
                live.size[ino] = off + len;
        } else if (r < 0 && (in = ovl_inode(o, ino)) && in->size != before) {
            abort(); /* a refused write changes nothing */
        }
        break;
    }
    case 4: {
        uint64_t sz = off + (len & 0xf);
        r = ovl_truncate(o, ino, sz, t);
        if (r == 0 && live.known[ino]) {
            if (sz > live.size[ino])
                memset(live.bytes[ino] + live.size[ino], 0, sz - live.size[ino]);
            live.size[ino] = sz;
        }
        break;
    }
    case 5:
        r = ovl_read(o, ino, off, buf, len);
        if (r > (int64_t)len)
            abort();
        break;
    case 6:
        r = ovl_rename(o, p, q, len & 1);
        if (r == 0 && strcmp(p, q) && ovl_find(o, p) && ovl_find(o, p)->ino)
            abort(); /* the old name names nothing any more */
        break;
    case 7:
        r = ovl_remove(o, p, len & 1);
        break;
    case 8: {
        uint64_t got;
        r = ovl_lookup(o, p, &got);
        if (r < -1 || r > 2 || ((r == 1 || r == 2) && !ovl_inode(o, got)) ||
            (r == 1 && !S_ISDIR(ovl_inode(o, got)->mode)))
            abort();
        break;
    }
    case 9:
        r = ovl_has_children(o, p);
        break;
    case 10:
        ovl_gc(o, NULL, NULL); /* no descriptor holds anything */
        break;
    case 11: /* snapshot */
        if (ovl_copy(snap, o) == 0) {
            *have_snap = true;
            saved = live;
        }
        break;
    case 12: /* restore */
        if (*have_snap && ovl_copy(o, snap) == 0) {
            live = saved;
            check_bytes(snap, &saved);
        }
        break;
    }
    if (trace)
        fprintf(stderr, "op %u p %s q %s ino %llu off %llu len %llu -> %lld\n", op, p, q,
                (unsigned long long)ino, (unsigned long long)off, (unsigned long long)len,
                (long long)r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cur c = {data, size};
    static struct ovl o, snap;
    memset(&live, 0, sizeof live);
    memset(&saved, 0, sizeof saved);
    /* A small limit, from the input: refusals (ENOSPC) are part of what is explored. */
    ovl_init(&o, 4096 + (uint64_t)take(&c) * 256);
    ovl_init(&snap, o.limit);
    bool have_snap = false;
    for (uint64_t t = 1; c.n && t < 512; t++) {
        step(&o, &snap, &have_snap, &c, t);
        check_tables(&o);
        check_bytes(&o, &live);
        if (have_snap) {
            check_tables(&snap);
            check_bytes(&snap, &saved);
        }
    }
    ovl_free(&o);
    ovl_free(&snap);
    return 0;
}
