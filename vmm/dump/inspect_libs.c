/* Shared libraries in jinxctl inspect's backtraces (inspect_libs.h). */
#include "dump/inspect_libs.h"
#include "linux/files.h"
#include "linux/libsyms.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct inspect_libs {
    struct libsyms *cache;
    struct libmap map;
};

struct view {
    const struct dumpfile *d;
    const struct corefile *core;
    const struct elf_image *img;
};

static bool read_core(void *ctx, uint64_t va, void *dst, size_t len)
{
    return core_read(((struct view *)ctx)->core, va, dst, len);
}

static bool resolve_recorded(void *ctx, const char *path, char *out)
{
    const struct view *v = ctx;
    char interp[PATH_MAX];
    if (!realpath(path, out))
        return false;
    if (v->img->interp[0] && realpath(v->img->interp, interp) && !strcmp(out, interp))
        return true;
    for (size_t i = 0; i < v->d->nfiles; i++) {
        const struct dump_file *f = &v->d->files[i];
        uint8_t sha[32];
        uint64_t size;
        if (!strcmp(f->path, out))
            return file_sha256(out, sha, &size) == 0 && size == f->size &&
                   !memcmp(sha, f->sha256, sizeof sha);
    }
    return false;
}

struct inspect_libs *inspect_libs_open(const struct dumpfile *d, const struct corefile *core,
                                       const struct elf_image *img, uint64_t bias)
{
    uint64_t dyn = libsyms_dynamic(img);
    if (!dyn)
        return NULL;
    struct inspect_libs *l = calloc(1, sizeof *l);
    if (!l || !(l->cache = libsyms_new())) {
        free(l);
        return NULL;
    }
    struct view v = {d, core, img};
    const struct libsyms_mem m = {.read = read_core, .resolve = resolve_recorded, .ctx = &v,
                                  .dynamic = bias + dyn};
    libsyms_map(l->cache, &m, &l->map);
    return l;
}

bool inspect_libs_text(const struct inspect_libs *l, uint64_t va)
{
    struct lib_hit h;
    return l && libmap_find(&l->map, va, &h) && h.text;
}

void inspect_libs_symbolize(const struct inspect_libs *l, const struct elf_image *img,
                            uint64_t bias, uint64_t va, bool is_return, char *buf, size_t len)
{
    if (!l || !libmap_format(&l->map, va, is_return, buf, len))
        elf_format_addr(img, bias, va, is_return, buf, len);
}

void inspect_libs_close(struct inspect_libs *l)
{
    if (!l)
        return;
    libsyms_free(l->cache);
    free(l);
}
