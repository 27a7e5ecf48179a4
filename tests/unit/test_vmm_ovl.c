/* Unit tests for the private writable file layer's tables (vmm/linux/ovl.c): create,
 * write (holes, growth), read, truncate, lookups with whiteouts and opaque directories,
 * children, rename of files and of directories with what is below them, remove with and
 * without a host object below, the memory limit (ENOSPC, limit_hit, nothing changed),
 * garbage collection of unlinked inodes, and snapshots: a copy shares the bytes, a write
 * after it copies them (the copy keeps its own), restoring an unchanged table is free.
 * Also path_resolve_ovl's use of the overlay (pathconf.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "linux/ovl.h"
#include "linux/pathconf.h"

static void test_create_write_read(void **state)
{
    (void)state;
    struct ovl o;
    ovl_init(&o, 1 << 20);
    int64_t ino = ovl_create(&o, "/tmp/a", S_IFREG | 0644, false, 5);
    assert_true(ino > 0);
    assert_int_equal(ovl_create(&o, "/tmp/a", S_IFREG | 0644, false, 5), -EEXIST);
    assert_int_equal(ovl_write(&o, (uint64_t)ino, 0, "hello", 5, 6), 5);
    assert_int_equal(ovl_write(&o, (uint64_t)ino, 8, "XY", 2, 7), 2); /* a hole */
    char buf[16] = {0};
    assert_int_equal(ovl_read(&o, (uint64_t)ino, 0, buf, sizeof buf), 10);
    assert_memory_equal(buf, "hello\0\0\0XY", 10);
    assert_int_equal(ovl_read(&o, (uint64_t)ino, 10, buf, 4), 0);
    assert_int_equal(ovl_inode(&o, (uint64_t)ino)->mtime, 7);
    assert_int_equal(ovl_truncate(&o, (uint64_t)ino, 3, 8), 0);
    assert_int_equal(ovl_read(&o, (uint64_t)ino, 0, buf, sizeof buf), 3);
    assert_int_equal(ovl_truncate(&o, (uint64_t)ino, 6, 8), 0); /* grows with zeroes */
    assert_int_equal(ovl_read(&o, (uint64_t)ino, 0, buf, sizeof buf), 6);
    assert_memory_equal(buf, "hel\0\0\0", 6);
    assert_int_equal(ovl_write(&o, (uint64_t)ino, OVL_MAX_FILE, "x", 1, 9), -EFBIG);
    assert_int_equal(ovl_write(&o, 999, 0, "x", 1, 9), -EBADF);
    int64_t d = ovl_create(&o, "/tmp/d", S_IFDIR | 0755, true, 1);
    assert_int_equal(ovl_write(&o, (uint64_t)d, 0, "x", 1, 9), -EISDIR);
    ovl_free(&o);
}

static void test_lookup(void **state)
{
    (void)state;
    struct ovl o;
    uint64_t ino;
    ovl_init(&o, 1 << 20);
    assert_int_equal(ovl_lookup(&o, "/etc/passwd", &ino), 0);
    assert_true(ovl_create(&o, "/tmp", S_IFDIR | 01777, true, 0) > 0);
    assert_true(ovl_create(&o, "/w", S_IFDIR | 0755, false, 0) > 0); /* not opaque */
    int64_t f = ovl_create(&o, "/tmp/f", S_IFREG | 0644, false, 0);
    assert_int_equal(ovl_lookup(&o, "/tmp", &ino), 1);
    assert_int_equal(ovl_lookup(&o, "/tmp/f", &ino), 2);
    assert_int_equal((int64_t)ino, f);
    assert_int_equal(ovl_lookup(&o, "/tmp/missing", &ino), -1); /* below an opaque dir */
    assert_int_equal(ovl_lookup(&o, "/tmp/x/y", &ino), -1);
    assert_int_equal(ovl_lookup(&o, "/w/host", &ino), 0);       /* the host decides */
    assert_int_equal(ovl_lookup(&o, "/tmpx", &ino), 0);
    assert_int_equal(ovl_remove(&o, "/w/host", true), 0);       /* a whiteout */
    assert_int_equal(ovl_lookup(&o, "/w/host", &ino), -1);
    assert_int_equal(ovl_lookup(&o, "/w/host/below", &ino), -1);
    assert_false(ovl_has_children(&o, "/w"));                   /* whiteouts are no children */
    assert_true(ovl_has_children(&o, "/tmp"));
    assert_int_equal(ovl_remove(&o, "/tmp/f", false), 0);
    assert_int_equal(ovl_lookup(&o, "/tmp/f", &ino), -1);
    assert_int_equal(ovl_inode(&o, (uint64_t)f)->nlink, 0);
    ovl_gc(&o, NULL, NULL);
    assert_null(ovl_inode(&o, (uint64_t)f));
    ovl_free(&o);
}

