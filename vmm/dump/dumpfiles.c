/* The FILES record of a .jinxdump (dumpfile.h, docs/dumps.md): the host files the program
 * opened and the directories it was granted, so that a replay can grant the same and
 * refuse to run over a file that changed.
 *
 * Payload: u32 files, u32 directories, files x (32-byte SHA-256, u64 size, str path),
 * directories x str path; from format 1.3, u32 written, written x (SHA-256, u64 size,
 * str path): the files the program wrote (VMM memory) as they were at the dump. Every
 * path is absolute, at most DUMP_MAX_STR - 1 bytes. */
#include "dump/dumpfiles.h"
#include "lib/util.h"
#include <stdlib.h>
#include <string.h>

static bool abs_path(const char *p) { return p && p[0] == '/' && strlen(p) < DUMP_MAX_STR; }

int dumpfile_add_file(struct dumpfile *d, const char *path, uint64_t size,
                      const uint8_t sha256[SHA256_LEN])
{
    if (!abs_path(path) || d->nfiles >= DUMP_MAX_FILES)
        return -1;
    struct dump_file *x = realloc(d->files, (d->nfiles + 1) * sizeof *x);
    if (!x)
        return -1;
    d->files = x;
    struct dump_file *f = &x[d->nfiles];
    if (!(f->path = strdup(path)))
        return -1;
    f->size = size;
    memcpy(f->sha256, sha256, SHA256_LEN);
    d->nfiles++;
    d->has_files = true;
    return 0;
}

int dumpfile_add_written(struct dumpfile *d, const char *path, uint64_t size,
                         const uint8_t sha256[SHA256_LEN])
{
    if (!abs_path(path) || d->nwritten >= DUMP_MAX_FILES)
        return -1;
    struct dump_file *x = realloc(d->written, (d->nwritten + 1) * sizeof *x);
    if (!x)
        return -1;
    d->written = x;
    struct dump_file *f = &x[d->nwritten];
    if (!(f->path = strdup(path)))
        return -1;
    f->size = size;
    memcpy(f->sha256, sha256, SHA256_LEN);
    d->nwritten++;
    d->has_files = true;
    return 0;
}

int dumpfile_add_ro_dir(struct dumpfile *d, const char *dir)
{
    if (!abs_path(dir) || d->nro_dirs >= DUMP_MAX_RO_DIRS)
        return -1;
    char **x = realloc(d->ro_dirs, (d->nro_dirs + 1) * sizeof *x);
    if (!x)
        return -1;
    d->ro_dirs = x;
    if (!(x[d->nro_dirs] = strdup(dir)))
        return -1;
    d->nro_dirs++;
    d->has_files = true;
    return 0;
}

void dumpfiles_free(struct dumpfile *d)
{
    for (size_t i = 0; i < d->nfiles; i++)
        free(d->files[i].path);
    for (size_t i = 0; i < d->nro_dirs; i++)
        free(d->ro_dirs[i]);
    for (size_t i = 0; i < d->nwritten; i++)
        free(d->written[i].path);
    free(d->written);
    d->written = NULL;
    d->nwritten = 0;
    free(d->files);
    free(d->ro_dirs);
    d->files = NULL;
    d->ro_dirs = NULL;
    d->nfiles = d->nro_dirs = 0;
    d->has_files = false;
}

void dumpfiles_encode(const struct dumpfile *d, struct dbuf *b)
{
    bput_u32(b, (uint32_t)d->nfiles);
    bput_u32(b, (uint32_t)d->nro_dirs);
    for (size_t i = 0; i < d->nfiles; i++) {
        bput(b, d->files[i].sha256, SHA256_LEN);
        bput_u64(b, d->files[i].size);
        bput_str(b, d->files[i].path, DUMP_MAX_STR);
    }
    for (size_t i = 0; i < d->nro_dirs; i++)
        bput_str(b, d->ro_dirs[i], DUMP_MAX_STR);
    bput_u32(b, (uint32_t)d->nwritten);
    for (size_t i = 0; i < d->nwritten; i++) {
        bput(b, d->written[i].sha256, SHA256_LEN);
        bput_u64(b, d->written[i].size);
        bput_str(b, d->written[i].path, DUMP_MAX_STR);
    }
}

int dumpfiles_parse(struct bcur *c, struct dumpfile *d, char *err, size_t errlen)
{
    if (d->has_files)
        return jx_fail(err, errlen, "two FILES records");
    uint32_t nf = bget_u32(c), nd = bget_u32(c);
    if (c->bad || nf > DUMP_MAX_FILES || nd > DUMP_MAX_RO_DIRS)
        return jx_fail(err, errlen, "FILES record malformed (%u files, %u directories; at "
                       "most %d and %d)", nf, nd, DUMP_MAX_FILES, DUMP_MAX_RO_DIRS);
    d->has_files = true;
    char *path = malloc(DUMP_MAX_STR);
    if (!path)
        return jx_fail(err, errlen, "out of memory");
    int rc = 0;
    for (uint32_t i = 0; i < nf + nd && rc == 0; i++) {
        uint8_t sha[SHA256_LEN] = {0};
        uint64_t size = 0;
        if (i < nf) {
            bget(c, sha, SHA256_LEN);
            size = bget_u64(c);
        }
        if (!bget_str(c, path, DUMP_MAX_STR) || path[0] != '/')
            rc = jx_fail(err, errlen, "FILES record: %s %u malformed (paths are absolute)",
                         i < nf ? "file" : "directory", i < nf ? i : i - nf);
        else if ((i < nf ? dumpfile_add_file(d, path, size, sha)
                         : dumpfile_add_ro_dir(d, path)) < 0)
            rc = jx_fail(err, errlen, "out of memory");
    }
    uint32_t nw = rc == 0 && c->left ? bget_u32(c) : 0; /* absent before format 1.3 */
    if (c->bad || nw > DUMP_MAX_FILES)
        rc = rc ? rc : jx_fail(err, errlen, "FILES record: written files malformed");
    for (uint32_t i = 0; i < nw && rc == 0; i++) {
        uint8_t sha[SHA256_LEN] = {0};
        bget(c, sha, SHA256_LEN);
        uint64_t size = bget_u64(c);
        if (!bget_str(c, path, DUMP_MAX_STR) || path[0] != '/')
            rc = jx_fail(err, errlen, "FILES record: written file %u malformed", i);
        else if (dumpfile_add_written(d, path, size, sha) < 0)
            rc = jx_fail(err, errlen, "out of memory");
    }
    free(path);
    return rc;
}
