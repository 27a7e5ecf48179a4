/* libFuzzer harness for `jinxctl inspect` (vmm/dump/inspect*.c, html_out.c): what it
 * prints of a .jinxdump (untrusted), as text, --json and --html, past its checks of the
 * core and the image. The input is a dump (parsed without its digest check, so that
 * mutations get through); its core and image fields are then pointed at a real pair (the
 * seed core of tests/fuzz/corpus/corefile and the seed ELF of tests/fuzz/corpus/elf, both
 * copied into a scratch directory at start), its threads given the core's ids when their
 * number matches, and it is written back with a valid digest. So inspect renders
 * whatever else the input holds: the outcome, registers, round records, the schedule
 * and traces, CPU records, files, a sanitizer report. Beyond "no crash, no leak": inspect
 * exits 0 or refuses with 2, never anything else. Needs those two seeds: run it from the
 * tree's root or from build-fuzz/ (as tests/fuzz/smoke.sh does). */
#include "dump/corefile.h"
#include "dump/dumpfile.h"
#include "dump/inspect.h"
#include "lib/sha256.h"
#include "lib/util.h"
#include "linux/elfparse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int file_sha256(const char *path, uint8_t out[32], uint64_t *size);

/* inspect_files.c's check of a granted file against the host's: the real one lives in
 * vmm/linux/files_state.c with the VM's file layer; the same answer, read whole. */
int file_sha256(const char *path, uint8_t out[32], uint64_t *size)
{
    uint8_t *buf;
    size_t n;
    char err[256];
    if (elf_read_file(path, &buf, &n, err, sizeof err) < 0)
        return -1;
    sha256(buf, n, out);
    *size = n;
    free(buf);
    return 0;
}

static char dir[64], core_path[128], image_path[128], dump_path[128], html_path[128];
static uint8_t core_sha[SHA256_LEN], image_sha[SHA256_LEN];
static uint64_t core_size, image_size;
static uint32_t tids[64];
static size_t ntids;

/* A seed file, from the tree's root or from build-fuzz/ (tests/fuzz/smoke.sh). */
static void copy_in(const char *from, const char *to, uint8_t *sha, uint64_t *size)
{
    uint8_t *buf;
    size_t n;
    char err[256], up[256];
    snprintf(up, sizeof up, "../%s", from);
    if (elf_read_file(from, &buf, &n, err, sizeof err) < 0 &&
        elf_read_file(up, &buf, &n, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz_inspect: %s (run it from the tree's root or build-fuzz/)\n", err);
        abort();
    }
    FILE *f = fopen(to, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0)
        abort();
    sha256(buf, n, sha);
    *size = n;
    if (sha == core_sha) {
        struct corefile c;
        if (core_parse(buf, n, &c, err, sizeof err) < 0)
            abort();
        for (size_t i = 0; i < c.nthreads && i < 64; i++)
            tids[ntids++] = c.threads[i].tid;
        core_free(&c);
    }
    free(buf);
}

static unsigned long shown, refused; /* FUZZ_INSPECT_STATS=1: printed at exit */

static void stats(void)
{
    fprintf(stderr, "fuzz_inspect: %lu shown, %lu refused\n", shown, refused);
}

static void cleanup(void)
{
    unlink(core_path);
    unlink(image_path);
    unlink(dump_path);
    unlink(html_path);
    rmdir(dir);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/fuzz-inspect.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(core_path, sizeof core_path, "%s/c.core", dir);
    snprintf(image_path, sizeof image_path, "%s/prog", dir);
    snprintf(dump_path, sizeof dump_path, "%s/d.jinxdump", dir);
    snprintf(html_path, sizeof html_path, "%s/d.html", dir);
    atexit(cleanup);
    copy_in("tests/fuzz/corpus/corefile/seed.core", core_path, core_sha, &core_size);
    copy_in("tests/fuzz/corpus/elf/static-exec", image_path, image_sha, &image_size);
    if (getenv("FUZZ_INSPECT_STATS"))
        atexit(stats);
    if (!freopen("/dev/null", "w", stdout))
        abort(); /* inspect's output: only its status is judged (its refusals go to stderr,
                    which libFuzzer's -close_fd_mask=2 quiets) */
}

static void inspect(const char *a, const char *b)
{
    char *argv[] = {"inspect", dump_path, (char *)a, (char *)b, NULL};
    int argc = b ? 4 : a ? 3 : 2;
    int st = cmd_inspect(argc, argv);
    if (st != 0 && st != INSPECT_EXIT_REFUSED)
        abort();
    ++*(st ? &refused : &shown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        setup();
        ready = true;
    }
    struct dumpfile d;
    char err[512];
    if (dumpfile_parse(data, size, DUMPFILE_NO_CHECKSUM, &d, err, sizeof err) < 0)
        return 0;
    memcpy(d.core.sha256, core_sha, SHA256_LEN);
    d.core.size = core_size;
    snprintf(d.core.name, sizeof d.core.name, "c.core");
    memcpy(d.image.sha256, image_sha, SHA256_LEN);
    d.image.size = image_size;
    snprintf(d.image.path, sizeof d.image.path, "%s", image_path);
    if (d.nthreads == ntids)
        for (size_t i = 0; i < ntids; i++)
            d.threads[i].tid = tids[i];
    struct dbuf b = {0};
    if (dumpfile_encode(&d, &b) == 0) {
        FILE *f = fopen(dump_path, "wb");
        if (!f || fwrite(b.p, 1, b.len, f) != b.len || fclose(f) != 0)
            abort();
        inspect(NULL, NULL);
        inspect("--json", NULL);
        inspect("--html", html_path);
        inspect("--thread", "2");
    }
    dbuf_free(&b);
    dumpfile_free(&d);
    return 0;
}