static void count(void *ctx, const struct ovl_ent *e)
{
    (void)e;
    ++*(int *)ctx;
}

static void test_rename(void **state)
{
    (void)state;
    struct ovl o;
    uint64_t ino;
    ovl_init(&o, 1 << 20);
    ovl_create(&o, "/t", S_IFDIR | 0755, true, 0);
    ovl_create(&o, "/t/d", S_IFDIR | 0755, true, 0);
    int64_t a = ovl_create(&o, "/t/d/a", S_IFREG | 0644, false, 0);
    ovl_create(&o, "/t/d/sub", S_IFDIR | 0755, true, 0);
    int64_t b = ovl_create(&o, "/t/d/sub/b", S_IFREG | 0644, false, 0);
    int64_t c = ovl_create(&o, "/t/c", S_IFREG | 0644, false, 0);
    assert_int_equal(ovl_rename(&o, "/t/d", "/t/d/sub/x", false), -EINVAL); /* into itself */
    assert_int_equal(ovl_rename(&o, "/t/d", "/t/e", false), 0);
    assert_int_equal(ovl_lookup(&o, "/t/d/a", &ino), -1);
    assert_int_equal(ovl_lookup(&o, "/t/e/a", &ino), 2);
    assert_int_equal((int64_t)ino, a);
    assert_int_equal(ovl_lookup(&o, "/t/e/sub/b", &ino), 2);
    assert_int_equal((int64_t)ino, b);
    int n = 0;
    ovl_children(&o, "/t", count, &n);
    assert_int_equal(n, 2); /* c, e */
    /* Over an existing file: it loses its name; with a host object at the old name. */
    assert_int_equal(ovl_rename(&o, "/t/e/a", "/t/c", true), 0);
    assert_int_equal(ovl_lookup(&o, "/t/c", &ino), 2);
    assert_int_equal((int64_t)ino, a);
    assert_int_equal(ovl_inode(&o, (uint64_t)c)->nlink, 0);
    assert_int_equal(ovl_lookup(&o, "/t/e/a", &ino), -1);
    assert_non_null(ovl_find(&o, "/t/e/a")); /* a whiteout */
    ovl_free(&o);
}

