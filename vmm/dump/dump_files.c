/* The FILES record of a crash dump from the VM's file layer (dump_files.h). */
#include "dump/dump_files.h"
#include "kvm/vm.h"
#include "linux/files.h"
#include "lib/util.h"
#include "lib/sha256.h"
#include <stdlib.h>
#include <string.h>

static void add_written(void *ctx, const char *path, const uint8_t *bytes, uint64_t size)
{
    struct dumpfile *d = ctx;
    struct sha256 s;
    uint8_t sha[SHA256_LEN];
    sha256_init(&s);
    if (size)
        sha256_update(&s, bytes, (size_t)size);
    sha256_final(&s, sha);
    if (dumpfile_add_written(d, path, size, sha) < 0)
        jx_err("warning: dump: %s, which the program wrote, not recorded", path);
}

void dump_fill_files(struct dumpfile *d, struct vm *vm)
{
    struct files *fs = vm->files;
    d->has_files = true; /* even empty: says this dump knows the program opened nothing */
    for (int i = 0; i < vm->opt.n_ro_dirs; i++) {
        char *abs = realpath(vm->opt.ro_dirs[i], NULL);
        if (!abs || dumpfile_add_ro_dir(d, abs) < 0)
            jx_err("warning: dump: --ro-dir %s not recorded (a replay will not grant it)",
                    vm->opt.ro_dirs[i]);
        free(abs);
    }
    if (!fs)
        return;
    pthread_mutex_lock(&fs->lock);
    for (size_t i = 0; i < fs->nopened; i++) {
        struct opened_file *f = &fs->opened[i];
        int r = file_sha256(f->path, f->sha256, &f->size);
        if (r < 0 || dumpfile_add_file(d, f->path, f->size, f->sha256) < 0)
            jx_err("warning: dump: %s, which the program opened, not recorded: %s (a replay cannot "
                    "check it)", f->path, r < 0 ? strerror(-r) : "out of memory");
    }
    pthread_mutex_unlock(&fs->lock);
    files_each_written(fs, add_written, d); /* its own lock */
}

int dump_check_files(const struct dumpfile *d, char *err, size_t errlen)
{
    for (size_t i = 0; i < d->nfiles; i++) {
        const struct dump_file *f = &d->files[i];
        uint8_t sha[SHA256_LEN];
        uint64_t size = 0;
        int r = file_sha256(f->path, sha, &size);
        if (r < 0)
            return jx_fail(err, errlen, "%s, which the program read, cannot be read now (%s): "
                           "put it back as it was when the dump was written, then replay "
                           "again", f->path, strerror(-r));
        if (size != f->size || memcmp(sha, f->sha256, SHA256_LEN) != 0)
            return jx_fail(err, errlen, "%s, which the program read, has changed since the "
                           "dump was written (%llu bytes then, %llu now; SHA-256 differs): the "
                           "replay would not be exact. Restore its old contents, or find the "
                           "bug again with the new file (jinx test)", f->path,
                           (unsigned long long)f->size, (unsigned long long)size);
    }
    return 0;
}
