/* The private writable file layer's tables (ovl.h). */
#include "linux/ovl.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static atomic_uint_fast64_t gen_counter = 1;

static void changed(struct ovl *o)
{
    o->gen = atomic_fetch_add(&gen_counter, 1) + 1;
}

void ovl_init(struct ovl *o, uint64_t limit)
{
    memset(o, 0, sizeof *o);
    o->limit = limit;
    o->next_ino = 1;
}

static void data_put(struct ovl_data *d)
{
    if (d && atomic_fetch_sub(&d->refs, 1) == 1) {
        free(d->bytes);
        free(d);
    }
}

static void clear(struct ovl *o)
{
    for (size_t i = 0; i < o->nents; i++)
        free(o->ents[i].path);
    for (size_t i = 0; i < o->ninodes; i++)
        data_put(o->inodes[i].data);
    o->nents = o->ninodes = 0;
    o->bytes = 0;
}

void ovl_free(struct ovl *o)
{
    clear(o);
    free(o->ents);
    free(o->inodes);
    memset(o, 0, sizeof *o);
}

/* Index of the first entry >= p. */
static size_t ent_pos(const struct ovl *o, const char *p)
{
    size_t lo = 0, hi = o->nents;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(o->ents[mid].path, p) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct ovl_ent *ovl_find(const struct ovl *o, const char *p)
{
    size_t i = ent_pos(o, p);
    return i < o->nents && !strcmp(o->ents[i].path, p) ? &o->ents[i] : NULL;
}

static size_t ino_pos(const struct ovl *o, uint64_t ino)
{
    size_t lo = 0, hi = o->ninodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->inodes[mid].ino < ino)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct ovl_inode *ovl_inode(const struct ovl *o, uint64_t ino)
{
    size_t i = ino_pos(o, ino);
    return ino && i < o->ninodes && o->inodes[i].ino == ino ? &o->inodes[i] : NULL;
}

int ovl_lookup(const struct ovl *o, const char *p, uint64_t *ino)
{
    *ino = 0;
    if (!o->nents)
        return 0;
    const struct ovl_ent *e = ovl_find(o, p);
    if (e) {
        if (!e->ino)
            return -1;
        const struct ovl_inode *in = ovl_inode(o, e->ino);
        *ino = e->ino;
        return in && S_ISDIR(in->mode) ? 1 : 2;
    }
    /* The nearest ancestor with an entry: opaque, or a whiteout, hides the host. */
    char buf[4096];
    size_t n = strlen(p);
    if (n >= sizeof buf)
        return 0;
    memcpy(buf, p, n + 1);
    while (n > 1) {
        while (n > 1 && buf[n - 1] != '/')
            n--;
        if (n > 1)
            n--;
        buf[n] = 0;
        const struct ovl_ent *a = ovl_find(o, n ? buf : "/");
        if (a)
            return !a->ino || a->opaque ? -1 : 0;
    }
    return 0;
}

/* Whether add more bytes stay within the limit (limit_hit set when they do not). */
static bool fits(struct ovl *o, uint64_t add)
{
    if (o->bytes + add < o->bytes || o->bytes + add > o->limit) {
        o->limit_hit = true;
        return false;
    }
    return true;
}

static bool charge(struct ovl *o, uint64_t add)
{
    if (!fits(o, add))
        return false;
    o->bytes += add;
    return true;
}

/* Room for n entries in the table. 0 or -ENOMEM (the table as it was). */
static int reserve_ents(struct ovl *o, size_t n)
{
    if (n <= o->capents)
        return 0;
    size_t cap = o->capents ? o->capents * 2 : 16;
    if (cap < n)
        cap = n;
    struct ovl_ent *e = realloc(o->ents, cap * sizeof *e);
    if (!e)
        return -ENOMEM;
    o->ents = e;
    o->capents = cap;
    return 0;
}

/* Inserts an entry that is not in the table (path owned by the table from now on), with
 * room already reserved and its memory already judged within the limit. */
static void insert_ent(struct ovl *o, char *path, uint64_t ino, bool opaque)
{
    size_t i = ent_pos(o, path);
    memmove(&o->ents[i + 1], &o->ents[i], (o->nents - i) * sizeof *o->ents);
    o->ents[i] = (struct ovl_ent){path, ino, opaque};
    o->nents++;
    o->bytes += OVL_ENT_COST + strlen(path);
}

/* Adds (or replaces the whiteout of) entry p naming ino. 0 or -errno. */
static int put_ent(struct ovl *o, const char *p, uint64_t ino, bool opaque)
{
    struct ovl_ent *e = ovl_find(o, p);
    if (e) {
        e->ino = ino;
        e->opaque = opaque;
        return 0;
    }
    if (!fits(o, OVL_ENT_COST + strlen(p))) /* counted by insert_ent */
        return -ENOSPC;
    /* The table stays as it was when it cannot grow (it held every entry so far). */
    char *dup = strdup(p);
    if (!dup || reserve_ents(o, o->nents + 1) < 0) {
        free(dup);
        return -ENOMEM;
    }
    insert_ent(o, dup, ino, opaque);
    return 0;
}

static void drop_ent(struct ovl *o, size_t i)
{
    o->bytes -= OVL_ENT_COST + strlen(o->ents[i].path);
    free(o->ents[i].path);
    memmove(&o->ents[i], &o->ents[i + 1], (o->nents - i - 1) * sizeof *o->ents);
    o->nents--;
}

/* A new inode in *out: 0, -ENOSPC (the limit) or -ENOMEM (the table cannot grow). */
static int new_inode(struct ovl *o, uint32_t mode, uint64_t now, struct ovl_inode **out)
{
    if (!charge(o, OVL_ENT_COST))
        return -ENOSPC;
    if (o->ninodes == o->capinodes) {
        size_t cap = o->capinodes ? o->capinodes * 2 : 16;
        struct ovl_inode *n = realloc(o->inodes, cap * sizeof *n);
        if (!n) {
            o->bytes -= OVL_ENT_COST;
            return -ENOMEM;
        }
        o->inodes = n;
        o->capinodes = cap;
    }
    struct ovl_inode *in = &o->inodes[o->ninodes++]; /* ino ascending: appended */
    *in = (struct ovl_inode){.ino = o->next_ino++, .mode = mode, .nlink = 1, .mtime = now};
    *out = in;
    return 0;
}

int64_t ovl_create(struct ovl *o, const char *p, uint32_t mode, bool opaque, uint64_t now)
{
    const struct ovl_ent *e = ovl_find(o, p);
    if (e && e->ino)
        return -EEXIST;
    struct ovl_inode *in;
    int r = new_inode(o, mode, now, &in);
    if (r < 0)
        return r;
    uint64_t ino = in->ino;
    r = put_ent(o, p, ino, S_ISDIR(mode) && opaque);
    if (r < 0) {
        o->ninodes--;
        o->next_ino--;
        o->bytes -= OVL_ENT_COST;
        return r;
    }
    changed(o);
    return (int64_t)ino;
}

int64_t ovl_create_unnamed(struct ovl *o, uint32_t mode, uint64_t now)
{
    struct ovl_inode *in;
    int r = new_inode(o, mode, now, &in);
    if (r < 0)
        return r;
    in->nlink = 0;
    changed(o);
    return (int64_t)in->ino;
}

int64_t ovl_create_with(struct ovl *o, const char *p, uint32_t mode, const void *bytes,
                        uint64_t len, uint64_t now)
{
    int64_t ino = ovl_create(o, p, mode, false, now);
    if (ino < 0 || !len)
        return ino;
    int64_t w = ovl_write(o, (uint64_t)ino, 0, bytes, len, now);
    if (w < 0) { /* the new inode and its name go; nothing else */
        ovl_remove(o, p, false);
        size_t i = ino_pos(o, (uint64_t)ino);
        struct ovl_inode *in = &o->inodes[i];
        o->bytes -= OVL_ENT_COST + (in->data ? in->data->cap : 0);
        data_put(in->data);
        memmove(in, in + 1, (o->ninodes - i - 1) * sizeof *in);
        o->ninodes--;
        return w;
    }
    return ino;
}

static void unlink_inode(struct ovl *o, uint64_t ino)
{
    struct ovl_inode *in = ovl_inode(o, ino);
    if (in && in->nlink)
        in->nlink--;
}

int ovl_remove(struct ovl *o, const char *p, bool host_below)
{
    size_t i = ent_pos(o, p);
    bool have = i < o->nents && !strcmp(o->ents[i].path, p);
    if (have) {
        unlink_inode(o, o->ents[i].ino);
        if (host_below) {
            o->ents[i].ino = 0;
            o->ents[i].opaque = false;
        } else {
            drop_ent(o, i);
        }
    } else if (host_below) {
        int r = put_ent(o, p, 0, false);
        if (r < 0)
            return r;
    }
    changed(o);
    return 0;
}

/* Is q p itself or below it? */
static bool below_or_at(const char *q, const char *p, size_t plen)
{
    return !strncmp(q, p, plen) && (q[plen] == 0 || q[plen] == '/' || plen == 1);
}

/* All or nothing: what may fail (the limit, memory) is settled before anything changes,
 * so a refused rename leaves every name and link count as it was (fuzz_ovl found a rename
 * near the limit that dropped the names it could not put back, their inodes still
 * counting them as links). */
int ovl_rename(struct ovl *o, const char *from, const char *to, bool whiteout)
{
    size_t fl = strlen(from), tl = strlen(to);
    if (!strcmp(from, to))
        return 0;
    if (below_or_at(to, from, fl))
        return -EINVAL; /* into itself */
    if (below_or_at(from, to, tl))
        return -ENOTEMPTY; /* over a directory that holds it */
    /* The memory after: to's entries (and those below it) go, from's are renamed, and
     * from may get a whiteout. */
    size_t nmoved = 0, ngone = 0;
    uint64_t freed = 0, added = whiteout ? OVL_ENT_COST + fl : 0;
    for (size_t i = 0; i < o->nents; i++) {
        size_t l = strlen(o->ents[i].path);
        if (below_or_at(o->ents[i].path, to, tl)) {
            ngone++;
            freed += OVL_ENT_COST + l;
        } else if (below_or_at(o->ents[i].path, from, fl)) {
            nmoved++;
            freed += OVL_ENT_COST + l;
            added += OVL_ENT_COST + l - fl + tl;
        }
    }
    if (added > freed && !fits(o, added - freed)) /* counted as entries go and come */
        return -ENOSPC;
    struct ovl_ent *moved = calloc(nmoved + 1, sizeof *moved); /* from's, renamed */
    char *wp = whiteout ? strdup(from) : NULL;
    size_t k = 0;
    if (moved && (!whiteout || wp) && reserve_ents(o, o->nents - ngone + whiteout) == 0) {
        for (size_t i = 0; i < o->nents && k < nmoved; i++) {
            const char *p = o->ents[i].path;
            if (!below_or_at(p, from, fl))
                continue;
            char *n = malloc(tl + strlen(p + fl) + 1);
            if (!n)
                break;
            memcpy(n, to, tl);
            strcpy(n + tl, p + fl);
            moved[k++] = (struct ovl_ent){n, o->ents[i].ino, o->ents[i].opaque};
        }
    }
    if (!moved || (whiteout && !wp) || k < nmoved) {
        for (size_t j = 0; j < k; j++)
            free(moved[j].path);
        free(moved);
        free(wp);
        return -ENOMEM;
    }
    /* Nothing below can fail. */
    for (size_t i = 0; i < o->nents;) {
        if (below_or_at(o->ents[i].path, to, tl)) {
            unlink_inode(o, o->ents[i].ino);
            drop_ent(o, i);
        } else if (below_or_at(o->ents[i].path, from, fl)) {
            drop_ent(o, i);
        } else {
            i++;
        }
    }
    for (size_t j = 0; j < nmoved; j++)
        insert_ent(o, moved[j].path, moved[j].ino, moved[j].opaque);
    if (whiteout)
        insert_ent(o, wp, 0, false);
    free(moved);
    changed(o);
    return 0;
}

void ovl_children(const struct ovl *o, const char *dir,
                  void (*fn)(void *ctx, const struct ovl_ent *e), void *ctx)
{
    size_t dl = strlen(dir);
    bool root = dl == 1;
    char pre[4097];
    if (dl + 2 > sizeof pre)
        return;
    memcpy(pre, dir, dl);
    if (!root)
        pre[dl++] = '/';
    pre[dl] = 0;
    for (size_t i = ent_pos(o, pre); i < o->nents; i++) {
        const char *p = o->ents[i].path;
        if (strncmp(p, pre, dl))
            break;
        if (p[dl] && !strchr(p + dl, '/'))
            fn(ctx, &o->ents[i]);
    }
}

static void count_live(void *ctx, const struct ovl_ent *e)
{
    if (e->ino)
        ++*(size_t *)ctx;
}

bool ovl_has_children(const struct ovl *o, const char *dir)
{
    size_t n = 0;
    ovl_children(o, dir, count_live, &n);
    return n > 0;
}

int64_t ovl_read(const struct ovl *o, uint64_t ino, uint64_t off, void *buf, uint64_t len)
{
    const struct ovl_inode *in = ovl_inode(o, ino);
    if (!in)
        return -EBADF;
    if (S_ISDIR(in->mode))
        return -EISDIR;
    if (off >= in->size)
        return 0;
    if (len > in->size - off)
        len = in->size - off;
    if (len)
        memcpy(buf, in->data->bytes + off, len);
    return (int64_t)len;
}

/* in's bytes, its own (copied when shared) with room for need bytes. 0 or -errno. */
static int own_bytes(struct ovl *o, struct ovl_inode *in, uint64_t need)
{
    struct ovl_data *d = in->data;
    bool shared = d && atomic_load(&d->refs) > 1;
    uint64_t cap = d ? d->cap : 0;
    if (!shared && need <= cap)
        return 0;
    uint64_t want = need > cap ? need : cap;
    if (need > cap) { /* grow by half again, for appends; exactly when near the limit */
        uint64_t more = cap + cap / 2;
        want = more > want ? more : want;
        want = (want + 4095) & ~4095ULL;
        if (o->bytes - cap + want > o->limit)
            want = need;
    }
    if (want == 0)
        return 0;
    uint64_t held = cap; /* counted while held, shared or not */
    if (want > held && !charge(o, want - held))
        return -ENOSPC;
    bool fresh = shared || !d;
    struct ovl_data *nd = fresh ? calloc(1, sizeof *nd) : d;
    uint8_t *nb = nd ? (fresh ? malloc(want) : realloc(d->bytes, want)) : NULL;
    if (!nd || !nb) {
        if (fresh)
            free(nd);
        if (want > held)
            o->bytes -= want - held;
        return -ENOMEM;
    }
    if (fresh) {
        if (d)
            memcpy(nb, d->bytes, in->size);
        atomic_init(&nd->refs, 1);
        data_put(d);
    }
    nd->bytes = nb;
    if (want < held)
        o->bytes -= held - want;
    nd->cap = want;
    in->data = nd;
    return 0;
}

int64_t ovl_write(struct ovl *o, uint64_t ino, uint64_t off, const void *buf, uint64_t len,
                  uint64_t now)
{
    struct ovl_inode *in = ovl_inode(o, ino);
    if (!in)
        return -EBADF;
    if (S_ISDIR(in->mode))
        return -EISDIR;
    if (off > OVL_MAX_FILE || len > OVL_MAX_FILE - off)
        return -EFBIG;
    if (!len)
        return 0;
    uint64_t end = off + len;
    int r = own_bytes(o, in, end > in->size ? end : in->size);
    if (r < 0)
        return r;
    if (off > in->size)
        memset(in->data->bytes + in->size, 0, off - in->size);
    memcpy(in->data->bytes + off, buf, len);
    if (end > in->size)
        in->size = end;
    in->mtime = now;
    changed(o);
    return (int64_t)len;
}

int ovl_truncate(struct ovl *o, uint64_t ino, uint64_t size, uint64_t now)
{
    struct ovl_inode *in = ovl_inode(o, ino);
    if (!in)
        return -EBADF;
    if (S_ISDIR(in->mode))
        return -EISDIR;
    if (size > OVL_MAX_FILE)
        return -EFBIG;
    if (size > in->size) {
        int r = own_bytes(o, in, size);
        if (r < 0)
            return r;
        memset(in->data->bytes + in->size, 0, size - in->size);
    } else if (size < in->size && in->data && atomic_load(&in->data->refs) > 1) {
        int r = own_bytes(o, in, in->size); /* a private copy before cutting it */
        if (r < 0)
            return r;
    }
    in->size = size;
    in->mtime = now;
    changed(o);
    return 0;
}

void ovl_touch(struct ovl *o, uint64_t ino, uint32_t mode_or_0, uint64_t now)
{
    struct ovl_inode *in = ovl_inode(o, ino);
    if (!in)
        return;
    if (mode_or_0)
        in->mode = (in->mode & S_IFMT) | (mode_or_0 & 07777);
    in->mtime = now;
    changed(o);
}

void ovl_gc(struct ovl *o, bool (*in_use)(void *ctx, uint64_t ino), void *ctx)
{
    size_t k = 0;
    bool any = false;
    for (size_t i = 0; i < o->ninodes; i++) {
        struct ovl_inode *in = &o->inodes[i];
        if (in->nlink == 0 && !(in_use && in_use(ctx, in->ino))) {
            o->bytes -= OVL_ENT_COST + (in->data ? in->data->cap : 0);
            data_put(in->data);
            any = true;
            continue;
        }
        o->inodes[k++] = *in;
    }
    o->ninodes = k;
    if (any)
        changed(o);
}

int ovl_copy(struct ovl *dst, const struct ovl *src)
{
    if (dst->gen == src->gen && dst->nents == src->nents && dst->ninodes == src->ninodes)
        return 0;
    uint64_t limit = dst->limit ? dst->limit : src->limit;
    bool hit = dst->limit_hit;
    clear(dst);
    if (dst->capents < src->nents) {
        struct ovl_ent *e = realloc(dst->ents, (src->nents + 1) * sizeof *e);
        if (!e)
            return -ENOMEM;
        dst->ents = e;
        dst->capents = src->nents + 1;
    }
    if (dst->capinodes < src->ninodes) {
        struct ovl_inode *in = realloc(dst->inodes, (src->ninodes + 1) * sizeof *in);
        if (!in)
            return -ENOMEM;
        dst->inodes = in;
        dst->capinodes = src->ninodes + 1;
    }
    for (size_t i = 0; i < src->nents; i++) {
        dst->ents[i] = src->ents[i];
        if (!(dst->ents[i].path = strdup(src->ents[i].path))) {
            dst->nents = i;
            dst->gen = 0;
            return -ENOMEM;
        }
        dst->nents = i + 1;
    }
    for (size_t i = 0; i < src->ninodes; i++) {
        dst->inodes[i] = src->inodes[i];
        if (dst->inodes[i].data)
            atomic_fetch_add(&dst->inodes[i].data->refs, 1);
    }
    dst->ninodes = src->ninodes;
    dst->next_ino = src->next_ino;
    dst->bytes = src->bytes;
    dst->gen = src->gen;
    dst->limit = limit;
    dst->limit_hit = hit;
    return 0;
}