static void test_limit(void **state)
{
    (void)state;
    struct ovl o;
    ovl_init(&o, 64 << 10);
    int64_t ino = ovl_create(&o, "/f", S_IFREG | 0644, false, 0);
    char *big = calloc(1, 128 << 10);
    assert_int_equal(ovl_write(&o, (uint64_t)ino, 0, big, 32 << 10, 0), 32 << 10);
    assert_false(o.limit_hit);
    assert_int_equal(ovl_write(&o, (uint64_t)ino, 0, big, 128 << 10, 0), -ENOSPC);
    assert_true(o.limit_hit);
    assert_int_equal(ovl_inode(&o, (uint64_t)ino)->size, 32 << 10); /* unchanged */
    assert_true(o.bytes <= o.limit);
    /* Appends that fill up to the limit exactly, not past it. */
    o.limit_hit = false;
    int64_t w;
    uint64_t off = 32 << 10;
    while ((w = ovl_write(&o, (uint64_t)ino, off, big, 1000, 0)) > 0)
        off += (uint64_t)w;
    assert_int_equal(w, -ENOSPC);
    assert_true(o.bytes <= o.limit && o.bytes > o.limit - 2000 - 2 * OVL_ENT_COST);
    /* A copy-in that does not fit leaves nothing, and takes no other unlinked inode. */
    int64_t u = ovl_create(&o, "/u", S_IFREG | 0644, false, 0);
    assert_int_equal(ovl_remove(&o, "/u", false), 0); /* unlinked, still open */
    uint64_t k;
    assert_int_equal(ovl_create_with(&o, "/host", S_IFREG | 0644, big, 128 << 10, 0), -ENOSPC);
    assert_int_equal(ovl_lookup(&o, "/host", &k), 0);
    assert_non_null(ovl_inode(&o, (uint64_t)u));
    /* Removing and collecting gives the memory back. */
    assert_int_equal(ovl_remove(&o, "/f", false), 0);
    ovl_gc(&o, NULL, NULL);
    assert_int_equal(o.bytes, 0);
    free(big);
    ovl_free(&o);
}

static bool keep_all(void *ctx, uint64_t ino)
{
    (void)ctx, (void)ino;
    return true;
}

static void test_snapshot(void **state)
{
    (void)state;
    struct ovl o, snap = {0};
    char buf[8];
    ovl_init(&o, 1 << 20);
    int64_t ino = ovl_create(&o, "/f", S_IFREG | 0644, false, 0);
    ovl_write(&o, (uint64_t)ino, 0, "before", 6, 0);
    assert_int_equal(ovl_copy(&snap, &o), 0);
    assert_ptr_equal(ovl_inode(&snap, (uint64_t)ino)->data, ovl_inode(&o, (uint64_t)ino)->data);
    /* A write after the snapshot copies the bytes: the snapshot keeps its own. */
    ovl_write(&o, (uint64_t)ino, 0, "AFTER!", 6, 1);
    ovl_create(&o, "/g", S_IFREG | 0644, false, 1);
    ovl_remove(&o, "/f", false);
    ovl_gc(&o, keep_all, NULL); /* an open descriptor keeps it */
    assert_int_equal(ovl_read(&snap, (uint64_t)ino, 0, buf, 6), 6);
    assert_memory_equal(buf, "before", 6);
    /* Restore: what was written after is gone. */
    assert_int_equal(ovl_copy(&o, &snap), 0);
    uint64_t k;
    assert_int_equal(ovl_lookup(&o, "/g", &k), 0);
    assert_int_equal(ovl_lookup(&o, "/f", &k), 2);
    assert_int_equal(ovl_read(&o, (uint64_t)ino, 0, buf, 6), 6);
    assert_memory_equal(buf, "before", 6);
    /* Unchanged since: nothing to do (the same generation). */
    uint64_t gen = o.gen;
    struct ovl_ent *ents = o.ents;
    assert_int_equal(ovl_copy(&o, &snap), 0);
    assert_ptr_equal(o.ents, ents);
    assert_int_equal(o.gen, gen);
    /* A truncate after the snapshot does not cut the snapshot's bytes. */
    assert_int_equal(ovl_truncate(&o, (uint64_t)ino, 2, 3), 0);
    assert_int_equal(ovl_read(&snap, (uint64_t)ino, 0, buf, 8), 6);
    ovl_free(&snap);
    ovl_free(&o);
}

/* path_resolve_ovl over a fake overlay: /ovl is a directory of its own, /ovl/f a file,
 * /gone removed. */
static int fake(void *ctx, const char *p)
{
    (void)ctx;
    if (!strcmp(p, "/ovl"))
        return 1;
    if (!strcmp(p, "/ovl/f"))
        return 2;
    if (!strncmp(p, "/ovl/", 5) || !strcmp(p, "/gone"))
        return -1;
    return 0;
}

