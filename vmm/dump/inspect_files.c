/* `jinxctl inspect`'s part about files (inspect_files.h). */
#include "dump/inspect_files.h"
#include "lib/json.h"
#include "linux/files.h"
#include <string.h>

/* "unchanged", "CHANGED" or "unreadable": the file as it is now against the dump. */
static const char *state_now(const struct dump_file *df)
{
    uint8_t sha[SHA256_LEN];
    uint64_t size = 0;
    if (file_sha256(df->path, sha, &size) < 0)
        return "unreadable";
    return size == df->size && !memcmp(sha, df->sha256, SHA256_LEN) ? "unchanged" : "CHANGED";
}

void inspect_files_text(const struct dumpfile *d, FILE *f)
{
    if (!d->has_files)
        return;
    fprintf(f, "files:   %zu opened by the program", d->nfiles);
    for (size_t i = 0; i < d->nro_dirs; i++)
        fprintf(f, "%s%s", i ? ", " : "; --ro-dir ", d->ro_dirs[i]);
    fprintf(f, "\n");
    for (size_t i = 0; i < d->nfiles; i++) {
        char sha[65];
        sha256_hex(d->files[i].sha256, sha);
        fprintf(f, "         %s (%llu bytes, sha256 %.16s..., %s now)\n", d->files[i].path,
                (unsigned long long)d->files[i].size, sha, state_now(&d->files[i]));
    }
    if (d->nwritten)
        fprintf(f, "written: %zu file%s by the program (in the VM, not on the host)\n",
                d->nwritten, d->nwritten == 1 ? "" : "s");
    for (size_t i = 0; i < d->nwritten; i++) {
        char sha[65];
        sha256_hex(d->written[i].sha256, sha);
        fprintf(f, "         %s (%llu bytes, sha256 %.16s...)\n", d->written[i].path,
                (unsigned long long)d->written[i].size, sha);
    }
}

void inspect_files_json(const struct dumpfile *d, FILE *f)
{
    if (!d->has_files)
        return;
    fprintf(f, ",\"files\":[");
    for (size_t i = 0; i < d->nfiles; i++) {
        char sha[65];
        sha256_hex(d->files[i].sha256, sha);
        fprintf(f, "%s{\"path\":", i ? "," : "");
        json_fput_str(f, d->files[i].path, true);
        fprintf(f, ",\"size\":%llu,\"sha256\":\"%s\",\"now\":\"%s\"}",
                (unsigned long long)d->files[i].size, sha, state_now(&d->files[i]));
    }
    fprintf(f, "],\"written\":[");
    for (size_t i = 0; i < d->nwritten; i++) {
        char sha[65];
        sha256_hex(d->written[i].sha256, sha);
        fprintf(f, "%s{\"path\":", i ? "," : "");
        json_fput_str(f, d->written[i].path, true);
        fprintf(f, ",\"size\":%llu,\"sha256\":\"%s\"}", (unsigned long long)d->written[i].size,
                sha);
    }
    fprintf(f, "],\"ro_dirs\":[");
    for (size_t i = 0; i < d->nro_dirs; i++) {
        fprintf(f, "%s", i ? "," : "");
        json_fput_str(f, d->ro_dirs[i], true);
    }
    fprintf(f, "]");
}
