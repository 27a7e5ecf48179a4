/* libFuzzer harness for the file layer's path confinement (vmm/linux/pathconf.c).
 *
 * path_normalize on any cwd/path bytes: a success is an absolute path with no empty, `.`
 * or `..` component and no trailing slash, shorter than the buffer, and normalizing it
 * again gives it back. path_resolve over a fixed tree made at start-up in a temporary
 * directory (a granted directory with a file, a subdirectory, symlinks pointing out
 * absolutely and relatively, a symlink loop, a symlink inside; a secret directory next to
 * it; a single granted file): a success must name a path inside the grants, never under
 * the secret directory, and, when the last symlink is followed, the host's own canonical
 * path for it (realpath), so no symlink is left to escape through. A violation aborts.
 *
 * Input: byte 0 picks the cwd (bits 0-1) and follow_last (bit 2); the rest is the path. */
#include "linux/pathconf.h"
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct grants grants;
static char root[PATH_MAX], secret[PATH_MAX + 16], cwds[4][PATH_MAX + 32];

static void must(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_pathconf: cannot set up the tree: %s\n", what);
        exit(1);
    }
}

static void at(char *buf, const char *rel)
{
    snprintf(buf, PATH_MAX + 32, "%s/%s", root, rel);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* The tree goes when the fuzzer exits (libFuzzer ends through exit()). */
static void remove_tree(void) { nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char tmpl[] = "/tmp/jinx-fuzz-pathconf-XXXXXX", p[PATH_MAX + 32];
    must(mkdtemp(tmpl) != NULL, "mkdtemp");
    must(realpath(tmpl, root) != NULL, "realpath");
    atexit(remove_tree);
    static const char *dirs[] = {"g", "g/sub", "secret"};
    for (size_t i = 0; i < 3; i++) {
        at(p, dirs[i]);
        must(mkdir(p, 0755) == 0, p);
    }
    static const char *files[] = {"g/file", "g/sub/f", "secret/s", "one"};
    for (size_t i = 0; i < 4; i++) {
        at(p, files[i]);
        FILE *f = fopen(p, "w");
        must(f != NULL, p);
        fputs("x\n", f);
        fclose(f);
    }
    snprintf(secret, sizeof secret, "%s/secret", root);
    static const char *links[][2] = {{"g/rel-out", "../secret"}, {"g/sub/up", "../../secret/s"},
                                     {"g/loop", "loop"}, {"g/in", "sub/f"}, {"g/dot", "."},
                                     {"g/to-one", "../one"}};
    for (size_t i = 0; i < 6; i++) {
        at(p, links[i][0]);
        must(symlink(links[i][1], p) == 0, p);
    }
    at(p, "g/abs-out");
    must(symlink(secret, p) == 0, p);
    char err[256];
    at(p, "g");
    must(grants_add(&grants, p, true, err, sizeof err) == 0, err);
    at(p, "one");
    must(grants_add(&grants, p, false, err, sizeof err) == 0, err);
    at(cwds[0], "g");
    at(cwds[1], "g/sub");
    snprintf(cwds[2], sizeof cwds[2], "%s", root);
    snprintf(cwds[3], sizeof cwds[3], "/");
    return 0;
}

static void check_normalized(const char *p)
{
    size_t n = strlen(p);
    if (p[0] != '/' || n >= PATHCONF_MAX || (n > 1 && p[n - 1] == '/') || strstr(p, "//") ||
        strstr(p, "/./") || strstr(p, "/../") || (n >= 2 && !strcmp(p + n - 2, "/.")) ||
        (n >= 3 && !strcmp(p + n - 3, "/..")))
        abort();
    char again[PATHCONF_MAX];
    if (path_normalize("/", p, again, sizeof again) != 0 || strcmp(again, p))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > PATHCONF_MAX + 64)
        return 0;
    const char *cwd = cwds[data[0] & 3];
    bool follow = data[0] & 4;
    char *path = malloc(size);
    if (!path)
        return 0;
    memcpy(path, data + 1, size - 1);
    path[size - 1] = 0;
    char out[PATHCONF_MAX];
    int r = path_normalize(cwd, path, out, sizeof out);
    if (r == 0)
        check_normalized(out);
    else if (r != -ENOENT && r != -ENAMETOOLONG)
        abort();
    r = path_resolve(&grants, cwd, path, follow, out);
    if (r == 0) {
        check_normalized(out);
        size_t sl = strlen(secret);
        if (!grants_allow(&grants, out) || (!strncmp(out, secret, sl) &&
                                            (out[sl] == 0 || out[sl] == '/')))
            abort();
        char real[PATH_MAX];
        if (follow && (!realpath(out, real) || strcmp(real, out)))
            abort();
    } else if (r > 0) {
        abort();
    }
    free(path);
    return 0;
}