static void test_resolve_hook(void **state)
{
    (void)state;
    struct grants g = {.n = 0};
    char err[256], out[PATHCONF_MAX];
    assert_int_equal(grants_add(&g, "/etc", true, err, sizeof err), 0);
    struct path_overlay ov = {fake, NULL};
    assert_int_equal(path_resolve_ovl(&g, "/", "/ovl/f", true, out, &ov), 0);
    assert_string_equal(out, "/ovl/f");
    assert_int_equal(path_resolve_ovl(&g, "/ovl", "f", true, out, &ov), 0);
    assert_int_equal(path_resolve_ovl(&g, "/", "/ovl/f/x", true, out, &ov), -ENOTDIR);
    assert_int_equal(path_resolve_ovl(&g, "/", "/ovl/none", true, out, &ov), -ENOENT);
    assert_int_equal(path_resolve_ovl(&g, "/", "/ovl/../etc", true, out, &ov), 0);
    assert_int_equal(path_resolve_ovl(&g, "/", "/gone", true, out, &ov), -ENOENT);
    assert_int_equal(path_resolve(&g, "/", "/ovl/f", true, out), -ENOENT); /* no overlay */
    grants_free(&g);
}

/* The link wraps realloc (tests/unit/vmm_tests.mk): a realloc of fail_ptr fails. */
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
static void *fail_ptr;
void *__wrap_realloc(void *p, size_t n)
{
    return p && p == fail_ptr ? NULL : __real_realloc(p, n);
}

/* The name table cannot grow (out of memory): the create fails with ENOMEM, every name
 * made before is still there, and the next create, with memory again, works. (The table
 * used to be replaced by NULL with its capacity doubled: the entries were lost, and the
 * next lookup read through a null table.) */
static void test_names_table_cannot_grow(void **state)
{
    (void)state;
    struct ovl o;
    uint64_t ino;
    ovl_init(&o, 1 << 20);
    char p[32];
    int n = 0;
    while (o.nents < o.capents || !o.capents) { /* fill the table to its capacity */
        snprintf(p, sizeof p, "/f%d", n++);
        assert_true(ovl_create(&o, p, S_IFREG | 0644, false, 0) > 0);
    }
    uint64_t bytes = o.bytes;
    size_t cap = o.capents, ninodes = o.ninodes;
    fail_ptr = o.ents;
    assert_int_equal(ovl_create(&o, "/more", S_IFREG | 0644, false, 0), -ENOMEM);
    fail_ptr = NULL;
    assert_int_equal(o.capents, cap);
    assert_int_equal(o.nents, cap);
    assert_int_equal(o.bytes, bytes);
    assert_int_equal(o.ninodes, ninodes);
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "/f%d", i);
        assert_int_equal(ovl_lookup(&o, p, &ino), 2);
    }
    assert_true(ovl_create(&o, "/more", S_IFREG | 0644, false, 0) > 0);
    assert_int_equal(ovl_lookup(&o, "/more", &ino), 2);
    /* The same for the inode table: ENOMEM (not the limit's ENOSPC), nothing changed. */
    while (o.ninodes < o.capinodes)
        assert_true(ovl_create_unnamed(&o, S_IFREG | 0600, 0) > 0);
    bytes = o.bytes;
    ninodes = o.ninodes;
    uint64_t next = o.next_ino;
    fail_ptr = o.inodes;
    assert_int_equal(ovl_create(&o, "/last", S_IFREG | 0644, false, 0), -ENOMEM);
    assert_int_equal(ovl_create_unnamed(&o, S_IFREG | 0600, 0), -ENOMEM);
    fail_ptr = NULL;
    assert_false(o.limit_hit);
    assert_int_equal(o.bytes, bytes);
    assert_int_equal(o.ninodes, ninodes);
    assert_int_equal(o.next_ino, next);
    assert_int_equal(ovl_lookup(&o, "/last", &ino), 0);
    assert_true(ovl_create(&o, "/last", S_IFREG | 0644, false, 0) > 0);
    ovl_free(&o);
}

