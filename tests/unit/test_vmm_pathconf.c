/* Unit tests for the file layer's confinement (vmm/linux/pathconf.c) over a real tree in a
 * temporary directory: lexical normalization, and path_resolve's rules: `..` cannot climb
 * out of a grant, symlinks (relative, absolute, inside a symlinked directory, chained)
 * are followed and the result must be inside a grant, a missing path outside is ENOENT and
 * an existing one EACCES, a granted single file grants nothing next to it, loops give
 * ELOOP, a file used as a directory ENOTDIR, and readlink's view (follow_last false)
 * stops at the link itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/pathconf.h"

static char root[PATH_MAX];
static struct grants g;

static const char *at(const char *rel)
{
    static char buf[4][PATH_MAX + 64];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s%s%s", root, rel[0] ? "/" : "", rel);
    return buf[k];
}

static void touch(const char *rel)
{
    FILE *f = fopen(at(rel), "w");
    assert_non_null(f);
    fputs("x\n", f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/jinx-test-pathconf-XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, root))
        return -1;
    const char *dirs[] = {"data", "data/sub", "secret", "other"};
    for (size_t i = 0; i < 4; i++)
        if (mkdir(at(dirs[i]), 0755) < 0)
            return -1;
    touch("data/in.txt");
    touch("data/sub/deep.txt");
    touch("secret/s.txt");
    touch("other/lib.so");
    touch("other/neighbour");
    int rc = symlink("../secret/s.txt", at("data/rel-out")) |
             symlink(at("secret"), at("data/abs-out")) |
             symlink("in.txt", at("data/inner")) | symlink("sub", at("data/subdir-link")) |
             symlink("inner", at("data/chain")) | symlink("loop", at("data/loop")) |
             symlink("../other/lib.so", at("data/to-granted-file")) |
             symlink("/etc", at("data/etc"));
    if (rc)
        return -1;
    char err[256];
    if (grants_add(&g, at("data"), true, err, sizeof err) < 0 ||
        grants_add(&g, at("other/lib.so"), false, err, sizeof err) < 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    grants_free(&g);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* path_resolve from cwd = the tree's data directory. */
static int res(const char *path, bool follow, char *out)
{
    return path_resolve(&g, at("data"), path, follow, out);
}

static void test_normalize(void **state)
{
    (void)state;
    char out[PATHCONF_MAX];
    assert_int_equal(path_normalize("/a/b", "c/./d//e/", out, sizeof out), 0);
    assert_string_equal(out, "/a/b/c/d/e");
    assert_int_equal(path_normalize("/a/b", "../../../../x", out, sizeof out), 0);
    assert_string_equal(out, "/x"); /* .. at the root stays at the root */
    assert_int_equal(path_normalize("/a", "/y/../z", out, sizeof out), 0);
    assert_string_equal(out, "/z");
    assert_int_equal(path_normalize("/a", ".", out, sizeof out), 0);
    assert_string_equal(out, "/a");
    assert_int_equal(path_normalize("/", "..", out, sizeof out), 0);
    assert_string_equal(out, "/");
    assert_int_equal(path_normalize("/a", "", out, sizeof out), -ENOENT);
    assert_int_equal(path_normalize("/", "abcdef", out, 5), -ENAMETOOLONG);
}

static void test_inside(void **state)
{
    (void)state;
    char out[PATHCONF_MAX];
    assert_int_equal(res("in.txt", true, out), 0);
    assert_string_equal(out, at("data/in.txt"));
    assert_int_equal(res("sub/../in.txt", true, out), 0);
    assert_string_equal(out, at("data/in.txt"));
    assert_int_equal(res(at("data/sub/deep.txt"), true, out), 0);
    assert_string_equal(out, at("data/sub/deep.txt"));
    assert_int_equal(res("chain", true, out), 0); /* chain -> inner -> in.txt */
    assert_string_equal(out, at("data/in.txt"));
    assert_int_equal(res("subdir-link/deep.txt", true, out), 0);
    assert_string_equal(out, at("data/sub/deep.txt"));
    assert_int_equal(res(".", true, out), 0);
    assert_string_equal(out, at("data"));
}

static void test_escapes_refused(void **state)
{
    (void)state;
    char out[PATHCONF_MAX];
    assert_int_equal(res("../secret/s.txt", true, out), -EACCES);
    assert_int_equal(res("sub/../../secret/s.txt", true, out), -EACCES);
    assert_int_equal(res("rel-out", true, out), -EACCES);
    assert_int_equal(res("abs-out/s.txt", true, out), -EACCES);
    assert_int_equal(res("abs-out", true, out), -EACCES);
    assert_int_equal(res("etc/passwd", true, out), -EACCES);
    assert_int_equal(res(at("secret/s.txt"), true, out), -EACCES);
    assert_int_equal(res("/etc/passwd", true, out), -EACCES);
    assert_int_equal(res("..", true, out), -EACCES);
    /* A missing path outside every grant reads as missing, not as forbidden. */
    assert_int_equal(res("../secret/nope", true, out), -ENOENT);
    assert_int_equal(res("/nonexistent-jinx/x", true, out), -ENOENT);
}

static void test_file_grant(void **state)
{
    (void)state;
    char out[PATHCONF_MAX];
    assert_int_equal(res(at("other/lib.so"), true, out), 0);
    assert_int_equal(res("to-granted-file", true, out), 0);
    assert_string_equal(out, at("other/lib.so"));
    assert_int_equal(res(at("other/neighbour"), true, out), -EACCES);
    assert_int_equal(res(at("other"), true, out), -EACCES);
    assert_true(grants_allow(&g, at("other/lib.so")));
    assert_false(grants_allow(&g, at("other/lib.so.bak")));
    assert_false(grants_allow(&g, at("database"))); /* a prefix is not a parent */
    assert_true(grants_allow(&g, at("data/anything")));
}

static void test_errors_and_nofollow(void **state)
{
    (void)state;
    char out[PATHCONF_MAX];
    assert_int_equal(res("loop", true, out), -ELOOP);
    assert_int_equal(res("in.txt/x", true, out), -ENOTDIR);
    assert_int_equal(res("nope", true, out), -ENOENT);
    /* readlink's view: the link itself, inside the grant, even when it points out. */
    assert_int_equal(res("rel-out", false, out), 0);
    assert_string_equal(out, at("data/rel-out"));
    /* A symlink in the middle is always followed. */
    assert_int_equal(res("abs-out/s.txt", false, out), -EACCES);
    char err[256];
    struct grants bad = {.n = 0};
    assert_int_equal(grants_add(&bad, at("data/in.txt"), true, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a directory"));
    assert_int_equal(grants_add(&bad, at("missing"), true, err, sizeof err), -1);
    grants_free(&bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_inside),
        cmocka_unit_test(test_escapes_refused),
        cmocka_unit_test(test_file_grant),
        cmocka_unit_test(test_errors_and_nofollow),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
