/* The guest's private writable file layer: what the program creates or writes lives
 * here, in VMM memory, never on the host (issue 28). Pure host code, unit-tested
 * (tests/unit/test_vmm_ovl.c); the file syscalls (files_ovl.c) put it over the read-only
 * grants.
 *
 * Two tables. Inodes (by number): a regular file's bytes or a directory, its mode, link
 * count and modification time. Entries (by canonical absolute path, sorted): a name that
 * names an inode, or a whiteout (ino 0: a host file the program removed or renamed away).
 * A directory entry is opaque when nothing of the host shows below it (a directory the
 * program made, /tmp). A descriptor names an inode number, so that restoring the tables
 * restores what every descriptor sees.
 *
 * Snapshots copy the tables and share the bytes (reference-counted, copied on the next
 * write of a shared buffer): a save or restore of unchanged tables costs nothing (every
 * change takes a new generation number, unique in the process). Memory is bounded: the
 * bytes held (buffers' capacities, plus OVL_ENT_COST per entry) never pass limit; a
 * write that would gets -ENOSPC and *limit_hit set. */
#ifndef JINX_OVL_H
#define JINX_OVL_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OVL_ENT_COST 128          /* bytes an entry or inode counts besides its bytes */
#define OVL_DEFAULT_LIMIT (256ULL << 20)
#define OVL_MAX_FILE (1ULL << 40) /* the largest size a file may have (EFBIG past it) */

struct ovl_data {
    atomic_int refs;
    uint64_t cap;
    uint8_t *bytes;
};

struct ovl_inode {
    uint64_t ino;                 /* 1.. */
    uint32_t mode;                /* S_IFREG or S_IFDIR and permission bits */
    uint32_t nlink;               /* names in the entry table; 0: unlinked (open only) */
    uint64_t size;
    uint64_t mtime;               /* ns since the epoch (virtual time) */
    struct ovl_data *data;        /* a file's bytes (NULL: none yet) */
};

struct ovl_ent {
    char *path;                   /* canonical absolute path */
    uint64_t ino;                 /* 0: whiteout */
    bool opaque;                  /* a directory nothing of the host shows below */
};

struct ovl {
    struct ovl_ent *ents;         /* sorted by path (strcmp) */
    size_t nents, capents;
    struct ovl_inode *inodes;     /* sorted by ino */
    size_t ninodes, capinodes;
    uint64_t next_ino;
    uint64_t gen;                 /* changes with every change (0: never changed) */
    uint64_t bytes;               /* memory counted against limit */
    uint64_t limit;
    bool limit_hit;               /* a change was refused for the limit */
};

void ovl_init(struct ovl *o, uint64_t limit);
void ovl_free(struct ovl *o);

/* The entry of canonical path p, or NULL. */
struct ovl_ent *ovl_find(const struct ovl *o, const char *p);
struct ovl_inode *ovl_inode(const struct ovl *o, uint64_t ino);
/* How canonical path p stands: 1 an entry names a directory, 2 an entry names another
 * inode, -1 a whiteout or below an opaque directory without an entry (nothing there),
 * 0 the overlay says nothing (the host decides). *ino: the entry's inode (or 0). */
int ovl_lookup(const struct ovl *o, const char *p, uint64_t *ino);

/* A new inode (mode: S_IFREG/S_IFDIR | perms) named p (replacing a whiteout or nothing;
 * p must have no live entry). ino or -errno (-ENOSPC: the limit). */
int64_t ovl_create(struct ovl *o, const char *p, uint32_t mode, bool opaque, uint64_t now);
/* A new inode with no name (O_TMPFILE): it lives while a descriptor names it. ino or
 * -errno. */
int64_t ovl_create_unnamed(struct ovl *o, uint32_t mode, uint64_t now);
/* A new inode holding len bytes (a host file copied up), named p. ino or -errno. */
int64_t ovl_create_with(struct ovl *o, const char *p, uint32_t mode, const void *bytes,
                        uint64_t len, uint64_t now);
/* Names p a whiteout (host_below: a host object is there) or drops its entry; the inode
 * it named loses a link. 0 or -errno. */
int ovl_remove(struct ovl *o, const char *p, bool host_below);
/* Moves entry from (and every entry below it) to to, replacing to's entry; whiteout:
 * from gets a whiteout (a host object was there too). 0 or -errno. */
int ovl_rename(struct ovl *o, const char *from, const char *to, bool whiteout);
/* Calls fn for each entry directly below directory path dir (whiteouts too). */
void ovl_children(const struct ovl *o, const char *dir,
                  void (*fn)(void *ctx, const struct ovl_ent *e), void *ctx);
bool ovl_has_children(const struct ovl *o, const char *dir);

/* Bytes of inode ino at off into buf (at most len). Bytes read or -errno. */
int64_t ovl_read(const struct ovl *o, uint64_t ino, uint64_t off, void *buf, uint64_t len);
/* Writes len bytes at off (zeroes fill a gap). Bytes written or -errno (-ENOSPC: the
 * limit, -EFBIG: past OVL_MAX_FILE). */
int64_t ovl_write(struct ovl *o, uint64_t ino, uint64_t off, const void *buf, uint64_t len,
                  uint64_t now);
int ovl_truncate(struct ovl *o, uint64_t ino, uint64_t size, uint64_t now);
void ovl_touch(struct ovl *o, uint64_t ino, uint32_t mode_or_0, uint64_t now);

/* Drops inodes without a name (nlink 0) that in_use does not claim (open descriptors). */
void ovl_gc(struct ovl *o, bool (*in_use)(void *ctx, uint64_t ino), void *ctx);

/* dst becomes a copy of src (dst: initialised or zeroed; its old contents freed). Shares
 * the bytes. Nothing is done when both hold the same generation. 0, or -ENOMEM. */
int ovl_copy(struct ovl *dst, const struct ovl *src);

#endif