/* A rename is all or nothing. Near the limit, one whose new names are longer than the
 * old ones is refused (ENOSPC) with every name, link count and byte counted as before
 * (fuzz_ovl found one that dropped the names it could not put back); so is one whose
 * table cannot grow for its whiteout (ENOMEM). Over a directory that holds it: ENOTEMPTY. */
static void test_rename_all_or_nothing(void **state)
{
    (void)state;
    struct ovl o;
    uint64_t ino;
    ovl_init(&o, 1 << 20);
    int64_t d = ovl_create(&o, "/d", S_IFDIR | 0755, true, 0);
    int64_t a = ovl_create(&o, "/d/a", S_IFREG | 0644, false, 0);
    int64_t b = ovl_create(&o, "/d/b", S_IFREG | 0644, false, 0);
    o.limit = o.bytes + 10; /* room for 10 more bytes of names */
    uint64_t bytes = o.bytes;
    size_t nents = o.nents;
    assert_int_equal(ovl_rename(&o, "/d", "/a-much-longer-name", false), -ENOSPC);
    assert_true(o.limit_hit);
    assert_int_equal(o.bytes, bytes);
    assert_int_equal(o.nents, nents);
    assert_int_equal(ovl_lookup(&o, "/d/a", &ino), 2);
    assert_int_equal((int64_t)ino, a);
    assert_int_equal(ovl_lookup(&o, "/d/b", &ino), 2);
    assert_int_equal(ovl_inode(&o, (uint64_t)d)->nlink, 1);
    assert_int_equal(ovl_inode(&o, (uint64_t)a)->nlink, 1);
    assert_int_equal(ovl_inode(&o, (uint64_t)b)->nlink, 1);
    /* The same names' length fits: done, and counted exactly. */
    assert_int_equal(ovl_rename(&o, "/d", "/e", false), 0);
    assert_int_equal(o.bytes, bytes);
    assert_int_equal(ovl_lookup(&o, "/e/b", &ino), 2);
    assert_int_equal((int64_t)ino, b);
    assert_int_equal(ovl_rename(&o, "/e/a", "/e", false), -ENOTEMPTY);
    assert_int_equal(ovl_lookup(&o, "/e/a", &ino), 2);
    /* A whiteout the full table has no room for. */
    o.limit = 1 << 20;
    char p[32];
    for (int i = 0; o.nents < o.capents; i++) {
        snprintf(p, sizeof p, "/f%d", i);
        assert_true(ovl_create(&o, p, S_IFREG | 0644, false, 0) > 0);
    }
    bytes = o.bytes;
    fail_ptr = o.ents;
    assert_int_equal(ovl_rename(&o, "/e/a", "/e/c", true), -ENOMEM);
    fail_ptr = NULL;
    assert_int_equal(o.bytes, bytes);
    assert_int_equal(ovl_lookup(&o, "/e/a", &ino), 2);
    assert_int_equal(ovl_lookup(&o, "/e/c", &ino), -1); /* nothing there (opaque /e) */
    assert_int_equal(ovl_rename(&o, "/e/a", "/e/c", true), 0);
    assert_int_equal(ovl_lookup(&o, "/e/a", &ino), -1); /* the whiteout */
    assert_int_equal(ovl_lookup(&o, "/e/c", &ino), 2);
    assert_int_equal((int64_t)ino, a);
    ovl_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_write_read), cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_rename), cmocka_unit_test(test_limit),
        cmocka_unit_test(test_snapshot), cmocka_unit_test(test_resolve_hook),
        cmocka_unit_test(test_names_table_cannot_grow),
        cmocka_unit_test(test_rename_all_or_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
